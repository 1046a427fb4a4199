"""The `ticdc-conformance` command."""
from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ticdc_generators.pipeline import encoding_names, generate
from ticdc_generators.scenarios import SCENARIOS

from ticdc_conformance.consumers.adapters.program import DEFAULT_TIMEOUT_S as CONSUMER_TIMEOUT_S
from .errors import ConsumerError
from .lint import command as lint_command
from .rules import command as rules_command
from .transport.commands import kafka as kafka_group

console = Console(highlight=False)
ALL = "all"


def resolve_encodings(protocol: str, encoding: str | None) -> list[str]:
    """`--protocol all|open-protocol|canal-json|debezium|simple[-json|-avro]` (+ `--encoding`) -> encodings."""
    if protocol == ALL:
        return encoding_names()
    if protocol == "simple":
        return [f"simple-{encoding or 'json'}"]
    if encoding and protocol != "simple":
        raise click.BadParameter(f"--encoding applies to the simple protocol only, not {protocol}")
    if protocol not in encoding_names():
        raise click.BadParameter(f"unknown protocol {protocol!r}; expected all, {', '.join(encoding_names())} or simple")
    return [protocol]


_protocol_option = click.option(
    "--protocol", "-p", default=ALL, show_default=True,
    help="open-protocol, canal-json, debezium, simple (with --encoding), simple-json, simple-avro, or all.")
_encoding_option = click.option(
    "--encoding", "--encoding-format", "encoding", type=click.Choice(["json", "avro"]), default=None,
    help="Simple protocol encoding (TiCDC's encoding-format); default json.")
_scenario_option = click.option("--scenario", "-s", default="smoke", show_default=True,
                                type=click.Choice(sorted(SCENARIOS)), help="Named scenario.")
_seed_option = click.option("--seed", default=1, show_default=True, type=int, help="Scenario seed.")
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


_final_state_only_option = click.option(
    "--final-state-only", is_flag=True,
    help="Accept a consumer judged on its final state only (a stream with watermarks, but no applied.ndjson "
         "with a checkpoint): verdict `conformant (final state only)`, exit 0, instead of exit 4.")
_report_option = click.option(
    "--report", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Write a JUnit XML file and a JSON summary (every finding) into this folder, named by scenario, "
         "seed, encoding(s) and an options digest.")
