"""One conformance run: generate an encoding, run the consumer under test on it, check the result.

The consumer under test is an adapter (consumers/adapters/): the reference Spark consumer
(`spark`), the sequential reference consumer (`local`), or any program behind the consumer protocol
of docs/consumer-protocol.md, started as `CMD --records DIR --manifest FILE --out DIR`, or a consumer the
suite feeds over the testee protocol (`cmd:`, `python:`; docs/testee-protocol.md) under a delivery
schedule, whose session is folded into the same output folder. Each must
write `OUT/final/<schema>.<table>.ndjson` in the canonical form. What else its output shows is what
the adapter's run declares (the reference consumers always write the applied log and the states at
checkpoints; a program declares them by writing `OUT/applied.ndjson`, `OUT/states/`), and the checks
follow that declaration: a consumer that shows its applied log is held against the ground truth at
every checkpoint it recorded (checks/checkpoints.py). On a stream that carries watermarks, one that
shows no checkpoint is judged on its final state only, a distinct outcome (findings/outcome.py) that passes
only with `--final-state-only`.

Every run writes into a case folder emptied first, and the consumer into a new empty folder
(folders.py): nothing an earlier run left is read as this run's output.
"""
from __future__ import annotations

import io
import json
import shlex
import time
from collections import defaultdict
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional, Sequence

from ticdc_conformance.consumers.adapters import (
    Capabilities,
    ConsumerAdapter,
    ConsumerRun,
    RunOptions,
    SparkConsumer,
    Stream,
    adapter_for,
    shown_by_output,
)
from ticdc_conformance.consumers.adapters.interface import DEFAULT_TIMEOUT_S
from ticdc_conformance.consumers.adapters.program import LOG_FILE as CONSUMER_LOG_FILE
from ticdc_conformance.findings.case_ids import case_id
from ticdc_conformance.findings.finding import Finding, RunContext
from ticdc_conformance.findings.outcome import (
    CONFORMANT,
    CONSUMER_ERROR,
    EXIT_CODES,
    FINAL_STATE_ONLY,
    FINAL_STATE_ONLY_ACCEPTED,
    FINAL_STATE_ONLY_REASON,
    NOT_APPLICABLE,
    NOT_CONFORMANT,
    ORDERING_NOT_VERIFIED,
    PASSES,
)
from ticdc_conformance.protocols.common.projection import projection_options
from ticdc_conformance.protocols.common.watermarks import carries_watermarks
from ticdc_generators.sink.config import SinkConfig

from .checks.checkpoints import CheckpointRun, CheckpointVerdict
from .checks.differential import TableVerdict, check_final_state
from .checks.locate import locate_findings
from .errors import CaseError, ConsumerError
from .folders import case_folder, options_digest, recreate

if TYPE_CHECKING:
    from ticdc_conformance.delivery import Schedule

