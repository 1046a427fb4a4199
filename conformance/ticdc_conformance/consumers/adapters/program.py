"""A consumer under test run as a program (docs/consumer-protocol.md), under the suite's control.

It is started as `CMD --records DIR --manifest FILE --out DIR` and must write OUT/final/ and exit 0;
it declares what else it shows by what it writes (an applied log, states at checkpoints). The
`--consumer` string is split into argv by POSIX shell rules (shlex) and started without a
shell. The program runs in a process group of its own, so a timeout, or SIGINT/SIGTERM to the suite,
ends it together with every process it started; once it has exited, whatever it left running is
ended too, so nothing writes into its output while the suite reads it. Its stdout and stderr go to
one log file, which every error about it names.
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ticdc_conformance.errors import ConsumerError

from .interface import (
    Capabilities,
    ConsumerAdapter,
    ConsumerRun,
    RunOptions,
    Stream,
    shown_by_output,
)

LOG_FILE = "consumer.log"
KILL_GRACE_S = 5  # between SIGTERM and SIGKILL to the group: time to flush and exit cleanly
TAIL_LINES = 15
_TAIL_BYTES = 64 * 1024


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the suite. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way up swallows it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal_name(signum))


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise Interrupted in the main thread, so a running consumer's
    process group is ended before the suite exits (with 128 + the signal's number, as a shell reports
    a process a signal ended)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, _frame):
        raise Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def consumer_argv(command: str) -> list[str]:
    """The argv of a --consumer command; ValueError for one that cannot be split or is empty."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the consumer command is empty")
    return argv


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def end_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the whole group, KILL_GRACE_S for the leader to exit, then SIGKILL to whatever
    of the group is left (a child that ignores SIGTERM, or outlived its parent)."""
    signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def log_tail(log: Path, lines: int = TAIL_LINES) -> str:
    with open(log, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
        text = f.read().decode("utf-8", errors="replace")
    return "\n".join(text.strip().splitlines()[-lines:])


def run_consumer_program(command: str, args: list[str], log: Path, timeout_s: float) -> None:
    """Runs `command args…` to its end; raises ConsumerError if it cannot start, times out, or
    exits with anything but 0 (the message names the log file)."""
    argv = consumer_argv(command) + args
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as e:
            raise ConsumerError(f"consumer {command!r} could not be started: {e}") from None
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            end_group(proc)
            raise ConsumerError(f"consumer {command!r} did not finish within {timeout_s:g}s (--consumer-timeout); "
                                f"its process group was killed; its output: {log}") from None
        except BaseException:  # Interrupted, KeyboardInterrupt: the consumer must not outlive the suite
            end_group(proc)
            raise
        signal_group(proc.pid, signal.SIGKILL)  # what it left running must not write on while it is judged
    if returncode != 0:
        raise ConsumerError(f"consumer {command!r} {exit_problem(returncode, log)}")


def exit_problem(returncode: int, log: Path) -> str:
    """How a consumer that did not exit 0 ended, with the log file and its last lines."""
    how = f"was ended by {signal_name(-returncode)}" if returncode < 0 else f"exited with {returncode}"
    tail = log_tail(log)
    return f"{how}; its output: {log}" + (f"; last lines:\n{tail}" if tail else " (empty)")


class ProgramConsumer(ConsumerAdapter):
    """Any program behind docs/consumer-protocol.md. Its output may show an applied log and states;
    which of them one run shows, it declares by writing them (interface.shown_by_output)."""

    capabilities = Capabilities(applied_log=True, states=True)

    def __init__(self, command: str) -> None:
        self.argv = consumer_argv(command)  # ValueError now, not when the first encoding runs
        self.spec = command

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        log = stream.folder / LOG_FILE
        args = ["--records", str(stream.records), "--manifest", str(stream.manifest_path), "--out", str(out)]
        try:
            run_consumer_program(self.spec, args, log, options.timeout_s)
        except ConsumerError as e:
            return ConsumerRun(self.spec, out, shown_by_output(out), log=log, error=str(e))
        return ConsumerRun(self.spec, out, shown_by_output(out), log=log)
