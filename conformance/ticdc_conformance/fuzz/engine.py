"""The fuzz loop: Hypothesis draws FuzzCases (space.py), each runs the consumer under test
(example.py); the first failing one is shrunk by Hypothesis to a minimal history + configuration +
schedule, run once more to keep its case folder and verdict, and saved as a regression case
(regression.py).

The budget stops the drawing of new examples (`_OutOfBudget`, a BaseException Hypothesis lets
through). Shrinking has its own time limit (Budget.shrink_seconds) and, optionally, a count
(Budget.shrink_examples): past either, the run stops the same way and keeps the smallest failing
case found so far.

The examples drawn depend on the seed alone (search.py): the same seed draws the same sequence from
the command line and in pytest, and a longer budget draws more of it. Hypothesis's example database
(a folder, by default reports/fuzz/.hypothesis) is keyed by consumer and encoding and stores every
failure; it is read back, before anything new is drawn, only when `replay_database` asks.
"""
from __future__ import annotations

import hashlib
import random
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hypothesis.errors import Flaky

from ticdc_conformance.consumers.adapters import ConsumerAdapter

from .example import Verdict, run_case
from .profiles import DEFAULT_PROFILE, PROFILES, Budget
from .progress import Progress
from .regression import case_name, replay_command, write_case
from .search import Drawn, run_search
from .space import FuzzCase, fuzz_cases

DEFAULT_TIMEOUT_S = 120.0  # seconds one example's consumer may run


class _OutOfBudget(BaseException):
    """The budget is spent: stop drawing (not an Exception, so Hypothesis does not shrink it)."""


class _ExampleFailed(AssertionError):
    """The consumer failed this example."""


@dataclass
class FuzzFailure:
    case: FuzzCase
    verdict: Verdict
    found_after_s: float  # seconds from the start until the first failing example
    found_after_examples: int
    shrink_examples: int
    regression: Optional[Path] = None

    @property
    def size(self) -> dict:
        return {**self.case.size, "records": self.verdict.result.records}


@dataclass
class FuzzReport:
    consumer: str
    encoding: str
    seed: int
    budget: Budget
    examples: int = 0
    not_applicable: int = 0
    not_applicable_reason: Optional[str] = None
    final_state_only: int = 0  # examples whose consumer showed no checkpoint (judged on final tables)
    seconds: float = 0.0
    # What was drawn before the budget ran out or the first failure: the same seed and encoding draw
    # the same sequence anywhere, so two runs whose digests differ did not draw the same examples.
    drawn_digest: str = ""
    failure: Optional[FuzzFailure] = None
    notes: list[str] = field(default_factory=list)

    known_gaps: bool = False

    @property
    def rerun_command(self) -> str:
        """The command that draws the same examples again: the seed and what else decides the draw
        (history size by profile, known gaps); the budget only says how many."""
        profile = next((name for name, b in PROFILES.items() if b.max_steps == self.budget.max_steps), None)
        return (f"ticdc-conformance fuzz --consumer {shlex.quote(self.consumer)} --protocol {self.encoding} "
                f"--seed {self.seed}" + (f" --profile {profile}" if profile not in (None, DEFAULT_PROFILE) else "")
                + (" --known-gaps" if self.known_gaps else ""))

    @property
    def refind_command(self) -> str:
        """The rerun command limited to the examples it takes to find the failure again, and to the
        shrinking examples this run spent, so that it shrinks to the same case however long they take."""
        if self.failure is None:
            return self.rerun_command
        return (f"{self.rerun_command} --examples {self.failure.found_after_examples} "
                f"--shrink-examples {self.failure.shrink_examples}")

    def summary(self) -> str:
        head = f"{self.encoding}: {self.examples} examples in {self.seconds:.0f}s (seed {self.seed})"
        if self.failure is None:
            na = f", {self.not_applicable} not applicable ({self.not_applicable_reason})" if self.not_applicable else ""
            if self.not_applicable and self.not_applicable == self.examples:
                return f"{head}: not applicable, the consumer declines every configuration: {self.not_applicable_reason}"
            fso = f", {self.final_state_only} judged on the final tables only (no checkpoint shown)" \
                if self.final_state_only else ""
            return f"{head}: no failure{na}{fso}; drawn {self.drawn_digest}"
        f = self.failure
        size = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in f.size.items())
        return (f"{head}: FAILED after {f.found_after_examples} examples ({f.found_after_s:.1f}s); "
                f"shrunk in {f.shrink_examples} examples to {size}; schedule {f.case.schedule.spec()}; "
                f"drawn {self.drawn_digest}")


@dataclass
class _State:
    budget: Budget
    started: float = field(default_factory=time.monotonic)
    examples: int = 0
    not_applicable: int = 0
    na_reason: Optional[str] = None
    final_state_only: int = 0
    best: Optional[FuzzCase] = None
    best_verdict: Optional[Verdict] = None
    first_failure_at: Optional[float] = None
    first_failure_examples: int = 0
    shrink_examples: int = 0
    drawn: Drawn = field(default_factory=Drawn)  # every example drawn, in order

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def out_of_budget(self) -> bool:
        b = self.budget
        return (b.seconds is not None and self.elapsed() >= b.seconds) or \
            (b.examples is not None and self.examples >= b.examples)

    def shrink_over(self) -> bool:
        b = self.budget
        return self.first_failure_at is not None and (
            self.elapsed() - self.first_failure_at > b.shrink_seconds
            or (b.shrink_examples is not None and self.shrink_examples >= b.shrink_examples))

    @property
    def phase(self) -> str:
        return "drawing" if self.first_failure_at is None else "shrinking"


