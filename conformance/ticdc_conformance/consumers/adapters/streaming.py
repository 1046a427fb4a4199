"""`cmd:CMD`: a program that speaks the testee protocol (docs/testee-protocol.md) on stdin/stdout.

CMD is split into argv by POSIX shell rules and started without a shell, in a process group of its
own, as program.py starts a record-file consumer (the same process-group handling: a crash or a
timeout kills the whole group, and so does an interrupt of the suite). A writer thread feeds its
stdin from a bounded queue and a reader thread drains its stdout into the log file and a queue, so
neither side's pipe can fill up and block the other; the session waits on the queue with a deadline.
stderr goes straight to the same log file.
"""
from __future__ import annotations

import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any, Optional

from .interface import Capabilities, ConsumerAdapter, ConsumerRun, RunOptions, Stream
from .program import consumer_argv, end_group, exit_problem, signal_group
from .session import run_session
from .session_endpoint import AnswerTimeout, Endpoint, Launcher, SessionError
from .session_wire import wire

WRITE_QUEUE = 64  # chunks (a poll's records, a request) waiting for the consumer's stdin
_END = None


class ProcessEndpoint(Endpoint):
    def __init__(self, argv: list[str], spec: str, log: Path, start: int) -> None:
        self.log, self.spec = log, spec
        self._log: IO[bytes] = open(log, "ab", buffering=0)  # appends whole lines, beside stderr
        self._log.write(f"== ticdc-conformance: start {start + 1} of {spec} ==\n".encode())
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                         start_new_session=True)
        except OSError as e:
            self._log.close()
            raise SessionError(f"consumer {spec!r} could not be started: {e}; its output: {log}") from None
        self._lines: queue.Queue = queue.Queue()
        self._chunks: queue.Queue = queue.Queue(WRITE_QUEUE)
        self.write_error: Optional[str] = None
        self._reader = threading.Thread(target=self._read_stdout, name="consumer-stdout", daemon=True)
        self._writer = threading.Thread(target=self._write_stdin, name="consumer-stdin", daemon=True)
        self._reader.start()
        self._writer.start()
        self._closed = False

    def _read_stdout(self) -> None:
        n = 0
        for raw in self.proc.stdout:
            n += 1
            if not self._log.closed:  # closed once the session is done with this start
                self._log.write(raw if raw.endswith(b"\n") else raw + b"\n")
            self._lines.put((n, raw))
        self._lines.put(_END)

    def _write_stdin(self) -> None:
        stdin = self.proc.stdin
        while True:
            chunk = self._chunks.get()
            if chunk is _END:
                break
            try:
                stdin.write(chunk)
                stdin.flush()
            except (BrokenPipeError, OSError) as e:
                self.write_error = str(e)
                break
        try:
            stdin.close()
        except OSError:
            pass

    def send(self, messages: list[dict], deadline: float) -> None:
        chunk = b"".join(wire(m) for m in messages)
        try:
            self._chunks.put(chunk, timeout=max(0.0, deadline - time.monotonic()))
        except queue.Full:
            raise AnswerTimeout("the consumer took no input before the deadline") from None

    def read(self, deadline: float) -> Optional[tuple[int, bytes]]:
        try:
            got = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AnswerTimeout("no line before the deadline") from None
        if got is _END:
            self._lines.put(_END)  # every later read sees the end too
        return got

    def ended_output(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "it closed its stdout"
        return f"it {exit_problem(code, self.log)}"

    def close_input(self) -> None:
        if not self._closed:
            self._closed = True
            self._chunks.put(_END)

    def wait(self, deadline: float) -> Optional[str]:
        try:
            code = self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            end_group(self.proc)
            self._done()
            return "it did not exit within --consumer-timeout after its stdin was closed; its process group was killed"
        signal_group(self.proc.pid, signal.SIGKILL)  # what it left running must not write on while it is judged
        self._done()
        return None if code == 0 else f"after its stdin was closed it {exit_problem(code, self.log)}"

    def kill(self) -> None:
        signal_group(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._done()

    def _done(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._chunks.put_nowait(_END)
            except queue.Full:
                pass
        self._reader.join(timeout=5)
        self._log.close()


class ProgramLauncher(Launcher):
    def __init__(self, command: str) -> None:
        self.argv = consumer_argv(command)
        self.spec = f"cmd:{command}"

    def start(self, log: Path, start: int) -> Endpoint:
        return ProcessEndpoint(self.argv, self.spec, log, start)


class StreamingProgram(ConsumerAdapter):
    """A program fed over the testee protocol; what it supports beyond the plain session (restarts,
    late join) it declares in its ready line, so the adapter promises only what every fed consumer
    shows: an applied log and states at the checkpoints the session asked for."""

    capabilities = Capabilities(applied_log=True, states=True, schedules=True)

    def __init__(self, rest: str, spark: Any = None, master: Optional[str] = None) -> None:
        self.launcher = ProgramLauncher(rest)  # ValueError now for a command that cannot be split
        self.spec = self.launcher.spec

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        return run_session(self.launcher, stream, out, options)
