"""Each case runs once per process, when the first of its items needs it; every item of the case then
reports from that verdict: a rule item on its rule's findings, the outcome item on what failed the
case as a whole (a consumer error, a final-state-only run, a finding of a rule outside run_rules()).

An expected-failure list (findings/expected.py) turns an item whose failures it all expects into an
xfail, and an item it lists that passes into a failure (the entry is stale). A bare rule id lists
no single item (it expects that rule wherever it fails), so its staleness is judged over the whole
session (plugin.py), never by one passing item."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from ticdc_conformance.findings.case_ids import CONSUMER_ERROR_ID, Failure, check_id, failures_of, run_rules
from ticdc_conformance.findings.outcome import FINAL_STATE_ONLY, FINAL_STATE_ONLY_REASON, NOT_APPLICABLE

from .matrix import Case

if TYPE_CHECKING:
    from ticdc_conformance.findings.expected import Entry, ExpectedFailures, Judgement

OUTCOME_ITEM = "outcome"  # the item of a case's failures that no rule item reports
FINDINGS_SHOWN = 5  # per failing item, as `run` prints per rule

PASSED, FAILED, XFAILED, SKIPPED = "passed", "failed", "xfailed", "skipped"


@dataclass
class CaseVerdict:
    """A case's run: the result, or why it could not run; its failures and their judgement."""

    case: Case
    result: Optional[object] = None  # runner.EncodingResult
    error: Optional[str] = None  # the case could not run (the simulated changefeed fails)
    failures: list[Failure] = field(default_factory=list)
    judgement: Optional[Judgement] = None

    @property
    def judged(self) -> bool:
        """Its rules were judged: it ran, applied, and the consumer did not fail."""
        return (self.error is None and self.result.outcome != NOT_APPLICABLE
                and not any(f.rule == CONSUMER_ERROR_ID for f in self.failures))


@dataclass(frozen=True)
class ItemVerdict:
    status: str  # PASSED, FAILED, XFAILED or SKIPPED
    text: str = ""
    expected_lines: tuple[int, ...] = ()  # the list's entries that matched this item's failures


def item_rules(rule: str, failure_rule: str) -> bool:
    """Whether a failure of `failure_rule` is reported by the item of `rule`."""
    if rule == OUTCOME_ITEM:
        return failure_rule not in run_rules()
    return failure_rule == rule


def lists_item(entry: Entry, case: str, rule: str) -> bool:
    """The entry names this item: its case part matches (a bare rule id names no single item) and its
    rule is the item's; a whole-case entry names the outcome item."""
    if entry.case_glob is None or not entry.judges_case(case):
        return False
    if rule == OUTCOME_ITEM:
        return entry.rule is None or item_rules(OUTCOME_ITEM, entry.rule)
    return entry.rule == rule


class CaseRuns:
    """The cases of a session by id and their verdicts, each computed once."""

    def __init__(self, cases: list[Case], run: Callable[[Case], CaseVerdict],
                 expected: Optional[ExpectedFailures]) -> None:
        self.cases = {c.id: c for c in cases}
        self._run, self.expected = run, expected
        self.verdicts: dict[str, CaseVerdict] = {}
        self.crashed: dict[str, Exception] = {}  # a case whose run raised: its items all show that

    def verdict(self, case: str) -> CaseVerdict:
        if case in self.crashed:
            raise self.crashed[case]
        if case not in self.verdicts:
            try:
                verdict = self._run(self.cases[case])
            except Exception as e:  # a fault of the suite, not a verdict: shown, never run again
                self.crashed[case] = e
                raise
            if self.expected is not None:
                cases = [case] if verdict.error is None and verdict.result.outcome != NOT_APPLICABLE else []
                verdict.judgement = self.expected.judge(cases, verdict.failures)
            self.verdicts[case] = verdict
        return self.verdicts[case]

    def judge(self, case: str, rule: str) -> ItemVerdict:
        return judge_item(self.verdict(case), rule)


