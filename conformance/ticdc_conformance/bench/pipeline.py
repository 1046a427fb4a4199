"""`bench pipeline`: one input, every step of the pipeline over it, side by side in one run.

Per encoding and size: generate the `large` scenario in a child process (timed: generation speed
is measured, so the input cache is not used), time the suite's decoder alone over its messages
(decode.py, in this process, over CPU time), consume it with the sequential consumer
(`consume --engine local`) and the Spark consumer on the master (consume.py, with the decode floor
of floor.py), optionally on a standalone cluster too, and check every engine's output. Both
engines' outputs must get the same verdict and the same applied log and final tables, so a fast
consumer that is wrong shows up as such. pipeline_table.py prints the table and the ratios.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Optional

from . import calibration
from .baseline import code_env, load_baseline, measure_entry
from .consume import run_consume
from .decode import measure_decode
from .inputs import SCENARIO, Inputs
from .pipeline_table import PipelineFigures, Ratio, render, size_ratios
from .steps import check_step, consume_local_step, generate_step


def output_digest(out: Path) -> str:
    """The applied log and final tables of an output folder, hashed (the line order of a states
    file is free, so states are left to `check`)."""
    h = hashlib.sha256()
    for path in [out / "applied.ndjson", *sorted((out / "final").glob("*.ndjson"))]:
        h.update(path.name.encode() + b"\0")
        if path.exists():
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        else:
            h.update(b"(missing)")
    return h.hexdigest()


def nearest_baseline(baseline: Optional[dict] = None) -> Callable[[str, int], Optional[dict]]:
    """The recorded entry for an encoding at a size, else at the nearest size recorded for it; from
    baseline.json as it is when asked (a baseline being measured beside a long run may land in time)."""
    def find(variant: str, events: int) -> Optional[dict]:
        entries = (baseline if baseline is not None else load_baseline())["entries"]
        mine = [e for e in entries.values() if e["variant"] == variant]
        return min(mine, key=lambda e: (abs(e["events"] - events), e["events"]), default=None)

    return find


def run_pipeline(work: Path, variant: str, events: int, seed: int, master: str, cluster_url: Optional[str],
                 driver_memory: Optional[str], echo=print, baseline_code: Optional[tuple[Path, str]] = None
                 ) -> PipelineFigures:
    """Every step over one input; a line as each ends (a 10M run takes hours), the table after.
    `baseline_code` (a tree and its commit): the baseline's generate and check of the same input
    are measured with that tree's code after the other steps, and held against in this run."""
    folder = work / "pipeline" / f"{variant}-{events}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    load_before = os.getloadavg()[0]
    machine = calibration.machine()

    def done(step: str, seconds: float) -> None:
        echo(f"    {variant} {events:,}: {step} done in {seconds:.1f} s (load average {os.getloadavg()[0]:.1f})")

    case = folder / "case"
    gen = generate_step(SCENARIO, variant, seed, events, case)
    done("generate", gen.seconds)
    manifest = json.loads((case / "manifest.json").read_text())
    inputs = Inputs(variant, case, manifest, gen.seconds, reused=False)
    decoder = measure_decode(inputs)
    done("decoder alone", decoder.decoder_wall)
    local = consume_local_step(case, folder / "local", manifest)
    done("consume --engine local", local.seconds)
    spark = run_consume(inputs, folder / "spark", master, driver_memory, floor=True)
    done(f"consume Spark {master} and its floor", spark.consume_seconds)
    cluster = None
    if cluster_url:
        cluster = run_consume(inputs, folder / "cluster", cluster_url, driver_memory, floor=False)
        done("consume Spark standalone cluster", cluster.consume_seconds)
    outputs = {"local": folder / "local", "spark": folder / "spark"} | ({"cluster": folder / "cluster"} if cluster
                                                                        else {})
    checks = {}
    for engine, out in outputs.items():
        checks[engine] = check_step(case, out, engine, manifest)
        done(f"check of the {engine} output", checks[engine][0].seconds)
    local_digest = output_digest(outputs["local"])
    same = {engine: output_digest(out) == local_digest for engine, out in outputs.items() if engine != "local"}
    entry = None
    if baseline_code is not None:
        code, commit = baseline_code
        entry = measure_entry(code_env(code), commit, variant, events, seed, folder / "baseline",
                              "measured in the same run (bench pipeline --baseline-code)")
        done(f"baseline (code of {commit}): generate and check",
             entry["generate"]["seconds"] + entry["check"]["seconds"])
    return PipelineFigures(variant, manifest["events"], manifest["records"], gen, decoder, local, spark, checks, same,
                           cluster, master, (load_before, os.getloadavg()[0]), machine, entry)


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


def bench_pipeline(work: Path, variants: list[str], sizes: list[int], master: str = "local[2]", seed: int = 1,
                   cluster: bool = False, driver_memory: Optional[str] = None, echo=print,
                   baseline: Optional[dict] = None, baseline_code: Optional[tuple[Path, str]] = None
                   ) -> dict[str, list[PipelineFigures]]:
    work = Path(work)
    find = nearest_baseline(baseline)
    if baseline_code is not None:
        code_env(baseline_code[0])  # a tree that is not a checkout is refused before hours of steps
    echo(f"bench pipeline: scenario {SCENARIO}, seed {seed}, sizes {', '.join(f'{n:,}' for n in sizes)}, "
         f"master {master}{', and a standalone cluster (2 workers, 1 core each)' if cluster else ''}")
    if baseline_code is not None:
        echo(f"  baseline: the code of {baseline_code[1]} in {baseline_code[0]}, measured in this run for each input")
    echo(f"  load average at start: {_load()}")
    results: dict[str, list[PipelineFigures]] = {}
    judged: list[Ratio] = []
    with ExitStack() as stack:
        url = None
        if cluster:
            from .cluster import StandaloneCluster

            url = stack.enter_context(StandaloneCluster(work / "pipeline" / "cluster")).url
            echo(f"  standalone cluster at {url}")
        for variant in variants:
            runs = results.setdefault(variant, [])
            for n in sizes:
                p = run_pipeline(work, variant, n, seed, master, url, driver_memory, echo, baseline_code)
                runs.append(p)
                judged += render(p, find, echo)
            if len(runs) > 1:
                echo(f"  {variant}, largest against smallest:")
                for r in size_ratios(runs):
                    judged.append(r)
                    echo(f"    {r.line()}")
    held = [r for r in judged if r.verdict]  # a figure with no target (the cluster's scaling) is not counted
    missed = sum(r.verdict != "ok" for r in held)
    echo(f"  {len(held) - missed} of {len(held)} figures at target" + (f", {missed} not" if missed else ""))
    echo(f"  load average at end: {_load()}")
    return results
