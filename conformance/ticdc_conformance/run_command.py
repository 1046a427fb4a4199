"""The subcommands that drive the generator and runner.py: `scenarios`, `generate` (a scenario's
records as TiCDC's Kafka sink sends them), `run` (generate, consume, check), `check` (the verdict on
outputs however they were written) and `differential` (every encoding against every other).

They sit in the entry-point layer beside runner.py because they import the generator and the
runner; the commands of the lower layers' packages are in those packages (cli.py gathers them)."""
from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import sys
import warnings
from pathlib import Path
from typing import Optional

import click
from rich.table import Table

from ticdc_contract.protocols import ALL

from .command_line import (
    console,
    encoding_names,
    encoding_option,
    final_state_only_option,
    protocol_option,
    report_option,
    resolve_encodings,
    seed_option,
    time_zone_option,
)
from .consumers.adapters import SparkConsumer
from .consumers.adapters.interface import DEFAULT_TIMEOUT_S as CONSUMER_TIMEOUT_S
from .consumers.spark import spark_log_in, spark_log_note


class _ScenarioChoice(click.Choice):
    """click.Choice of the scenario names, read from the generator when first asked for: importing
    the scenarios (Faker, Hypothesis) costs more than a second, which `check`, defined in this module
    but never generating, need not pay. (click.Choice takes its choices when made.)"""

    def __init__(self) -> None:
        self.case_sensitive = True

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        from ticdc_generators.scenarios import SCENARIOS

        return tuple(sorted(SCENARIOS))


_scenario_option = click.option("--scenario", "-s", default="smoke", show_default=True,
                                type=_ScenarioChoice(), help="Named scenario.")
_changefeed_option = click.option(
    "--changefeed", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
    help="A TiCDC changefeed TOML whose [sink] options apply on top of the encoding's defaults.")
_sink_uri_option = click.option("--sink-uri", default=None,
                                help="A TiCDC Kafka sink URI (kafka://host/topic?protocol=…&…) applied the same way.")
_profile_option = click.option(
    "--version-profile", "version_profile", type=click.Choice(["ticdc", "tiflow"]), default="ticdc", show_default=True,
    help="The TiCDC generation simulated: ticdc (pingcap/ticdc, the newest) or tiflow (classic TiCDC); "
         "see docs/version-profiles.md.")
_DELIVERY = {  # option -> SinkConfig simulator setting (docs/scenarios.md, "Delivery")
    "failovers": "failovers", "failover_spacing": "failover_spacing", "checkpoint_lag": "checkpoint_lag",
    "interleave_tables": "interleave_tables",
}


