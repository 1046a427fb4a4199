"""Benchmarks: figures and ratios measured in one run, printed, never asserted by unit tests.

`bench generate`: the `large` scenario at two sizes, each in a fresh child process so that its
peak RSS is its own; prints events/s, peak RSS and the time ratio of the two sizes (linear cost
means ratio ≈ size ratio). A large case draws its history in a process of its own
(ticdc_generators/history_process.py): the peak RSS printed is the generating process's plus that
process's, each its own peak (at most what the two held at one instant).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
from ticdc_generators.pipeline import config_for, generate
events, encoding, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
t = time.perf_counter()
m = generate("large", 1, config_for("large", encoding), out, events=events)
seconds = time.perf_counter() - t
rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
print(json.dumps({"events": events, "records": m["records"], "seconds": seconds, "peak_rss": rss}))
"""


def run_generate(events: int, encoding: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="ticdc-bench-") as tmp:
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(events), encoding, tmp],
                              capture_output=True, text=True, check=True)
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        figures["bytes"] = sum(p.stat().st_size for p in Path(tmp, "records").glob("*.parquet"))
    figures["events_per_s"] = figures["events"] / figures["seconds"]
    return figures


def bench_generate(sizes: list[int], encoding: str, echo=print) -> list[dict]:
    results = []
    echo(f"bench generate: scenario large, encoding {encoding}, sizes {sizes}")
    started = time.perf_counter()
    for n in sizes:
        f = run_generate(n, encoding)
        results.append(f)
        echo(f"  {n:>11,} events: {f['seconds']:8.1f} s  {f['events_per_s']:>10,.0f} events/s  "
             f"peak RSS {f['peak_rss'] / 2**20:7.1f} MiB  records {f['records']:,}  "
             f"record files {f['bytes'] / 2**20:.1f} MiB")
    if len(results) >= 2:
        a, b = results[0], results[-1]
        echo(f"  time ratio {b['events']:,}/{a['events']:,} events: {b['seconds'] / a['seconds']:.2f}x "
             f"(size ratio {b['events'] / a['events']:.0f}x; target: at most {1.1 * b['events'] / a['events']:.0f}x)")
        echo(f"  peak RSS at {b['events']:,} events: {b['peak_rss'] / 2**20:.0f} MiB (target: under 1024 MiB)")
    echo(f"  total {time.perf_counter() - started:.0f} s")
    return results
