"""The `ticdc-conformance` command."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ticdc_generators.pipeline import encoding_names, generate
from ticdc_generators.scenarios import SCENARIOS

from .errors import ConsumerError

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
_tz_option = click.option("--time-zone", "time_zone", default="UTC", show_default=True,
                          help="Upstream TiDB time zone (TIMESTAMP values; TiCDC's time-zone option).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Conformance and fuzz testing for consumers of TiCDC's Kafka protocols."""


def _configure(scenario: str, encoding: str, time_zone: str, changefeed: Path | None, sink_uri: str | None,
               version_profile: str = "ticdc"):
    from ticdc_generators.pipeline import configure
    from ticdc_generators.sink.changefeed import ChangefeedConfigError

    try:
        return configure(scenario, encoding, time_zone, changefeed, sink_uri, version_profile)
    except ChangefeedConfigError as e:
        raise click.UsageError(str(e)) from None


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
@_changefeed_option
@_sink_uri_option
@_protocol_option
@_encoding_option
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: records/, manifest.json, truth/ (one sub-folder per encoding with --protocol all).")
@click.option("--events", type=click.IntRange(min=1), default=None,
              help="Number of row events, for scenarios that take a size (e.g. large).")
def generate_cmd(scenario: str, seed: int, time_zone: str, version_profile: str, changefeed: Path | None,
                 sink_uri: str | None, protocol: str, encoding: str | None, out: Path, events: int | None) -> None:
    """Generate a scenario's Kafka records exactly as TiCDC's Kafka sink would send them."""
    encodings = resolve_encodings(protocol, encoding)
    for enc in encodings:
        target = out / enc if len(encodings) > 1 else out
        config = _configure(scenario, enc, time_zone, changefeed, sink_uri, version_profile)
        manifest = generate(scenario, seed, config, target, events=events)
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
    m = json.loads(manifest.read_text())
    try:
        if engine == "spark":
            from .consumer.spark_job import consume as spark_consume, spark_session
            figures = spark_consume(spark_session(master), records, m, out, out / "work")
        else:
            from .consumer.local import consume_local
            figures = consume_local(records, m, out)
    except ConsumerError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(json.dumps(figures, indent=2))


@main.command()
@_scenario_option
@_seed_option
@_tz_option
@_profile_option
@_changefeed_option
@_sink_uri_option
@_protocol_option
@_encoding_option
@click.option("--consumer", default="spark", show_default=True,
              help="spark | local | a command implementing docs/consumer-protocol.md.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/work"),
              show_default=True, help="Scratch folder for generated records and consumer output.")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write a JUnit XML file and a JSON summary into this folder.")
@click.option("--master", default=None, help="Spark master for --consumer spark (default local[2]).")
def run(scenario: str, seed: int, time_zone: str, version_profile: str, changefeed: Path | None, sink_uri: str | None,
        protocol: str, encoding: str | None, consumer: str, work: Path, report: Path | None,
        master: str | None) -> None:
    """Generate, consume and check; exit 0 only if every encoding conforms."""
    from .report import write_reports
    from .runner import run_encoding

    encodings = resolve_encodings(protocol, encoding)
    configs = {enc: _configure(scenario, enc, time_zone, changefeed, sink_uri, version_profile) for enc in encodings}
    config_args = " ".join(([f"--changefeed {shlex.quote(str(changefeed))}"] if changefeed else [])
                           + ([f"--sink-uri {shlex.quote(sink_uri)}"] if sink_uri else [])
                           + ([f"--version-profile {version_profile}"] if version_profile != "ticdc" else []))
    spark = None
    if consumer == "spark":
        from .consumer.spark_job import spark_session
        spark = spark_session(master)
    results = []
    for enc in encodings:
        with console.status(f"{enc}: generating, consuming, checking…"):
            results.append(run_encoding(scenario, seed, enc, work, consumer, spark, config=configs[enc],
                                        config_args=config_args))
    table = Table(title=f"scenario {scenario}, seed {seed}, consumer {consumer}")
    for col in ("encoding", "records", "tables", "rows", "findings", "verdict", "seconds"):
        table.add_column(col)
    for r in results:
        table.add_row(r.encoding, str(r.records), str(len(r.tables)),
                      str(sum(t.actual_rows for t in r.tables)), str(len(r.findings)),
                      "[green]conformant[/green]" if r.conformant else "[red]NOT conformant[/red]",
                      f"{r.seconds:.1f}")
    console.print(table)
    for r in results:
        if not r.conformant:
            click.echo(r.render())
    if report is not None:
        paths = write_reports(results, report, name=f"{scenario}-seed{seed}")
        console.print(f"reports: {paths['junit']}, {paths['summary']}")
    sys.exit(0 if all(r.conformant for r in results) else 1)


@main.command()
@click.option("--check", "mode", flag_value="check", default=True, help="Compare the corpus with a fresh build (default).")
@click.option("--update", "mode", flag_value="update", help="Regenerate the corpus (atomically).")
@click.option("--dir", "golden_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("golden"),
              show_default=True)
def golden(mode: str, golden_dir: Path) -> None:
    """Check or regenerate the golden corpus."""
    from .checks import golden as g

    if mode == "update":
        changes = g.update(golden_dir)
        for kind in ("added", "changed", "removed"):
            for f in changes[kind]:
                click.echo(f"{kind:8} {f}")
        console.print(f"golden corpus updated: {sum(map(len, changes.values()))} file(s) differ from before")
        return
    diffs = g.check(golden_dir)
    if not diffs:
        console.print(f"golden corpus {golden_dir} matches the generators")
        return
    for d in diffs[: g.MAX_DIFFS_SHOWN]:
        click.echo(d.render())
    if len(diffs) > g.MAX_DIFFS_SHOWN:
        console.print(f"… and {len(diffs) - g.MAX_DIFFS_SHOWN} more differences")
    console.print("the generators' output changed; review it, then run `ticdc-conformance golden --update`")
    sys.exit(1)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--write", "write_to", is_flag=False, flag_value="docs/fidelity.md", default=None,
              type=click.Path(dir_okay=False, path_type=Path), help="Write the Markdown page (default docs/fidelity.md).")
def fidelity(fmt: str, write_to: Path | None) -> None:
    """Print the fidelity matrix: what each encoding keeps of each TiDB type."""
    from .checks.fidelity import matrix
    from .checks.fidelity_doc import render

    if write_to is not None:
        Path(write_to).write_text(render())
        console.print(f"wrote {write_to}")
        return
    click.echo(render() if fmt == "md" else json.dumps(matrix(), indent=2))


@main.group()
def bench() -> None:
    """Benchmarks that print figures and ratios measured in one run."""


@bench.command("generate")
@click.option("--events", "sizes", multiple=True, type=click.IntRange(min=1), default=(1_000_000, 10_000_000),
              show_default=True, help="Sizes to run (repeatable); the first and last give the ratio.")
@click.option("--encoding", default="canal-json", show_default=True, type=click.Choice(encoding_names()))
def bench_generate_cmd(sizes: tuple[int, ...], encoding: str) -> None:
    """Generation speed and peak memory of the `large` scenario."""
    from .bench import bench_generate

    bench_generate(list(sizes), encoding, echo=click.echo)
