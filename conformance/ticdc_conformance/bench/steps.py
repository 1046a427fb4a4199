"""The steps of `bench pipeline`, each a child process sampled from outside (sampling.py): generate
the input, consume it with the sequential consumer, check an engine's output.

Each child is the command a user runs (or, for generation, the generator's own entry point), so
its figures include the interpreter's start and imports, as the user's wait does. A child that
fails raises child_failure's error, whose first line names the step and the file holding its
whole stderr. `env` lets the same steps run another tree's code (`bench baseline --code`).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .calibration import PROBE_EVERY_S
from .child_failure import child_failure
from .sampling import TreeSampler


@dataclass
class StepFigures:
    step: str  # "generate", "consume local", "check local", …
    events: int  # row events of the input
    records: int
    seconds: float  # elapsed, the whole child
    cpu_seconds: float  # user + system of the child and its descendants
    peak_rss: int  # the child tree's largest RSS at one instant
    calibration: Optional[float] = None  # calibration.py's mean probe while the step ran, seconds

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds

    @property
    def events_per_cpu_s(self) -> float:
        return self.events / self.cpu_seconds


def run_child(argv: list[str], what: str, log: Path, env: Optional[dict] = None,
              ok: tuple[int, ...] = (0,)) -> tuple[float, float, int, str, Optional[float]]:
    """Runs argv sampled and probed: (elapsed s, CPU s, peak RSS, stdout, the machine's mean
    calibration probe meanwhile); an exit status not in `ok` raises, naming `log`, which then
    holds the child's whole stderr."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with TreeSampler(proc.pid, probe_every=PROBE_EVERY_S) as sampler:
        stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - started
    if proc.returncode not in ok:
        raise child_failure(what, proc.returncode, stderr, log)
    return seconds, sampler.tree.cpu_seconds, sampler.tree.total, stdout, sampler.tree.calibration


# The generator's entry point, as inputs.py's cache runs it; the manifest's counts go to stdout.
_GENERATE_CHILD = r"""
import json, sys
from ticdc_conformance.bench.inputs import variant_config
from ticdc_generators.pipeline import generate
scenario, variant, seed, events, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
m = generate(scenario, seed, variant_config(variant, scenario), out, events=events)
print(json.dumps({"events": m["events"], "records": m["records"]}))
"""


def generate_step(scenario: str, variant: str, seed: int, events: int, case: Path, env: Optional[dict] = None
                  ) -> StepFigures:
    """Generates the case into `case` (which must not exist yet)."""
    seconds, cpu, rss, out, calibration = run_child(
        [sys.executable, "-c", _GENERATE_CHILD, scenario, variant, str(seed), str(events), str(case)],
        f"generate {variant} {events:,} events", case.with_name(f"{case.name}.generate.stderr.log"), env)
    m = json.loads(out.strip().splitlines()[-1])
    return StepFigures("generate", m["events"], m["records"], seconds, cpu, rss, calibration)


def _cli() -> list[str]:
    return [sys.executable, "-m", "ticdc_conformance"]


def consume_local_step(case: Path, out: Path, manifest: dict, env: Optional[dict] = None) -> StepFigures:
    """`consume --engine local`, the whole command."""
    seconds, cpu, rss, _, calibration = run_child(
        _cli() + ["consume", "--engine", "local", "--records", str(case / "records"), "--manifest",
                  str(case / "manifest.json"), "--out", str(out)],
        f"consume --engine local over {case}", out.with_name(f"{out.name}.stderr.log"), env)
    return StepFigures("consume local", manifest["events"], manifest["records"], seconds, cpu, rss, calibration)


@dataclass(frozen=True)
class Verdict:
    """What `check` concluded about an output: equal verdicts for both engines, or one is wrong."""
    outcome: str
    findings: int
    rules: tuple[str, ...]  # the rules with findings, sorted

    def __str__(self) -> str:
        return self.outcome + (f" ({self.findings} findings: {', '.join(self.rules)})" if self.findings else "")


def check_step(case: Path, out: Path, engine: str, manifest: dict, env: Optional[dict] = None
               ) -> tuple[StepFigures, Verdict]:
    """`check --case CASE --out OUT`, the whole command; its verdict from CASE/result.json. Exit 1
    (findings) is a verdict, not a failure of the step."""
    (case / "result.json").unlink(missing_ok=True)  # an earlier check's verdict must not be read as this one's
    seconds, cpu, rss, _, calibration = run_child(_cli() + ["check", "--case", str(case), "--out", str(out)],
                                     f"check of the {engine} output {out}",
                                     out.with_name(f"{out.name}.check.stderr.log"), env, ok=(0, 1))
    result = json.loads((case / "result.json").read_text())
    findings = [f for t in result.get("tables") or [] for f in t.get("findings") or []]
    findings += (result.get("checkpoints") or {}).get("findings") or []
    rules = sorted({f.get("rule", "?") for f in findings})
    verdict = Verdict(result["outcome"], int(result.get("finding_count") or 0), tuple(rules))
    return StepFigures(f"check {engine}", manifest["events"], manifest["records"], seconds, cpu, rss,
                       calibration), verdict
