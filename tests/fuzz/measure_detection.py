"""Measures how fast `fuzz` finds each broken streaming consumer and how small it shrinks the case:
for every consumer of broken.py and every seed, one fuzz run under the ci budget; prints a table
(docs/fuzz.md, "Detection") and writes every run as a JSON line.

    .venv/bin/python -m tests.fuzz.measure_detection --seeds 1 2 3 --out reports/fuzz/detection.ndjson \
        --save golden/regressions
"""
from __future__ import annotations

import argparse
import io
import json
import statistics
import tempfile
from dataclasses import replace
from pathlib import Path

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.fuzz import PROFILES, Progress, fuzz_encoding

from .broken import BROKEN


def measure(seeds: list[int], seconds: float | None, out: Path, only: list[str], save: Path | None = None,
            shrink: float = 30.0, examples: int | None = None) -> list[dict]:
    """One fuzz run per consumer and seed; the first seed's shrunk cases are saved under `save`.
    `examples` counts the budget instead of timing it: the draw does not depend on the machine's
    load, so the examples it takes to find a bug are the same anywhere."""
    budget = replace(PROFILES["ci"], seconds=None if examples else seconds, examples=examples, shrink_seconds=shrink)
    rows = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a") as log, tempfile.TemporaryDirectory(prefix="ticdc-fuzz-measure-") as tmp:
        for broken in BROKEN:
            if only and broken.name not in only:
                continue
            for seed in seeds:
                adapter = adapter_for(broken.spec)
                report = fuzz_encoding(adapter, broken.encoding, budget, Path(tmp) / broken.name, seed=seed,
                                       progress=Progress(io.StringIO(), terminal=False),
                                       regressions=save if seed == seeds[0] else None)
                f = report.failure
                row = {"consumer": broken.name, "encoding": broken.encoding, "seed": seed,
                       "found": f is not None, "examples": report.examples,
                       "seconds_to_find": round(f.found_after_s, 1) if f else None,
                       "examples_to_find": f.found_after_examples if f else None,
                       "shrink_examples": f.shrink_examples if f else None,
                       "size": f.size if f else None, "schedule": f.case.schedule.spec() if f else None,
                       "verdict": f.verdict.summary if f else None, "notes": report.notes}
                print(json.dumps(row), flush=True)
                log.write(json.dumps(row) + "\n")
                rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| bug | encoding | found | median time to find | median examples | shrunk: history events "
             "(median, max) | records (median) |", "|---|---|---|---|---|---|---|"]
    for broken in BROKEN:
        mine = [r for r in rows if r["consumer"] == broken.name]
        if not mine:
            continue
        found = [r for r in mine if r["found"]]
        if not found:
            lines.append(f"| {broken.bug} | {broken.encoding} | 0/{len(mine)} | – | – | – | – |")
            continue
        events = [r["size"]["events"] for r in found]
        lines.append(f"| {broken.bug} | {broken.encoding} | {len(found)}/{len(mine)} | "
                     f"{statistics.median(r['seconds_to_find'] for r in found):.1f} s | "
                     f"{statistics.median(r['examples_to_find'] for r in found):g} | "
                     f"{statistics.median(events):g}, {max(events)} | "
                     f"{statistics.median(r['size']['records'] for r in found):g} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--seconds", type=float, default=PROFILES["ci"].seconds)
    ap.add_argument("--examples", type=int, default=None, help="a count budget instead of --seconds")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--out", type=Path, default=Path("reports/fuzz/detection.ndjson"))
    ap.add_argument("--save", type=Path, default=None, help="save the first seed's shrunk cases here")
    a = ap.parse_args()
    print(table(measure(a.seeds, a.seconds, a.out, a.only, a.save, examples=a.examples)))


if __name__ == "__main__":
    main()
