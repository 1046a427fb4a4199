"""The consumer under test behind one interface: what it can show, what it reads, how it is run.

Every consumer the suite judges — the reference Spark and sequential consumers, or any program
speaking docs/consumer-protocol.md — is a `ConsumerAdapter`. It declares its `Capabilities` (what
its output can show beyond the final tables) and runs over a `Stream` into an empty output folder,
returning a `ConsumerRun`: where the output is, what that output shows, how the run ended. The
checks ask the run what it shows instead of looking for files themselves.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ticdc_conformance.delivery import Schedule

APPLIED_LOG_FILE = "applied.ndjson"
STATES_FOLDER = "states"
FINAL_FOLDER = "final"
DEFAULT_TIMEOUT_S = 1800  # seconds a consumer program may run (run --consumer-timeout)


@dataclass(frozen=True)
class Capabilities:
    """What a consumer's output shows (docs/consumer-protocol.md, "Output"). Every consumer writes
    its final tables; these say what it shows besides them."""

    applied_log: bool  # OUT/applied.ndjson: what it applied, in order, and the checkpoints it reached
    states: bool  # OUT/states/: its tables as of every checkpoint (read only beside an applied log)
    restarts: bool = False  # the suite may stop it and start it again from the offsets it committed
    schedules: bool = False  # the suite chooses the delivery order (docs/delivery-schedules.md)
    late_join: bool = False  # it can start at a later checkpoint from a snapshot of upstream's tables

    @property
    def final_state_only(self) -> bool:
        """Only the tables at the end can be judged: on a stream with watermarks, ordering is not verified."""
        return not self.applied_log


FINAL_STATE_ONLY = Capabilities(applied_log=False, states=False)


def shown_by_output(out: Path) -> Capabilities:
    """What an output folder shows when its consumer declares it by what it writes, as a program of
    docs/consumer-protocol.md does: an applied log when OUT/applied.ndjson is there, states at
    checkpoints when OUT/states/ is. Restarts are the suite's to declare, never an output's."""
    out = Path(out)
    return Capabilities(applied_log=(out / APPLIED_LOG_FILE).exists(), states=(out / STATES_FOLDER).is_dir())


@dataclass(frozen=True)
class Stream:
    """What a consumer reads: a record-file folder and the manifest `generate` wrote for it.

    `folder` is where the suite keeps what belongs to this run beside the records (a program's log);
    `scratch` a folder the consumer may fill with its own intermediate files."""

    records: Path
    manifest_path: Path
    manifest: dict
    folder: Path
    scratch: Path

    @classmethod
    def of_case(cls, case: Path, manifest: Optional[dict] = None) -> "Stream":
        """The stream of a case folder written by `generate` (records/, manifest.json)."""
        case = Path(case)
        manifest_path = case / "manifest.json"
        if manifest is None:
            manifest = json.loads(manifest_path.read_text())
        return cls(case / "records", manifest_path, manifest, case, case / "work")


@dataclass(frozen=True)
class RunOptions:
    """How the suite runs a consumer; each adapter uses what applies to it."""

    timeout_s: float = DEFAULT_TIMEOUT_S  # a program's time limit; the in-process consumers run to their end
    # The delivery schedule for a consumer the suite feeds (Capabilities.schedules); None: the default merge.
    schedule: Optional["Schedule"] = None
    tables: str = "every-checkpoint"  # when a fed consumer is asked for its tables (docs/testee-protocol.md)


@dataclass
class ConsumerRun:
    """One run of a consumer: its output folder, what that output shows, and how the run ended
    (`error` is None when it finished; otherwise why its output cannot be judged)."""

    consumer: str  # the adapter's spec, as `--consumer` names it
    out: Path
    shows: Capabilities
    log: Optional[Path] = None  # a program's stdout and stderr
    figures: dict = field(default_factory=dict)  # what a reference consumer reports (consumer.json)
    error: Optional[str] = None
    not_applicable: Optional[str] = None  # the consumer declined this protocol or configuration: why
    notes: list[str] = field(default_factory=list)  # e.g. parts of the schedule the consumer does not support
    start_ts: Optional[int] = None  # a late join's snapshot ts: upstream at or below it is not the consumer's

    @property
    def finished(self) -> bool:
        return self.error is None

    def missing_outputs(self) -> list[Path]:
        """The files and folders this run's declaration promises but the consumer did not write."""
        wanted = [(True, self.out / FINAL_FOLDER), (self.shows.applied_log, self.out / APPLIED_LOG_FILE),
                  (self.shows.applied_log and self.shows.states, self.out / STATES_FOLDER)]
        return [path for promised, path in wanted if promised and not path.exists()]


class ConsumerAdapter(ABC):
    """A consumer under test. `spec` is how `--consumer` names it (and what replay commands repeat);
    `capabilities` is the most its output can show."""

    spec: str
    capabilities: Capabilities

    @property
    def name(self) -> str:
        return self.spec

    @abstractmethod
    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        """Consumes `stream` into the empty folder `out`. A consumer that cannot finish is a
        ConsumerRun with an `error`, never an exception; an interrupt of the suite propagates."""

    def close(self) -> None:
        """Releases what the adapter holds across runs (a Spark session it started)."""