def database_key(consumer: str, encoding: str, known_gaps: bool) -> bytes:
    return hashlib.sha256(f"ticdc-conformance fuzz\0{consumer}\0{encoding}\0{known_gaps}".encode()).digest()


def fuzz_encoding(adapter: ConsumerAdapter, encoding: str, budget: Budget, work: Path, *,
                  seed: Optional[int] = None, database: Optional[Path] = None, regressions: Optional[Path] = None,
                  progress: Optional[Progress] = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                  known_gaps: bool = False, replay_database: bool = False) -> FuzzReport:
    """Fuzzes `adapter` on `encoding` within `budget`; the report holds the shrunk failure, if any,
    written as a regression case under `regressions` when given. `known_gaps` draws the parts of
    the space the suite's own reference fails on too (space.KNOWN_GAPS). `database` stores the
    failures; `replay_database` runs what it holds for this consumer and encoding first."""
    seed = seed if seed is not None else random.SystemRandom().randrange(2 ** 32)
    report = FuzzReport(adapter.spec, encoding, seed, budget, known_gaps=known_gaps)
    progress = progress or Progress()
    state = _State(budget)
    examples = _Folders(Path(work) / encoding)
    rerun = report.rerun_command

    def probe(case: FuzzCase) -> None:
        if state.first_failure_at is None and state.out_of_budget():
            raise _OutOfBudget()
        if state.shrink_over():  # keep the smallest failure found so far (_keep runs it again)
            raise _OutOfBudget()
        if state.first_failure_at is None:
            state.drawn.add(case)
        verdict = run_case(case, adapter, examples.next(), timeout_s, replay=rerun)
        if state.first_failure_at is None:
            state.examples += 1
        else:
            state.shrink_examples += 1
        state.final_state_only += verdict.final_state_only
        if verdict.not_applicable is not None:
            state.not_applicable += 1
            state.na_reason = verdict.not_applicable
        progress.tick(state.examples, int(state.best is not None), state.phase, state.not_applicable)
        if verdict.failed:
            if state.first_failure_at is None:
                state.first_failure_at, state.first_failure_examples = state.elapsed(), state.examples
            state.best, state.best_verdict = case, verdict
            raise _ExampleFailed(verdict.summary)

    strategy = fuzz_cases(encoding, adapter.capabilities, budget.max_steps, known_gaps=known_gaps)
    progress.start(f"{encoding} ({adapter.spec})", budget.seconds, budget.examples)
    try:
        run_search(probe, strategy, seed, database=database,
                   database_key=database_key(adapter.spec, encoding, known_gaps), replay_database=replay_database)
    except _OutOfBudget:
        pass
    except (_ExampleFailed, Flaky):
        pass
    report.examples, report.not_applicable, report.not_applicable_reason = \
        state.examples, state.not_applicable, state.na_reason
    report.final_state_only = state.final_state_only
    report.drawn_digest = state.drawn.hexdigest()
    if state.best is not None:
        report.failure = _keep(state, adapter, examples.shrunk(), regressions, report, timeout_s)
    report.seconds = state.elapsed()
    progress.stop(report.summary())
    return report


class _Folders:
    """A new case folder for every example, the one before it removed. An in-process consumer that
    was "crashed" is only dropped, and its thread may still be writing to its state_dir by path: in
    a folder of its own that write cannot reach the next example's consumer."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for old in root.glob("example-*"):  # an earlier run's
            shutil.rmtree(old, ignore_errors=True)
        self.n = 0
        self.last: Optional[Path] = None

    def next(self) -> Path:
        if self.last is not None:
            shutil.rmtree(self.last, ignore_errors=True)
        self.n += 1
        self.last = self.root / f"example-{self.n}"
        return self.last

    def shrunk(self) -> Path:
        """The folder the shrunk case is run in once more, kept after the run."""
        return self.next().with_name("shrunk")


def _keep(state: _State, adapter: ConsumerAdapter, folder: Path, regressions: Optional[Path], report: FuzzReport,
          timeout_s: float) -> FuzzFailure:
    """Runs the shrunk case once more (its case folder and verdict stay in FOLDER) and saves it."""
    case = state.best
    target = Path(regressions) / case.config.encoding / case_name(case) if regressions is not None else None
    replay = replay_command(target, adapter.spec) if target is not None else report.rerun_command
    verdict = run_case(case, adapter, folder, timeout_s, replay=replay)
    if not verdict.failed:  # a consumer whose verdict changes from run to run: keep what it failed with
        report.notes.append("the shrunk case passed when run again: the consumer's outcome is not deterministic")
        verdict = state.best_verdict
    failure = FuzzFailure(case, verdict, state.first_failure_at or 0.0, state.first_failure_examples,
                          state.shrink_examples)
    if regressions is not None:
        found = {"consumer": adapter.spec, "fuzz_seed": report.seed, "verdict": verdict.summary,
                 "rules": sorted({f.rule for f in verdict.result.findings})}
        failure.regression = write_case(case, Path(regressions), found)
    return failure
