"""Verdicts built by hand for the report tests: every outcome a case can have, without running a
consumer (tests/report/test_html_chromium.py renders a real run)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ticdc_conformance.checks.checkpoints import CheckpointVerdict
from ticdc_conformance.checks.differential import TableVerdict
from ticdc_conformance.findings.expected import ExpectedFailures, Judgement
from ticdc_conformance.findings.finding import Finding
from ticdc_conformance.runner import EncodingResult

TS = 463267587956932610  # a TSO: physical ms << 18
STEP = 300 << 18  # 300 ms between checkpoints


def state_finding(key: int, expected: str = "1.50", actual: str = "1.5") -> Finding:
    return Finding("CONSUMER-STATE-1", "smoke.orders", [key], "the row differs from upstream's",
                   {"root['amount']": {"expected": expected, "actual": actual}}, commit_ts=TS + key, record=f"t/0@{key}",
                   expected={"id": key, "amount": expected}, actual={"id": key, "amount": actual})


def delete_finding(key: str) -> Finding:
    return Finding("CONSUMER-DELETE-1", "smoke.customers", [key], "the DELETE was not applied",
                   commit_ts=TS, record="t/1@7", actual={"code": key, "name": "Zoë <b>bold</b>"})


def checkpoints(divergence: list[int], findings: tuple[Finding, ...] = ()) -> CheckpointVerdict:
    return CheckpointVerdict(True, len(divergence), findings=list(findings),
                             divergence=[(TS + i * STEP, rows) for i, rows in enumerate(divergence)])


def result(encoding: str = "canal-json", findings: tuple[Finding, ...] = (), *, scenario: str = "smoke",
           divergence: Optional[list[int]] = None, checkpoint_findings: tuple[Finding, ...] = (),
           error: Optional[str] = None, not_applicable: Optional[str] = None, watermarks: bool = True,
           final_state_only: bool = False, shows_log: bool = True, variant: str = "") -> EncodingResult:
    """A case of `scenario` in `encoding`: its final-state findings, its checkpoint verdict (the
    divergence at each checkpoint; `shows_log=False`: no applied log), or an error / a declined case."""
    r = EncodingResult(scenario, 1, encoding, encoding, "python consumer.py", records=120, seconds=2.0,
                       watermarks=watermarks, final_state_only=final_state_only, variant=variant)
    r.error, r.not_applicable = error, not_applicable
    if error is None and not_applicable is None:
        r.tables = [TableVerdict("smoke.orders", 10, 10, list(findings))]
        r.checkpoints = checkpoints(divergence if divergence is not None else [0, 0, 0], checkpoint_findings) \
            if shows_log else CheckpointVerdict(False, 0, "the consumer wrote no applied.ndjson: the checkpoint "
                                                "check was not possible, it is checked on its final state only")
    return r


def judge(tmp_path: Path, text: str, results: list[EncodingResult]) -> Judgement:
    from ticdc_conformance.findings.case_ids import failures_of

    path = tmp_path / "expected-failures.txt"
    path.write_text(text)
    return ExpectedFailures.load(path).judge([r.case_id for r in results if r.not_applicable is None],
                                             [f for r in results for f in failures_of(r.case_id, r)])
