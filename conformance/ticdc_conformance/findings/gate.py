"""The exit status of a gated run: the cases' outcomes (outcome.py) measured against an
expected-failure list (expected.py), by the case ids of case_ids.py."""
from __future__ import annotations

from typing import Iterable

from .case_ids import failures_of
from .outcome import EXIT_NOTHING_JUDGED, EXIT_STALE_EXPECTED_FAILURES, NOT_APPLICABLE, overall_exit


def gate_exit(results: Iterable, judgement=None) -> int:
    """The exit status of a run or check (runner.EncodingResult's; this layer does not import the
    runner): the most severe outcome among the cases; with an expected-failure list
    (findings/expected.py's Judgement), among the cases with a failure the list does not expect only,
    then 6 when nothing else failed but the list holds a stale entry; 5 when nothing failed because
    every case was declined."""
    results = list(results)
    if judgement is None:
        code = overall_exit(r.exit_code for r in results)
    else:
        code = overall_exit(r.exit_code for r in results
                            if any(judgement.expects(f) is None for f in failures_of(r.case_id, r)))
        if code == 0 and judgement.stale:
            code = EXIT_STALE_EXPECTED_FAILURES
    if code == 0 and results and all(r.outcome == NOT_APPLICABLE for r in results):
        return EXIT_NOTHING_JUDGED
    return code
