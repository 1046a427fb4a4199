"""`ticdc-conformance bench …`: benchmarks that print figures and ratios measured in one run
(docs/performance.md)."""
from __future__ import annotations

from pathlib import Path

import click

from ticdc_conformance.command_line import encoding_names, seed_option
from ticdc_conformance.errors import require_spark

from .child_failure import one_line


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


@bench.command("baseline")
@_bench_work_option
@_bench_encodings_option
@click.option("--events", "sizes", multiple=True, type=click.IntRange(min=1), default=(200_000,), show_default=True,
              help="Sizes to measure (repeatable).")
@click.option("--code", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True,
              help="A tree of this repository (generators/, conformance/) whose code is measured.")
@click.option("--commit", required=True, help="The commit that tree holds, recorded with the figures.")
@click.option("--note", default="", help="What else ran on the machine, recorded with the figures.")
@seed_option
def bench_baseline_cmd(work: Path, variants: tuple[str, ...], sizes: tuple[int, ...], code: Path, commit: str,
                       note: str, seed: int) -> None:
    """Record the generate and check figures of another tree's code as the baseline of `bench pipeline`."""
    from .baseline import measure_baseline

    click.echo(f"bench baseline: code of commit {commit} in {code}; load average {_load()}")
    measure_baseline(_baseline_tree(code, "--code"), commit, list(variants) or _bench_variants(),
                     sorted(set(sizes)), seed, work / "baseline", note, echo=click.echo)
    click.echo(f"  load average {_load()}")



class _Size(click.ParamType):
    """A number of events: 200000, 200k, 1M, 10M."""
    name = "events"
    _SUFFIX = {"k": 1_000, "m": 1_000_000}

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().replace("_", "").replace(",", "")
        factor = self._SUFFIX.get(text[-1:], 1)
        digits = text[:-1] if factor > 1 else text
        if not digits.isdigit() or int(digits) * factor < 1:
            self.fail(f"{value!r} is not a number of events (e.g. 200000, 200k, 1M)", param, ctx)
        return int(digits) * factor


@bench.command("pipeline")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), default=Path("reports/bench"),
              show_default=True, help="Folder for the run: WORK/pipeline/ENCODING-EVENTS/ holds the generated case, "
                                      "each engine's output and, for a child that failed, its log.")
@_bench_encodings_option
@click.option("--events", "--sizes", "sizes", multiple=True, type=_Size(), default=("1M",), show_default=True,
              help="Sizes to run (repeatable; 200k, 1M, 10M); with two or more, the largest and smallest give "
                   "the time ratios, the memory figures at the largest and each step's peak RSS growth.")
@click.option("--master", default="local[2]", show_default=True, help="Spark master of the Spark consumer runs.")
@click.option("--cluster", is_flag=True, default=False,
              help="Also run the Spark consumer on a standalone cluster started here (master and 2 one-core "
                   "workers) and print its scaling against --master.")
@click.option("--driver-memory", default=None, help="spark.driver.memory of the Spark runs (default: the consumer's).")
@click.option("--baseline-code", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="A tree of this repository (generators/, conformance/) whose generate and check are measured on "
                   "each input in this run and held against, instead of the recorded baseline (baseline.json).")
@click.option("--baseline-commit", default=None, help="The commit --baseline-code holds (required with it).")
@seed_option
def bench_pipeline_cmd(work: Path, variants: tuple[str, ...], sizes: tuple[int, ...], master: str, cluster: bool,
                       driver_memory: str | None, baseline_code: Path | None, baseline_commit: str | None,
                       seed: int) -> None:
    """Generate, decode, consume (each engine) and check one input side by side, with their ratios and targets."""
    from .pipeline import bench_pipeline

    if (baseline_code is None) != (baseline_commit is None):
        raise click.UsageError("--baseline-code and --baseline-commit go together: the tree and the commit it holds")
    same_run = (_baseline_tree(baseline_code, "--baseline-code"), baseline_commit) \
        if baseline_code and baseline_commit else None
    require_spark("bench pipeline", "or measure without Spark: `bench generate`, `bench decode`")
    try:
        bench_pipeline(work, list(variants) or _bench_variants(), sorted(set(sizes)), master, seed, cluster,
                       driver_memory, echo=click.echo, baseline_code=same_run)
    except RuntimeError as e:  # a child that failed (child_failure.py): one line, naming its log
        raise click.ClickException(one_line(e)) from None


def _baseline_tree(code: Path, option: str) -> Path:
    """The tree a baseline is measured with, refused at once when it is not a checkout of this repository."""
    from .baseline import code_env

    try:
        code_env(code.resolve())
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint=option) from None
    return code.resolve()


def _load() -> str:
    import os

    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"