_tz_option = click.option("--time-zone", "time_zone", default="UTC", show_default=True,
                          help="Upstream TiDB time zone (TIMESTAMP values; TiCDC's time-zone option).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Conformance and fuzz testing for consumers of TiCDC's Kafka protocols."""


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


@main.command()
def scenarios() -> None:
    """List the named scenarios."""
    for name in sorted(SCENARIOS):
        console.print(f"[bold]{name}[/bold]  {SCENARIOS[name].description}")


@main.command("generate")
@_scenario_option
@_seed_option
@_tz_option
@_profile_option
@_delivery_options
@_changefeed_option
@_sink_uri_option
@_protocol_option
@_encoding_option
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


@main.command()
@click.option("--records", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The manifest.json written by `generate` (default: next to --records).")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice(["spark", "local"]), default="spark", show_default=True,
              help="The reference Spark consumer, or the sequential pure-Python one.")
@click.option("--master", default=None, help="Spark master (default local[2]; ignored under spark-submit).")
def consume(records: Path, manifest: Path | None, out: Path, engine: str, master: str | None) -> None:
    """Run a reference consumer over record files and write the final table states."""
    manifest = manifest or records.parent / "manifest.json"
    try:
        m = json.loads(manifest.read_text())
        missing = [k for k in ("protocol", "topics", "sink") if not isinstance(m, dict) or k not in m]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
    except (OSError, ValueError) as e:
        click.echo(f"error: {manifest}: not a manifest written by `generate`: {e}", err=True)
        sys.exit(2)
    try:
        if engine == "spark":
            from ticdc_conformance.consumers.spark.job import consume as spark_consume, spark_session
            figures = spark_consume(spark_session(master), records, m, out, out / "work")
        else:
            from ticdc_conformance.consumers.sequential.consumer import consume_local
            figures = consume_local(records, m, out)
    except ConsumerError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(json.dumps(figures, indent=2))


@main.command("py-files")
@click.argument("target", type=click.Path(dir_okay=False, path_type=Path))
def py_files(target: Path) -> None:
    """Write the zip of this project's packages for `spark-submit --py-files` (docs/spark-submit.md)."""
    from ticdc_conformance.consumers.spark import job as spark_job

    n = spark_job.build_py_files(target)
    click.echo(f"wrote {target} ({n} files); run the consumer with:\n"
               f"  spark-submit --master MASTER --py-files {target} {Path(spark_job.__file__).resolve()} "
               "--records RECORDS --out OUT")


@main.command()
@_scenario_option
@_seed_option
@_tz_option
@_profile_option
@_delivery_options
@_changefeed_option
@_sink_uri_option
@_protocol_option
@_encoding_option
@click.option("--consumer", default="spark", show_default=True,
              help="spark | local | a command implementing docs/consumer-protocol.md, split into argv by POSIX "
                   "shell rules (quote an argument with spaces) and run without a shell.")
@click.option("--consumer-timeout", "consumer_timeout", type=click.FloatRange(min=0, min_open=True),
              default=CONSUMER_TIMEOUT_S, show_default=True,
              help="Seconds a consumer command may run; then its whole process group is killed (exit 3). "
                   "Not for the in-process spark and local consumers.")
@_final_state_only_option
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/work"),
              show_default=True, help="Scratch folder: WORK/<scenario>-seed<N>[-<options digest>]/<encoding> per "
                                      "encoding, emptied before each run (records, truth, the consumer's output, "
                                      "consumer.log, result.json).")
@_report_option
@click.option("--master", default=None, help="Spark master for --consumer spark (default local[2]).")
@click.option("--events", type=click.IntRange(min=1), default=None,
              help="Number of row events, for scenarios that take a size (e.g. large).")
def run(scenario: str, seed: int, time_zone: str, version_profile: str, changefeed: Path | None, sink_uri: str | None,
        protocol: str, encoding: str | None, consumer: str, consumer_timeout: float, final_state_only: bool,
        work: Path, report: Path | None, master: str | None, events: int | None, **delivery_options) -> None:
    """Generate, consume and check. Exit 0 when every encoding conforms, 1 on findings, 3 on a consumer
    error, 4 when a consumer was judged on its final state only (most severe first: 3, 1, 4)."""
    from ticdc_conformance.consumers.adapters.program import Interrupted, consumer_argv, signals_interrupt
    from .folders import options_digest
    from .runner import run_encoding

    try:
        consumer_argv(consumer)
    except ValueError as e:
        raise click.BadParameter(f"{consumer!r}: {e}", param_hint="--consumer") from None
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
    options = [config_args, time_zone, events, changefeed_text]
    digest = options_digest(options) if options != ["", "UTC", None, None] else ""
    report_name = (f"{scenario}-seed{seed}-{ALL if encodings == encoding_names() else '+'.join(encodings)}"
                   + (f"-{digest}" if digest else ""))
    results = []
    try:
        with signals_interrupt():
            spark = None
            if consumer == "spark":
                from ticdc_conformance.consumers.spark.job import spark_session
                spark = spark_session(master)
            for enc in encodings:
                with console.status(f"{enc}: generating, consuming, checking…"):
                    with _changefeed_failure(scenario, seed, enc):
                        results.append(run_encoding(scenario, seed, enc, work, consumer, spark, config=configs[enc],
                                                    config_args=config_args, events=events,
                                                    final_state_only=final_state_only,
                                                    consumer_timeout_s=consumer_timeout, digest=digest))
    except Interrupted as stop:
        click.echo(f"run stopped by {stop}: the consumer's process group (if one was running) was killed; "
                   f"what it wrote stays under {work}", err=True)
        sys.exit(128 + stop.signum)  # the shell's status for a process ended by that signal
    _verdicts(results, f"scenario {scenario}, seed {seed}, consumer {consumer}", report, report_name)


