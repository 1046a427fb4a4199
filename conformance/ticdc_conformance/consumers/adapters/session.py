"""The session driver: the suite feeds a consumer under test over the testee protocol
(docs/testee-protocol.md) and folds what it answered into the output folder every consumer writes.

It starts the consumer (a `Launcher`: a program for `cmd:`, a Python class for `python:`), writes
the header, reads `ready` (or `unsupported`: the encoding is not applicable to it), then walks the
delivery's steps (ticdc_conformance.delivery): a poll's records then `sync`; after a sync whose
answer carried a new checkpoint, `tables` (with tables=every-checkpoint); `commit`; a restart —
stop (commit, input closed, exit 0 awaited) or crash (killed at once; what it wrote after its last
`committed` answer is discarded) — then a new start from its committed offsets. At the end `end`,
`tables`, input closed, exit 0 awaited. Every answer has a deadline (RunOptions.timeout_s); every
broken rule is a ConsumerRun error naming the line, the request waited for and the log file.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ticdc_conformance.delivery import (
    AskTables,
    Commit,
    Delivery,
    LateJoinRefused,
    Poll,
    Restart,
    Schedule,
    late_join_refusal,
)
from ticdc_conformance.errors import ConsumerError

from .interface import Capabilities, ConsumerRun, RunOptions, Stream
from .reference import _emptied
from .session_endpoint import AnswerTimeout, Endpoint, Launcher, SessionError
from .session_fold import JOURNAL_FILE, Journal, fold, write_figures
from .session_wire import (
    ANSWERS,
    APPLIED_LOG_TYPES,
    CHECKPOINT,
    PROTOCOL_VERSION,
    READY,
    ROW,
    TABLES,
    UNSUPPORTED,
    LineError,
    offsets_json,
    offsets_of,
    parse_line,
    record_message,
    shown,
)

LOG_FILE = "consumer.log"
STATE_DIR = "consumer-state"
SUPPORTS_RESTARTS, SUPPORTS_LATE_JOIN = "restarts", "late-join"
TABLES_MODES = ("every-checkpoint", "on-request")
TopicPartition = tuple[str, int]


def default_schedule(seed: int) -> Schedule:
    """The delivery of a fed consumer when the run names none: Kafka-timestamp merge in poll batches,
    seeded with the run's seed."""
    return Schedule(seed=seed)


@dataclass
class SessionFigures:
    """What the session did, for OUT/consumer.json."""

    schedule: str
    starts: int = 0
    restarts: int = 0
    stops: int = 0
    crashes: int = 0
    commits: int = 0
    polls: int = 0
    records_delivered: int = 0
    syncs: int = 0
    tables_asked: int = 0
    lines_read: int = 0
    lines_discarded_by_crashes: int = 0
    late_join_checkpoint_ts: Optional[int] = None
    snapshot_rows: int = 0
    supports: list[str] = field(default_factory=list)


