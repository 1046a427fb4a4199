"""The JSON summary: the run's verdict, every case's whole result with its checks, the list's judgement."""
import json

import pytest

from tests.report.builders import delete_finding, judge, result, state_finding
from ticdc_conformance.findings.case_ids import run_rules
from ticdc_conformance.report import write_reports


@pytest.fixture(autouse=True)
def _no_fidelity_matrix(monkeypatch):
    # The HTML report's fidelity table is computed from the protocols; these tests read the summary only.
    monkeypatch.setattr("ticdc_conformance.report.html.fidelity", lambda encodings: {"columns": [], "rows": []})


def _summary(tmp_path, results, judgement=None) -> dict:
    return json.loads(write_reports(results, tmp_path / "r", "run", judgement)["summary"].read_text())


def test_each_result_carries_its_checks(tmp_path):
    results = [result("canal-json", (state_finding(1), state_finding(2))), result("debezium", shows_log=False),
               result("simple-avro", not_applicable="reads no Avro")]
    doc = _summary(tmp_path, results)
    assert (doc["conformant"], doc["exit_code"], doc["passed"], doc["not_applicable"]) == (False, 1, 0, 1)
    canal, debezium, avro = (r["checks"] for r in doc["results"])
    assert {"id": "smoke/canal-json::CONSUMER-STATE-1", "rule": "CONSUMER-STATE-1", "status": "failed",
            "findings": 2} in canal
    assert [c["rule"] for c in canal] == list(run_rules())
    order = next(c for c in debezium if c["rule"] == "CONSUMER-ORDER-1")
    assert order["status"] == "not-applicable" and order["reason"].startswith("not judged: ")
    assert debezium[-1] == {"id": "smoke/debezium::final-state-only", "rule": "final-state-only",
                            "status": "failed", "findings": 0}
    assert {c["status"] for c in avro} == {"not-applicable"}
    assert doc["checks"] == {"passed": sum(c["status"] == "passed" for r in doc["results"] for c in r["checks"]),
                             "failed": 2, "expected": 0, "not-applicable": len(avro) + 6}
    # Today's fields stay: the whole result, every finding.
    assert doc["results"][0]["tables"][0]["findings"][1]["key"] == [2]
    assert "expected_failures" not in doc


def test_the_judgement_and_the_exit_status_of_a_run_with_an_expected_failure_list(tmp_path):
    results = [result("canal-json", (state_finding(1),)), result("debezium")]
    listed = judge(tmp_path, "smoke/canal-json::CONSUMER-STATE-1\n", results)
    doc = _summary(tmp_path, results, listed)
    assert doc["exit_code"] == 0 and doc["conformant"] is False  # the gate passes; the consumer still fails
    [state] = [c for c in doc["results"][0]["checks"] if c["status"] != "passed"]
    assert state["status"] == "expected" and state["expected_by"] == [f"{tmp_path / 'expected-failures.txt'}:1"]
    assert set(doc["expected_failures"]) == {"file", "ok", "expected", "unexpected", "stale", "not_run"}
    assert doc["expected_failures"]["expected"][0]["check"] == "smoke/canal-json::CONSUMER-STATE-1"

    stale = judge(tmp_path, "smoke/canal-json::CONSUMER-STATE-1\nsmoke/debezium::CONSUMER-ORDER-1\n"
                  "smoke/open-protocol::CONSUMER-ORDER-1\n", results)
    doc = _summary(tmp_path, results, stale)
    assert doc["exit_code"] == 6
    assert [e["selector"] for e in doc["expected_failures"]["stale"]] == ["smoke/debezium::CONSUMER-ORDER-1"]
    assert [e["selector"] for e in doc["expected_failures"]["not_run"]] == ["smoke/open-protocol::CONSUMER-ORDER-1"]

    worse = [result("canal-json", (state_finding(1), delete_finding("C-1"))), result("debezium")]
    doc = _summary(tmp_path, worse, judge(tmp_path, "smoke/canal-json::CONSUMER-STATE-1\n"
                                          "smoke/debezium::CONSUMER-ORDER-1\n", worse))
    assert doc["exit_code"] == 1  # an unexpected failure outweighs a stale entry


def test_the_exit_status_the_run_decided_is_the_one_reported(tmp_path):
    # `--update-expected-failures` rewrites the list and exits 0 whatever the list's judgement was.
    results = [result("canal-json", (state_finding(1),))]
    paths = write_reports(results, tmp_path / "r", "run", judge(tmp_path, "", results), exit_code=0)
    assert json.loads(paths["summary"].read_text())["exit_code"] == 0
    assert '<dd id="exit-code">0</dd>' in paths["html"].read_text()
