"""`ticdc-conformance kafka …`: the Kafka transport from the command line (docs/kafka.md)."""
from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import click

from ticdc_conformance.transport.broker import DEFAULT_HEAP, DEFAULT_KAFKA_VERSION, KAFKA_VERSION_ENV
from ticdc_conformance.transport.errors import TransportError

_bootstrap_option = click.option("--bootstrap", "-b", required=True, metavar="HOST:PORT[,HOST:PORT…]",
                                 help="Bootstrap servers of the Kafka cluster.")
_timeout_option = click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=30.0,
                               show_default=True, help="Seconds to wait for the cluster at any one step.")


def _manifest(records: Path, manifest: Optional[Path]) -> dict:
    return json.loads((manifest or records.parent / "manifest.json").read_text())


def _fail(e: Exception) -> None:
    click.echo(f"error: {e}", err=True)
    sys.exit(2)


@click.group("kafka")
def kafka() -> None:
    """The Kafka transport: a local broker, publishing record files, reading topics back."""


@kafka.command("jars")
@click.option("--spark/--no-spark", default=True, show_default=True,
              help="Also pick Spark's Kafka source for the installed PySpark.")
def jars_cmd(spark: bool) -> None:
    """Resolve (once) and show the Kafka server jars and Spark's Kafka source package."""
    from ticdc_conformance.transport.broker import kafka_server_jars, kafka_version
    from ticdc_conformance.transport.maven import cache_root

    started = time.monotonic()
    try:
        jars = kafka_server_jars(echo=click.echo)
        click.echo(f"Kafka {kafka_version()}: {len(jars)} jars ({time.monotonic() - started:.1f}s), "
                   f"cached under {cache_root()}")
        if spark:
            from ticdc_conformance.transport.spark_source import spark_kafka_package

            click.echo(f"Spark's Kafka source: {spark_kafka_package(echo=click.echo)}")
    except TransportError as e:
        _fail(e)


@kafka.command("start")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Listener port (default: a free one).")
@click.option("--heap", default=None, help=f"The broker's maximum heap (-Xmx), default {DEFAULT_HEAP}.")
@click.option("--dir", "work_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the broker's data and log (default: a temporary one, removed at exit).")
@click.option("--version", "version", default=None, help=f"Apache Kafka version (default: ${KAFKA_VERSION_ENV}, else {DEFAULT_KAFKA_VERSION}).")
def start_cmd(port: Optional[int], heap: Optional[str], work_dir: Optional[Path], version: Optional[str]) -> None:
    """Run a local single-node Kafka broker (KRaft) on 127.0.0.1 until interrupted."""
    from ticdc_conformance.transport.broker import KafkaBroker

    broker = KafkaBroker(version=version, port=port, heap=heap, work_dir=work_dir, echo=click.echo)
    # SIGTERM leaves like Ctrl-C does: through the `with` below, which stops the broker.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with broker:
            click.echo(f"Kafka {broker.version} ready at {broker.bootstrap} "
                       f"(started in {broker.timings['start_s']:.1f}s; log {broker.log_file}); Ctrl-C stops it")
            code = broker.wait()
            _fail(TransportError(f"the broker exited with {code}:\n{broker.log_tail()}"))
    except KeyboardInterrupt:
        click.echo("stopped")
    except TransportError as e:
        _fail(e)


@kafka.command("publish")
@click.option("--records", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The manifest.json written by `generate` (default: next to --records).")
@_bootstrap_option
@click.option("--replace-topics", is_flag=True,
              help="Delete the manifest's topics first if they exist (their records are lost).")
@_timeout_option
def publish_cmd(records: Path, manifest: Optional[Path], bootstrap: str, replace_topics: bool,
                timeout_s: float) -> None:
    """Publish record files to Kafka: same partitions and offsets, keys, values, headers and timestamps."""
    from ticdc_conformance.transport.kafka_io import publish

    try:
        result = publish(records, bootstrap, _manifest(records, manifest), replace=replace_topics,
                         timeout_s=timeout_s)
    except TransportError as e:
        _fail(e)
    topics = ", ".join(f"{t}×{n}" for t, n in result.topics.items())
    click.echo(f"published {result.records} records to {bootstrap} ({topics} partitions) in "
               f"{result.seconds:.2f}s, {result.records_per_second:,.0f} records/s")


@kafka.command("export")
@_bootstrap_option
@click.option("--topic", "topics", required=True, multiple=True, help="Topic to read (repeatable).")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the record files (one per topic-partition).")
@click.option("--via", type=click.Choice(["client", "spark"]), default="client", show_default=True,
              help="Read with the Kafka client, or with Spark's Kafka source.")
@click.option("--master", default=None, help="Spark master for --via spark (default local[2]).")
@_timeout_option
def export_cmd(bootstrap: str, topics: tuple[str, ...], out: Path, via: str, master: Optional[str],
               timeout_s: float) -> None:
    """Write topics, as they are now, to record files (e.g. to keep a real TiCDC stream)."""
    from ticdc_contract.record_files import RecordFileWriter

    try:
        if via == "spark":
            from ticdc_conformance.consumers.spark.job import spark_session
            from ticdc_conformance.transport.spark_source import enable_kafka_source, spark_records, spark_source

            enable_kafka_source(echo=click.echo)
            records = spark_records(spark_source(spark_session(master), bootstrap, list(topics), timeout_s))
        else:
            from ticdc_conformance.transport.kafka_io import kafka_records

            records = (r for t in topics for r in kafka_records(bootstrap, t, timeout_s=timeout_s))
        with RecordFileWriter(out) as writer:
            writer.write_all(records)
    except TransportError as e:
        _fail(e)
    click.echo(f"wrote {writer.count} records of {', '.join(topics)} to {out}")


@kafka.command("consume")
@click.option("--records", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The manifest.json written by `generate` (default: next to --records).")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--bootstrap", "-b", default=None, metavar="HOST:PORT[,HOST:PORT…]",
              help="Kafka cluster to go through (default: a local broker started for this run). "
                   "The manifest's topics are replaced there.")
@click.option("--master", default=None, help="Spark master (default local[2]).")
@_timeout_option
def consume_cmd(records: Path, manifest: Optional[Path], out: Path, bootstrap: Optional[str],
                master: Optional[str], timeout_s: float) -> None:
    """The reference Spark consumer, reading the records from Kafka through Spark's Kafka source.

    Takes the arguments of docs/consumer-protocol.md, so `run --consumer "ticdc-conformance kafka
    consume [--bootstrap …]"` runs every check with Kafka as the transport."""
    from ticdc_conformance.consumers.spark.job import consume, spark_session
    from ticdc_conformance.errors import ConsumerError
    from ticdc_conformance.transport.broker import KafkaBroker
    from ticdc_conformance.transport.spark_source import enable_kafka_source, kafka_dataframe

    m = _manifest(records, manifest)
    try:
        enable_kafka_source(echo=click.echo)
        with contextlib.ExitStack() as stack:
            if bootstrap is None:
                bootstrap = stack.enter_context(KafkaBroker(echo=click.echo)).bootstrap
            spark = spark_session(master)
            figures = consume(spark, kafka_dataframe(spark, records, m, bootstrap, timeout_s), m, out, out / "work")
    except (TransportError, ConsumerError) as e:
        _fail(e)
    click.echo(json.dumps(figures, indent=2))
