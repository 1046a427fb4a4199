"""The golden corpus: it matches the generators, `check` names what changed, `update` is atomic."""
import base64
import json
import shutil
import subprocess

import orjson
import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.golden import corpus as g

SMOKE = [c.path for c in g.cases() if c.scenario == "smoke"]


def _copy(paths: list[str], to) -> None:
    for path in paths:
        shutil.copytree(ROOT / "golden" / path, to / path)
    shutil.copytree(ROOT / "golden" / "schema", to / "schema")


def _tamper_first(path, change) -> str:
    """Applies `change` to the first line it accepts (returns True); returns that line's coordinates."""
    lines = path.read_bytes().splitlines()
    for i, line in enumerate(lines):
        doc = orjson.loads(line)
        where = change(doc)
        if where:
            lines[i] = orjson.dumps(doc)
            path.write_bytes(b"\n".join(lines) + b"\n")
            return where
    raise AssertionError(f"nothing to tamper with in {path}")


@pytest.mark.slow
def test_committed_golden_corpus_matches_the_generators():
    proc = subprocess.run(CLI + ["golden", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"({len(list(g.cases()))} cases)" in proc.stdout


def test_the_smoke_cases_match_the_generators():
    assert len(SMOKE) == len(g.select(SMOKE)) >= 11
    assert g.check(ROOT / "golden", only=SMOKE) == []


def test_the_index_lists_every_case_of_the_matrix():
    index = json.loads((ROOT / "golden" / "index.json").read_text())
    assert [c["case"] for c in index["cases"]] == [c.path for c in g.cases()]
    for entry in index["cases"]:
        case = json.loads((ROOT / "golden" / entry["case"] / "case.json").read_text())
        assert g.index_entry(case) == entry


def test_a_changed_record_is_named_by_file_record_and_field(tmp_path):
    _copy(["smoke/canal-json"], tmp_path)

    def change(rec):
        value = orjson.loads(base64.b64decode(rec["value"]))
        if value.get("type") != "INSERT":
            return None
        value["data"][0]["customer" if value["table"] == "orders" else "name"] = "tampered"
        rec["value"] = base64.b64encode(orjson.dumps(value)).decode()
        return f"record {rec['topic']}/{rec['partition']}@{rec['offset']}"

    where = _tamper_first(tmp_path / "smoke" / "canal-json" / "records.ndjson", change)
    rendered = [d.render() for d in g.check(tmp_path, only=["smoke/canal-json"])]
    assert any(r.startswith(f"smoke/canal-json/records.ndjson: {where}: field ['value']['data'][0]")
               and "golden 'tampered'" in r for r in rendered), rendered


def test_a_changed_applied_line_is_named_by_line_and_field(tmp_path):
    _copy(["smoke/simple-json"], tmp_path)

    def change(entry):
        if entry["kind"] != "txn" or entry["rows"][0]["after"] is None:
            return None
        entry["rows"][0]["after"]["name" if entry["rows"][0]["table"] == "customers" else "customer"] = "tampered"
        return f"(txn at commit ts {entry['commit_ts']})"

    where = _tamper_first(tmp_path / "smoke" / "simple-json" / "expected" / "applied.ndjson", change)
    rendered = [d.render() for d in g.check(tmp_path, only=["smoke/simple-json"])]
    assert any("smoke/simple-json/expected/applied.ndjson: line " in r and where in r
               and "field ['rows'][0]['after']" in r and "golden 'tampered'" in r for r in rendered), rendered


def test_a_missing_case_and_a_stale_one_are_named(tmp_path):
    _copy(["smoke/canal-json"], tmp_path)
    shutil.copytree(tmp_path / "smoke" / "canal-json", tmp_path / "smoke" / "retired-variant")
    diffs = [d.render() for d in g.check(tmp_path, only=["smoke/canal-json", "smoke/debezium"])]
    assert diffs == ["smoke/debezium: case: missing from the golden corpus (run `ticdc-conformance golden --update`)"]
    stale = [d.render() for d in g.stale_cases(tmp_path)]
    assert stale == ["smoke/retired-variant: case: no longer in the golden matrix (golden_matrix.py)"]


def test_update_is_atomic_and_reports_changes(tmp_path):
    golden = tmp_path / "golden"
    _copy(SMOKE, golden)
    (golden / "smoke" / "debezium" / "case.json").write_text(json.dumps({"stale": True}))
    (golden / "smoke" / "stray.txt").write_text("x")
    schema_before = {p.name: p.read_bytes() for p in (golden / "schema").iterdir()}
    changes = g.update(golden, only=SMOKE)
    assert "smoke/debezium/case.json" in changes["changed"]
    assert "smoke/stray.txt" in changes["removed"]
    assert changes["added"] == [g.INDEX]
    lines = g.render_changes(changes)
    assert "changed  smoke/debezium/case.json" in lines and "removed  smoke/stray.txt" in lines
    assert lines[-1] == "golden corpus updated: 1 added, 1 changed, 1 removed"
    assert {p.name: p.read_bytes() for p in (golden / "schema").iterdir()} == schema_before  # hand-written, kept
    assert g.check(golden, only=SMOKE) == []
    assert (golden / "smoke" / "debezium" / "records.ndjson").read_bytes() == \
        (ROOT / "golden" / "smoke" / "debezium" / "records.ndjson").read_bytes()
    assert oct(golden.stat().st_mode & 0o777) == "0o755"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


def test_a_failed_update_leaves_the_corpus_as_it_was(tmp_path, monkeypatch):
    golden = tmp_path / "golden"
    _copy(SMOKE[:2], golden)
    before = {p.relative_to(golden): p.read_bytes() for p in golden.rglob("*") if p.is_file()}
    built = []

    def failing(case, target, **kw):
        if built:
            raise RuntimeError("generator failure")
        built.append(case)
        return real(case, target, **kw)

    real = g.build_case
    monkeypatch.setattr(g, "build_case", failing)
    with pytest.raises(RuntimeError, match="generator failure"):
        g.update(golden, only=SMOKE[:2])
    assert {p.relative_to(golden): p.read_bytes() for p in golden.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


def test_pytest_offers_update_golden():
    proc = subprocess.run([CLI[0], "-m", "pytest", "--help", "-p", "no:cacheprovider"], capture_output=True,
                          text=True, cwd=ROOT)
    assert "--update-golden" in proc.stdout


def test_a_golden_line_that_is_not_json_is_named(tmp_path):
    _copy(["smoke/open-protocol"], tmp_path)
    path = tmp_path / "smoke" / "open-protocol" / "expected" / "applied.ndjson"
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([lines[0], b"{not json"] + lines[2:]) + b"\n")
    (tmp_path / "smoke" / "open-protocol" / "case.json").write_text("{")
    rendered = [d.render() for d in g.check(tmp_path, only=["smoke/open-protocol"])]
    assert any(r.startswith("smoke/open-protocol/expected/applied.ndjson: line 2: the golden line is not JSON")
               for r in rendered), rendered
    assert any(r.startswith("smoke/open-protocol/case.json: content: the golden file is not JSON") for r in rendered)


def test_check_names_every_file_an_update_would_remove(tmp_path, monkeypatch):
    """Stray files at the top level, in a scenario folder and in a case folder are named by `check`
    (the hand-written parts are not), and they are exactly what `update` removes."""
    two = SMOKE[:2]
    matrix = g.select(two)
    monkeypatch.setattr(g, "cases", lambda: iter(matrix))
    golden = tmp_path / "golden"
    _copy(two, golden)
    shutil.copy2(ROOT / "golden" / "README.md", golden / "README.md")
    g.write_index(golden, [json.loads((golden / p / "case.json").read_text()) for p in two])
    assert g.check(golden) == []
    strays = ["smoke/extra-stray.json", "smoke/notes/old.md", "top-stray.txt", f"{two[0]}/extra.json"]
    for rel in strays + ["schema/notes.md"]:
        (golden / rel).parent.mkdir(parents=True, exist_ok=True)
        (golden / rel).write_text("{}")
    empty = ["leftover", "smoke/empty", f"{two[1]}/nothing"]
    for rel in empty + ["leftover/deeper/still-nothing", "schema/kept-empty"]:
        (golden / rel).mkdir(parents=True)
    rendered = sorted(d.render() for d in g.check(golden))
    assert rendered == sorted([f"{rel}: file: no longer generated" for rel in strays]
                              + [f"{rel}: folder: empty; an update removes it" for rel in empty]), rendered
    assert sorted(g.update(golden, only=two)["removed"]) == sorted(strays)
    assert g.check(golden) == [] and not any((golden / rel).exists() for rel in empty)