class Session:
    """One run of a fed consumer over one stream."""

    def __init__(self, launcher: Launcher, stream: Stream, out: Path, options: RunOptions) -> None:
        if options.tables not in TABLES_MODES:
            raise ValueError(f"tables={options.tables!r}: expected one of {', '.join(TABLES_MODES)}")
        self.launcher, self.stream, self.out, self.options = launcher, stream, Path(out), options
        self.spec = launcher.spec
        self.manifest = stream.manifest
        self.log = stream.folder / LOG_FILE
        self.state_dir = stream.folder / STATE_DIR
        self.schedule = options.schedule if options.schedule is not None else default_schedule(self.manifest["seed"])
        self.figures = SessionFigures(self.schedule.spec())
        self.notes: list[str] = []
        self.endpoint: Optional[Endpoint] = None
        self.journal: Optional[Journal] = None
        self.next_id = 1
        self.start_no = 0
        self.supports: frozenset[str] = frozenset()
        # What the consumer wrote: its last checkpoint, and the checkpoint of its last tables answer;
        # both as of its last `committed` answer too, where a crash sets them back.
        self.last_checkpoint: Optional[int] = None
        self.last_answered: Optional[int] = None
        self.durable: tuple[Optional[int], Optional[int]] = (None, None)
        self.committed: dict[TopicPartition, int] = {}
        self.ever_committed = False
        self.delivered: dict[TopicPartition, int] = {}  # next offset per partition in this start
        self.line_no = 0  # of the line last read in this start
        self.joining = False  # this start begins with a late join's snapshot
        self.start_offsets: dict[TopicPartition, int] = {}

    # --- the run ------------------------------------------------------------------------------
    def run(self) -> ConsumerRun:
        if self.log.exists():
            self.log.unlink()
        self.log.touch()
        _emptied(self.state_dir)
        try:
            return self._run()
        except ConsumerError as e:
            self._kill()
            return self._result(error=str(e))
        except BaseException:  # an interrupt of the suite: the consumer must not outlive it
            self._kill()
            raise
        finally:
            if self.journal is not None:
                self.journal.close()

    def _delivery(self) -> Delivery:
        """The schedule played over the stream; a late join the stream allows none of (no watermarks)
        is left out, with a note."""
        if self.schedule.late_join:
            refusal = late_join_refusal(self.manifest)
            if refusal is not None:
                self._reduce(self.schedule.without(late_join=True), f"no late join: {refusal}")
        try:
            return Delivery(self.schedule, self.stream.records, self.manifest, self.stream.folder / "truth")
        except LateJoinRefused as e:  # no checkpoint of this stream a consumer could start afresh from
            self._reduce(self.schedule.without(late_join=True), f"no late join: {e}")
            return self._delivery()
        except ValueError as e:
            raise SessionError(f"the delivery schedule {self.schedule.spec()} cannot be played over "
                               f"{self.stream.records}: {e}") from None

    def _reduce(self, schedule: Schedule, note: str) -> None:
        self.notes.append(f"{note}; the schedule {self.schedule.spec()} ran as {schedule.spec()}")
        self.schedule = schedule
        self.figures.schedule = schedule.spec()

    def _run(self) -> ConsumerRun:
        delivery = self._delivery()
        first = self._start(delivery, dict(delivery.start.offsets), first=True)
        if isinstance(first, str):
            return self._not_applicable(first)
        leave_out = {SUPPORTS_RESTARTS: "restarts", SUPPORTS_LATE_JOIN: "late_join"}
        missing = {need for need in self.schedule.needs if need not in self.supports}
        if missing:
            self._reduce(self.schedule.without(**{leave_out[m]: True for m in missing if m in leave_out}),
                         f"the consumer does not declare {', '.join(sorted(missing))} (ready.supports)")
            delivery = self._delivery()
            if SUPPORTS_LATE_JOIN in missing:  # its header named a late join it cannot do: it starts afresh
                self._kill()
                _emptied(self.state_dir)
                self.start_no = 0
                again = self._start(delivery, dict(delivery.start.offsets), first=True)
                if isinstance(again, str):
                    return self._not_applicable(again)
        self.journal = Journal(self.stream.folder / JOURNAL_FILE)
        self.start_offsets = dict(delivery.start.offsets)
        if self.joining:
            self._load_snapshot(delivery)
        for step in delivery.steps():
            if isinstance(step, Poll):
                self._poll(step)
            elif isinstance(step, Commit):
                if SUPPORTS_RESTARTS in self.supports:
                    self._commit()
            elif isinstance(step, Restart):
                self._restart(step.crash, delivery)
            elif isinstance(step, AskTables):
                self._tables()
        if self.figures.late_join_checkpoint_ts is not None and not self.figures.records_delivered:
            self.notes.append(f"the late join at {self.figures.late_join_checkpoint_ts} left no record to deliver: "
                              "the consumer could show its snapshot only, no checkpoint after it")
        self._request("end")
        self._tables()
        self._finish()
        folded = fold(self.journal, self.out)
        self.figures.lines_discarded_by_crashes = self.journal.discarded
        write_figures(self.out, {**vars(self.figures), "fold": vars(folded), "notes": self.notes})
        return self._result()

    def _result(self, error: Optional[str] = None, not_applicable: Optional[str] = None) -> ConsumerRun:
        shows = Capabilities(applied_log=True, states=True, restarts=SUPPORTS_RESTARTS in self.supports,
                             schedules=True, late_join=SUPPORTS_LATE_JOIN in self.supports)
        return ConsumerRun(self.spec, self.out, shows, log=self.log, figures=vars(self.figures) | {},
                           error=error, not_applicable=not_applicable, notes=list(self.notes),
                           start_ts=self.figures.late_join_checkpoint_ts)

    def _not_applicable(self, reason: str) -> ConsumerRun:
        self._finish(after="its unsupported line")
        return self._result(not_applicable=reason)

    # --- starts -------------------------------------------------------------------------------
    def _start(self, delivery: Delivery, offsets: dict[TopicPartition, int], first: bool) -> Optional[str]:
        """Starts the consumer from `offsets` and reads its first line: None when it is ready, the
        reason when it answered unsupported."""
        start = delivery.start
        # A late join starts from the snapshot; so does a restart before the consumer ever committed
        # (nothing of the snapshot is durable in its state_dir yet).
        late_join = self.joining = start.checkpoint_ts is not None and (first or not self.ever_committed)
        self.endpoint = self.launcher.start(self.log, self.start_no)
        self.figures.starts += 1
        self.line_no = 0
        self.delivered = dict(offsets)
        header = {"type": "header", "protocol_version": PROTOCOL_VERSION,
                  "protocol": self.manifest["protocol"], "encoding": self.manifest["encoding"],
                  "sink": self.manifest["sink"], "topics": self.manifest["topics"],
                  "scenario": self.manifest["scenario"], "seed": self.manifest["seed"],
                  "state_dir": str(self.state_dir.resolve()),
                  "start": {"restart": self.start_no, "offsets": offsets_json(offsets),
                            "checkpoint_ts": start.checkpoint_ts if late_join else None},
                  "tables": self.options.tables}
        if "claim_check" in self.manifest:  # its folder as an absolute path: the consumer runs anywhere
            cc = dict(self.manifest["claim_check"])
            cc["folder"] = str((self.stream.manifest_path.parent / cc["folder"]).resolve())
            header["claim_check"] = cc
        self.start_no += 1
        deadline = self._deadline()
        self._send([header], deadline)
        raw = self._read(deadline, "its ready line")
        if raw is None:
            raise self._error(f"its output ended before its ready line ({self.endpoint.ended_output()})")
        line = self._parse(raw, "its ready line")
        if line["type"] == UNSUPPORTED:
            return str(line["reason"])
        if line["type"] != READY:
            raise self._error(f"its first line must be ready or unsupported, not {line['type']}: "
                              f"output line {self.line_no}: {shown(raw)}")
        if line["protocol_version"] != PROTOCOL_VERSION:
            raise self._error(f"its ready line names protocol_version {line['protocol_version']}, the header "
                              f"{PROTOCOL_VERSION}: output line {self.line_no}: {shown(raw)}")
        self.supports = frozenset(line["supports"])
        self.figures.supports = sorted(self.supports)
        return None

    def _load_snapshot(self, delivery: Delivery) -> None:
        """A late join: the tables at start.checkpoint_ts, then `loaded`."""
        w = delivery.start.checkpoint_ts
        self.figures.late_join_checkpoint_ts = w
        batch: list[dict] = []
        for schema, table, columns, row in delivery.start.snapshot():
            batch.append({"type": "load", "schema": schema, "table": table, "columns": list(columns), "row": row})
            self.figures.snapshot_rows += row is not None
            if len(batch) >= 256:
                self._send(batch, self._deadline())
                batch = []
        batch.append({"type": "loaded", "checkpoint_ts": w})
        self._send(batch, self._deadline())

    def _restart(self, crash: bool, delivery: Delivery) -> None:
        if SUPPORTS_RESTARTS not in self.supports:
            return
        if crash:
            self._kill()
            self.journal.cut()
            self.last_checkpoint, self.last_answered = self.durable
            self.figures.crashes += 1
        else:
            self._commit()
            self._finish()
            self.journal.mark()  # a stop loses nothing: what it wrote until its exit counts
            self.durable = (self.last_checkpoint, self.last_answered)
            self.figures.stops += 1
        self.figures.restarts += 1
        starts = delivery.resume({tp: o for tp, o in self.committed.items() if tp in self.start_offsets})
        reason = self._start(delivery, starts, first=False)
        if reason is not None:
            raise self._error(f"it answered unsupported when started again after a restart: {reason}")
        if self.joining:
            self._load_snapshot(delivery)

    def _finish(self, after: str = "the answer to the last request") -> None:
        """Input closed; the rest of its output read (it counts), then exit 0 awaited."""
        self.endpoint.close_input()
        deadline = self._deadline()
        while True:
            raw = self._read(deadline, f"the end of its output after {after}")
            if raw is None:
                break
            line = self._parse(raw, f"the end of its output after {after}")
            if line["type"] in APPLIED_LOG_TYPES and self.journal is not None:
                self._applied(raw, line)
            else:
                raise self._error(f"a {line['type']} line after {after}, when only its exit was awaited: "
                                  f"output line {self.line_no}: {shown(raw)}")
        problem = self.endpoint.wait(deadline)
        if problem is not None:
            raise self._error(problem)
        self.endpoint = None

    def _kill(self) -> None:
        if self.endpoint is not None:
            self.endpoint.kill()
            self.endpoint = None

    # --- steps --------------------------------------------------------------------------------
    def _poll(self, poll: Poll) -> None:
        messages = []
        for record in poll.records:
            tp = (record.topic, record.partition)
            self.delivered[tp] = record.offset + 1
            messages.append(record_message(record))
        self.figures.polls += 1
        self.figures.records_delivered += len(messages)
        self._send(messages, self._deadline())
        self._request("sync")
        if self.options.tables == "every-checkpoint" and self.last_checkpoint is not None \
                and self.last_checkpoint != self.last_answered:
            self._tables()

    def _tables(self) -> None:
        answer = self._request("tables")
        if answer["checkpoint"] != self.last_checkpoint:
            raise self._error(f"its tables answer names checkpoint {answer['checkpoint']}, but the last checkpoint "
                              f"it wrote is {self.last_checkpoint}: output line {self.line_no}")
        self.last_answered = answer["checkpoint"]

    def _commit(self) -> None:
        answer = self._request("commit")
        offsets = offsets_of(answer["offsets"])
        for tp, offset in sorted(offsets.items()):
            if tp not in self.delivered:
                raise self._error(f"its committed answer names {tp[0]}/{tp[1]}, a partition of no topic the "
                                  f"header named: output line {self.line_no}")
            if offset > self.delivered[tp]:
                raise self._error(f"its committed answer gives offset {offset} for {tp[0]}/{tp[1]}, above what was "
                                  f"delivered (the next offset there is {self.delivered[tp]}): output line {self.line_no}")
        self.committed.update(offsets)
        self.ever_committed = True
        self.journal.mark()
        self.durable = (self.last_checkpoint, self.last_answered)
        self.figures.commits += 1

    def _request(self, kind: str) -> dict:
        """Writes the request and reads up to its answer, journaling what comes before it."""
        rid = self.next_id
        self.next_id += 1
        what = f"the answer to {kind} id {rid}"
        deadline = self._deadline()
        self._send([{"type": kind, "id": rid}], deadline)
        if kind == "sync":
            self.figures.syncs += 1
        elif kind == "tables":
            self.figures.tables_asked += 1
        expected = ANSWERS[kind]
        while True:
            raw = self._read(deadline, what)
            if raw is None:
                raise self._error(f"its output ended before {what} ({self.endpoint.ended_output()})")
            line = self._parse(raw, what)
            t = line["type"]
            if t in APPLIED_LOG_TYPES:
                self._applied(raw, line)
            elif t == ROW and kind == "tables":
                self.journal.add(raw)
            elif t == expected and line["id"] == rid:
                if t == TABLES:
                    self.journal.add(raw)
                return line
            elif t in ANSWERS.values():
                raise self._error(f"waiting for {what}, it answered {t} id {line['id']}: output line {self.line_no}: "
                                  f"{shown(raw)}")
            else:
                raise self._error(f"a {t} line while waiting for {what}: output line {self.line_no}: {shown(raw)}")

    def _applied(self, raw: bytes, line: dict) -> None:
        self.journal.add(raw)
        if line["type"] == CHECKPOINT:
            self.last_checkpoint = line["ts"]

    # --- lines --------------------------------------------------------------------------------
    def _deadline(self) -> float:
        return time.monotonic() + self.options.timeout_s

    def _send(self, messages: list[dict], deadline: float) -> None:
        try:
            self.endpoint.send(messages, deadline)
        except AnswerTimeout as e:
            self._kill()
            first = messages[0]
            what = f"{first['type']} id {first['id']}" if "id" in first else f"a {first['type']} line"
            raise self._error(f"it took no input within {self.options.timeout_s:g}s (--consumer-timeout) while "
                              f"{what} was written ({e}); it was killed") from None

    def _read(self, deadline: float, what: str) -> Optional[bytes]:
        try:
            got = self.endpoint.read(deadline)
        except AnswerTimeout:
            self._kill()
            raise self._error(f"no line within {self.options.timeout_s:g}s (--consumer-timeout) while waiting for "
                              f"{what}; its process group was killed") from None
        if got is None:
            return None
        self.line_no, raw = got
        self.figures.lines_read += 1
        return raw

    def _parse(self, raw: bytes, what: str) -> dict:
        try:
            return parse_line(raw)
        except LineError as e:
            raise self._error(f"output line {self.line_no} is not a protocol line ({e}), while waiting for {what} "
                              f"(docs/testee-protocol/consumer-to-suite.schema.json): {shown(raw)}") from None

    def _error(self, text: str) -> SessionError:
        start = f"start {max(self.start_no, 1)}"
        return SessionError(f"consumer {self.spec!r} broke the testee protocol (docs/testee-protocol.md) in its "
                            f"{start}: {text}; its output: {self.log}")


def run_session(launcher: Launcher, stream: Stream, out: Path, options: RunOptions) -> ConsumerRun:
    """One fed consumer's run (a ConsumerRun with an error, never an exception, when it fails)."""
    try:
        session = Session(launcher, stream, out, options)
    except ValueError as e:
        return ConsumerRun(launcher.spec, out, Capabilities(applied_log=True, states=True), error=str(e))
    return session.run()

