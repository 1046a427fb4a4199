"""What `ticdc-conformance lint` does: read a stream, print its findings, return the exit code.

Exit codes: 0 when no `required` rule is broken (recommended and info findings are printed but pass),
1 when one is, 2 when the input cannot be read as a stream at all (named in the message).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import click

from .findings import DEFAULT_LIMIT, INFO, Finding, Findings
from .run import LintResult, lint, lint_record_files
from .settings import LintSettings, SettingsError, load_settings
from .sources import KafkaTopic, LintInputError

FORMATS = ("text", "json")


def parse_sink_options(pairs: Iterable[str]) -> dict[str, str]:
    """`NAME=VALUE` pairs, TiCDC's option names (e.g. enable-tidb-extension=true)."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise SettingsError(f"--sink-option {pair!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def default_manifest(records: Optional[Path]) -> Optional[Path]:
    """A generated run keeps manifest.json beside its records/ folder (docs/consumer-protocol.md)."""
    if records is None:
        return None
    candidate = Path(records).parent / "manifest.json"
    return candidate if candidate.is_file() else None


def summary_text(result: LintResult) -> str:
    f = result.findings
    totals = result.summary["totals"]
    lines = [f"{totals['records']} record(s) in {len(result.summary['partitions'])} partition(s): "
             f"{totals['rows']} row event(s), {totals['ddl']} DDL, {totals['watermarks']} watermark(s); "
             f"{totals['resent']} re-sent, {totals['replays']} watermark replay(s), "
             f"{totals['unjudged']} too old to judge"]
    for rule, levels in result.summary["findings"].items():
        lines.append(f"  {rule}: " + ", ".join(f"{n} {level}" for level, n in sorted(levels.items())))
    shown = len(f.kept)
    total = f.count()
    if shown < total:
        lines.append(f"  ({total - shown} finding(s) beyond the first {shown} counted, not listed)")
    verdict = "FAIL" if result.failed else "PASS"
    lines.append(f"{verdict}: {f.count('required')} required, {f.count('recommended')} recommended, "
                 f"{f.count(INFO)} info finding(s)")
    return "\n".join(lines)


def result_json(result: LintResult) -> str:
    f = result.findings
    return json.dumps({"passed": not result.failed, "summary": result.summary,
                       "findings": [x.to_json() for x in f.kept], "findings_total": f.count()},
                      indent=2, ensure_ascii=False)


def run(echo: Callable[[str], None], records: Optional[Path] = None, kafka: Optional[str] = None,
        topic: Optional[str] = None, protocol: Optional[str] = None, encoding: Optional[str] = None,
        manifest: Optional[Path] = None, sink_options: Sequence[str] = (), fmt: str = "text",
        horizon: Optional[int] = None, capacity: Optional[int] = None, limit: int = DEFAULT_LIMIT) -> int:
    if (records is None) == (kafka is None):
        echo("error: give either --records DIR or --kafka BOOTSTRAP --topic T")
        return 2
    if kafka is not None and not topic:
        echo("error: --kafka needs --topic")
        return 2
    try:
        limits = {k: v for k, v in (("horizon", horizon), ("capacity", capacity)) if v is not None}
        settings = load_settings(protocol, encoding, manifest or default_manifest(records),
                                 parse_sink_options(sink_options), **limits)
        on_finding: Optional[Callable[[Finding], None]] = (lambda x: echo(x.line())) if fmt == "text" else None
        findings = Findings(limit=limit, on_finding=on_finding)
        result = _lint(settings, findings, records, kafka, topic)
    except (SettingsError, LintInputError) as e:
        echo(f"error: {e}")
        return 2
    echo(result_json(result) if fmt == "json" else summary_text(result))
    return 1 if result.failed else 0


def _lint(settings: LintSettings, findings: Findings, records: Optional[Path], kafka: Optional[str],
          topic: Optional[str]) -> LintResult:
    if records is not None:
        return lint_record_files(records, settings, findings)
    source = KafkaTopic(kafka, topic, settings.topics.get(topic))
    return lint(source, settings, findings, source.partitions)


@click.command("lint")
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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--replay-horizon", "horizon", type=click.IntRange(min=1), default=None,
              help="Watermarks a partition's replay may go back (default 64); older events are not judged.")
@click.option("--max-tracked", "capacity", type=click.IntRange(min=1), default=None,
              help="Events and row keys remembered per partition/topic (default 1000000).")
@click.option("--max-findings", "limit", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Findings listed in --format json (all are counted).")
def lint_cmd(records: Optional[Path], bootstrap: Optional[str], topic: Optional[str], protocol: Optional[str],
             encoding: Optional[str], manifest: Optional[Path], sink_options: tuple[str, ...], fmt: str,
             horizon: Optional[int], capacity: Optional[int], limit: int) -> None:
    """Check a Kafka record stream against the spec rules (docs/lint.md); exit 1 on a required violation."""
    sys.exit(run(click.echo, records, bootstrap, topic, protocol, encoding, manifest, sink_options,
                 fmt, horizon, capacity, limit))