def _delivery_options(f):
    """Simulator settings a run can override on any scenario: how often the simulated changefeed
    restarts (at-least-once replays) and whether tables interleave within a partition."""
    options = [
        click.option("--failovers", type=click.IntRange(min=0), default=None,
                     help="Restart the simulated changefeed N times (replays from the checkpoint); "
                          "default: the scenario's."),
        click.option("--failover-spacing", type=click.IntRange(min=1), default=None,
                     help="About this many history events between restarts; default: the scenario's."),
        click.option("--checkpoint-lag", type=click.IntRange(min=0), default=None,
                     help="Restart from the checkpoint this many checkpoints behind the last one."),
        click.option("--interleave-tables/--no-interleave-tables", default=None,
                     help="Interleave tables' row events within a partition between watermarks, as "
                          "TiCDC's per-table pipelines may; default: the scenario's."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _expected_failure_options(f):
    """`--expected-failures FILE` and `--update-expected-failures` (docs/expected-failures.md)."""
    f = click.option("--update-expected-failures", "update_expected", is_flag=True,
                     help="Rewrite --expected-failures FILE from this run: stale entries removed, each unexpected "
                          "failure appended as CASE::RULE, comments and order kept; then exit 0 unless a consumer "
                          "errored.")(f)
    return click.option(
        "--expected-failures", "expected_failures", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="A list of the failures this consumer is known to have (CASE::RULE, case globs, rule ids, an optional "
             "message prefix; docs/expected-failures.md): only unexpected failures fail the run, and an entry "
             "that now passes fails it with exit 6.")(f)


def _expected_list(path: Optional[Path], update: bool):
    """The loaded list, None without one; a bad list or a missing file is a bad invocation (exit 2),
    checked before anything runs."""
    from .findings.expected import ExpectedFailures, ExpectedFailuresError

    if path is None:
        if update:
            raise click.UsageError("--update-expected-failures needs --expected-failures FILE (the list to rewrite)")
        return None
    if not path.exists() and not update:
        raise click.BadParameter(f"{path}: no such file (--update-expected-failures writes it)",
                                 param_hint="--expected-failures")
    try:
        return ExpectedFailures.load(path)
    except ExpectedFailuresError as e:
        raise click.BadParameter(str(e), param_hint="--expected-failures") from None


def _progress(command: str):
    from .progress import Progress, ProgressSettingError

    try:
        return Progress(command)
    except ProgressSettingError as e:
        raise click.UsageError(str(e)) from None


@contextlib.contextmanager
def _quiet_tools(work: Path, consumer: str):
    """Keeps what is not the run's out of its output: Spark's JVM writes to WORK/spark.log (unless
    TICDC_CONFORMANCE_SPARK_LOG names another file), and packaging tools' warnings (setuptools, pip,
    pkg_resources, raised by imports on the way) are not shown."""
    spark = consumer.split(":", 1)[0] == SparkConsumer.spec
    with spark_log_in(work / "spark.log") if spark else contextlib.nullcontext(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"(setuptools|pkg_resources|pip|_distutils_hack)(\..*)?$")
        yield


def _delivery(kwargs: dict) -> dict:
    """Pops the delivery options out of a command's keyword arguments; None means the scenario's."""
    given = {name: kwargs.pop(name) for name in _DELIVERY}
    return {_DELIVERY[name]: value for name, value in given.items() if value is not None}


def _delivery_args(delivery: dict) -> list[str]:
    """The same settings as command-line arguments, for replay commands."""
    out = []
    for name, setting in _DELIVERY.items():
        if setting in delivery:
            value = delivery[setting]
            flag = name.replace("_", "-")
            out.append(f"--{flag}" if value is True else f"--no-{flag}" if value is False else f"--{flag} {value}")
    return out


def _configure(scenario: str, encoding: str, time_zone: str, changefeed: Path | None, sink_uri: str | None,
               version_profile: str = "ticdc", delivery: dict | None = None):
    from ticdc_generators.pipeline import configure
    from ticdc_generators.sink.changefeed import ChangefeedConfigError

    try:
        return configure(scenario, encoding, time_zone, changefeed, sink_uri, version_profile, delivery)
    except ChangefeedConfigError as e:
        raise click.UsageError(str(e)) from None


@contextlib.contextmanager
def _changefeed_failure(scenario: str, seed: int, encoding: str):
    """Where real TiCDC would fail the changefeed, the run stops with TiCDC's reason, not a traceback."""
    from ticdc_generators.errors import ChangefeedFailure

    try:
        yield
    except ChangefeedFailure as e:
        click.echo(f"error: {encoding}: the simulated TiCDC changefeed fails (scenario {scenario}, seed {seed}): {e}",
                   err=True)
        sys.exit(2)


@click.command()
def scenarios() -> None:
    """List the named scenarios."""
    from ticdc_generators.scenarios import SCENARIOS

    for name in sorted(SCENARIOS):
        console.print(f"[bold]{name}[/bold]  {SCENARIOS[name].description}")


@click.command("generate")
@_scenario_option
@seed_option
@time_zone_option
@_profile_option
@_delivery_options
@_changefeed_option
@_sink_uri_option
@protocol_option
@encoding_option
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: records/, manifest.json, truth/ (one sub-folder per encoding with --protocol all).")
@click.option("--replace", is_flag=True,
              help="Empty a non-empty --out first; only one that holds what generate (and run/check) write "
                   "there, never the root, the home folder, the current folder or a repository.")
@click.option("--events", type=click.IntRange(min=1), default=None,
              help="Number of row events, for scenarios that take a size (e.g. large).")
def generate_cmd(scenario: str, seed: int, time_zone: str, version_profile: str, changefeed: Path | None,
                 sink_uri: str | None, protocol: str, encoding: str | None, out: Path, replace: bool,
                 events: int | None, **delivery_options) -> None:
    """Generate a scenario's Kafka records exactly as TiCDC's Kafka sink would send them, into a new
    or empty folder (--replace empties an earlier generate output first)."""
    from ticdc_generators.pipeline import generate

    from .folders import FolderRefused, prepare_generate_output

    delivery = _delivery(delivery_options)
    encodings = resolve_encodings(protocol, encoding)
    configs = {enc: _configure(scenario, enc, time_zone, changefeed, sink_uri, version_profile, delivery)
               for enc in encodings}
    try:
        prepare_generate_output(out, replace)
    except FolderRefused as e:
        raise click.UsageError(str(e)) from None
    for enc in encodings:
        target = out / enc if len(encodings) > 1 else out
        with _changefeed_failure(scenario, seed, enc):
            manifest = generate(scenario, seed, configs[enc], target, events=events)
        console.print(f"{enc}: {manifest['records']} records in {target}/records "
                      f"({', '.join(f'{t}×{n}' for t, n in manifest['topics'].items())} partitions)")


@click.command()
@_scenario_option
@seed_option
@time_zone_option
@_profile_option
@_delivery_options
@_changefeed_option
@_sink_uri_option
@protocol_option
@encoding_option
@click.option("--consumer", default=SparkConsumer.spec, show_default=True,
              help="The consumer under test: spark | local (the reference consumers); cmd:CMD (a program fed "
                   "over the testee protocol on stdin/stdout, docs/testee-protocol.md); python:MODULE:CLASS (a "
                   "class fed the same way in this process); spark:MODULE:FUNCTION; kafka:CMD (docs/consumer-"
                   "modes.md); else a record-file command implementing docs/consumer-protocol.md. Commands are "
                   "split into argv by POSIX shell rules (quote an argument with spaces) and run without a shell.")
@click.option("--schedule", "schedule_spec", default=None, metavar="KIND[:OPTION=VALUE,…]",
              help="How a fed consumer (cmd:, python:) gets the records: merge kind, poll batches, restarts, late "
                   "join (docs/delivery-schedules.md), e.g. round-robin:batch=1-8,restarts=2,restart=crash. "
                   "Default: timestamp order in poll batches; the seed defaults to --seed.")
@click.option("--consumer-timeout", "consumer_timeout", type=click.FloatRange(min=0, min_open=True),
              default=CONSUMER_TIMEOUT_S, show_default=True,
              help="Seconds a consumer command may run; then its whole process group is killed (exit 3). "
                   "Not for the in-process spark and local consumers.")
@final_state_only_option
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/work"),
              show_default=True, help="Scratch folder: WORK/<scenario>-seed<N>[-<options digest>]/<encoding> per "
                                      "encoding, emptied before each run (records, truth, the consumer's output, "
                                      "consumer.log, result.json).")
@report_option
@_expected_failure_options
@click.option("--master", default=None, help="Spark master for --consumer spark (default local[2]).")
@click.option("--events", type=click.IntRange(min=1), default=None,
              help="Number of row events, for scenarios that take a size (e.g. large).")
def run(scenario: str, seed: int, time_zone: str, version_profile: str, changefeed: Path | None, sink_uri: str | None,
        protocol: str, encoding: str | None, consumer: str, consumer_timeout: float, final_state_only: bool,
        work: Path, report: Path | None, master: str | None, events: int | None, schedule_spec: str | None,
        expected_failures: Path | None, update_expected: bool, **delivery_options) -> None:
    """Generate, consume and check. Exit 0 when every encoding conforms, 1 on findings, 3 on a consumer
    error, 4 when a consumer was judged on its final state only (most severe first: 3, 1, 4); with
    --expected-failures only unexpected failures count, and 6 when the list names a failure that now
    passes (docs/expected-failures.md); 5 when the consumer declined every encoding (nothing judged).
    Progress goes to stderr: a bar on a terminal, else a line at each phase and at least every 30 s
    ($TICDC_PROGRESS_EVERY_S)."""
    from .consumers.adapters import adapter_for
    from .consumers.adapters.program import Interrupted, signals_interrupt
    from .findings.case_ids import variant_label
    from .folders import options_digest
    from .runner import run_encoding

    try:
        adapter = adapter_for(consumer, master=master)  # a Spark session starts at the first encoding
    except ValueError as e:
        raise click.BadParameter(f"{consumer!r}: {e}", param_hint="--consumer") from None
    schedule = _schedule(schedule_spec, seed)
    expected = _expected_list(expected_failures, update_expected)
    delivery = _delivery(delivery_options)
    encodings = resolve_encodings(protocol, encoding)
    configs = {enc: _configure(scenario, enc, time_zone, changefeed, sink_uri, version_profile, delivery)
               for enc in encodings}
    config_args = " ".join(([f"--changefeed {shlex.quote(str(changefeed))}"] if changefeed else [])
                           + ([f"--sink-uri {shlex.quote(sink_uri)}"] if sink_uri else [])
                           + ([f"--version-profile {version_profile}"] if version_profile != "ticdc" else [])
                           + _delivery_args(delivery))
    # One digest of the options for all encodings: their case folders sit side by side, and the
    # report's name carries it. A changefeed file counts by its content, not its path.
    changefeed_text = hashlib.sha256(changefeed.read_bytes()).hexdigest() if changefeed else None
    # A schedule shapes the consumer's run, not the stream, but its cases and reports stand apart too.
    options = [config_args, time_zone, events, changefeed_text] + ([schedule.spec()] if schedule else [])
    digest = options_digest(options) if options != ["", "UTC", None, None] else ""
    report_name = (f"{scenario}-seed{seed}-{ALL if encodings == encoding_names() else '+'.join(encodings)}"
                   + (f"-{digest}" if digest else ""))
    variant = variant_label(time_zone, changefeed.stem if changefeed else None, sink_uri, version_profile,
                            schedule.spec() if schedule else None,
                            [(name.replace("_", "-"), delivery[setting]) for name, setting in _DELIVERY.items()
                             if setting in delivery], events)
    results = []
    progress = _progress("run")
    progress.start(f"{scenario} seed {seed}", total=len(encodings), status=f"{len(encodings)} encoding(s)")
    try:
        with signals_interrupt(), _quiet_tools(work, consumer):
            for i, enc in enumerate(encodings):
                def phase(name: str, records: Optional[int], enc: str = enc, i: int = i) -> None:
                    counted = f", {records} records" if records is not None else ""
                    progress.update(f"{enc} {i + 1}/{len(encodings)}: {name}{counted}", completed=i, announce=True)

                with _changefeed_failure(scenario, seed, enc):
                    results.append(run_encoding(scenario, seed, enc, work, adapter, config=configs[enc],
                                                config_args=config_args, events=events,
                                                final_state_only=final_state_only,
                                                consumer_timeout_s=consumer_timeout, digest=digest,
                                                schedule=schedule, variant=variant, on_phase=phase))
                progress.update(f"{enc} {i + 1}/{len(encodings)}: {results[-1].outcome}", completed=i + 1)
            spark_log = spark_log_note()
    except Interrupted as stop:
        progress.stop(f"stopped by {stop}")
        click.echo(f"run stopped by {stop}: the consumer's process group (if one was running) was killed; "
                   f"what it wrote stays under {work}", err=True)
        sys.exit(128 + stop.signum)  # the shell's status for a process ended by that signal
    except BaseException:
        progress.stop("failed")
        raise
    progress.stop(f"{len(results)} encoding(s) in {progress.elapsed():.0f}s")
    _verdicts(results, f"scenario {scenario}, seed {seed}, consumer {consumer}", report, report_name,
              expected, update_expected, notes=[spark_log] if spark_log else [])


def _schedule(spec: str | None, seed: int):
    """The schedule `--schedule` names, its seed the run's unless it names one; None without it."""
    if spec is None:
        return None
    from dataclasses import replace

    from ticdc_conformance.delivery import Schedule

    try:
        schedule = Schedule.parse(spec)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--schedule") from None
    _, _, options = spec.partition(":")
    named = any(part.partition("=")[0].strip() == "seed" for part in options.split(","))
    return schedule if named else replace(schedule, seed=seed)


def _verdicts(results: list, title: str, report: Path | None, report_name: str, expected=None,
              update_expected: bool = False, notes: list[str] = ()) -> None:
    """One row per encoding, the findings of each failed one summarized per rule, the measure against
    the expected-failure list, the reports; exits with the most severe encoding's code
    (findings/outcome.py), or with the list's verdict when there is one."""
    from ticdc_conformance.findings.case_ids import failures_of
    from ticdc_conformance.findings.gate import gate_exit
    from ticdc_conformance.findings.outcome import CONFORMANT, EXIT_NOTHING_JUDGED, NOTHING_JUDGED, STYLES

    from .report import full_list_files, report_paths, write_reports
    from .runner import FINDINGS_SHOWN_PER_RULE

    table = Table(title=title)
    for col in ("encoding", "records", "tables", "rows", "findings", "verdict", "seconds"):
        table.add_column(col)
    for r in results:
        verdict = r.outcome + (f", {len(r.undecidable)} undecidable" if r.undecidable else "")
        table.add_row(r.encoding, str(r.records), str(len(r.tables)),
                      str(sum(t.actual_rows for t in r.tables)), str(r.finding_count),
                      f"[{STYLES[r.outcome]}]{verdict}[/{STYLES[r.outcome]}]", f"{r.seconds:.1f}")
    console.print(table)
    judgement = _judge(results, expected)
    paths = report_paths(report, report_name) if report is not None else None
    for r in results:
        if r.outcome != CONFORMANT or r.undecidable:
            all_expected = judgement is not None and failures_of(r.case_id, r) and not _unexpected_of(r, judgement)
            if all_expected:  # its failures are listed: one line, the list's section says which
                click.echo(f"{r.verdict_line}: every failure expected ({expected.path})")
            else:
                click.echo(r.render(FINDINGS_SHOWN_PER_RULE, full_list_files(r, paths)))
    for note in notes:
        click.echo(note)
    code = gate_exit(results, judgement)
    if judgement is not None:
        click.echo(render_judgement(judgement, updating=update_expected))
        if update_expected:
            code = _update_list(expected, judgement)
    if code == EXIT_NOTHING_JUDGED:
        click.echo(f"{NOTHING_JUDGED}: exit {code}", err=True)
    if report is not None:
        write_reports(results, report, name=report_name, judgement=judgement, exit_code=code)
        click.echo(f"reports: {paths['junit']}, {paths['summary']}, {paths['html']}")  # unwrapped: a CI log is no terminal
    sys.exit(code)


def _judge(results: list, expected):
    """The run's failures measured against the list; None without one. A case that was not
    applicable was not judged, so it makes no entry stale."""
    from ticdc_conformance.findings.case_ids import failures_of
    from ticdc_conformance.findings.outcome import NOT_APPLICABLE

    if expected is None:
        return None
    cases = [r.case_id for r in results if r.outcome != NOT_APPLICABLE]
    return expected.judge(cases, [f for r in results for f in failures_of(r.case_id, r)])


def _unexpected_of(result, judgement) -> list:
    return [f for f in judgement.unexpected if f.case == result.case_id]


def render_judgement(judgement, updating: bool = False) -> str:
    """The list's section of the output: each entry in use with how many failures it matched, the
    unexpected failures per rule, the stale entries, the entries whose cases did not run; then the
    exit 6 line when the list alone fails the run (not when the run is updating it)."""
    from ticdc_conformance.findings.case_ids import by_rule
    from ticdc_conformance.findings.outcome import STALE_EXPECTED_FAILURES

    j = judgement
    lines = [f"expected failures ({j.path}): {len(j.expected)} expected, {len(j.unexpected)} unexpected, "
             f"{len(j.stale)} stale entr{'y' if len(j.stale) == 1 else 'ies'}, {len(j.not_run)} not run"]
    for entry, count in j.counts():
        lines.append(f"  expected  {j.where(entry)}  {entry}  ({count} failure{'s' if count != 1 else ''})")
    for rule, failures in by_rule(j.unexpected).items():
        cases = ", ".join(dict.fromkeys(f.case for f in failures))
        lines.append(f"  UNEXPECTED  {rule}: {len(failures)} failure{'s' if len(failures) != 1 else ''} in {cases}")
    for entry in j.stale:
        lines.append(f"  STALE  {j.where(entry)}  {entry}: now passes: remove it or run with "
                     f"--update-expected-failures")
    for entry in j.not_run:
        lines.append(f"  not run  {j.where(entry)}  {entry}")
    if not j.unexpected and j.stale and not updating:
        lines.append(f"exit 6: {STALE_EXPECTED_FAILURES}")
    return "\n".join(lines)


def _update_list(expected, judgement) -> int:
    """Rewrites the list from this run; 3 when a consumer error was among the failures it had not
    listed (recorded, but a consumer that cannot run is no state to accept silently), else 0."""
    from ticdc_conformance.findings.case_ids import CONSUMER_ERROR_ID

    expected.update(judgement)
    added = len(dict.fromkeys(f.id for f in judgement.unexpected))
    changed = "unchanged" if not (judgement.stale or added) else \
        f"{len(judgement.stale)} stale entr{'y' if len(judgement.stale) == 1 else 'ies'} removed, {added} added"
    click.echo(f"updated {expected.path}: {changed}")
    return 3 if any(f.rule == CONSUMER_ERROR_ID for f in judgement.unexpected) else 0


@click.command()
@click.option("--case", "case", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder written by `generate` (manifest.json, truth/, records/); the verdict is written "
                   "into its result.json.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The consumer's output folder (docs/consumer-protocol.md); default CASE/consumer.")
@final_state_only_option
@report_option
@_expected_failure_options
def check(case: Path, out: Path | None, final_state_only: bool, report: Path | None, expected_failures: Path | None,
          update_expected: bool) -> None:
    """Check a consumer's outputs, written however it was run, against the ground truth of CASE; the
    checks and exit status of `run` (docs/checks.md): 0 conformant, 1 findings, 2 a CASE or OUT that
    is not one, 3 no final/ in OUT, 4 final state only, 6 a stale --expected-failures list."""
    from .errors import CaseError
    from .runner import check_options_digest, check_outputs

    expected = _expected_list(expected_failures, update_expected)
    out = out if out is not None else case / "consumer"
    progress = _progress("check")
    progress.start(str(case), status=f"checking {out} against {case}/truth")
    try:
        result = check_outputs(case, out, final_state_only)
    except CaseError as e:
        progress.stop("refused")
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    progress.stop(f"{result.outcome} in {progress.elapsed():.0f}s")
    try:
        result.write_result_file()
    except OSError as e:  # a read-only case folder: the reports still carry every finding
        click.echo(f"note: could not write {result.result_file}: {e}", err=True)
    _verdicts([result], f"scenario {result.scenario}, seed {result.seed}, {result.consumer}", report,
              f"check-{result.scenario}-seed{result.seed}-{result.encoding}-{check_options_digest(case, out)}",
              expected, update_expected)


@click.command("differential")
@_scenario_option
@seed_option
@time_zone_option
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/work"),
              show_default=True, help="Scratch folder for the generated records (one sub-folder per encoding).")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the verdict as JSON into this folder (differential-<scenario>-seed<N>.json).")
def differential_cmd(scenario: str, seed: int, time_zone: str, work: Path, report: Path | None) -> None:
    """Compare every encoding with every other at the fidelity they share; exit 1 on a disagreement
    (an encoder or decoder bug; docs/checks.md)."""
    from .cross_encoding import check_encodings_agree

    with console.status(f"{scenario}: generating and decoding every encoding…"):
        with _changefeed_failure(scenario, seed, "every encoding"):
            verdict = check_encodings_agree(scenario, seed, work, time_zone=time_zone)
    click.echo(verdict.render())
    if report is not None:
        report.mkdir(parents=True, exist_ok=True)
        target = report / f"differential-{scenario}-seed{seed}.json"
        target.write_text(json.dumps(verdict.to_json(), indent=2, ensure_ascii=False) + "\n")
        console.print(f"report: {target}")
    sys.exit(0 if verdict.agree else 1)
