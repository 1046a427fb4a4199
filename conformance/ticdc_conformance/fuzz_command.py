"""`ticdc-conformance fuzz`: Hypothesis against the consumer under test (docs/fuzz.md).

    ticdc-conformance fuzz --consumer SPEC --protocol P [--budget 10m | --examples N] [--seed S]
                           [--regressions DIR] [--jobs N]
    ticdc-conformance fuzz --replay DIR --consumer SPEC

Exit status: 0 no failure, 1 a failure was found (shrunk, printed, saved) or a replayed case
fails, 2 a usage error, 3 a regression case that cannot be read back.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Optional

import click

from ticdc_conformance.command_line import console, encoding_option, protocol_option, resolve_encodings
from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.fuzz import (
    PROFILES,
    Budget,
    FuzzReport,
    Progress,
    RegressionCaseError,
    fuzz_encoding,
    iter_cases,
    parse_duration,
    replay_case,
)
from ticdc_conformance.fuzz.profiles import DEFAULT_PROFILE
from ticdc_conformance.fuzz.regression import changed_options
from ticdc_conformance.progress import ProgressSettingError, line_every_s
from ticdc_conformance.runner import FINDINGS_SHOWN_PER_RULE

FUZZ_ROOT = Path("reports/fuzz")


def _budget(profile: str, budget: Optional[str], examples: Optional[int],
            shrink_examples: Optional[int] = None) -> Budget:
    base = PROFILES[profile]
    try:
        if budget is None and examples is None:
            return replace(base, shrink_examples=shrink_examples)
        seconds = parse_duration(budget) if budget is not None else None
        return Budget(seconds=seconds, examples=examples, max_steps=base.max_steps,
                      shrink_seconds=base.shrink_seconds, shrink_examples=shrink_examples)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _say(text: str) -> None:
    """Plain text, never wrapped: paths and commands are copied from it."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _print_failure(report: FuzzReport) -> None:
    f = report.failure
    console.print(f"[red]FAILED[/red] {report.encoding}", soft_wrap=True)
    _say(f"  consumer {report.consumer}, seed {report.seed}: found after {f.found_after_examples} examples "
         f"({f.found_after_s:.1f}s), shrunk in {f.shrink_examples} more")
    _say("  case: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in f.size.items()))
    _say(f"  options: {json.dumps(changed_options(f.case.config), default=list)}; simulator seed {f.case.seed}")
    _say(f"  schedule: {f.case.schedule.spec()}")
    _say(f.verdict.result.render(per_rule=FINDINGS_SHOWN_PER_RULE))
    if f.regression is not None:
        _say(f"  saved: {f.regression}")
    _say(f"  re-find: {report.refind_command}")
    for note in report.notes:
        _say(f"  note: {note}")


def _replay(folder: Path, consumer: str, work: Path, timeout: float) -> int:
    folders = [folder] if (folder / "case.json").exists() else list(iter_cases(folder))
    if not folders:
        raise click.BadParameter(f"{folder}: no regression case (case.json) in it or two folders below it",
                                 param_hint="--replay")
    adapter = adapter_for(consumer)
    worst = 0
    try:
        for case in folders:
            try:
                verdict = replay_case(case, adapter, work / case.name, timeout)
            except RegressionCaseError as e:
                _say(f"error: {e}")
                worst = max(worst, 3)
                continue
            if verdict.not_applicable is not None:
                _say(f"{case}: not applicable: {verdict.not_applicable}")
            elif verdict.failed:
                _say(f"{case}: {verdict.result.render(per_rule=FINDINGS_SHOWN_PER_RULE)}")
                worst = max(worst, 1)
            else:
                _say(f"{case}: passes")
    finally:
        adapter.close()
    return worst


def _side_by_side(encodings: list[str], jobs: int, child_args: list[str]) -> int:
    """Each encoding fuzzed by a `fuzz` process of its own, `jobs` at a time; each one's output is
    printed whole when it ends, so that their lines do not interleave. The worst exit status."""
    lock = threading.Lock()

    def one(encoding: str) -> int:
        proc = subprocess.run([sys.executable, "-m", "ticdc_conformance", "fuzz", "--protocol", encoding, *child_args],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with lock:
            _say(f"--- {encoding} (exit {proc.returncode}) ---")
            sys.stdout.write(proc.stdout)
            sys.stdout.flush()
        return proc.returncode

    with ThreadPoolExecutor(jobs) as pool:
        return max(pool.map(one, encodings))


@click.command("fuzz")
@click.option("--consumer", required=True, help="The consumer under test, as `run --consumer` names it "
                                                "(cmd:CMD, python:module:Class, local, ...).")
@protocol_option
@encoding_option
@click.option("--budget", default=None, help="Time per encoding (90s, 10m, 1h); default: the profile's.")
@click.option("--examples", type=click.IntRange(min=1), default=None, help="Examples per encoding.")
@click.option("--shrink-examples", type=click.IntRange(min=0), default=None,
              help="Examples spent shrinking a failure at most (beside the profile's time limit): the same "
                   "shrunk case on any machine.")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default=DEFAULT_PROFILE, show_default=True,
              help="Budget and history size (fuzz/profiles.py): ci is short, nightly long.")
@click.option("--seed", type=int, default=None, help="Hypothesis seed (default: a random one, printed).")
@click.option("--regressions", type=click.Path(file_okay=False, path_type=Path),
              default=FUZZ_ROOT / "regressions", show_default=True,
              help="Where a shrunk failure is saved as a regression case (the suite's own: golden/regressions).")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=FUZZ_ROOT / "work",
              show_default=True, help="Scratch folder for the examples' case folders.")