def _verdicts(results: list, title: str, report: Path | None, report_name: str) -> None:
    """One row per encoding, the findings of each failed one summarized per rule, the reports; exits
    with the most severe encoding's code (outcome.py)."""
    from ticdc_conformance.findings.outcome import CONFORMANT, STYLES, overall_exit
    from ticdc_conformance.findings.report import full_list_files, report_paths, write_reports
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
    paths = report_paths(report, report_name) if report is not None else None
    for r in results:
        if r.outcome != CONFORMANT or r.undecidable:
            click.echo(r.render(FINDINGS_SHOWN_PER_RULE, full_list_files(r, paths)))
    if report is not None:
        write_reports(results, report, name=report_name)
        console.print(f"reports: {paths['junit']}, {paths['summary']}")
    sys.exit(overall_exit(r.exit_code for r in results))


@main.command()
@click.option("--case", "case", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder written by `generate` (manifest.json, truth/, records/); the verdict is written "
                   "into its result.json.")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The consumer's output folder (docs/consumer-protocol.md); default CASE/consumer.")
@_final_state_only_option
@_report_option
def check(case: Path, out: Path | None, final_state_only: bool, report: Path | None) -> None:
    """Check a consumer's outputs, written however it was run, against the ground truth of CASE; the
    checks and exit status of `run` (docs/checks.md): 0 conformant, 1 findings, 2 a CASE or OUT that
    is not one, 3 no final/ in OUT, 4 final state only."""
    from .errors import CaseError
    from .runner import check_options_digest, check_outputs

    out = out if out is not None else case / "consumer"
    try:
        with console.status(f"checking {out} against {case}/truth…"):
            result = check_outputs(case, out, final_state_only)
    except CaseError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    try:
        result.write_result_file()
    except OSError as e:  # a read-only case folder: the reports still carry every finding
        click.echo(f"note: could not write {result.result_file}: {e}", err=True)
    _verdicts([result], f"scenario {result.scenario}, seed {result.seed}, {result.consumer}", report,
              f"check-{result.scenario}-seed{result.seed}-{result.encoding}-{check_options_digest(case, out)}")


@main.command()
@click.option("--check", "mode", flag_value="check", default=True, help="Compare the corpus with a fresh build (default).")
@click.option("--update", "mode", flag_value="update", help="Regenerate the corpus (atomically).")
@click.option("--dir", "golden_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("golden"),
              show_default=True)
def golden(mode: str, golden_dir: Path) -> None:
    """Check or regenerate the golden corpus."""
    from ticdc_conformance.golden import corpus as g
    from ticdc_conformance.golden.swap import GoldenInterrupted

    try:
        if mode == "update":
            for line in g.render_changes(g.update(golden_dir)):
                click.echo(line)
            return
        diffs = g.check(golden_dir)
    except GoldenInterrupted as stop:
        click.echo(f"golden --{mode} {stop}: {golden_dir} holds a whole corpus and no scratch folder is left",
                   err=True)
        sys.exit(128 + stop.signum)  # the shell's status for a process ended by that signal
    if not diffs:
        console.print(f"golden corpus {golden_dir} matches the generators ({len(list(g.cases()))} cases)")
        return
    for d in diffs[: g.MAX_DIFFS_SHOWN]:
        click.echo(d.render())
    if len(diffs) > g.MAX_DIFFS_SHOWN:
        console.print(f"… and {len(diffs) - g.MAX_DIFFS_SHOWN} more differences")
    console.print("the generators' output changed; review it, then run `ticdc-conformance golden --update`")
    sys.exit(1)


@main.command("differential")
@_scenario_option
@_seed_option
@_tz_option
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/work"),
              show_default=True, help="Scratch folder for the generated records (one sub-folder per encoding).")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the verdict as JSON into this folder (differential-<scenario>-seed<N>.json).")
