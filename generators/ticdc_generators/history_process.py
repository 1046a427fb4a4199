"""A scenario's history drawn, and its ground truth written, in a process of its own.

`generate` has two halves of about equal cost that share nothing but the events: drawing the
upstream history and writing truth/ (the scenario's random draws, the upstream model, the truth
lines), and simulating the changefeed (encoders, dispatch, record files). For a large case the
first half runs here in a child process (`python -m ticdc_generators.history_process`) and streams
its events to the parent, which simulates them as they come: on two cores a large case takes about
half the wall time. The child and the parent each hold a bounded buffer of events, so memory stays
flat. The output is byte for byte the single-process output (tests/generators/test_history_process.py).

The stream is written by hand: pickle carries the values, but this module frames them and sends
the model's objects in a flat form, because pickling the frozen dataclasses field by field cost as
much as drawing the history. The stream is a sequence of frames, each an 8-byte big-endian length
and that many bytes of records; a record is its kind (one byte), its payload's length (4 bytes,
big-endian) and the payload, a pickle of its own, made the moment the history yields the event
(what the history does to its objects afterwards cannot reach the parent):
- s (schema): a TableSchema, sent once before the first record that names it; records name it by
  its place in the order sent, so every event that names it gets the same object back, as in one
  process (the encoders' caches are keyed by a table version's identity);
- t (txn): (start_ts, commit_ts, [(schema number, op value, before, after), ...]), plain values
  only, so the C pickler makes it without a Python call per object;
- d (ddl): a DDL, its table versions by number (pickle's persistent IDs);
- e (end): the last commit ts; truth/ is complete and closed;
- x (error): (exception or None, its traceback as text): the child failed.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

from ticdc_contract.model import DDL, Op, TableSchema, Transaction, row_change
from ticdc_contract.truth import TruthWriter

# A case is generated in two processes from this many row events (below it the child's start-up,
# about half a second, costs more than it saves) when the machine gives this process two cores.
TWO_PROCESSES_FROM = 20_000
FRAME_BYTES = 1 << 18  # a frame is sent once its records reach this size
_PIPE_BYTES = 1 << 20  # the pipe's kernel buffer asked for (Linux), so the two sides wait on each other less
_LENGTH = struct.Struct(">Q")
_HEADER = struct.Struct(">cI")  # a record's kind and its payload's length
_TXN, _SCHEMA, _DDL, _END, _ERROR = b"t", b"s", b"d", b"e", b"x"
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_OPS = {op.value: op for op in Op}


class HistoryProcessError(RuntimeError):
    """The child process drawing the history failed or ended without finishing its stream."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def worth_a_process(events: Optional[int]) -> bool:
    """Whether a history of `events` row events is drawn in a process of its own (None: unknown
    size, drawn in this one)."""
    return events is not None and events >= TWO_PROCESSES_FROM and usable_cores() >= 2