@click.option("--database", type=click.Path(file_okay=False, path_type=Path), default=FUZZ_ROOT / ".hypothesis",
              show_default=True, help="Hypothesis's example database: every failure found is stored there "
                                      "(read back with --reuse-database).")
@click.option("--no-database", is_flag=True, help="Use no example database.")
@click.option("--reuse-database", is_flag=True, help="Run the failures the example database holds for this consumer "
                                                     "and encoding first, then draw (the seed alone then no longer "
                                                     "decides what is drawn).")
@click.option("--replay", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Run the consumer on a saved regression case (or every case under a folder) instead.")
@click.option("--known-gaps", is_flag=True, help="Draw also the parts of the space where the suite's own "
                                                 "reference fails (docs/fuzz.md, \"Known gaps\").")
@click.option("--consumer-timeout", "timeout", type=click.FloatRange(min=0, min_open=True), default=120.0,
              show_default=True, help="Seconds one example's consumer may run.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Encodings fuzzed side by side, each by a process of its own, its output printed whole when "
                   "it ends (a core each). A consumer whose runs share something (one database, one port) needs 1.")
def fuzz(consumer: str, protocol: str, encoding: Optional[str], budget: Optional[str], examples: Optional[int],
         shrink_examples: Optional[int], profile: str, seed: Optional[int], regressions: Path, work: Path, database: Path, no_database: bool,
         reuse_database: bool, replay: Optional[Path], known_gaps: bool, timeout: float, jobs: int) -> None:
    """Draw upstream histories, sink configurations and delivery schedules; run the consumer on each
    and check every consumer invariant; shrink a failure and save it as a regression case."""
    if replay is not None:
        sys.exit(_replay(replay, consumer, work / "replay", timeout))
    chosen = _budget(profile, budget, examples, shrink_examples)
    if reuse_database and no_database:
        raise click.UsageError("--reuse-database reads the example database, which --no-database turns off")
    encodings = resolve_encodings(protocol, encoding)
    try:
        line_every_s()  # a bad TICDC_PROGRESS_EVERY_S is refused before anything runs
    except ProgressSettingError as e:
        raise click.UsageError(str(e)) from None
    _say(f"fuzz {consumer}: {', '.join(encodings)}; budget {chosen.describe()} per encoding"
         + (f"; {min(jobs, len(encodings))} side by side" if jobs > 1 and len(encodings) > 1 else ""))
    try:
        adapter = adapter_for(consumer)  # a bad spec is refused once, here, before any process starts
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--consumer") from None
    if jobs > 1 and len(encodings) > 1:
        adapter.close()
        options = [("--budget", budget), ("--examples", examples), ("--shrink-examples", shrink_examples),
                   ("--seed", seed)]
        flags = [("--no-database", no_database), ("--reuse-database", reuse_database), ("--known-gaps", known_gaps)]
        sys.exit(_side_by_side(encodings, jobs, [
            "--consumer", consumer, "--profile", profile, "--regressions", str(regressions), "--work", str(work),
            "--database", str(database), "--consumer-timeout", str(timeout),
            *(a for name, value in options if value is not None for a in (name, str(value))),
            *(name for name, on in flags if on)]))
    failed = False
    try:
        for name in encodings:
            report = fuzz_encoding(adapter, name, chosen, work, seed=seed,
                                   database=None if no_database else database, regressions=regressions,
                                   progress=Progress(), timeout_s=timeout, known_gaps=known_gaps,
                                   replay_database=reuse_database)
            if report.failure is not None:
                failed = True
                _print_failure(report)
    finally:
        adapter.close()
    sys.exit(1 if failed else 0)
