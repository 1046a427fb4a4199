"""The outcome of one encoding's run, its verdict words and the exit status of `run` and `check`.

| outcome | verdict | exit |
|---|---|---|
| conformant | `conformant` | 0 |
| findings | `NOT conformant` | 1 |
| consumer error (could not start, crashed, timed out, exited 0 without final/) | `consumer error` | 3 |
| the stream carries watermarks, the consumer wrote no applied log with a checkpoint | `final state only` | 4 |
| … accepted by `--final-state-only` | `conformant (final state only)` | 0 |
| a fed consumer answered `unsupported` (docs/testee-protocol.md): it does not consume this encoding | `not applicable` | 0 |
| (a run with `--expected-failures`) no unexpected failure, but an entry that now passes | `the expected-failure list is stale` | 6 |
| every case `not applicable`: the consumer declined everything, nothing was judged | `nothing judged` | 5 |

`not applicable` fails nothing (exit 0) beside a case that was judged, but it is never a pass, and a
run in which the consumer declined every case exits 5 (as pytest does when it collects nothing): a gate
must not stay green while nothing is checked, e.g. after a consumer stopped accepting its encoding.
The JSON summary counts it apart the JSON summary counts it apart
(`not_applicable`, `"conformant": false` on the result), and JUnit reports it as skipped, with the
consumer's reason.

Exit 2 is a bad invocation (click's usage errors, refused options and folders, an expected-failure
list that cannot be read). Across encodings the most severe outcome gives the exit status: 3, then 1,
then 4, then 0.

With an expected-failure list (`--expected-failures FILE`, findings/expected.py) only the unexpected
failures count: consumer-error 3, final-state-only 4, any rule 1, most severe first as above; when
none is left but an entry of the list now passes, the exit is 6 (`the expected-failure list is
stale`); every failure expected and no stale entry, 0.
"""
from __future__ import annotations

from typing import Iterable

CONFORMANT = "conformant"
NOT_CONFORMANT = "NOT conformant"
CONSUMER_ERROR = "consumer error"
FINAL_STATE_ONLY = "final state only"
FINAL_STATE_ONLY_ACCEPTED = "conformant (final state only)"
NOT_APPLICABLE = "not applicable"

EXIT_CODES = {CONFORMANT: 0, FINAL_STATE_ONLY_ACCEPTED: 0, NOT_APPLICABLE: 0, NOT_CONFORMANT: 1, CONSUMER_ERROR: 3,
              FINAL_STATE_ONLY: 4}
PASSES = frozenset({CONFORMANT, FINAL_STATE_ONLY_ACCEPTED})  # what counts as a pass; never NOT_APPLICABLE
EXIT_STALE_EXPECTED_FAILURES = 6  # the expected-failure list names a failure that now passes
STALE_EXPECTED_FAILURES = "the expected-failure list is stale"
EXIT_NOTHING_JUDGED = 5  # every case not applicable: the consumer declined everything
NOTHING_JUDGED = "nothing judged: the consumer declined every case (answered `unsupported`)"
_SEVERITY = (0, EXIT_NOTHING_JUDGED, EXIT_STALE_EXPECTED_FAILURES, 4, 1, 3)  # least to most severe
# The table's colour for each verdict.
STYLES = {CONFORMANT: "green", FINAL_STATE_ONLY_ACCEPTED: "green", NOT_CONFORMANT: "red", CONSUMER_ERROR: "red",
          FINAL_STATE_ONLY: "yellow", NOT_APPLICABLE: "dim"}

ORDERING_NOT_VERIFIED = "ordering not verified"
FINAL_STATE_ONLY_REASON = ("the stream carries watermarks, but the consumer wrote no applied.ndjson with a "
                           "checkpoint: the order it applied things in is not shown, only its final tables are judged "
                           "(docs/consumer-protocol.md, \"Output\")")


def overall_exit(codes: Iterable[int]) -> int:
    """The most severe of the encodings' exit codes (0 for none)."""
    return max(codes, key=_SEVERITY.index, default=0)

