"""The golden corpus: `golden --check` passes on the committed corpus and names what changed."""
import base64
import json
import shutil
import subprocess

import orjson

from ..conftest import CLI, ROOT


def test_committed_golden_corpus_matches_the_generators():
    proc = subprocess.run(CLI + ["golden", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_changed_record_is_named_by_file_record_and_field(tmp_path):
    golden = tmp_path / "golden"
    shutil.copytree(ROOT / "golden", golden)
    path = golden / "smoke" / "canal-json" / "records.ndjson"
    lines = path.read_bytes().splitlines()
    for i, line in enumerate(lines):
        rec = orjson.loads(line)
        value = orjson.loads(base64.b64decode(rec["value"]))
        if value.get("type") == "INSERT":
            value["data"][0]["customer" if value["table"] == "orders" else "name"] = "tampered"
            rec["value"] = base64.b64encode(orjson.dumps(value)).decode()
            lines[i] = orjson.dumps(rec)
            where = f"record {rec['topic']}/{rec['partition']}@{rec['offset']}"
            break
    path.write_bytes(b"\n".join(lines) + b"\n")
    proc = subprocess.run(CLI + ["golden", "--check", "--dir", str(golden)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1
    assert f"smoke/canal-json/records.ndjson: {where}: field ['value']['data'][0]" in proc.stdout
    assert "golden 'tampered'" in proc.stdout


def test_update_is_atomic_and_reports_changes(tmp_path):
    golden = tmp_path / "golden"
    shutil.copytree(ROOT / "golden", golden)
    (golden / "smoke" / "debezium" / "case.json").write_text(json.dumps({"stale": True}))
    (golden / "smoke" / "stray.txt").write_text("x")
    proc = subprocess.run(CLI + ["golden", "--update", "--dir", str(golden)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "changed  smoke/debezium/case.json" in proc.stdout
    assert "removed  smoke/stray.txt" in proc.stdout
    check = subprocess.run(CLI + ["golden", "--check", "--dir", str(golden)], capture_output=True, text=True, cwd=ROOT)
    assert check.returncode == 0
    assert not list(tmp_path.glob(".golden-new-*")) and not (tmp_path / "golden.old").exists()