# --- the child ---------------------------------------------------------------------------------
class _Sender:
    """Records framed and written to `out`."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.buffer = bytearray()
        # id(schema) -> (its number, the schema): the schema is held so that its id is never reused.
        self.schemas: dict[int, tuple[int, TableSchema]] = {}

    def _record(self, kind: bytes, payload: bytes) -> None:
        self.buffer += _HEADER.pack(kind, len(payload))
        self.buffer += payload
        if len(self.buffer) >= FRAME_BYTES:
            self.flush()

    def _known(self, schema: Optional[TableSchema]) -> None:
        if schema is not None and id(schema) not in self.schemas:
            self._record(_SCHEMA, pickle.dumps(schema, protocol=_PROTOCOL))
            self.schemas[id(schema)] = (len(self.schemas), schema)

    def event(self, event: DDL | Transaction) -> None:
        if type(event) is Transaction:
            changes, schemas = event.changes, self.schemas
            for ch in changes:
                if id(ch.table) not in schemas:
                    self._known(ch.table)
            flat = [(schemas[id(ch.table)][0], ch.op.value, ch.before, ch.after) for ch in changes]
            self._record(_TXN, pickle.dumps((event.start_ts, event.commit_ts, flat), protocol=_PROTOCOL))
            return
        assert isinstance(event, DDL), f"a history event is a DDL or a Transaction, not {type(event).__name__}"
        for schema in (event.table_after, event.table_before, event.other_before, event.other_after):
            self._known(schema)
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=_PROTOCOL)
        pickler.persistent_id = self._schema_number  # type: ignore[method-assign]
        pickler.dump(event)
        self._record(_DDL, buffer.getvalue())

    def _schema_number(self, obj: object) -> Optional[int]:
        return self.schemas[id(obj)][0] if type(obj) is TableSchema else None

    def finish(self, kind: bytes, payload: object) -> None:
        self._record(kind, pickle.dumps(payload, protocol=_PROTOCOL))
        self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.out.write(_LENGTH.pack(len(self.buffer)))
            self.out.write(self.buffer)
            self.out.flush()
            self.buffer = bytearray()


def _child(args: dict, fd: int) -> int:
    from .scenarios import get_scenario

    with open(fd, "wb", buffering=0) as out:
        sender = _Sender(out)
        try:
            scenario = get_scenario(args["scenario"])
            truth = TruthWriter(Path(args["truth"]))
            for event in truth.tee(scenario.history(args["seed"], args["events"], args["time_zone"])):
                sender.event(event)
            truth.close()
            sender.finish(_END, truth.last_commit_ts)
            return 0
        except BrokenPipeError:  # the parent stopped reading: it has its own error to report
            return 1
        except BaseException as e:  # noqa: BLE001 - every failure goes to the parent, which reports it
            text = "".join(traceback.format_exception(e))
            sent: Optional[BaseException] = e
            try:
                pickle.dumps(e)
            except Exception:  # an exception that does not pickle: its text alone
                sent = None
            try:
                sender.finish(_ERROR, (sent, text))
            except BrokenPipeError:
                pass
            return 1


# --- the parent --------------------------------------------------------------------------------
class HistoryProcess:
    """The history of `scenario` drawn in a child process, which writes `truth_dir` as it goes.
    Iterate it for the events; `last_commit_ts` is set once the stream has ended. Use it as a
    context manager: leaving early stops the child."""

    def __init__(self, scenario: str, seed: int, events: Optional[int], time_zone: str, truth_dir: Path) -> None:
        self.describe = f"the history of scenario {scenario!r} (seed {seed}, {events} row events)"
        self.last_commit_ts: Optional[int] = None
        self._schemas: list[TableSchema] = []
        read_fd, write_fd = os.pipe()
        _grow_pipe(write_fd)
        self._stderr = tempfile.TemporaryFile()
        args = {"scenario": scenario, "seed": seed, "events": events, "time_zone": time_zone,
                "truth": str(Path(truth_dir).resolve())}
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, json.dumps(args), str(write_fd)], pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr, env=_child_env())
        except BaseException:
            os.close(read_fd)
            self._stderr.close()
            raise
        finally:
            os.close(write_fd)  # the child's end: the parent reads EOF once the child has gone
        self._in = open(read_fd, "rb", buffering=_PIPE_BYTES)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def __enter__(self) -> "HistoryProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._in.close()
        self._reap()  # it ends at its next write once the pipe is closed
        self._stderr.close()

    def _reap(self) -> int:
        """The child's exit status, once it has ended: it is given 10 seconds, then killed."""
        try:
            return self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()

    def __iter__(self) -> Iterator[DDL | Transaction]:
        schemas, loads = self._schemas, pickle.loads
        while True:
            frame = memoryview(self._frame())
            at, end = 0, len(frame)
            while at < end:
                kind, size = _HEADER.unpack_from(frame, at)
                at += _HEADER.size
                payload = frame[at:at + size]
                at += size
                if kind == _TXN:
                    start_ts, commit_ts, flat = loads(payload)
                    yield Transaction(start_ts, commit_ts, tuple(
                        [row_change(schemas[n], _OPS[op], before, after) for n, op, before, after in flat]))
                elif kind == _SCHEMA:
                    schemas.append(loads(payload))
                elif kind == _DDL:
                    unpickler = pickle.Unpickler(io.BytesIO(payload))
                    unpickler.persistent_load = schemas.__getitem__  # type: ignore[assignment]
                    yield unpickler.load()
                elif kind == _END:
                    self.last_commit_ts = loads(payload)
                    self._finished()
                    return
                elif kind == _ERROR:
                    self._failed(*loads(payload))
                else:
                    raise HistoryProcessError(f"{self.describe}: its process sent a record of unknown kind {kind!r}")

    def _frame(self) -> bytes:
        head = self._in.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            raise self._died("ended its stream before the history did")
        (size,) = _LENGTH.unpack(head)
        frame = self._in.read(size)
        if len(frame) < size:
            raise self._died(f"ended in the middle of a frame ({len(frame)} of {size} bytes)")
        return frame

    def _finished(self) -> None:
        code = self._reap()
        if code != 0:
            raise self._died(f"exited with status {code} after its stream ended")

    def _failed(self, error: Optional[BaseException], text: str) -> None:
        self._reap()
        if error is not None:
            error.add_note(f"raised in the process drawing {self.describe}")
            raise error  # as one process raises it: a scenario's ValueError stays a ValueError
        raise HistoryProcessError(f"{self.describe} failed in its process:\n{text}")

    def _died(self, what: str) -> HistoryProcessError:
        code = self._reap()
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return HistoryProcessError(f"{self.describe}: its process {what} (exit status {code})"
                                   + (f"; its stderr ends:\n{tail}" if tail else ""))


def _grow_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or above the system's limit: the default buffer works
        pass


def _child_env() -> dict[str, str]:
    """The parent's environment, with the folders its ticdc_generators and ticdc_contract come from
    first on PYTHONPATH: the child imports the same code, however the parent found it."""
    import ticdc_contract
    import ticdc_generators

    roots = [str(Path(m.__file__).resolve().parent.parent) for m in (ticdc_generators, ticdc_contract)
             if m.__file__ is not None]
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(roots + ([rest] if rest else [])))}


if __name__ == "__main__":
    sys.exit(_child(json.loads(sys.argv[1]), int(sys.argv[2])))
