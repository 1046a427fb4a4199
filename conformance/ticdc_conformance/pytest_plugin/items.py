"""The test items `pytest --ticdc-consumer=SPEC` collects: one per case and rule, plus one per case for
what failed it as a whole. Their ids are the check ids (`smoke/canal-json::CONSUMER-ORDER-1`,
`smoke/canal-json::outcome`), so `-k`, `--deselect` and the JUnit report speak the suite's names."""
from __future__ import annotations

from typing import Iterator

import pytest

from ticdc_conformance.findings.case_ids import VARIANT_SEPARATOR, check_id, run_rules

from .matrix import Case
from .verdicts import FAILED, OUTCOME_ITEM, SKIPPED, XFAILED, CaseRuns

RUNS = pytest.StashKey[CaseRuns]()
# The item's user property naming the expected-failure entries (their line numbers) that matched its
# failures; the session reads it back from the reports, under pytest-xdist too (plugin.py).
EXPECTED_PROPERTY = "ticdc-expected-entries"


class CheckFailed(Exception):
    """A check failed; its text is the whole report (findings, replay command), no traceback."""


def xdist_group(case: str) -> str:
    """The case's pytest-xdist group. xdist reads a group after the id's last `@`, and a variant case
    id holds one (`smoke/debezium@tz=UTC`), so the group spells it `+`."""
    return case.replace(VARIANT_SEPARATOR, "+")


class CheckItem(pytest.Item):
    def __init__(self, *, case: Case, rule: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.case, self.rule = case, rule
        # With --dist loadgroup every item of a case goes to one worker, which runs the case once.
        self.add_marker(pytest.mark.xdist_group(xdist_group(case.id)))

    def runtest(self) -> None:
        verdict = self.config.stash[RUNS].judge(self.case.id, self.rule)
        if verdict.expected_lines:
            self.user_properties.append((EXPECTED_PROPERTY, ",".join(map(str, verdict.expected_lines))))
        if verdict.status == SKIPPED:
            pytest.skip(verdict.text)
        if verdict.status == XFAILED:
            pytest.xfail(verdict.text)
        if verdict.status == FAILED:
            raise CheckFailed(verdict.text)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, check_id(self.case.id, self.rule)  # the headline, without an xdist group


COLLECTOR = "ticdc-conformance"  # the collector holding the items, beside the session's own


class ConformanceCases(pytest.Collector):
    """The items of every case: its run rules, sorted, then its outcome item. Collected like any
    folder's tests (pytest counts them, -k and xdist see them), with no test file to find."""

    def collect(self) -> Iterator[CheckItem]:
        rules = run_rules() + (OUTCOME_ITEM,)
        for case in self.config.stash[RUNS].cases.values():
            for rule in rules:
                check = check_id(case.id, rule)
                yield CheckItem.from_parent(self, name=check, nodeid=check, case=case, rule=rule)


def suffix_group(item: pytest.Item) -> None:
    """What pytest-xdist's --dist loadgroup does to an item's id (`ID@GROUP`), where xdist could not:
    it writes the id to `_nodeid`, which pytest 9 no longer reads (it keeps a structured `_id`)."""
    group = xdist_group(item.case.id)
    new = f"{item.nodeid}@{group}"
    if item.nodeid.endswith(f"@{group}"):
        return
    if hasattr(item, "_id"):
        item._id = type(item._id).parse(new)
    else:
        item._nodeid = new
