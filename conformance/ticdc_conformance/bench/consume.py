"""`bench consume`: the reference Spark consumer end to end over generated record files.

Each run is a fresh child process (its own Spark session and JVM), sampled from here for peak
memory and CPU time (sampling.py says what each figure covers). Time is split into the session start and the
`consume` call (read, decode, watermark, apply, write); rates are over the `consume` call. With
two or more sizes, the largest and smallest give the time ratio (linear cost means ratio ≈ size
ratio) and the largest run's peaks are held against the memory target. After each run, unless
turned off, the floor (floor.py): what Spark jobs that only read, only parse or only decode every
message of the same files take on the same master. It runs in the same child and session once
the consumer's figures are taken (the child waits for the word), so it costs no second JVM start
and the consumer's CPU time and peaks stay its own.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .child_failure import child_failure
from .floor import FloorFigures, message_kind
from .inputs import SCENARIO, Inputs, cached_inputs
from .sampling import TreeFigures, TreeSampler

TARGET_EVENTS_PER_S = 100_000  # at 1M events on local[2], over the consume call
TARGET_DRIVER_RSS = 2 * 2**30
TARGET_SLACK = 1.1  # time ratio at most 1.1 × the size ratio

# Its lines for the parent start with a word of their own: the JVM shares the child's stdout.
_CONSUMED, _FLOOR = "consumed: ", "floor: "
_CHILD = r"""
import json, sys, time
from pathlib import Path
records, manifest, out, master, floor = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5]
t0 = time.perf_counter()
from ticdc_conformance.consumers.spark.job import consume, spark_session
m = json.loads(manifest.read_text())
spark = spark_session(master, records=m["records"])  # the compiler a user's `consume` of this input gets
t1 = time.perf_counter()
stages = {}
figures = consume(spark, records, m, out, out / "work", stage_seconds=stages)
t2 = time.perf_counter()
print("%s" + json.dumps({"startup_seconds": t1 - t0, "consume_seconds": t2 - t1, "records": figures.get("records"),
                          "events": figures.get("events"), "stage_seconds": stages}), flush=True)
if floor != "none":
    sys.stdin.readline()  # the parent has taken the consumer's CPU time and peaks
    from ticdc_conformance.bench.floor import spark_floor
    from ticdc_conformance.consumers.rules.decoder_options import decoder_options
    f = spark_floor(spark, records, out / "work", floor == "json", m["protocol"], decoder_options(m, manifest.parent))
    print("%s" + json.dumps({"scan": f.scan_seconds, "parse": f.parse_seconds, "decode": f.decode_seconds}), flush=True)