# Told the phase of a run as it starts (generate, consume, check) and the records once generated.
PhaseListener = Callable[[str, Optional[int]], None]
CONSUMER_TIMEOUT_S = DEFAULT_TIMEOUT_S
FINDINGS_SHOWN_PER_RULE = 5  # printed per rule by `run` and `check`; the JSON files keep them all
RESULT_FILE = "result.json"


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
    case: Optional[Path] = None  # the folder holding manifest, truth, records and result.json
    consumer_log: Optional[Path] = None  # the consumer program's stdout and stderr
    watermarks: bool = False  # the stream carries watermarks (protocols/common/watermarks.py)
    final_state_only: bool = False  # --final-state-only: a final-state-only outcome passes
    # Rows whose outcome depends on an order the stream does not convey: {table, key, reason}
    # (checks/arrival_order.py); listed, never findings.
    undecidable: list[dict] = field(default_factory=list)
    # A fed consumer (docs/testee-protocol.md): the delivery schedule `--schedule` named (repeated in
    # the replay command), the consumer's `unsupported` reason, and notes of the session (parts of
    # the schedule the consumer does not support).
    schedule: Optional[str] = None
    not_applicable: Optional[str] = None
    notes: list[str] = field(default_factory=list)
    # The readable label of the options beyond the scenario's defaults (findings/case_ids.py), part
    # of the case id the expected-failure lists, pytest items and reports name the case by.
    variant: str = ""

    @property
    def case_id(self) -> str:
        return case_id(self.scenario, self.encoding, self.variant)

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
    def ordering_verified(self) -> bool:
        """The consumer's own applied log showed at least one checkpoint, and the check held it."""
        c = self.checkpoints
        return c is not None and c.checked and c.checkpoints > 0

    @property
    def ordering_unverified(self) -> bool:
        """A stream with watermarks whose consumer showed no checkpoint: judged on its final state only."""
        return self.watermarks and not self.ordering_verified

    @property
    def outcome(self) -> str:
        """The verdict word (findings/outcome.py)."""
        if self.error is not None:
            return CONSUMER_ERROR
        if self.not_applicable is not None:
            return NOT_APPLICABLE
        if self.finding_count:
            return NOT_CONFORMANT
        if self.ordering_unverified:
            return FINAL_STATE_ONLY_ACCEPTED if self.final_state_only else FINAL_STATE_ONLY
        return CONFORMANT

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    @property
    def conformant(self) -> bool:
        """Passes: conformant, or judged on its final state only where --final-state-only accepts that
        (never `not applicable`, which fails nothing but shows nothing either)."""
        return self.outcome in PASSES

    @property
    def verdict_line(self) -> str:
        outcome = self.outcome
        verdict = (f"{outcome}: {ORDERING_NOT_VERIFIED}" if outcome == FINAL_STATE_ONLY
                   else f"{outcome}: {ORDERING_NOT_VERIFIED}, accepted by --final-state-only"
                   if outcome == FINAL_STATE_ONLY_ACCEPTED
                   else f"{outcome}: {self.not_applicable}" if outcome == NOT_APPLICABLE else outcome)
        if self.undecidable:
            verdict += f", {len(self.undecidable)} undecidable row(s)"
        return f"{self.encoding}: {verdict} (scenario {self.scenario}, seed {self.seed}, consumer {self.consumer})"

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
        if self.consumer != SparkConsumer.spec:  # run's default consumer goes without saying
            cmd += f" --consumer {shlex.quote(self.consumer)}"
        if self.schedule is not None:
            cmd += f" --schedule {shlex.quote(self.schedule)}"
        if self.final_state_only:
            cmd += " --final-state-only"
        return cmd

    @property
    def result_file(self) -> Optional[Path]:
        return self.case / RESULT_FILE if self.case is not None else None

    @property
    def context(self) -> RunContext:
        return RunContext(self.scenario, self.seed, self.replay_command, self.encoding)

    def render(self, per_rule: Optional[int] = None, full_list: Sequence[Path] = ()) -> str:
        """The verdict, then the findings in the shared format of findings/finding.py (rule and
        quote, table, key, commit ts, record, seed, DeepDiff, replay command), grouped by rule.
        With `per_rule`, only the first that many of each rule, then how many more and where
        `full_list` (the JSON files holding every finding) is."""
        lines = [self.verdict_line]
        if self.error:
            lines.append("  error: " + "\n    ".join(self.error.splitlines()))
        elif self.not_applicable is not None:
            pass  # the verdict line gives the consumer's reason
        elif self.ordering_unverified:
            lines.append(f"  {FINAL_STATE_ONLY_REASON}"
                         + ("" if self.final_state_only else "; --final-state-only accepts that"))
        elif self.checkpoints is not None and (not self.checkpoints.checked or self.findings):
            lines.append(f"  {self.checkpoint_summary}")
        by_rule: dict[str, list[Finding]] = defaultdict(list)
        for f in self.findings:
            by_rule[f.rule].append(f)
        if by_rule:
            lines.append("  findings per rule: " + ", ".join(f"{rule} {len(found)}" for rule, found in by_rule.items()))
        cut = False
        for rule, found in by_rule.items():
            shown = found if per_rule is None else found[:per_rule]
            for f in shown:
                lines.append("\n".join("  " + line for line in f.render(self.context).splitlines()))
            if len(found) > len(shown):
                cut = True
                lines.append(f"  … {len(found) - len(shown)} more {rule} findings")
        if cut:
            where = " and ".join(str(p) for p in full_list) or "the JSON summary (--report)"
            lines.append(f"  (the first {per_rule} findings of each rule are shown; every finding is in {where})")
        for u in (self.undecidable if per_rule is None else self.undecidable[:per_rule]):
            lines.append(f"  undecidable: {u['table']} key={json.dumps(u['key'])}: {u['reason']}")
        if per_rule is not None and len(self.undecidable) > per_rule:
            lines.append(f"  … {len(self.undecidable) - per_rule} more undecidable row(s)")
        for note in self.notes:
            lines.append(f"  note: {note}")
        if self.outcome != CONFORMANT:
            if self.consumer_log is not None and str(self.consumer_log) not in (self.error or ""):
                lines.append(f"  consumer output: {self.consumer_log}")
            lines.append(f"  replay: {self.replay_command}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "case_id": self.case_id, "variant": self.variant,
            "scenario": self.scenario, "seed": self.seed, "encoding": self.encoding, "protocol": self.protocol,
            "consumer": self.consumer, "records": self.records, "seconds": round(self.seconds, 3),
            "outcome": self.outcome, "exit_code": self.exit_code, "conformant": self.conformant,
            "watermarks": self.watermarks, "ordering_verified": self.ordering_verified,
            "final_state_only": self.ordering_unverified,
            "final_state_only_accepted": self.outcome == FINAL_STATE_ONLY_ACCEPTED,
            "error": self.error, "replay": self.replay_command,
            "case": str(self.case) if self.case is not None else None,
            "consumer_log": str(self.consumer_log) if self.consumer_log is not None else None,
            "finding_count": self.finding_count,
            "checkpoints": self.checkpoints.to_json(self.encoding) if self.checkpoints is not None else None,
            "tables": [{"table": t.table, "expected_rows": t.expected_rows, "actual_rows": t.actual_rows,
                        "findings": [f.to_json(self.encoding) for f in t.findings]} for t in self.tables],
            "undecidable": self.undecidable,
            "schedule": self.schedule, "not_applicable": self.not_applicable, "notes": self.notes,
        }

    def write_result_file(self) -> None:
        """CASE/result.json: the whole verdict, every finding."""
        if self.result_file is not None:
            self.result_file.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")