def differential_cmd(scenario: str, seed: int, time_zone: str, work: Path, report: Path | None) -> None:
    """Compare every encoding with every other at the fidelity they share; exit 1 on a disagreement
    (an encoder or decoder bug; docs/checks.md)."""
    from .checks.cross_encoding import check_encodings_agree

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


_FIDELITY_TARGETS = {"md": Path("docs/fidelity.md"), "json": Path("reports/fidelity.json")}


@main.command()
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--write", "write_to", is_flag=False, flag_value="", default=None,
              help="Write the page instead of printing it (default docs/fidelity.md, with --format json "
                   "reports/fidelity.json).")
def fidelity(fmt: str, write_to: str | None) -> None:
    """Print the fidelity matrix: what each encoding keeps of each TiDB type (docs/fidelity.md)."""
    from ticdc_conformance.fidelity.matrix import matrix
    from ticdc_conformance.fidelity.doc import render

    text = render() if fmt == "md" else json.dumps(matrix(), indent=2, ensure_ascii=False) + "\n"
    if write_to is None:
        click.echo(text, nl=False)
        return
    target = Path(write_to) if write_to else _FIDELITY_TARGETS[fmt]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    console.print(f"wrote {target}")


def _bench_variants() -> list[str]:
    from .bench.inputs import variant_names

    return variant_names()


@main.group()
def bench() -> None:
    """Benchmarks that print figures and ratios measured in one run."""


@bench.command("generate")
@click.option("--events", "sizes", multiple=True, type=click.IntRange(min=1), default=(1_000_000, 10_000_000),
              show_default=True, help="Sizes to run (repeatable); the first and last give the ratio.")
@click.option("--encoding", default="canal-json", show_default=True, type=click.Choice(encoding_names()))
def bench_generate_cmd(sizes: tuple[int, ...], encoding: str) -> None:
    """Generation speed and peak memory of the `large` scenario."""
    from .bench.generate import bench_generate

    bench_generate(list(sizes), encoding, echo=click.echo)


_bench_work_option = click.option(
    "--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/bench"), show_default=True,
    help="Folder for the generated inputs (kept and reused: keyed by scenario, seed, size and sink config) "
         "and the consumer output.")
_bench_encodings_option = click.option(
    "--encoding", "variants", multiple=True, default=(), show_default=False,
    type=click.Choice(_bench_variants()),
    help="Encodings to run (repeatable); default all of them.")


