"""The suite's checks in stages, each timed: static checks (lint, types, import contracts), then the
fast tests, a short `fuzz` run per encoding, the Spark tests, the Kafka tests and the slow rest.

    python .ci/stages.py                 every stage, then a table of stage times; exit 1 if any failed
    python .ci/stages.py fast spark      those stages only
    python .ci/stages.py --count         how many tests each pytest stage selects, against the whole suite
    TICDC_FUZZ_PROFILE=nightly python .ci/stages.py fuzz     the nightly fuzz budget (docs/fuzz.md)
    python .ci/stages.py fast -- -x -k canal    arguments after `--` go to pytest

Every test runs in exactly one pytest stage: a stage selects the tests carrying all of its `required`
markers and none of its `excluded` ones, and before anything runs the stages are checked to cover
every combination of the markers they name exactly once. A stage fails on any non-zero exit, so
pytest's 5 (no test collected) fails it too.
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class PytestStage:
    """Tests that carry every `required` marker and no `excluded` one."""

    name: str
    required: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()

    @property
    def marker_expression(self) -> str:
        return " and ".join([*self.required, *(f"not {m}" for m in self.excluded)])

    def selects(self, markers: frozenset[str]) -> bool:
        return set(self.required) <= markers and not markers & set(self.excluded)

    def command(self, extra: list[str], junit: Optional[Path] = None) -> list[str]:
        out = [sys.executable, "-m", "pytest", "-m", self.marker_expression, *self.pytest_args, *extra]
        return out + ([f"--junitxml={junit}"] if junit is not None else [])


@dataclass(frozen=True)
class StaticStage:
    name: str
    argv: tuple[str, ...]

    def command(self, extra: list[str], junit: Optional[Path] = None) -> list[str]:
        return list(self.argv)


def import_contracts() -> tuple[StaticStage, ...]:
    """import-linter on the contracts written in pyproject.toml, else the Makefile's `imports` target."""
    if "importlinter" in tomllib.loads((ROOT / "pyproject.toml").read_text()).get("tool", {}):
        return (StaticStage("imports", (str(BIN / "lint-imports"),)),)
    if "\nimports:" in (ROOT / "Makefile").read_text():
        return (StaticStage("imports", ("make", "--no-print-directory", "imports")),)
    return ()


def fuzz_stage() -> StaticStage:
    """`fuzz` against the reference streaming consumer, every encoding, under the budget of the profile
    $TICDC_FUZZ_PROFILE names (ci: 25 s an encoding; nightly: ten minutes an encoding), two encodings
    side by side (`--jobs 2`, a core each: about 85 s in all with the ci budget, where one encoding
    after the other took 128 s). A failure is shrunk, printed with its seed and replay command, and
    saved under golden/regressions/ (docs/fuzz.md)."""
    profile = os.environ.get("TICDC_FUZZ_PROFILE", "ci")
    # Every change is fuzzed with the same seed (TICDC_FUZZ_SEED, default 1), so a red stage is that
    # change's doing and replays as printed; the nightly profile draws a new seed each night.
    seed = os.environ.get("TICDC_FUZZ_SEED", "1" if profile == "ci" else "")
    return StaticStage("fuzz", (sys.executable, "-m", "ticdc_conformance", "fuzz",
                                "--consumer", "python:ticdc_conformance.consumers.streaming:StreamingConsumer",
                                "--protocol", "all", "--jobs", "2", "--profile", profile,
                                "--regressions", "golden/regressions", "--work", "reports/fuzz/work",
                                "--database", "reports/fuzz/.hypothesis", *(("--seed", seed) if seed else ())))


STAGES: tuple[StaticStage | PytestStage, ...] = (
    StaticStage("lint", (str(BIN / "ruff"), "check", ".")),
    StaticStage("types", (sys.executable, "-m", "mypy")),
    *import_contracts(),
    # Both cores (pytest-xdist): the fast tests are independent, and one core took 785 s of the CI run.
    PytestStage("fast", excluded=("slow", "spark", "kafka", "nightly"), pytest_args=("--durations=25", "-n", "auto")),
    fuzz_stage(),
    # Two workers, each with its own local Spark session: a test's generation and checks run in the
    # driver's Python on one core while the other worker's Spark job uses the second.
    PytestStage("spark", required=("spark",), excluded=("kafka", "nightly"), pytest_args=("--durations=15", "-n", "2")),
    # Two workers, a test file each (`loadfile`): each file's tests share the broker its module
    # fixture starts, and the two files the stage's time is spent in run side by side.
    PytestStage("kafka", required=("kafka",), excluded=("nightly",),
                pytest_args=("--durations=10", "-n", "2", "--dist", "loadfile")),
    # Two workers too: the slow tests are independent (their budgets are counts, not seconds).
    PytestStage("slow", required=("slow",), excluded=("spark", "kafka", "nightly"),
                pytest_args=("--durations=25", "-n", "2")),
    # Run when named (`.ci/stages.py nightly`, `make test-nightly`), never by default: the long
    # matrices that do not fit CI's 30 minutes.
    PytestStage("nightly", required=("nightly",)),
)
ON_REQUEST = ("nightly",)  # stages a plain `.ci/stages.py` leaves out
TEST_STAGES = tuple(s for s in STAGES if isinstance(s, PytestStage))