def consumer_adapter(consumer: "str | ConsumerAdapter", spark=None) -> ConsumerAdapter:
    """The adapter of a `--consumer` spec (`spark` on the given session), or the adapter itself."""
    return adapter_for(consumer, spark=spark) if isinstance(consumer, str) else consumer


def _locate(result: EncodingResult, case: Path, manifest: dict) -> None:
    """Gives every finding about a row the commit ts and the record that last wrote it (one pass
    over the records for all of them)."""
    holders = list(result.tables) + ([result.checkpoints] if result.checkpoints is not None else [])
    located = iter(locate_findings([f for h in holders for f in h.findings], case, manifest))
    for h in holders:
        h.findings = [next(located) for _ in h.findings]


def run_options_digest(scenario: str, encoding: str, config: SinkConfig, events: Optional[int]) -> Optional[str]:
    """A digest of what sets this run apart from the encoding's default (sink config, size), or None."""
    from ticdc_generators.pipeline import config_for  # the generator only where a run generates (cli.py)

    if config == config_for(scenario, encoding) and events is None:
        return None
    return options_digest([config, events])


def run_encoding(scenario: str, seed: int, encoding: str, work: Path, consumer: "str | ConsumerAdapter" = "spark",
                 spark=None, time_zone: str = "UTC", config: SinkConfig | None = None,
                 config_args: str = "", events: Optional[int] = None, final_state_only: bool = False,
                 consumer_timeout_s: float = CONSUMER_TIMEOUT_S, digest: Optional[str] = None,
                 schedule: Optional["Schedule"] = None, variant: str = "",
                 on_phase: Optional[PhaseListener] = None) -> EncodingResult:
    """`consumer` is an adapter or what `--consumer` says (`spark` runs on `spark`, the session given);
    `config` (e.g. with a changefeed TOML applied) replaces the encoding's default config;
    `config_args` are the command-line options that produced it, for the replay command; `events`
    sizes a scenario that takes a size (large); `final_state_only` lets a consumer judged on its
    final state only pass. The case folder is WORK/<scenario>-seed<N>[-<digest>]/<encoding>, emptied
    first; `digest` names the run's options (`run` gives one for all its encodings), by default the
    digest of the config and size where they are not the encoding's default. `schedule` is the
    delivery schedule of a consumer the suite feeds (docs/delivery-schedules.md); None: the suite's
    default for it, seeded with `seed`. `variant` labels the options in the case id
    (findings/case_ids.py:variant_label). `on_phase` is told each phase as it starts (progress lines).

    What an in-process consumer prints (the local and Spark reference consumers, python:, spark:)
    goes to CASE/consumer.log, where a program's stdout and stderr go, never to the suite's output."""
    from ticdc_generators.pipeline import config_for, generate  # the generator only where a run generates

    phase = on_phase or (lambda name, records: None)
    adapter = consumer_adapter(consumer, spark)
    config = config or config_for(scenario, encoding, time_zone=time_zone)
    digest = digest if digest is not None else run_options_digest(scenario, encoding, config, events)
    case = case_folder(work, scenario, seed, encoding, digest)
    result = EncodingResult(scenario, seed, encoding, config.protocol, adapter.spec, time_zone=config.time_zone,
                            config_args=config_args, events=events, case=case, final_state_only=final_state_only,
                            schedule=schedule.spec() if schedule is not None and adapter.capabilities.schedules
                            else None, variant=variant)
    started = time.monotonic()
    recreate(case)
    phase("generate", None)
    manifest = generate(scenario, seed, config, case, events=events)
    result.records = manifest["records"]
    phase("consume", result.records)
    with consumer_output_to(case / CONSUMER_LOG_FILE) as printed:
        run = adapter.run(Stream.of_case(case, manifest), recreate(case / "consumer"),
                          RunOptions(timeout_s=consumer_timeout_s, schedule=schedule))
    result.consumer_log = run.log if run.log is not None else (printed.path if printed.wrote else None)
    result.error = run.error
    result.not_applicable = run.not_applicable
    result.notes = list(run.notes)
    if run.finished and run.not_applicable is None:
        phase("check", result.records)
        try:
            _check(result, case, manifest, run)
        except ConsumerError as e:
            result.error = str(e)
    result.seconds = time.monotonic() - started
    result.write_result_file()
    return result


