"""The names of what a conformance run judges, one spelling for the expected-failure lists, the pytest
items, the JUnit/JSON/HTML reports and the replay lines (docs/expected-failures.md).

- A **case** is one scenario in one encoding under one set of options: `SCENARIO/ENCODING`, or
  `SCENARIO/ENCODING@VARIANT` when options beyond the scenario's defaults shaped it. The variant is a
  readable label (`tz=Asia/Shanghai,changefeed=old-value`), never a digest, so a checked-in list
  survives an edit of a changefeed file's comments. The seed is not part of it: a list names cases,
  and `run --seed` changes the data, not which cases there are.
- A **check** is one rule judged on one case: `CASE::RULE`. RULE is a catalogue id
  (`CONSUMER-ORDER-1`) or one of the outcome ids below, for a case that failed without a finding.

Which rules a case is judged on is the union of the rules of the consumer checks every run makes
(differential.final-state, causes.surplus-rows, checkpoints.applied-log in rules/known_checks.py), so
a passing rule is reported as a pass, not only a failing one as a failure.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional, Protocol, Sequence

# A case that failed as a whole, with no finding to name a rule by.
CONSUMER_ERROR_ID = "consumer-error"  # it could not start, crashed, timed out or wrote no final/
FINAL_STATE_ONLY_ID = "final-state-only"  # judged on its final state only and not accepted as such
OUTCOME_IDS = (CONSUMER_ERROR_ID, FINAL_STATE_ONLY_ID)

# The checks a `run` makes on every case (rules/known_checks.py); their rules are the case's checks.
RUN_CHECKS = ("differential.final-state", "causes.surplus-rows", "checkpoints.applied-log")

CASE_SEPARATOR = "/"
VARIANT_SEPARATOR = "@"
RULE_SEPARATOR = "::"


def case_id(scenario: str, encoding: str, variant: str = "") -> str:
    return f"{scenario}{CASE_SEPARATOR}{encoding}" + (f"{VARIANT_SEPARATOR}{variant}" if variant else "")


def check_id(case: str, rule: str) -> str:
    return f"{case}{RULE_SEPARATOR}{rule}"


def split_check_id(text: str) -> tuple[str, Optional[str]]:
    """`CASE::RULE` -> (CASE, RULE); a bare case id -> (CASE, None)."""
    case, sep, rule = text.partition(RULE_SEPARATOR)
    return (case, rule) if sep else (case, None)


def variant_label(time_zone: str = "UTC", changefeed: Optional[str] = None, sink_uri: Optional[str] = None,
                  version_profile: str = "ticdc", schedule: Optional[str] = None,
                  delivery: Sequence[tuple[str, object]] = (), events: Optional[int] = None) -> str:
    """The readable label of the options that shaped a case beyond its scenario's defaults; "" for
    none. `changefeed` is the changefeed file's name without its suffix; `delivery` the simulator
    options given on the command line as (option name, value), e.g. ("failovers", 3)."""
    parts = ([f"tz={time_zone}"] if time_zone != "UTC" else []) \
        + ([f"changefeed={changefeed}"] if changefeed else []) \
        + ([f"sink-uri={sink_uri}"] if sink_uri else []) \
        + ([f"profile={version_profile}"] if version_profile != "ticdc" else []) \
        + [f"{name}={value}" for name, value in delivery] \
        + ([f"events={events}"] if events is not None else []) \
        + ([f"schedule={schedule}"] if schedule else [])
    return ",".join(parts)


@lru_cache(maxsize=1)  # the registry is fixed once the known checks are in; items and reports ask per case
def run_rules() -> tuple[str, ...]:
    """The catalogue rules every case of a `run` is judged on, sorted."""
    from ticdc_conformance.rules.known_checks import register_known_checks
    from ticdc_conformance.rules.registry import REGISTRY

    register_known_checks(REGISTRY)
    names = {c.name: c for c in REGISTRY.checks()}
    return tuple(sorted({rule for name in RUN_CHECKS for rule in names[name].rule_ids}))


class _Judged(Protocol):
    """What a case's verdict offers (runner.EncodingResult): this layer does not import the runner."""

    outcome: str
    error: Optional[str]

    @property
    def findings(self) -> list: ...


@dataclass(frozen=True)
class Failure:
    """One failed check of a case: its rule (or outcome id) and the first line of what broke."""

    case: str
    rule: str
    message: str

    @property
    def id(self) -> str:
        return check_id(self.case, self.rule)


def failures_of(case: str, result: _Judged) -> list[Failure]:
    """Every failed check of a case, in the order its findings came, one per finding; a consumer error
    or an unaccepted final-state-only outcome is one failure under its outcome id."""
    from ticdc_conformance.findings.outcome import CONSUMER_ERROR, FINAL_STATE_ONLY

    if result.outcome == CONSUMER_ERROR:
        return [Failure(case, CONSUMER_ERROR_ID, (result.error or "").strip().split("\n", 1)[0])]
    out = [Failure(case, f.rule, f.message.split("\n", 1)[0]) for f in result.findings]
    if result.outcome == FINAL_STATE_ONLY:
        out.append(Failure(case, FINAL_STATE_ONLY_ID, "judged on its final state only"))
    return out


def rules_judged(result: _Judged) -> tuple[str, ...]:
    """The rules a case was judged on: every run rule plus any other a finding names, sorted, then
    the outcome ids of a case that failed as a whole."""
    named = {f.rule for f in result.findings}
    outcome = [r.rule for r in failures_of("", result) if r.rule in OUTCOME_IDS]
    return tuple(sorted(set(run_rules()) | named)) + tuple(outcome)


def by_rule(failures: Iterable[Failure]) -> dict[str, list[Failure]]:
    out: dict[str, list[Failure]] = {}
    for f in failures:
        out.setdefault(f.rule, []).append(f)
    return out