@bench.command("decode")
@_bench_work_option
@_bench_encodings_option
@click.option("--events", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="Row events of the `large` scenario to generate (or reuse); every message they give is decoded.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Decode only the first N messages.")
@click.option("--profile", "profile_messages", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also profile each decoder over its first N messages and print where the time goes.")
@_seed_option
def bench_decode_cmd(work: Path, variants: tuple[str, ...], events: int, limit: int | None, profile_messages: int,
                     seed: int) -> None:
    """Each reference decoder's messages/s next to a bare parse of the same messages."""
    from .bench.decode import bench_decode

    bench_decode(work, list(variants) or _bench_variants(), events, seed, echo=click.echo, limit=limit,
                 profile_messages=profile_messages)


@bench.command("consume")
@_bench_work_option
@_bench_encodings_option
@click.option("--events", "sizes", multiple=True, type=click.IntRange(min=1), default=(1_000_000, 10_000_000),
              show_default=True, help="Sizes to run (repeatable); the smallest and largest give the ratio.")
@click.option("--master", default="local[2]", show_default=True, help="Spark master of the consumer runs.")
@click.option("--driver-memory", default=None, help="spark.driver.memory of the runs (default: the consumer's, 1g).")
@click.option("--floor/--no-floor", default=True, show_default=True,
              help="Also time Spark jobs that only read, only parse (JSON encodings, in the JVM, written "
                   "once) and only decode (the suite's decoder) every message of the same files: the floor "
                   "under the consumer's rate.")
@_seed_option
def bench_consume_cmd(work: Path, variants: tuple[str, ...], sizes: tuple[int, ...], master: str,
                      driver_memory: str | None, floor: bool, seed: int) -> None:
    """The reference Spark consumer end to end: throughput, time ratio and the driver's peak memory."""
    from .bench.consume import bench_consume

    bench_consume(work, list(variants) or _bench_variants(), sorted(set(sizes)), master, seed, driver_memory,
                  echo=click.echo, floor=floor)


@main.command("rules")
@click.option("--protocol", "-p", default=None,
              help="Only rules for this encoding: open-protocol, canal-json, debezium, simple, simple-json, "
                   "simple-avro.")
@click.option("--level", type=click.Choice(rules_command.LEVELS), default=None, help="Only rules of this level.")
@click.option("--topic", default=None, help="Only rules of this topic (the middle part of the id, e.g. bootstrap).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--coverage", "show_coverage", is_flag=True, help="Show rule -> checks -> tests instead.")
@click.option("--strict", is_flag=True, help="With --coverage: exit 1 listing the rules without a check.")
@click.option("--tests", "tests_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("tests"),
              show_default=True, help="Where --coverage looks for tests marked @pytest.mark.rules.")
@click.option("--write", "write_to", is_flag=False, flag_value="docs/rules.md", default=None,
              type=click.Path(dir_okay=False, path_type=Path), help="Write the Markdown page (default docs/rules.md).")
def rules(protocol: str | None, level: str | None, topic: str | None, fmt: str, show_coverage: bool, strict: bool,
          tests_dir: Path, write_to: Path | None) -> None:
    """List the rule catalogue: every normative statement of the specs (docs/rules.md)."""
    protocols = resolve_encodings(protocol, None) if protocol else None
    sys.exit(rules_command.run(click.echo, protocols, level, topic, fmt, show_coverage, strict, tests_dir, write_to))


@main.command("lint")
@click.option("--records", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A record-file folder (Parquet, Spark's Kafka-source columns, docs/consumer-protocol.md).")
@click.option("--kafka", "bootstrap", default=None, help="Read a Kafka topic instead: the bootstrap servers.")
@click.option("--topic", default=None, help="With --kafka: the topic to read.")
@click.option("--protocol", "-p", default=None,
              help="open-protocol, canal-json, debezium, simple (with --encoding), simple-json or simple-avro; "
                   "default: the manifest's.")
@click.option("--encoding", "--encoding-format", "encoding", type=click.Choice(["json", "avro"]), default=None,
              help="Simple protocol encoding (TiCDC's encoding-format).")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A run's manifest.json: sink options and partition counts (default: beside --records, if there).")
@click.option("--sink-option", "sink_options", multiple=True, metavar="NAME=VALUE",
              help="A TiCDC sink option of the stream, TiCDC's name (e.g. enable-tidb-extension=true); repeatable.")
@click.option("--format", "fmt", type=click.Choice(lint_command.FORMATS), default="text", show_default=True)
@click.option("--replay-horizon", "horizon", type=click.IntRange(min=1), default=None,
              help="Watermarks a partition's replay may go back (default 64); older events are not judged.")
@click.option("--max-tracked", "capacity", type=click.IntRange(min=1), default=None,
              help="Events and row keys remembered per partition/topic (default 1000000).")
@click.option("--max-findings", "limit", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Findings listed in --format json (all are counted).")
def lint_cmd(records: Path | None, bootstrap: str | None, topic: str | None, protocol: str | None,
             encoding: str | None, manifest: Path | None, sink_options: tuple[str, ...], fmt: str,
             horizon: int | None, capacity: int | None, limit: int) -> None:
    """Check a Kafka record stream against the spec rules (docs/lint.md); exit 1 on a required violation."""
    sys.exit(lint_command.run(click.echo, records, bootstrap, topic, protocol, encoding, manifest, sink_options,
                              fmt, horizon, capacity, limit))


main.add_command(kafka_group)
