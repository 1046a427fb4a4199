"""The items' verdicts from a case's run (pytest_plugin/verdicts.py) and the cases the options give
(pytest_plugin/matrix.py), without running a consumer."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from ticdc_conformance.findings.case_ids import Failure
from ticdc_conformance.findings.expected import ExpectedFailures
from ticdc_conformance.findings.outcome import CONFORMANT, NOT_APPLICABLE
from ticdc_conformance.pytest_plugin.matrix import cases
from ticdc_conformance.pytest_plugin.verdicts import (
    FAILED,
    OUTCOME_ITEM,
    PASSED,
    SKIPPED,
    XFAILED,
    CaseVerdict,
    ItemVerdict,
    judge_item,
)

CASE = cases(["smoke"], "canal-json", [], [])[0]


def verdict(outcome=CONFORMANT, failures=(), listed="", tmp_path=None, **result):
    v = CaseVerdict(CASE, SimpleNamespace(outcome=outcome, **result), failures=list(failures))
    if listed:
        path = tmp_path / "expected.txt"
        path.write_text(listed)
        v.judgement = ExpectedFailures.load(path).judge([CASE.id], v.failures)
    return v


def test_a_not_applicable_case_skips_every_item_with_the_consumer_reason():
    v = verdict(NOT_APPLICABLE, not_applicable="canal-json is not consumed")
    for rule in ("CONSUMER-ORDER-1", OUTCOME_ITEM):
        assert judge_item(v, rule) == ItemVerdict(SKIPPED, "not applicable: canal-json is not consumed")


def test_a_whole_case_entry_is_stale_on_the_outcome_item_when_the_case_passes(tmp_path):
    v = verdict(listed="smoke/canal-json\n", tmp_path=tmp_path)
    assert judge_item(v, "CONSUMER-ORDER-1").status == PASSED
    stale = judge_item(v, OUTCOME_ITEM)
    assert stale.status == FAILED and f"{tmp_path / 'expected.txt'}:1 (smoke/canal-json)" in stale.text
    assert "the entry is stale" in stale.text


def test_a_whole_case_entry_expects_every_rule_of_the_case(tmp_path):
    failing = [Failure(CASE.id, "CONSUMER-ORDER-1", "applied out of order")]
    v = verdict("NOT conformant", failing, listed="# known\nsmoke/*\n", tmp_path=tmp_path)
    item = judge_item(v, "CONSUMER-ORDER-1")
    assert item.status == XFAILED and item.expected_lines == (2,)
    assert item.text == f"expected failure: {tmp_path / 'expected.txt'}:2 smoke/*"
    assert judge_item(v, OUTCOME_ITEM).status == PASSED  # the entry matched a failure: not stale


def test_a_case_that_could_not_run_fails_its_outcome_item_and_judges_no_rule():
    v = CaseVerdict(CASE, error="the simulated TiCDC changefeed fails: too many retries")
    assert judge_item(v, OUTCOME_ITEM) == ItemVerdict(
        FAILED, "smoke/canal-json: the simulated TiCDC changefeed fails: too many retries")
    assert judge_item(v, "CONSUMER-ORDER-1").status == SKIPPED


def test_variants_are_every_changefeed_file_times_every_time_zone(tmp_path):
    toml = tmp_path / "old-value.toml"
    toml.write_text('[sink]\nprotocol = "canal-json"\n\n[sink.kafka-config.codec-config]\nenable-tidb-extension = true\n')
    got = cases(["smoke"], "canal-json", [toml], ["UTC", "Asia/Shanghai"])
    assert [c.id for c in got] == ["smoke/canal-json@changefeed=old-value",
                                   "smoke/canal-json@tz=Asia/Shanghai,changefeed=old-value"]
    assert len({c.digest for c in got}) == 2 and got[0].config_args == f"--changefeed {toml}"
    with pytest.raises(pytest.UsageError, match="selects canal-json, but the run asks for open-protocol; a "
                                                "changefeed file that names its protocol goes with --ticdc-protocol"):
        cases(["smoke"], "all", [toml], [])
    with pytest.raises(pytest.UsageError, match="--ticdc-changefeed .*missing.toml: no such file"):
        cases(["smoke"], "all", [Path(tmp_path / "missing.toml")], [])