def judge_item(verdict: CaseVerdict, rule: str) -> ItemVerdict:
    case, result = verdict.case.id, verdict.result
    if verdict.error is not None:
        if rule != OUTCOME_ITEM:
            return ItemVerdict(SKIPPED, f"not judged: the case could not run (see {check_id(case, OUTCOME_ITEM)})")
        return ItemVerdict(FAILED, f"{case}: {verdict.error}")
    if result.outcome == NOT_APPLICABLE:
        return ItemVerdict(SKIPPED, f"not applicable: {result.not_applicable}")
    if rule != OUTCOME_ITEM and not verdict.judged:
        return ItemVerdict(SKIPPED, f"not judged: the consumer failed (see {check_id(case, OUTCOME_ITEM)})")
    mine = [f for f in verdict.failures if item_rules(rule, f.rule)]
    judgement = verdict.judgement
    expected = [(f, judgement.expects(f)) for f in mine] if judgement is not None else [(f, None) for f in mine]
    unexpected = [f for f, entry in expected if entry is None]
    entries = list(dict.fromkeys(entry for _, entry in expected if entry is not None))
    lines = tuple(e.line for e in entries)
    stale = [e for e in judgement.stale if lists_item(e, case, rule)] if judgement is not None else []
    if unexpected or (mine and stale):
        text = failure_text(verdict, rule, len(mine) - len(unexpected))
        if stale:
            text += "\n" + stale_text(judgement, stale, case, rule, passes=False)
        return ItemVerdict(FAILED, text, lines)
    if mine:
        return ItemVerdict(XFAILED, "expected failure: " + "; ".join(f"{judgement.where(e)} {e}" for e in entries),
                           lines)
    if stale:
        return ItemVerdict(FAILED, stale_text(judgement, stale, case, rule, passes=True))
    return ItemVerdict(PASSED)


def stale_text(judgement: Judgement, stale: list[Entry], case: str, rule: str, passes: bool) -> str:
    what = "passes" if passes else "does not fail as listed"
    return "\n".join(f"[XPASS(strict)] {check_id(case, rule)} {what}, but {judgement.where(e)} ({e}) lists it as an "
                     f"expected failure: the entry is stale; remove that line" for e in stale)


def failure_text(verdict: CaseVerdict, rule: str, expected: int) -> str:
    """The item's failure: its findings (the first FINDINGS_SHOWN, then how many more and where they
    all are) in the shared format of findings/finding.py, or the case's error; then the replay command."""
    result = verdict.result
    case = verdict.case.id
    lines = [f"{check_id(case, rule)}: {result.outcome}"]
    if rule == OUTCOME_ITEM and result.error is not None:
        lines.append("  error: " + "\n    ".join(result.error.splitlines()))
        if result.consumer_log is not None:
            lines.append(f"  consumer log: {result.consumer_log}")
    if rule == OUTCOME_ITEM and result.outcome == FINAL_STATE_ONLY:
        lines.append(f"  {FINAL_STATE_ONLY_REASON}; --ticdc-final-state-only accepts that")
    findings = [f for f in result.findings if item_rules(rule, f.rule)]
    if findings:
        lines.append(f"  {len(findings)} finding(s)" + (f", {expected} expected by the list" if expected else ""))
    for f in findings[:FINDINGS_SHOWN]:
        lines.append("\n".join("  " + line for line in f.render(result.context).splitlines()))
    if len(findings) > FINDINGS_SHOWN:
        where = result.result_file if result.result_file is not None else "the case's result.json"
        lines.append(f"  … {len(findings) - FINDINGS_SHOWN} more {rule} findings; every finding is in {where}")
    suppressed = result.checkpoints.suppressed if result.checkpoints is not None else 0
    if findings and suppressed:
        lines.append(f"  ({result.checkpoint_summary})")
    lines.append(f"replay: {result.replay_command}")
    return "\n".join(lines)


def run_case(case: Case, consumer, seed: int, work: Path, schedule=None, final_state_only: bool = False,
             consumer_timeout_s: Optional[float] = None) -> CaseVerdict:
    """Runs one case as `run` would (runner.run_encoding) and collects its failures."""
    from ticdc_conformance.runner import CONSUMER_TIMEOUT_S, run_encoding
    from ticdc_generators.errors import ChangefeedFailure

    try:
        result = run_encoding(case.scenario, seed, case.encoding, work, consumer, time_zone=case.time_zone,
                              config=case.config, config_args=case.config_args, final_state_only=final_state_only,
                              consumer_timeout_s=consumer_timeout_s or CONSUMER_TIMEOUT_S, digest=case.digest,
                              schedule=schedule, variant=case.variant)
    except ChangefeedFailure as e:  # where real TiCDC would fail the changefeed: TiCDC's reason, no traceback
        return CaseVerdict(case, error=f"the simulated TiCDC changefeed fails (scenario {case.scenario}, "
                                       f"seed {seed}): {e}")
    return CaseVerdict(case, result, failures=failures_of(case.id, result))


def worker_folder(work: Path) -> Path:
    """WORK, or WORK/<worker> under pytest-xdist: two workers never empty each other's case folder."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return work / worker if worker else work
