"""`ticdc-conformance bench …`: benchmarks that print figures and ratios measured in one run
(docs/performance.md)."""
from __future__ import annotations

from pathlib import Path

import click

from ticdc_conformance.command_line import encoding_names, seed_option
from ticdc_conformance.errors import require_spark


def _bench_variants() -> list[str]:
    from .inputs import variant_names

    return variant_names()


@click.group()
def bench() -> None:
    """Benchmarks that print figures and ratios measured in one run."""


@bench.command("generate")
@click.option("--events", "sizes", multiple=True, type=click.IntRange(min=1), default=(1_000_000, 10_000_000),
              show_default=True, help="Sizes to run (repeatable); the first and last give the ratio.")
@click.option("--encoding", default="canal-json", show_default=True, type=click.Choice(encoding_names()))
def bench_generate_cmd(sizes: tuple[int, ...], encoding: str) -> None:
    """Generation speed and peak memory of the `large` scenario."""
    from .generate import bench_generate

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
@click.option("--paths", is_flag=True, default=False,
              help="Instead: each decoder's reference path (fast-path=false), fast path and, for Canal-JSON, "
                   "closure-built fast path side by side on the same messages (bench/paths.py).")
@seed_option
def bench_decode_cmd(work: Path, variants: tuple[str, ...], events: int, limit: int | None, profile_messages: int,
                     paths: bool, seed: int) -> None:
    """Each reference decoder's messages/s next to a bare parse of the same messages."""
    from .decode import bench_decode

    if paths:
        from .paths import bench_paths

        bench_paths(work, list(variants) or _bench_variants(), events, seed, echo=click.echo, limit=limit)
        return
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
@seed_option
def bench_consume_cmd(work: Path, variants: tuple[str, ...], sizes: tuple[int, ...], master: str,
                      driver_memory: str | None, floor: bool, seed: int) -> None:
    """The reference Spark consumer end to end: throughput, time ratio and the driver's peak memory."""
    from .consume import bench_consume

    # Refused before the inputs are generated (minutes at the default sizes), not at Spark's start.
    require_spark("bench consume", "or measure without Spark: `bench generate`, `bench decode`")

    bench_consume(work, list(variants) or _bench_variants(), sorted(set(sizes)), master, seed, driver_memory,
                  echo=click.echo, floor=floor)
