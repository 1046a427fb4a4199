"""The expected-failure list (findings/expected.py): parsing, matching, stale against not run, and the
update that keeps comments and order."""
from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_conformance.findings.case_ids import Failure
from ticdc_conformance.findings.expected import (
    NEW_FILE_HEADER,
    Entry,
    ExpectedFailures,
    ExpectedFailuresError,
)

LIST = """\
# known gaps of our consumer
smoke/debezium::CONSUMER-STATE-1

*/canal-json::CONSUMER-ORDER-1  row out of order
CONSUMER-DEDUP-1
smoke/open-protocol
# trailing comment
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expected.txt"
    path.write_text(text)
    return path


def test_load_reads_entries_with_their_lines(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, LIST))
    assert [(e.line, e.selector, e.message_prefix) for e in listed.entries] == [
        (2, "smoke/debezium::CONSUMER-STATE-1", ""),
        (4, "*/canal-json::CONSUMER-ORDER-1", "row out of order"),
        (5, "CONSUMER-DEDUP-1", ""),
        (6, "smoke/open-protocol", ""),
    ]


def test_a_missing_file_is_an_empty_list(tmp_path):
    listed = ExpectedFailures.load(tmp_path / "none.txt")
    assert listed.entries == [] and listed.path == tmp_path / "none.txt"


@pytest.mark.parametrize("line, words", [
    ("smoke", "bad selector 'smoke': not a case"),
    ("smoke/debezium::", "the part after '::' must be one rule id"),
    ("::CONSUMER-ORDER-1", "the part before '::' must be a case"),
    ("smoke/debezium::CONSUMER-*", "globs go on the case part"),
    ("smoke/::CONSUMER-ORDER-1", "needs a scenario and an encoding"),
    ("a/b::c::CONSUMER-ORDER-1", "more than one '::'"),
])
def test_a_bad_selector_names_file_line_and_why(tmp_path, line, words):
    path = write(tmp_path, f"# first\n{line}\n")
    with pytest.raises(ExpectedFailuresError) as e:
        ExpectedFailures.load(path)
    assert str(e.value).startswith(f"{path}:2: ") and words in str(e.value)


@pytest.mark.parametrize("line, rule", [
    ("CONSUMER-ORDR-1", "CONSUMER-ORDR-1"),
    ("smoke/debezium::CONSUMER-STAT-1  a message", "CONSUMER-STAT-1"),
    ("*/simple::consumer-eror", "consumer-eror"),
])
def test_an_unknown_rule_id_is_named_with_where_ids_come_from(tmp_path, line, rule):
    path = write(tmp_path, f"{line}\n")
    with pytest.raises(ExpectedFailuresError) as e:
        ExpectedFailures.load(path)
    text = str(e.value)
    assert text.startswith(f"{path}:1: unknown rule id {rule!r}")
    assert "rule catalogue" in text and "consumer-error" in text


def test_outcome_ids_are_rule_ids_too(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, "smoke/simple::consumer-error\nfinal-state-only\n"))
    assert [e.rule for e in listed.entries] == ["consumer-error", "final-state-only"]


def test_a_file_that_is_not_text_is_named(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ExpectedFailuresError, match=f"{path}: not UTF-8"):
        ExpectedFailures.load(path)


@pytest.mark.parametrize("entry, failure, matches", [
    (Entry(1, "smoke/debezium::CONSUMER-STATE-1"), Failure("smoke/debezium", "CONSUMER-STATE-1", "x"), True),
    (Entry(1, "smoke/debezium::CONSUMER-STATE-1"), Failure("smoke/debezium", "CONSUMER-ORDER-1", "x"), False),
    # A case part without `@` names the case under any variant (a gate adding --schedule keeps its list).
    (Entry(1, "smoke/debezium::CONSUMER-STATE-1"), Failure("smoke/debezium@tz=Asia/Shanghai", "CONSUMER-STATE-1",
                                                           "x"), True),
    (Entry(1, "smoke/debezium@tz=UTC*::CONSUMER-STATE-1"), Failure("smoke/debezium@tz=Asia/Shanghai",
                                                                   "CONSUMER-STATE-1", "x"), False),
    (Entry(1, "smoke/debezium@tz=Asia/*::CONSUMER-STATE-1"), Failure("smoke/debezium@tz=Asia/Shanghai",
                                                                     "CONSUMER-STATE-1", "x"), True),
    (Entry(1, "smoke/debezium::CONSUMER-STATE-1"), Failure("smoke/debezium-x@tz=UTC", "CONSUMER-STATE-1",
                                                           "x"), False),
    (Entry(1, "smoke/debezium*::CONSUMER-STATE-1"), Failure("smoke/debezium@tz=Asia/Shanghai", "CONSUMER-STATE-1",
                                                            "x"), True),
    (Entry(1, "*/debezium::CONSUMER-STATE-1", "DECIMAL"), Failure("ddl/debezium", "CONSUMER-STATE-1",
                                                                  "DECIMAL read as float"), True),
    (Entry(1, "*/debezium::CONSUMER-STATE-1", "DECIMAL"), Failure("ddl/debezium", "CONSUMER-STATE-1",
                                                                  "a DECIMAL read as float"), False),
    (Entry(1, "CONSUMER-ORDER-1"), Failure("any/simple@tz=UTC", "CONSUMER-ORDER-1", "x"), True),
    (Entry(1, "CONSUMER-ORDER-1"), Failure("any/simple", "CONSUMER-STATE-1", "x"), False),
    (Entry(1, "smoke/open-protocol"), Failure("smoke/open-protocol", "consumer-error", "crashed"), True),
    (Entry(1, "smoke/open-protocol"), Failure("smoke/canal-json", "consumer-error", "crashed"), False),
    # Globs are fnmatch's and case sensitive, so a list means the same on every platform.
    (Entry(1, "Smoke/*"), Failure("smoke/simple", "CONSUMER-ORDER-1", "x"), False),
])
def test_matching(entry, failure, matches):
    assert entry.matches(failure) is matches


def test_judge_sorts_failures_and_entries(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, LIST))
    state = Failure("smoke/debezium", "CONSUMER-STATE-1", "row 1 differs")
    order = Failure("ddl/canal-json", "CONSUMER-ORDER-1", "row out of order at 5")
    order_other = Failure("ddl/canal-json", "CONSUMER-ORDER-1", "another message")
    dedup = Failure("ddl/canal-json", "CONSUMER-DEDUP-1", "applied twice")
    judgement = listed.judge(["smoke/debezium", "ddl/canal-json", "smoke/open-protocol"],
                             [state, order, order_other, dedup])
    by_line = {e.line: e for e in listed.entries}
    assert judgement.expected == [(state, by_line[2]), (order, by_line[4]), (dedup, by_line[5])]
    assert judgement.unexpected == [order_other]
    assert judgement.stale == [by_line[6]]  # smoke/open-protocol ran and passed
    assert judgement.not_run == []
    assert not judgement.ok
    assert judgement.expects(dedup) == by_line[5] and judgement.expects(order_other) is None
    assert judgement.where(by_line[6]) == f"{listed.path}:6"
    assert [(e.line, n) for e, n in judgement.counts()] == [(2, 1), (4, 1), (5, 1)]


def test_an_entry_whose_cases_did_not_run_is_not_run_never_stale(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, "smoke/debezium::CONSUMER-STATE-1\nCONSUMER-DEDUP-1\n"))
    judgement = listed.judge(["smoke/canal-json"], [])
    assert judgement.not_run == [listed.entries[0]]
    assert judgement.stale == [listed.entries[1]]  # a bare rule id is judged by any case that ran
    nothing_ran = listed.judge([], [])
    assert nothing_ran.not_run == listed.entries and nothing_ran.stale == [] and nothing_ran.ok


def test_a_rule_of_a_case_whose_consumer_errored_was_not_judged(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, "smoke/simple::CONSUMER-STATE-1\nsmoke/simple::consumer-error\n"))
    crash = Failure("smoke/simple", "consumer-error", "exited 1")
    judgement = listed.judge(["smoke/simple"], [crash])
    assert judgement.expected == [(crash, listed.entries[1])]
    assert judgement.not_run == [listed.entries[0]] and judgement.ok


def test_every_entry_matching_a_failure_is_in_use(tmp_path):
    # A broad entry and a narrow one both covering a failure: neither is stale.
    listed = ExpectedFailures.load(write(tmp_path, "*/simple::CONSUMER-STATE-1\nsmoke/simple\n"))
    failure = Failure("smoke/simple", "CONSUMER-STATE-1", "x")
    judgement = listed.judge(["smoke/simple"], [failure])
    assert judgement.expected == [(failure, listed.entries[0])] and judgement.stale == [] and judgement.ok


def test_update_removes_stale_appends_unexpected_keeps_comments_and_order(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, LIST))
    failures = [Failure("smoke/debezium", "CONSUMER-STATE-1", "x"),
                Failure("ddl/canal-json", "CONSUMER-ORDER-1", "row out of order"),
                Failure("ddl/canal-json", "CONSUMER-DEDUP-1", "x"),
                Failure("ddl/simple", "CONSUMER-ROW-1", "first"),
                Failure("ddl/simple", "CONSUMER-ROW-1", "second"),
                Failure("ddl/simple", "consumer-error", "crashed")]
    judgement = listed.judge(["smoke/debezium", "ddl/canal-json", "smoke/open-protocol", "ddl/simple"], failures)
    text = listed.updated_text(judgement)
    assert text == LIST.replace("smoke/open-protocol\n", "") + "ddl/simple::CONSUMER-ROW-1\nddl/simple::consumer-error\n"
    # Updating again from the same run changes nothing.
    path = write(tmp_path, text)
    again = ExpectedFailures.load(path)
    rejudged = again.judge(["smoke/debezium", "ddl/canal-json", "smoke/open-protocol", "ddl/simple"], failures)
    assert rejudged.ok and again.updated_text(rejudged) == text


def test_update_of_a_missing_file_starts_it_with_a_header(tmp_path):
    listed = ExpectedFailures.load(tmp_path / "new.txt")
    judgement = listed.judge(["smoke/simple"], [Failure("smoke/simple", "CONSUMER-ORDER-1", "x")])
    listed.update(judgement)
    assert (tmp_path / "new.txt").read_text() == NEW_FILE_HEADER + "smoke/simple::CONSUMER-ORDER-1\n"
    assert [e.selector for e in ExpectedFailures.load(tmp_path / "new.txt").entries] == ["smoke/simple::CONSUMER-ORDER-1"]


def test_update_of_a_file_without_final_newline(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, "# mine\nsmoke/simple::CONSUMER-STATE-1"))
    judgement = listed.judge(["smoke/simple"], [Failure("smoke/simple", "CONSUMER-STATE-1", "x"),
                                                Failure("smoke/simple", "CONSUMER-ORDER-1", "x")])
    assert listed.updated_text(judgement) == "# mine\nsmoke/simple::CONSUMER-STATE-1\nsmoke/simple::CONSUMER-ORDER-1\n"
    # With nothing to change the text is byte for byte the file's.
    clean = listed.judge(["smoke/simple"], [Failure("smoke/simple", "CONSUMER-STATE-1", "x")])
    assert listed.updated_text(clean) == "# mine\nsmoke/simple::CONSUMER-STATE-1"


def test_judgement_json(tmp_path):
    listed = ExpectedFailures.load(write(tmp_path, "smoke/simple::CONSUMER-STATE-1\nCONSUMER-DEDUP-1  twice\n"))
    failure = Failure("smoke/simple", "CONSUMER-STATE-1", "x")
    data = listed.judge(["smoke/simple"], [failure]).to_json()
    assert data["ok"] is False and data["file"] == str(listed.path)
    assert data["expected"] == [{"check": "smoke/simple::CONSUMER-STATE-1", "message": "x",
                                 "entry": f"{listed.path}:1"}]
    assert data["stale"] == [{"entry": f"{listed.path}:2", "selector": "CONSUMER-DEDUP-1  twice"}]
