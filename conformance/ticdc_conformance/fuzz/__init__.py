"""`fuzz`: Hypothesis draws an upstream history, a sink configuration of the protocol and a
delivery schedule, runs the consumer under test on them and judges it with every check of `run`;
a failure shrinks to a minimal case, saved as a regression case (docs/fuzz.md).

    space.py       what is drawn (FuzzCase) and how it shrinks
    example.py     one example: case folder, consumer run, verdict
    engine.py      the fuzz loop: the budget, shrinking, the report
    search.py      the Hypothesis search, reproducible from its seed; the example database
    regression.py  regression cases in the golden corpus's format, and reading them back
    replay.py      running a consumer on saved regression cases
    profiles.py    the budgets (ci, nightly)
    progress.py    a progress bar on a terminal, periodic lines otherwise
"""
from .engine import FuzzFailure, FuzzReport, fuzz_encoding
from .example import Verdict, run_case
from .profiles import PROFILES, Budget, parse_duration
from .progress import Progress
from .regression import RegressionCaseError, iter_cases, load_case, write_case
from .replay import replay_case
from .space import FuzzCase, encodings, fuzz_cases

__all__ = ["PROFILES", "Budget", "FuzzCase", "FuzzFailure", "FuzzReport", "Progress", "RegressionCaseError",
           "Verdict", "encodings", "fuzz_cases", "fuzz_encoding", "iter_cases", "load_case", "parse_duration",
           "replay_case", "run_case", "write_case"]