class _PrintedTo(io.TextIOBase):
    """A text stream appending what is written to `path`. The file is opened for each write, as the
    adapter of a fed consumer recreates the same log file when its session starts."""

    def __init__(self, path: Path) -> None:
        self.path, self.wrote = path, False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            with open(self.path, "a", encoding="utf-8", errors="replace") as log:
                log.write(text)
            self.wrote = True
        return len(text)


@contextmanager
def consumer_output_to(path: Path) -> Iterator[_PrintedTo]:
    """While inside, Python's stdout and stderr (print, warnings, logging's last resort) go to `path`:
    an in-process consumer's output is kept apart from the suite's, like a program's. Progress lines
    are unaffected: they write to the stream they were given at their start."""
    printed = _PrintedTo(path)
    with redirect_stdout(printed), redirect_stderr(printed):
        yield printed


def _check(result: EncodingResult, case: Path, manifest: dict, run: ConsumerRun) -> None:
    """Judges what `run` wrote, as far as its declaration says it shows (final tables always, the
    applied log and states at checkpoints when it declares them)."""
    out = run.out
    if not (out / "final").is_dir():
        log = f"; its output: {result.consumer_log}" if result.consumer_log is not None else ""
        raise ConsumerError(f"the consumer wrote no {out / 'final'} folder: nothing to judge; a consumer writes "
                            f"final/<schema>.<table>.ndjson before it exits 0 (docs/consumer-protocol.md){log}")
    missing = run.missing_outputs()
    if missing:
        raise ConsumerError(f"consumer {run.consumer} declares {_declared(run.shows)} but wrote no "
                            + ", ".join(str(p) for p in missing))
    result.watermarks = carries_watermarks(manifest["protocol"], manifest["sink"])
    # Started first: a large case's upstream is replayed in another process while the final tables
    # are compared here.
    with CheckpointRun(case / "truth", out, manifest, run.shows, start_ts=run.start_ts) as checkpoints:
        result.tables = check_final_state(case / "truth", out, manifest["protocol"], projection_options(manifest))
        result.checkpoints = checkpoints.verdict()
    _locate(result, case, manifest)
    # Rows whose outcome no consumer could know (no commit ts), reported by the final-state check.
    result.undecidable = [u for t in result.tables for u in t.undecidable]


