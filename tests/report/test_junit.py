"""The JUnit report: a test case per case and rule, named by check id, with the outcomes CI tools show."""
import xml.etree.ElementTree as ET

import pytest

from tests.report.builders import delete_finding, judge, result, state_finding
from tests.report.junit_shape import cases_by_name, check_junit_shape, outcome
from ticdc_conformance.findings.case_ids import run_rules
from ticdc_conformance.report import write_reports
from ticdc_conformance.runner import FINDINGS_SHOWN_PER_RULE


@pytest.fixture(autouse=True)
def _no_fidelity_matrix(monkeypatch):
    # The HTML report's fidelity table is computed from the protocols (about a second a column); these
    # tests read the JUnit file only.
    monkeypatch.setattr("ticdc_conformance.report.html.fidelity", lambda encodings: {"columns": [], "rows": []})


def _junit(tmp_path, results, judgement=None) -> ET.Element:
    paths = write_reports(results, tmp_path / "r", "run", judgement)
    root = ET.parse(paths["junit"]).getroot()
    check_junit_shape(root)
    return root


def test_one_test_case_per_case_and_rule_named_by_check_id(tmp_path):
    findings = tuple(state_finding(k) for k in range(FINDINGS_SHOWN_PER_RULE + 2))
    root = _junit(tmp_path, [result("canal-json", findings), result("debezium")])
    cases = cases_by_name(root)
    rules = run_rules()
    assert set(cases) == {f"smoke/{enc}::{rule}" for enc in ("canal-json", "debezium") for rule in rules}
    assert [s.get("name") for s in root.findall("testsuite")] == ["smoke/canal-json", "smoke/debezium"]
    assert {c.get("classname") for c in root.findall("testsuite")[0].findall("testcase")} == {"ticdc-conformance.smoke.canal-json"}
    failed = cases["smoke/canal-json::CONSUMER-STATE-1"].find("failure")
    assert failed is not None and root.get("failures") == "1"
    assert failed.get("message").startswith(f"{len(findings)} CONSUMER-STATE-1 finding(s); replay: ticdc-conformance run")
    text = failed.text
    # The rule's first findings as `run` prints them, how many more and where, the replay command.
    assert text.count("[CONSUMER-STATE-1]") == FINDINGS_SHOWN_PER_RULE
    assert "root['amount']: \"1.50\" -> \"1.5\"" in text
    assert "… 2 more CONSUMER-STATE-1 findings" in text and "run.summary.json" in text
    assert text.rstrip().endswith("replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json "
                                  "--consumer 'python consumer.py'")
    assert all(outcome(c) == "passed" for name, c in cases.items() if name.startswith("smoke/debezium"))
    # A case runs once for all its checks: its time is shared out, and the suite's adds up to it.
    assert float(root.findall("testsuite")[0].get("time")) == pytest.approx(2.0, abs=0.01)


def test_consumer_error_is_an_error_and_its_rules_are_not_judged(tmp_path):
    root = _junit(tmp_path, [result("open-protocol", error="consumer exited with 3\nTraceback: boom")])
    cases = cases_by_name(root)
    error = cases["smoke/open-protocol::consumer-error"].find("error")
    assert error is not None and error.get("message") == "consumer error: consumer exited with 3"
    assert "Traceback: boom" in error.text and "replay: " in error.text
    assert (root.get("errors"), root.get("failures")) == ("1", "0")
    skipped = cases["smoke/open-protocol::CONSUMER-STATE-1"].find("skipped")
    assert "the consumer errored (smoke/open-protocol::consumer-error)" in skipped.get("message")


def test_not_applicable_case_is_skipped_with_the_consumers_reason(tmp_path):
    root = _junit(tmp_path, [result("simple-avro", not_applicable="reads no Avro")])
    assert root.get("skipped") == root.get("tests") == str(len(run_rules()))
    assert {c.find("skipped").get("message") for c in root.iter("testcase")} == {"not applicable: reads no Avro"}


def test_final_state_only_fails_as_a_whole_and_the_applied_log_rules_are_not_judged(tmp_path):
    root = _junit(tmp_path, [result("simple-json", shows_log=False)])
    cases = cases_by_name(root)
    assert outcome(cases["smoke/simple-json::final-state-only"]) == "failure" and root.get("failures") == "1"
    for rule in ("CONSUMER-ORDER-1", "CONSUMER-WATERMARK-1", "CONSUMER-CHECKPOINT-1"):
        assert "not judged: the consumer wrote no applied.ndjson" in \
            cases[f"smoke/simple-json::{rule}"].find("skipped").get("message")
    assert outcome(cases["smoke/simple-json::CONSUMER-STATE-1"]) == "passed"  # the final state was judged

    accepted = _junit(tmp_path, [result("simple-json", shows_log=False, final_state_only=True)])
    assert "smoke/simple-json::final-state-only" not in cases_by_name(accepted) and accepted.get("failures") == "0"
    assert "accepted by --final-state-only" in accepted.find(".//testcase/system-out").text


def test_expected_failures_are_skipped_with_file_and_line_and_stale_entries_fail(tmp_path):
    results = [result("canal-json", (state_finding(1),), checkpoint_findings=(delete_finding("C-1"),)),
               result("debezium")]
    judgement = judge(tmp_path, "# known\nsmoke/canal-json::CONSUMER-STATE-1\nsmoke/debezium::CONSUMER-ORDER-1\n",
                      results)
    root = _junit(tmp_path, results, judgement)
    cases = cases_by_name(root)
    expected = cases["smoke/canal-json::CONSUMER-STATE-1"].find("skipped")
    assert expected.get("message") == f"expected failure: {tmp_path / 'expected-failures.txt'}:2"
    assert "[CONSUMER-STATE-1]" in expected.text
    assert outcome(cases["smoke/canal-json::CONSUMER-DELETE-1"]) == "failure"  # not listed
    [stale_suite] = [s for s in root.findall("testsuite") if s.get("name") == "ticdc-conformance.expected-failures"]
    [stale] = stale_suite.findall("testcase")
    assert stale.get("name") == "smoke/debezium::CONSUMER-ORDER-1"
    assert stale.find("failure").get("message").startswith(f"stale entry {tmp_path / 'expected-failures.txt'}:3")
    assert root.get("failures") == "2" and root.get("skipped") == "1"


def test_values_a_consumer_wrote_are_escaped_in_the_xml(tmp_path):
    nasty = delete_finding("]]><x>&\"'")
    root = _junit(tmp_path, [result("canal-json", (nasty,))])
    failure = cases_by_name(root)["smoke/canal-json::CONSUMER-DELETE-1"].find("failure")
    assert '"]]><x>&\\"\'"' in failure.text and "Zoë <b>bold</b>" in failure.text
