"""How fast this machine runs the suite's kind of work: recorded with every baseline entry and
measured again by `bench pipeline`, so that a ratio over figures recorded on a faster or slower
machine is not read as a gain or a loss of the code. The same code of one commit took 60.9 CPU s
to generate an input on one machine of this suite's kind and 37.6 s on another
(docs/performance.md, "The baseline"): the machines differ by more than most changes do.

The measure is the CPU time of a fixed piece of pure-Python work of the kinds the steps spend
their time in (dicts built and read, JSON written and parsed, text formatted and split, integers
hashed). One machine is not always equally fast either: on an idle machine of this kind the same
work took 0.08 s at one moment and 0.13-0.19 s for the next few seconds, with no steal time
reported. So besides `machine()` (the least of a few rounds, taken before and after a baseline
entry), a step is probed while it runs (sampling.py: a fifteenth of the work at its start and
about once a second, timed by the probing thread's own CPU clock, in the same unit), and a step's
figure is compared with a baseline's only when the two steps ran at about the same speed.
"""
from __future__ import annotations

import json
import platform
import time
from typing import Optional

ROUNDS = 7
# Steps whose mean probes differ by more than this factor are not compared: under load the probes
# of the baseline's steps on one machine stayed within 0.153-0.175 s, while the two machines seen
# here differ by 1.3-1.6x.
TOLERANCE = 1.15


# Rows of the calibration's work (about 0.1 s here), and of one probe.
ROWS = 6_000
PROBE_ROWS = 400
# How often a running step is probed: about 0.5% of one core.
PROBE_EVERY_S = 1.0


def _work(rows: int = ROWS) -> int:
    """A fixed amount of work per row; its result is returned so that none of it is idle."""
    total = 0
    for i in range(rows):
        row = {"id": i, "name": f"name-{i:06d}", "price": i * 1.25, "note": "x" * (i % 40), "flag": i % 3 == 0}
        text = json.dumps(row, separators=(",", ":"))
        back = json.loads(text)
        key = "|".join(str(back[k]) for k in ("id", "name", "flag"))
        total += hash(key) & 0xFF
        total += sum(len(part) for part in text.split(","))
        projected = {k: (v if not isinstance(v, float) else round(v, 1)) for k, v in back.items()}
        total += len(projected) + (i * i) % 97
    return total


def calibration_seconds(rounds: int = ROUNDS) -> float:
    """The least CPU time of `rounds` runs of the fixed work, in seconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        _work()
        best = min(best, time.process_time() - start)
    return best


def probe_seconds() -> float:
    """The CPU time of a probe's work on this thread, in the calibration's unit (the whole work)."""
    start = time.thread_time()
    _work(PROBE_ROWS)
    return (time.thread_time() - start) * (ROWS / PROBE_ROWS)


def cpu_name() -> str:
    """The CPU's model name, as the kernel reports it (for the record; the calibration compares)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    return {"calibration_cpu_s": round(calibration_seconds(), 4), "cpu": cpu_name()}


def relative_speed(there: Optional[float], here: Optional[float]) -> Optional[float]:
    """How much faster the machine ran here than there, from their calibrations in seconds (2.0:
    twice as fast), or None when either is unknown."""
    if not there or not here:
        return None
    return there / here


def comparable(speed: Optional[float]) -> bool:
    return speed is not None and 1 / TOLERANCE <= speed <= TOLERANCE
