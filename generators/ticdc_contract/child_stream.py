"""A stream of records from a child process: the one way both sides run half of a step elsewhere.

`generate` draws a large case's history in a child (ticdc_generators/history_process.py) and
`check` replays a large case's upstream in one (ticdc_conformance/checks/upstream_process.py):
each step has two halves that share only an ordered stream, and on two cores they overlap. Both
children stream the same way, written here once.

The child is `python -m <module> <arguments as JSON> <fd>`; it writes to the pipe `fd` with a
`RecordSender` and ends with an end record, or an error record if it fails (`serve` does both). The
stream is a sequence of frames, each an 8-byte big-endian length and that many bytes of records; a
record is its kind (one byte), its payload's length (4 bytes, big-endian) and the payload, which
the two sides agree on (a pickle, mostly). Pickle carries the values; the framing is written by
hand because a record is made the moment the child has it (what the child does to its objects
afterwards cannot reach the parent) and frames keep the pipe's writes large. Two kinds are
reserved:
- e (end): the stream is complete; its payload a pickle of what the child reports at the end;
- x (error): (exception or None, its traceback as text): the child failed.
"""
from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from collections import deque
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Optional, TypeVar

FRAME_BYTES = 1 << 18  # a frame is sent once its records reach this size
_PIPE_BYTES = 1 << 20  # the pipe's kernel buffer asked for (Linux), so the two sides wait on each other less
_LENGTH = struct.Struct(">Q")
_HEADER = struct.Struct(">cI")  # a record's kind and its payload's length
END, ERROR = b"e", b"x"
PROTOCOL = pickle.HIGHEST_PROTOCOL


class ChildStreamError(RuntimeError):
    """A child process failed or ended without finishing its stream."""


S = TypeVar("S", bound="RecordSender")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# --- the child ---------------------------------------------------------------------------------
class RecordSender:
    """Records framed and written to `out`. With AHEAD_BYTES above 0 a thread of its own writes
    the frames, so that the child computes on while the parent is busy, up to that many bytes ahead
    of it: the pipe's own buffer holds about one checkpoint's records of the check's stream, and
    with that alone the two processes took turns instead of running side by side."""

    AHEAD_BYTES = 0

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.buffer = _new_frame()
        self._writer: Optional[_FrameWriter] = _FrameWriter(self._write, self.AHEAD_BYTES) if self.AHEAD_BYTES else None

    def record(self, kind: bytes, payload: bytes) -> None:
        self.buffer += _HEADER.pack(kind, len(payload))
        self.buffer += payload
        if len(self.buffer) >= FRAME_BYTES + _LENGTH.size:
            self.flush()

    def finish(self, kind: bytes, payload: object) -> None:
        self.record(kind, pickle.dumps(payload, protocol=PROTOCOL))
        self.flush()
        if self._writer is not None:
            self._writer.drain()

    def flush(self) -> None:
        if len(self.buffer) > _LENGTH.size:
            # The frame is the buffer itself, its length written into the room left for it: the
            # check's stream is hundreds of megabytes at 1M events, and each copy of it costs.
            frame = self.buffer
            _LENGTH.pack_into(frame, 0, len(frame) - _LENGTH.size)
            self.buffer = _new_frame()
            if self._writer is not None:
                self._writer.put(frame)
            else:
                self._write(frame)

    def _write(self, data: bytes | bytearray) -> None:
        """All of `data`: a write to a pipe interrupted by a signal writes part of it and says how much."""
        view = memoryview(data)
        while view:
            written = self.out.write(view)
            view = view[written if written is not None else len(view):]


def _new_frame() -> bytearray:
    """An empty frame: room for its length, then its records."""
    return bytearray(_LENGTH.size)


