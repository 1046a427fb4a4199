"""`check`: a consumer's outputs, produced outside the suite, judged against the ground truth of a
generated case, with the same verdict as `run` and a replay command that repeats the check."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.runner import check_outputs, run_encoding

from ..conftest import CLI, ROOT

IGNORES_DELETES = ROOT / "tests" / "consumers" / "ignores_deletes.py"


def _generate(case, encoding="canal-json"):
    subprocess.run(CLI + ["generate", "--scenario", "smoke", "--protocol", encoding, "--out", str(case)],
                   check=True, capture_output=True, cwd=ROOT)


def _check(*args):
    return subprocess.run(CLI + ["check", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_outputs_of_a_consumer_run_by_hand_conform(tmp_path):
    case = tmp_path / "case"
    _generate(case)
    subprocess.run(CLI + ["consume", "--records", str(case / "records"), "--out", str(tmp_path / "out"),
                          "--engine", "local"], check=True, capture_output=True, cwd=ROOT)
    proc = _check("--case", case, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "conformant" in proc.stdout and "NOT conformant" not in proc.stdout


def test_broken_outputs_fail_with_the_check_as_replay_command(tmp_path):
    case, out = tmp_path / "case", tmp_path / "out"
    _generate(case)
    subprocess.run([sys.executable, str(IGNORES_DELETES), "--records", str(case / "records"),
                    "--manifest", str(case / "manifest.json"), "--out", str(out)], check=True, cwd=ROOT)
    proc = _check("--case", case, "--out", out, "--report", tmp_path / "r")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "NOT conformant" in proc.stdout and "[CONSUMER-STATE-1]" in proc.stdout
    assert f"replay: ticdc-conformance check --case {case} --out {out}" in proc.stdout
    suite = ET.parse(tmp_path / "r" / "check-smoke-seed1-canal-json.junit.xml").getroot()
    assert suite.get("failures") == "1"
    summary = json.loads((tmp_path / "r" / "check-smoke-seed1-canal-json.summary.json").read_text())
    assert summary["conformant"] is False


def test_check_gives_the_verdict_run_gives(tmp_path):
    """`run` with a consumer program, then `check` of what it left: the same findings, rule for rule."""
    ran = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=f"{sys.executable} {IGNORES_DELETES}")
    case = tmp_path / "smoke" / "simple-json"
    checked = check_outputs(case, case / "consumer")
    assert not ran.conformant and ran.finding_count > 0
    assert [f.to_json() for f in checked.findings] == [f.to_json() for f in ran.findings]
    assert checked.finding_count == ran.finding_count
    assert checked.checkpoints.checkpoints == ran.checkpoints.checkpoints > 0
    assert (checked.scenario, checked.seed, checked.encoding, checked.records) == \
        (ran.scenario, ran.seed, ran.encoding, ran.records)


def test_missing_outputs_or_case_are_errors_not_verdicts(tmp_path):
    case = tmp_path / "case"
    _generate(case, "open-protocol")
    proc = _check("--case", case, "--out", tmp_path / "nowhere")
    assert proc.returncode == 2 and "nowhere: no such folder" in proc.stderr
    (tmp_path / "out").mkdir()
    with pytest.raises(ConsumerError, match="not a manifest written by `generate`"):
        check_outputs(tmp_path / "out", tmp_path / "out")
    (tmp_path / "out" / "manifest.json").write_text('{"scenario": "smoke", "seed": 1}')
    with pytest.raises(ConsumerError, match="not a manifest written by `generate`: no encoding, protocol, sink, records"):
        check_outputs(tmp_path / "out", tmp_path / "out")
    (case / "truth").rename(tmp_path / "truth-elsewhere")
    with pytest.raises(ConsumerError, match="no ground truth"):
        check_outputs(case, tmp_path / "out")


def test_an_empty_output_folder_is_judged_not_refused(tmp_path):
    case = tmp_path / "case"
    _generate(case, "debezium")
    (tmp_path / "out").mkdir()
    result = check_outputs(case, tmp_path / "out")
    assert not result.conformant
    assert any(f.rule == "CONSUMER-STATE-1" and "wrote no" in f.message for f in result.findings)
