"""`check`: a consumer's outputs, produced outside the suite, judged against the ground truth of a
generated case, with the same verdict as `run` and a replay command that repeats the check."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.errors import CaseError
from ticdc_conformance.runner import check_outputs, run_encoding

IGNORES_DELETES = ROOT / "tests" / "consumers" / "ignores_deletes.py"
FINAL_ONLY = ROOT / "tests" / "consumers" / "final_only.py"


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
    assert "NOT conformant" in proc.stdout and "[CONSUMER-DELETE-1]" in proc.stdout
    assert f"replay: ticdc-conformance check --case {case} --out {out}" in proc.stdout
    [junit] = (tmp_path / "r").glob("check-smoke-seed1-canal-json-*.junit.xml")
    failed = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert "smoke/canal-json::CONSUMER-DELETE-1" in failed
    [summary] = (tmp_path / "r").glob("check-smoke-seed1-canal-json-*.summary.json")
    summary = json.loads(summary.read_text())
    assert summary["conformant"] is False and summary["exit_code"] == 1
    # The case's result.json holds the same verdict, every finding (the summary adds the case's checks).
    checks = summary["results"][0].pop("checks")
    assert json.loads((case / "result.json").read_text()) == summary["results"][0]
    assert {c["rule"] for c in checks if c["status"] == "failed"} >= {"CONSUMER-DELETE-1"}


def test_check_gives_the_verdict_run_gives(tmp_path):
    """`run` with a consumer program, then `check` of what it left: the same findings, rule for rule."""
    ran = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=f"{sys.executable} {IGNORES_DELETES}")
    checked = check_outputs(ran.case, ran.case / "consumer")
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
    with pytest.raises(CaseError, match="not a manifest written by `generate`"):
        check_outputs(tmp_path / "out", tmp_path / "out")
    (tmp_path / "out" / "manifest.json").write_text('{"scenario": "smoke", "seed": 1}')
    with pytest.raises(CaseError, match="not a manifest written by `generate`: no encoding, protocol, sink, records"):
        check_outputs(tmp_path / "out", tmp_path / "out")
    (case / "truth").rename(tmp_path / "truth-elsewhere")
    with pytest.raises(CaseError, match="no ground truth"):
        check_outputs(case, tmp_path / "out")


def test_an_output_without_final_is_a_consumer_error_and_a_missing_table_a_finding(tmp_path):
    case = tmp_path / "case"
    _generate(case, "debezium")
    (tmp_path / "out").mkdir()
    proc = _check("--case", case, "--out", tmp_path / "out")
    assert proc.returncode == 3 and "consumer error" in proc.stdout, proc.stdout + proc.stderr
    assert "wrote no" in proc.stdout and "final folder: nothing to judge" in proc.stdout
    (tmp_path / "out" / "final").mkdir()
    result = check_outputs(case, tmp_path / "out")
    assert result.outcome == "NOT conformant"
    assert any(f.rule == "CONSUMER-STATE-1" and "wrote no" in f.message for f in result.findings)


def test_check_says_final_state_only_and_accepts_it_when_asked(tmp_path):
    case, out = tmp_path / "case", tmp_path / "out"
    _generate(case, "simple-json")
    subprocess.run([sys.executable, str(FINAL_ONLY), "--records", str(case / "records"),
                    "--manifest", str(case / "manifest.json"), "--out", str(out)], check=True, cwd=ROOT)
    proc = _check("--case", case, "--out", out, "--report", tmp_path / "r")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "simple-json: final state only: ordering not verified" in proc.stdout
    [summary] = (tmp_path / "r").glob("*.summary.json")
    [r] = json.loads(summary.read_text())["results"]
    assert (r["outcome"], r["final_state_only"], r["exit_code"]) == ("final state only", True, 4)
    proc = _check("--case", case, "--out", out, "--final-state-only")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "conformant (final state only)" in proc.stdout
    assert f"replay: ticdc-conformance check --case {case} --out {out} --final-state-only" in proc.stdout


def test_reports_of_checks_of_different_outputs_do_not_overwrite_each_other(tmp_path):
    case = tmp_path / "case"
    _generate(case, "open-protocol")
    for out in ("a", "b"):
        subprocess.run(CLI + ["consume", "--records", str(case / "records"), "--out", str(tmp_path / out),
                              "--engine", "local"], check=True, capture_output=True, cwd=ROOT)
        assert _check("--case", case, "--out", tmp_path / out, "--report", tmp_path / "r").returncode == 0
    summaries = sorted((tmp_path / "r").glob("check-smoke-seed1-open-protocol-*.summary.json"))
    assert len(summaries) == 2
    assert {json.loads(p.read_text())["results"][0]["consumer"] for p in summaries} == \
        {f"output {tmp_path / 'a'}", f"output {tmp_path / 'b'}"}
