"""The checks of a run as the reports show them: one per case and rule judged (findings/case_ids.py),
each passed, failed, expected (every failure of it is in the expected-failure list) or not
applicable (the rule was not judged on that case), with the findings and failures behind it.

A rule is not judged on a case when the consumer declined the case (`not applicable`), when the
consumer errored (then only `CASE::consumer-error` is judged), or when the rule is judged from the
applied log alone and the consumer showed none with a checkpoint (a final-state-only case): such a
rule neither passes nor fails there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

from ticdc_conformance.findings.case_ids import (
    CONSUMER_ERROR_ID,
    RUN_CHECKS,
    Failure,
    by_rule,
    check_id,
    failures_of,
    rules_judged,
)
from ticdc_conformance.findings.expected import Judgement
from ticdc_conformance.findings.finding import Finding
from ticdc_conformance.findings.gate import gate_exit
from ticdc_conformance.findings.outcome import (
    CONSUMER_ERROR,
    FINAL_STATE_ONLY_REASON,
    NOT_APPLICABLE,
)
from ticdc_conformance.runner import EncodingResult

PASSED, FAILED, EXPECTED, NOT_JUDGED = "passed", "failed", "expected", "not-applicable"
STATUSES = (PASSED, FAILED, EXPECTED, NOT_JUDGED)
APPLIED_LOG_CHECK = "checkpoints.applied-log"
STATES_RULE = "CONSUMER-CHECKPOINT-1"  # judged on the consumer's tables at checkpoints (states/)


@dataclass(frozen=True)
class Check:
    """One rule judged on one case."""

    case: str
    rule: str
    status: str
    findings: tuple[Finding, ...] = ()  # the rule's listed findings in this case
    failures: tuple[Failure, ...] = ()
    expected_by: tuple[str, ...] = ()  # FILE:LINE of the entries that made failures of it expected
    reason: str = ""  # why a check was not judged

    @property
    def id(self) -> str:
        return check_id(self.case, self.rule)

    def to_json(self) -> dict:
        out = {"id": self.id, "rule": self.rule, "status": self.status, "findings": len(self.findings)}
        if self.expected_by:
            out["expected_by"] = list(self.expected_by)
        if self.reason:
            out["reason"] = self.reason
        return out


@lru_cache(maxsize=1)
def applied_log_rules() -> frozenset[str]:
    """The rules only the checkpoint check judges (none of the other run checks names them)."""
    from ticdc_conformance.rules.known_checks import register_known_checks
    from ticdc_conformance.rules.registry import REGISTRY

    register_known_checks(REGISTRY)
    by_name = {c.name: set(c.rule_ids) for c in REGISTRY.checks()}
    others = set().union(*(by_name[name] for name in RUN_CHECKS if name != APPLIED_LOG_CHECK))
    return frozenset(by_name[APPLIED_LOG_CHECK] - others)


def states_compared(result: EncodingResult) -> bool:
    """The consumer's tables were compared at its checkpoints (it wrote states/)."""
    c = result.checkpoints
    return result.ordering_verified and c is not None and bool(c.divergence)


def _not_judged(result: EncodingResult, rule: str) -> str:
    """Why a rule without failures was not judged on this case, "" when it was."""
    if result.outcome == NOT_APPLICABLE:
        return f"not applicable: {result.not_applicable}"
    if result.outcome == CONSUMER_ERROR and rule != CONSUMER_ERROR_ID:
        return f"not judged: the consumer errored ({check_id(result.case_id, CONSUMER_ERROR_ID)})"
    if rule in applied_log_rules() and not result.ordering_verified:
        c = result.checkpoints
        return "not judged: " + (c.note if c is not None and c.note and not c.checked else FINAL_STATE_ONLY_REASON)
    if rule == STATES_RULE and not states_compared(result):
        return "not judged: the consumer wrote no states/, its tables were not compared at checkpoints"
    return ""


def case_checks(result: EncodingResult, judgement: Optional[Judgement] = None) -> list[Check]:
    """The checks of one case, in the order of `rules_judged`."""
    case = result.case_id
    failures = by_rule(failures_of(case, result))
    findings: dict[str, list[Finding]] = {}
    for f in result.findings:
        findings.setdefault(f.rule, []).append(f)
    out = []
    for rule in rules_judged(result):
        failed = tuple(failures.get(rule, ()))
        found = tuple(findings.get(rule, ()))
        if not failed:
            reason = _not_judged(result, rule)
            out.append(Check(case, rule, NOT_JUDGED if reason else PASSED, found, reason=reason))
            continue
        entries = [judgement.expects(f) if judgement is not None else None for f in failed]
        where = tuple(dict.fromkeys(judgement.where(e) for e in entries if e is not None)) if judgement else ()
        status = EXPECTED if all(e is not None for e in entries) else FAILED
        out.append(Check(case, rule, status, found, failed, where))
    return out


@dataclass
class RunChecks:
    """Every case's checks, computed once for the three reports; `cases` pairs each result with its
    checks, in the order of the results."""

    results: Sequence[EncodingResult]
    judgement: Optional[Judgement] = None
    # The run's exit status where its caller decided it otherwise (an update of the list exits 0).
    exit_override: Optional[int] = None
    cases: list[tuple[EncodingResult, list[Check]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cases = [(r, case_checks(r, self.judgement)) for r in self.results]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for _, checks in self.cases:
            for c in checks:
                out[c.status] += 1
        return out

    @property
    def exit_code(self) -> int:
        return self.exit_override if self.exit_override is not None else gate_exit(self.results, self.judgement)