def check_partition(stages: tuple[PytestStage, ...]) -> None:
    """Every combination of the stages' markers is selected by exactly one stage."""
    names = sorted({m for s in stages for m in (*s.required, *s.excluded)})
    for n in range(len(names) + 1):
        for combo in itertools.combinations(names, n):
            markers = frozenset(combo)
            chosen = [s.name for s in stages if s.selects(markers)]
            if len(chosen) != 1:
                sys.exit(f"tests marked {sorted(markers) or 'with none of ' + str(names)} run in "
                         f"{len(chosen)} stages ({', '.join(chosen) or 'none'}); each test must run in exactly one")


@dataclass
class Outcome:
    stage: str
    seconds: int
    returncode: int
    counts: Optional[dict[str, int]] = None


def junit_counts(path: Path) -> Optional[dict[str, int]]:
    if not path.exists():
        return None
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for key in totals:
            totals[key] += int(suite.get(key, 0))
    return {"passed": totals["tests"] - totals["failures"] - totals["errors"] - totals["skipped"],
            "failed": totals["failures"] + totals["errors"], "skipped": totals["skipped"]}


def run_stage(stage: StaticStage | PytestStage, extra: list[str], junit: Optional[Path]) -> Outcome:
    command = stage.command(extra, junit)
    shown = ["python", *command[1:]] if command[0] == sys.executable else command
    print(f"\n=== stage {stage.name}: {' '.join(shown)}", flush=True)
    started = int(time.time())  # wall time, as `date +%s` reads it
    returncode = subprocess.run(command, cwd=ROOT).returncode
    seconds = int(time.time()) - started
    verdict = "ok" if returncode == 0 else f"FAILED (exit {returncode})"
    print(f"=== stage {stage.name}: {verdict} in {seconds}s", flush=True)
    return Outcome(stage.name, seconds, returncode, junit_counts(junit) if junit else None)


def print_summary(outcomes: list[Outcome]) -> None:
    print("\n=== stages")
    print(f"{'stage':<10}{'seconds':>8}  {'result':<18}tests")
    for o in outcomes:
        result = "ok" if o.returncode == 0 else f"FAILED (exit {o.returncode})"
        counts = ", ".join(f"{v} {k}" for k, v in o.counts.items()) if o.counts else ""
        print(f"{o.stage:<10}{o.seconds:>8}  {result:<18}{counts}")
    print(f"{'total':<10}{sum(o.seconds for o in outcomes):>8}")
    counted = [o.counts for o in outcomes if o.counts]
    if counted:
        passed, failed, skipped = (sum(c[k] for c in counted) for k in ("passed", "failed", "skipped"))
        print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")


def count_stages() -> int:
    """Collects the suite once and counts the tests each pytest stage's marker expression selects,
    matched as `pytest -m` matches them; every test must be selected by exactly one stage."""
    import contextlib
    import io

    import pytest
    from _pytest.mark import MarkMatcher
    from _pytest.mark.expression import Expression

    class Collected:
        items: list[pytest.Item] = []

        def pytest_collection_finish(self, session: pytest.Session) -> None:
            self.items = list(session.items)

    collected = Collected()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"],
                    plugins=[collected])
    for line in output.getvalue().splitlines():
        if line.startswith("ERROR "):
            print(f"not collected: {line}", file=sys.stderr)
    expressions = {s.name: Expression.compile(s.marker_expression) for s in TEST_STAGES}
    counts = dict.fromkeys(expressions, 0)
    wrong = []
    for item in collected.items:
        matcher = MarkMatcher.from_markers(item.iter_markers())
        chosen = [name for name, expression in expressions.items() if expression.evaluate(matcher)]
        for name in chosen:
            counts[name] += 1
        if len(chosen) != 1:
            wrong.append(f"{item.nodeid}: in {len(chosen)} stages")
    for stage in TEST_STAGES:
        print(f"{stage.name:<10}{counts[stage.name]:>7}  -m '{stage.marker_expression}'")
    print(f"{'sum':<10}{sum(counts.values()):>7}\n{'suite':<10}{len(collected.items):>7}")
    for line in wrong:
        print(line, file=sys.stderr)
    return 1 if wrong or sum(counts.values()) != len(collected.items) else 0


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    check_partition(TEST_STAGES)
    if argv == ["--count"]:
        return count_stages()
    by_name = {s.name: s for s in STAGES}
    unknown = [a for a in argv if a not in by_name]
    if unknown:
        sys.exit(f"unknown stage {', '.join(unknown)}; the stages are {', '.join(by_name)}")
    chosen = [by_name[a] for a in argv] or [s for s in STAGES if s.name not in ON_REQUEST]
    if len(chosen) == 1:
        return run_stage(chosen[0], extra, None).returncode
    junit_dir = Path(tempfile.mkdtemp(prefix="ticdc-ci-stages-"))
    try:
        outcomes = [run_stage(s, extra, junit_dir / f"{s.name}.xml" if isinstance(s, PytestStage) else None)
                    for s in chosen]
    finally:
        shutil.rmtree(junit_dir, ignore_errors=True)
    print_summary(outcomes)
    return 1 if any(o.returncode for o in outcomes) else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