def _declared(shows: Capabilities) -> str:
    shown = ["its final tables"] + (["an applied log"] if shows.applied_log else []) \
        + (["its states at checkpoints"] if shows.applied_log and shows.states else [])
    return ", ".join(shown)


_CASE_KEYS = ("scenario", "seed", "encoding", "protocol", "sink", "records")


def check_outputs(case: Path, out: Path, final_state_only: bool = False) -> EncodingResult:
    """The verdict on a consumer's outputs in OUT for the stream `generate` wrote into CASE, however
    that consumer was run (on another machine, from Kafka, by hand): the same checks as `run`.
    Raises CaseError for a CASE or OUT that is not what `generate` and a consumer write.

    The replay command is this check's; the stream is regenerated from CASE/manifest.json, which
    names scenario, seed, size and every sink option."""
    case, out = Path(case), Path(out)
    manifest_path = case / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as e:
        raise CaseError(f"{manifest_path}: not a manifest written by `generate`: {e}") from None
    missing = [k for k in _CASE_KEYS if not isinstance(manifest, dict) or k not in manifest]
    if missing:
        raise CaseError(f"{manifest_path}: not a manifest written by `generate`: no {', '.join(missing)}")
    if not (case / "truth").is_dir():
        raise CaseError(f"{case / 'truth'}: no ground truth; CASE must be a folder written by `generate`")
    if not out.is_dir():  # a mistyped OUT; one without final/ is the consumer's failure, judged below
        raise CaseError(f"{out}: no such folder; OUT must hold a consumer's output "
                        "(docs/consumer-protocol.md, \"Output\")")
    replay = f"ticdc-conformance check --case {shlex.quote(str(case))} --out {shlex.quote(str(out))}"
    result = EncodingResult(manifest["scenario"], manifest["seed"], manifest["encoding"], manifest["protocol"],
                            consumer=f"output {out}", time_zone=manifest["sink"].get("time-zone", "UTC"),
                            events=manifest.get("events"), records=manifest["records"], case=case,
                            final_state_only=final_state_only,
                            replay=replay + (" --final-state-only" if final_state_only else ""))
    started = time.monotonic()
    # Written however it was run, the output declares what it shows by what it holds.
    written = ConsumerRun(result.consumer, out, shown_by_output(out))
    try:
        _check(result, case, manifest, written)
    except ConsumerError as e:
        result.error = str(e)
    result.seconds = time.monotonic() - started
    return result


def check_options_digest(case: Path, out: Path) -> str:
    """Sets one check's reports apart from another's: the stream's options and the output judged."""
    manifest = json.loads((Path(case) / "manifest.json").read_text())
    return options_digest([{k: manifest.get(k) for k in ("sink", "generator", "events")}, str(Path(out).resolve())])
