"""One conformance run: generate an encoding, run the consumer under test on it, check the result.

The consumer under test is the reference Spark consumer (`spark`), the sequential reference
consumer (`local`), or any program behind the consumer protocol of docs/consumer-protocol.md:
it is started as `CMD --records DIR --manifest FILE --out DIR` and must write
`OUT/final/<schema>.<table>.ndjson` in the canonical form, exiting 0. A consumer that also writes
the applied log and the temporal states (`OUT/applied.ndjson`, `OUT/states/`) is held against the
ground truth at every checkpoint it recorded (checks/checkpoints.py); one that writes final/ only is
judged on its final state, and the verdict says the checkpoint check was not possible.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ticdc_generators.pipeline import config_for, generate
from ticdc_generators.sink.config import SinkConfig

from .checks.checkpoints import CheckpointVerdict, check_checkpoints
from .checks.differential import TableVerdict, check_final_state
from .checks.finding import Finding, RunContext
from .checks.locate import locate_findings
from .errors import ConsumerError

CONSUMER_TIMEOUT_S = 1800


@dataclass
class EncodingResult:
    scenario: str
    seed: int
    encoding: str
    protocol: str
    consumer: str
    time_zone: str = "UTC"
    # Options that shaped the config beyond scenario and encoding, repeated in the replay command.
    config_args: str = ""
    events: Optional[int] = None  # row events asked of a scenario that takes a size (large)
    replay: Optional[str] = None  # the command that replays this verdict, when it is not `run`'s
    records: int = 0
    seconds: float = 0.0
    tables: list[TableVerdict] = field(default_factory=list)
    checkpoints: Optional[CheckpointVerdict] = None
    error: Optional[str] = None

    @property
    def findings(self) -> list[Finding]:
        at_checkpoints = self.checkpoints.findings if self.checkpoints is not None else []
        return [f for t in self.tables for f in t.findings] + at_checkpoints

    @property
    def finding_count(self) -> int:
        """Every finding of the run: those listed and those the checkpoint check only counted."""
        suppressed = self.checkpoints.suppressed if self.checkpoints is not None else 0
        return len(self.findings) + suppressed

    @property
    def checkpoint_summary(self) -> str:
        c = self.checkpoints
        if c is None:
            return "checkpoints: not checked"
        if not c.checked:
            return f"checkpoints: not checked, {c.note}"
        more = f"; {c.suppressed} more finding(s) not listed" if c.suppressed else ""
        return f"checkpoints: {c.checkpoints} checked{'; ' + c.note if c.note else ''}{more}"

    @property
    def conformant(self) -> bool:
        return self.error is None and not self.findings

    @property
    def replay_command(self) -> str:
        if self.replay is not None:
            return self.replay
        cmd = f"ticdc-conformance run --scenario {self.scenario} --seed {self.seed} --protocol {self.encoding}"
        if self.events is not None:
            cmd += f" --events {self.events}"
        if self.time_zone != "UTC":
            cmd += f" --time-zone {shlex.quote(self.time_zone)}"
        if self.config_args:
            cmd += f" {self.config_args}"
        if self.consumer not in ("spark",):
            cmd += f" --consumer {shlex.quote(self.consumer)}"
        return cmd

    @property
    def context(self) -> RunContext:
        return RunContext(self.scenario, self.seed, self.replay_command, self.encoding)

    def render(self) -> str:
        """The verdict, then every finding in the shared format of checks/finding.py (rule and
        quote, table, key, commit ts, record, seed, DeepDiff, replay command)."""
        lines = [f"{self.encoding}: {'conformant' if self.conformant else 'NOT conformant'} "
                 f"(scenario {self.scenario}, seed {self.seed}, consumer {self.consumer})"]
        if self.error:
            lines.append(f"  error: {self.error}")
        elif self.checkpoints is not None and (not self.checkpoints.checked or not self.conformant):
            lines.append(f"  {self.checkpoint_summary}")
        for f in self.findings:
            lines.append("\n".join("  " + line for line in f.render(self.context).splitlines()))
        if not self.conformant:
            lines.append(f"  replay: {self.replay_command}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "scenario": self.scenario, "seed": self.seed, "encoding": self.encoding, "protocol": self.protocol,
            "consumer": self.consumer, "records": self.records, "seconds": round(self.seconds, 3),
            "conformant": self.conformant, "error": self.error, "replay": self.replay_command,
            "checkpoints": self.checkpoints.to_json(self.encoding) if self.checkpoints is not None else None,
            "tables": [{"table": t.table, "expected_rows": t.expected_rows, "actual_rows": t.actual_rows,
                        "findings": [f.to_json(self.encoding) for f in t.findings]} for t in self.tables],
        }


def run_consumer(consumer: str, case: Path, manifest: dict, out: Path, spark=None) -> None:
    records, manifest_path = case / "records", case / "manifest.json"
    if consumer == "spark":
        from .consumer.spark_job import consume
        consume(spark, records, manifest, out, case / "work")
    elif consumer == "local":
        from .consumer.local import consume_local
        consume_local(records, manifest, out)
    else:
        argv = shlex.split(consumer) + ["--records", str(records), "--manifest", str(manifest_path), "--out", str(out)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=CONSUMER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ConsumerError(f"consumer {consumer!r} did not finish within {CONSUMER_TIMEOUT_S}s") from None
        except OSError as e:
            raise ConsumerError(f"consumer {consumer!r} could not be started: {e}") from None
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise ConsumerError(f"consumer {consumer!r} exited with {proc.returncode}:\n{tail}")


def _locate(result: EncodingResult, case: Path, manifest: dict) -> None:
    """Gives every finding about a row the commit ts and the record that last wrote it (one pass
    over the records for all of them)."""
    holders = list(result.tables) + ([result.checkpoints] if result.checkpoints is not None else [])
    located = iter(locate_findings([f for h in holders for f in h.findings], case, manifest))
    for h in holders:
        h.findings = [next(located) for _ in h.findings]


def run_encoding(scenario: str, seed: int, encoding: str, work: Path, consumer: str = "spark",
                 spark=None, time_zone: str = "UTC", config: SinkConfig | None = None,
                 config_args: str = "", events: Optional[int] = None) -> EncodingResult:
    """`config` (e.g. with a changefeed TOML applied) replaces the encoding's default config;
    `config_args` are the command-line options that produced it, for the replay command; `events`
    sizes a scenario that takes a size (large)."""
    config = config or config_for(scenario, encoding, time_zone=time_zone)
    result = EncodingResult(scenario, seed, encoding, config.protocol, consumer, time_zone=config.time_zone,
                            config_args=config_args, events=events)
    case = Path(work) / scenario / encoding
    started = time.monotonic()
    manifest = generate(scenario, seed, config, case, events=events)
    result.records = manifest["records"]
    out = case / "consumer"
    try:
        run_consumer(consumer, case, manifest, out, spark)
        _check(result, case, manifest, out)
    except ConsumerError as e:
        result.error = str(e)
    result.seconds = time.monotonic() - started
    (case / "result.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return result


def _check(result: EncodingResult, case: Path, manifest: dict, out: Path) -> None:
    result.tables = check_final_state(case / "truth", out, manifest["protocol"], manifest["sink"])
    result.checkpoints = check_checkpoints(case / "truth", out, manifest)
    _locate(result, case, manifest)


_CASE_KEYS = ("scenario", "seed", "encoding", "protocol", "sink", "records")


def check_outputs(case: Path, out: Path) -> EncodingResult:
    """The verdict on a consumer's outputs in OUT for the stream `generate` wrote into CASE, however
    that consumer was run (on another machine, from Kafka, by hand): the same checks as `run`.

    The replay command is this check's; the stream is regenerated from CASE/manifest.json, which
    names scenario, seed, size and every sink option."""
    case, out = Path(case), Path(out)
    manifest_path = case / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as e:
        raise ConsumerError(f"{manifest_path}: not a manifest written by `generate`: {e}") from None
    missing = [k for k in _CASE_KEYS if not isinstance(manifest, dict) or k not in manifest]
    if missing:
        raise ConsumerError(f"{manifest_path}: not a manifest written by `generate`: no {', '.join(missing)}")
    if not (case / "truth").is_dir():
        raise ConsumerError(f"{case / 'truth'}: no ground truth; CASE must be a folder written by `generate`")
    if not out.is_dir():  # a mistyped OUT; a consumer that wrote no final/ is judged (CONSUMER-STATE-1)
        raise ConsumerError(f"{out}: no such folder; OUT must hold a consumer's output "
                            "(docs/consumer-protocol.md, \"Output\")")
    result = EncodingResult(manifest["scenario"], manifest["seed"], manifest["encoding"], manifest["protocol"],
                            consumer=f"output {out}", time_zone=manifest["sink"].get("time-zone", "UTC"),
                            events=manifest.get("events"), records=manifest["records"],
                            replay=f"ticdc-conformance check --case {shlex.quote(str(case))} "
                                   f"--out {shlex.quote(str(out))}")
    started = time.monotonic()
    _check(result, case, manifest, out)
    result.seconds = time.monotonic() - started
    return result
