"""The "before" figures `bench pipeline` holds generation and check against (issue 21: at least 5x).

baseline.json holds, per encoding and size, the generate and check steps of steps.py measured
with the code of one commit on this machine (`bench baseline --code DIR`, which runs the same
steps with that tree's modules first on PYTHONPATH), with the date, the load average, the
machine's calibration (calibration.py) and a note on what else ran. They are data, not assertions:
a rate is compared with them in the printed table, when the machine runs at the recorded speed.
The rates compared are over CPU time (user + system of the step's process tree), which other
work sharing the machine inflates far less than elapsed time; elapsed figures are kept beside them.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from . import calibration
from .inputs import SCENARIO
from .steps import StepFigures, check_step, consume_local_step, generate_step

BASELINE_FILE = Path(__file__).with_name("baseline.json")


def _key(variant: str, events: int) -> str:
    return f"{variant}/{events}"


def load_baseline(path: Path = BASELINE_FILE) -> dict:
    text = path.read_text() if path.exists() else ""
    return json.loads(text) if text.strip() else {"entries": {}}


def baseline_for(variant: str, events: int, baseline: Optional[dict] = None) -> Optional[dict]:
    """The entry for this encoding and size, or None when none was recorded."""
    return (baseline if baseline is not None else load_baseline())["entries"].get(_key(variant, events))


def _step_json(f: StepFigures) -> dict:
    return {"seconds": round(f.seconds, 2), "cpu_seconds": round(f.cpu_seconds, 2), "peak_rss": f.peak_rss,
            "events_per_cpu_s": round(f.events_per_cpu_s, 1),
            "calibration_cpu_s": None if f.calibration is None else round(f.calibration, 4)}


def code_env(code: Path) -> dict:
    """The environment that makes a child import `code`'s generators and conformance packages
    ahead of the installed ones (the tree must have the layout of this repository)."""
    for part in ("generators/ticdc_generators", "conformance/ticdc_conformance"):
        if not (code / part).is_dir():
            raise ValueError(f"{code}: no {part} in it; expected a checkout of this repository")
    return dict(os.environ, PYTHONPATH=f"{code / 'generators'}:{code / 'conformance'}")


def measure_baseline(code: Path, commit: str, variants: list[str], sizes: list[int], seed: int, work: Path,
                     note: str, echo=print, path: Path = BASELINE_FILE) -> dict:
    """Runs generate, consume --engine local and check with `code`'s modules and records the
    generate and check figures under their encoding and size in `path` (other entries kept)."""
    env = code_env(code)
    for n in sizes:
        for variant in variants:
            entry = measure_entry(env, commit, variant, n, seed, work, note)
            _record(path, entry)
            echo(f"  {entry_line(entry)}   {time.strftime('%H:%M:%S')}")
    return load_baseline(path)


def measure_entry(env: dict, commit: str, variant: str, n: int, seed: int, work: Path, note: str) -> dict:
    """One baseline entry: generate, consume --engine local and check of one input with the code
    `env` imports (code_env), in a scratch folder under `work`, with this machine's calibration
    (calibration.py) taken before and after, and each step's own (its mean probe)."""
    work.mkdir(parents=True, exist_ok=True)
    load_before, machine = os.getloadavg(), calibration.machine()
    with tempfile.TemporaryDirectory(prefix=f"baseline-{variant}-{n}-", dir=work) as tmp:
        case, out = Path(tmp) / "case", Path(tmp) / "local"
        gen = generate_step(SCENARIO, variant, seed, n, case, env)
        manifest = json.loads((case / "manifest.json").read_text())
        consume_local_step(case, out, manifest, env)
        check, verdict = check_step(case, out, "local", manifest, env)
    load_after = os.getloadavg()
    machine["calibration_cpu_s_after"] = calibration.machine()["calibration_cpu_s"]
    return {"variant": variant, "events": n, "seed": seed, "scenario": SCENARIO, "records": gen.records,
            "commit": commit, "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "load_average": [round(load_before[0], 2), round(load_after[0], 2)], "note": note, "machine": machine,
            "verdict": str(verdict), "generate": _step_json(gen), "check": _step_json(check)}


def entry_line(entry: dict) -> str:
    gen, check, load = entry["generate"], entry["check"], entry["load_average"]
    return (f"{entry['variant']:<19} {entry['events']:>11,} events   generate {gen['seconds']:7.1f} s (CPU "
            f"{gen['cpu_seconds']:7.1f} s, {gen['events_per_cpu_s']:>8,.0f} events/CPU s, calibration "
            f"{_calibration(gen)})   check {check['seconds']:7.1f} s (CPU {check['cpu_seconds']:7.1f} s, "
            f"{check['events_per_cpu_s']:>8,.0f} events/CPU s, calibration {_calibration(check)})   "
            f"{entry['verdict']}   load average {load[0]:.1f} → {load[1]:.1f}")


def _calibration(step: dict) -> str:
    seconds = step.get("calibration_cpu_s")
    return "—" if seconds is None else f"{seconds:.3f} s"


def _record(path: Path, entry: dict) -> None:
    """Adds the entry to the file, re-read under a lock: two runs measuring other encodings at the
    same time keep each other's entries."""
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = load_baseline(path)
        data["entries"][_key(entry["variant"], entry["events"])] = entry
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