spark.stop()
""" % (_CONSUMED, _FLOOR)


@dataclass
class ConsumeFigures:
    variant: str
    events: int  # row events generated (--events)
    records: int
    decoded_events: Optional[int]  # as the consumer counts them, if it does
    startup_seconds: float
    consume_seconds: float
    tree: TreeFigures
    output: Path
    stage_seconds: dict[str, float]  # elapsed per stage of the consumer (consumers/spark/job.py consume)
    floor: Optional[FloorFigures] = None

    @property
    def records_per_s(self) -> float:
        return self.records / self.consume_seconds

    @property
    def events_per_s(self) -> float:
        return self.events / self.consume_seconds


def run_consume(inputs: Inputs, out: Path, master: str, driver_memory: Optional[str] = None,
                floor: bool = True) -> ConsumeFigures:
    """One consumer run in a child process, then (unless `floor` is false) the floor in the same
    child; the consumer's decoded intermediate data is removed afterwards."""
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ)
    if driver_memory:
        env["TICDC_CONFORMANCE_DRIVER_MEMORY"] = driver_memory
    log = out.with_name(f"{out.name}.stderr.log")  # stderr goes to a file: a pipe nobody reads could fill
    log.parent.mkdir(parents=True, exist_ok=True)
    floor_kind = message_kind(inputs.variant) if floor else "none"
    consumed: Optional[dict] = None
    tree: Optional[TreeFigures] = None
    floor_figures: Optional[FloorFigures] = None
    with open(log, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(inputs.records),
                                 str(inputs.directory / "manifest.json"), str(out), master, floor_kind],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        with TreeSampler(proc.pid) as sampler:
            for line in proc.stdout:
                if line.startswith(_CONSUMED):
                    tree = sampler.snapshot()  # before the floor starts: the consumer's figures alone
                    consumed = json.loads(line[len(_CONSUMED):])
                    if floor:
                        try:
                            proc.stdin.write("go\n")
                            proc.stdin.flush()
                        except BrokenPipeError:  # the child died: its exit status and stderr say why, below
                            pass
                elif line.startswith(_FLOOR):
                    f = json.loads(line[len(_FLOOR):])
                    floor_figures = FloorFigures(f["scan"], f["parse"], f["decode"])
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            proc.wait()
    if proc.returncode != 0 or consumed is None or tree is None or (floor and floor_figures is None):
        what = f"consumer run over {inputs.records}" if consumed is None else f"the floor run over {inputs.records}"
        raise child_failure(what, proc.returncode, log.read_text(errors="replace"), log)
    if consumed["records"] is not None and consumed["records"] != inputs.manifest["records"]:
        raise RuntimeError(f"the consumer read {consumed['records']} records of {inputs.manifest['records']}")
    shutil.rmtree(out / "work", ignore_errors=True)
    return ConsumeFigures(inputs.variant, inputs.manifest["events"], inputs.manifest["records"], consumed["events"],
                          consumed["startup_seconds"], consumed["consume_seconds"], tree, out,
                          consumed["stage_seconds"], floor_figures)


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def bench_consume(work: Path, variants: list[str], sizes: list[int], master: str = "local[2]", seed: int = 1,
                  driver_memory: Optional[str] = None, echo=print, floor: bool = True) -> list[ConsumeFigures]:
    work = Path(work)
    echo(f"bench consume: scenario {SCENARIO}, seed {seed}, sizes {sizes}, master {master}"
         + (f", driver memory {driver_memory}" if driver_memory else ""))
    results: list[ConsumeFigures] = []
    for variant in variants:
        runs = []
        for n in sizes:
            inputs = cached_inputs(work, variant, n, seed, echo=echo)
            f = run_consume(inputs, work / "consume" / f"{variant}-{n}", master, driver_memory, floor)
            runs.append(f)
            p = f.tree
            echo(f"  {variant:<19} {n:>11,} events {f.records:>11,} records   {f.consume_seconds:8.1f} s "
                 f"(+{f.startup_seconds:.1f} s session start)   {f.events_per_s:>9,.0f} events/s "
                 f"{f.records_per_s:>9,.0f} records/s   CPU {p.cpu_seconds:,.0f} s (whole run, all processes)   "
                 f"load average {p.load_mean:.1f}")
            echo(f"    peak RSS: driver Python {_mib(p.python)}, driver JVM {_mib(p.jvm)}, Python workers "
                 f"{_mib(p.workers)}, whole tree {_mib(p.total)} ({p.samples} samples)")
            echo("    stages: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in f.stage_seconds.items()))
            if f.floor is not None:
                name, seconds = f.floor.fastest_decode()
                echo("    floor: " + ", ".join(f"{n} {s:.1f} s ({f.records / s:,.0f} records/s)"
                                               for n, s in f.floor.passes())
                     + f"; the consumer takes {f.consume_seconds / seconds:.1f}x the {name} pass")
        results.extend(runs)
        judge(variant, runs, echo)
    return results


_PASS_WORDS = {"parse": "parsing every message in the JVM and writing it once",
               "decode": "decoding every message with the suite's decoder"}


def judge(variant: str, runs: list[ConsumeFigures], echo) -> None:
    """Holds the smallest run against the rate target (and says when the floor itself is below
    it) and the largest against the smallest and the memory target."""
    small = min(runs, key=lambda f: f.events)
    big = max(runs, key=lambda f: f.events)
    verdict = "ok" if small.events_per_s >= TARGET_EVENTS_PER_S else "below target"
    echo(f"    {variant}: {small.events_per_s:,.0f} events/s at {small.events:,} events "
         f"(target at 1,000,000 events: at least {TARGET_EVENTS_PER_S:,}) {verdict}")
    if small.floor is not None:
        name, seconds = small.floor.fastest_decode()
        floor_rate = small.events / seconds
        if floor_rate < TARGET_EVENTS_PER_S:
            echo(f"    {variant}: the target is out of reach on this master: a Spark job only {_PASS_WORDS[name]} "
                 f"(the fastest way it has) reaches {floor_rate:,.0f} events/s here")
        else:
            echo(f"    {variant}: a Spark job only {_PASS_WORDS[name]} (the fastest way it has) reaches "
                 f"{floor_rate:,.0f} events/s here")
    if big.events > small.events:
        size_ratio = big.events / small.events
        ratio = big.consume_seconds / small.consume_seconds
        verdict = "ok" if ratio <= TARGET_SLACK * size_ratio else "above target"
        echo(f"    {variant}: time ratio {big.events:,}/{small.events:,} events {ratio:.2f}x "
             f"(size ratio {size_ratio:.0f}x; target: at most {TARGET_SLACK * size_ratio:.0f}x) {verdict}; "
             f"CPU time ratio {big.tree.cpu_seconds / small.tree.cpu_seconds:.2f}x")
        for role, value in (("driver Python process", big.tree.python), ("driver JVM", big.tree.jvm)):
            verdict = "ok" if value < TARGET_DRIVER_RSS else "above target"
            echo(f"    {variant}: peak RSS of the {role} at {big.events:,} events {_mib(value)} "
                 f"(target: under {_mib(TARGET_DRIVER_RSS)}) {verdict}")