class _FrameWriter:
    """Frames written by a thread, at most `ahead` bytes of them waiting; the thread's write error
    (the parent closed the pipe) is raised by the next put or drain."""

    def __init__(self, write: Callable[[bytearray], None], ahead: int) -> None:
        self.write, self.ahead = write, ahead
        self.frames: deque[bytearray] = deque()
        self.waiting = 0  # bytes in `frames` and in the write under way
        self.error: Optional[BaseException] = None
        self.done = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="frame writer", daemon=True)
        self.thread.start()

    def put(self, frame: bytearray) -> None:
        with self.cond:
            while self.waiting > self.ahead and self.error is None:
                self.cond.wait()
            self._raise()
            self.frames.append(frame)
            self.waiting += len(frame)
            self.cond.notify_all()

    def drain(self) -> None:
        """Returns once every frame is written (or raises the write's error), the thread ended."""
        with self.cond:
            self.done = True
            self.cond.notify_all()
            while self.waiting and self.error is None:
                self.cond.wait()
        self.thread.join()
        self._raise()

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.frames and not self.done:
                    self.cond.wait()
                if not self.frames:
                    return
                frame = self.frames.popleft()
            try:
                self.write(frame)  # the pipe write, without the lock (it waits for the parent)
            except BaseException as e:  # noqa: BLE001 - handed to the main thread, which raises it
                with self.cond:
                    self.error = e
                    self.cond.notify_all()
                return
            with self.cond:
                self.waiting -= len(frame)
                self.cond.notify_all()


def serve(fd: int, sender_type: Callable[[BinaryIO], S], body: Callable[[S], object]) -> int:
    """The child's whole life: `body` streams its records with a `sender_type` writing to pipe
    `fd`, and what it returns is the end record's payload. Every failure goes to the parent as an
    error record, which the parent reports; the exit status is 0 only for a finished stream."""
    with open(fd, "wb", buffering=0) as out:
        sender = sender_type(out)
        try:
            end = body(sender)
            sender.finish(END, end)
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
                sender.finish(ERROR, (sent, text))
            except BrokenPipeError:
                pass
            return 1


# --- the parent --------------------------------------------------------------------------------
class ChildStream:
    """The records of `python -m module` run with `args`; `describe` names what it computes in
    every error, `doing` what it does to it ("drawing"). Iterate `records()` for (kind, payload) pairs; `end` is the end record's payload
    once the stream has ended. Use it as a context manager: leaving early stops the child.
    `roots`: the modules whose folders go first on the child's PYTHONPATH, so that it imports the
    same code as the parent, however the parent found it."""

    error_type: type[ChildStreamError] = ChildStreamError

    def __init__(self, module: str, args: dict, doing: str, describe: str, roots: Iterable[Any]) -> None:
        self.doing, self.describe = doing, describe
        self.end: Any = None
        read_fd, write_fd = os.pipe()
        _grow_pipe(write_fd)
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", module, json.dumps(args), str(write_fd)], pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr, env=_child_env(roots))
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

    def __enter__(self) -> "ChildStream":
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

    def records(self) -> Iterator[tuple[bytes, memoryview]]:
        """The child's records but the end and error ones, in order; an error record is raised (the
        child's exception as one process raises it, with a note naming the child)."""
        while True:
            frame = memoryview(self._frame())
            at, end = 0, len(frame)
            while at < end:
                kind, size = _HEADER.unpack_from(frame, at)
                at += _HEADER.size
                payload = frame[at:at + size]
                at += size
                if kind == END:
                    self.end = pickle.loads(payload)
                    self._finished()
                    return
                if kind == ERROR:
                    self._failed(*pickle.loads(payload))
                yield kind, payload

    def unknown(self, kind: bytes) -> ChildStreamError:
        return self.error_type(f"{self.describe}: its process sent a record of unknown kind {kind!r}")

    def _frame(self) -> bytes:
        head = self._in.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            raise self._died("ended its stream before it was complete")
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
            error.add_note(f"raised in the process {self.doing} {self.describe}")
            raise error  # as one process raises it: a ValueError stays a ValueError
        raise self.error_type(f"{self.describe} failed in its process:\n{text}")

    def _died(self, what: str) -> ChildStreamError:
        code = self._reap()
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return self.error_type(f"{self.describe}: its process {what} (exit status {code})"
                               + (f"; its stderr ends:\n{tail}" if tail else ""))


def _grow_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or above the system's limit: the default buffer works
        pass


def _child_env(roots: Iterable[Any]) -> dict[str, str]:
    found = [str(Path(m.__file__).resolve().parent.parent) for m in roots if m.__file__ is not None]
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(found + ([rest] if rest else [])))}


def main(child: Callable[[dict, int], int]) -> None:
    """A child module's `if __name__ == "__main__"`: its arguments and pipe from the command line."""
    sys.exit(child(json.loads(sys.argv[1]), int(sys.argv[2])))
