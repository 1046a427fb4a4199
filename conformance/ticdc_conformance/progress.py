"""Progress of a long command (`run`, `check`, `fuzz`): a rich progress bar on a terminal, otherwise
plain lines to stderr, so a CI log never stays silent longer than the interval, however long one step
(a consumer's run, a Spark job) takes.

On a non-terminal a line is printed at each announced step (`update(..., announce=True)`: a run's
phases) and, in between, from a background thread whenever the interval has passed since the last
line: `COMMAND LABEL: STATUS, ELAPSEDs[ of BUDGETs]`. The interval is 30 s, or what the environment
variable TICDC_PROGRESS_EVERY_S says (seconds, > 0; docs/errors.md).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Optional, TextIO

LINE_EVERY_S = 30.0
EVERY_ENV = "TICDC_PROGRESS_EVERY_S"


class ProgressSettingError(ValueError):
    """TICDC_PROGRESS_EVERY_S holds something that is not a number of seconds."""


def line_every_s() -> float:
    """The interval between progress lines on a non-terminal: $TICDC_PROGRESS_EVERY_S, else 30 s."""
    text = os.environ.get(EVERY_ENV, "").strip()
    if not text:
        return LINE_EVERY_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ProgressSettingError(f"{EVERY_ENV}={text!r}: expected a number of seconds greater than 0 "
                                   f"(the interval between progress lines in a log; default {LINE_EVERY_S:g})")
    return value


class Progress:
    """`start` a task, `update` its status as it goes, `stop` it with a summary line."""

    def __init__(self, command: str, stream: Optional[TextIO] = None, terminal: Optional[bool] = None,
                 every_s: Optional[float] = None) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _isatty(self.stream) if terminal is None else terminal
        self.every_s = line_every_s() if every_s is None else every_s
        self._lock = threading.Lock()
        self._bar = None
        self._task = None
        self._label = ""
        self._status = ""
        self._budget_s: Optional[float] = None
        self._started = 0.0
        self._last_line = 0.0
        self._stopping: Optional[threading.Event] = None
        self._beat: Optional[threading.Thread] = None

    def start(self, label: str, total: Optional[float] = None, budget_s: Optional[float] = None,
              status: str = "started") -> None:
        """A new task: `total` steps for the bar (None: no end known), `budget_s` a time budget the
        lines show."""
        self._label, self._status, self._budget_s = label, status, budget_s
        self._started = self._last_line = time.monotonic()
        if self.terminal:
            from rich.console import Console
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                            TimeElapsedColumn(), console=Console(file=self.stream), transient=False)
            self._task = self._bar.add_task(label, total=total, status=status)
            self._bar.start()
            return
        self._line(f"{self.command} {label}: {status}")
        if self.every_s > 0:  # 0: a line at every update, nothing in between
            self._stopping = threading.Event()
            self._beat = threading.Thread(target=self._heartbeat, name="progress-lines", daemon=True)
            self._beat.start()

    def update(self, status: str, completed: Optional[float] = None, announce: bool = False) -> None:
        """The task's status now; `completed` steps for the bar; `announce` prints a line at once on
        a non-terminal (a new phase), else one is printed when the interval has passed."""
        with self._lock:
            self._status = status
        if self._bar is not None:
            fields = {"completed": completed} if completed is not None else {}
            self._bar.update(self._task, status=status, **fields)
        elif announce or time.monotonic() - self._last_line >= self.every_s:
            self._status_line()

    def stop(self, summary: str) -> None:
        """Ends the task with a line of its summary."""
        if self._stopping is not None:
            self._stopping.set()
            self._beat.join()
            self._stopping = self._beat = None
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._line(f"{self.command} {self._label}: {summary}")

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _heartbeat(self) -> None:
        while True:
            with self._lock:
                wait = self._last_line + self.every_s - time.monotonic()
            if self._stopping.wait(max(wait, 0.0)):
                return
            with self._lock:
                due = time.monotonic() - self._last_line >= self.every_s
            if due:
                self._status_line()

    def _status_line(self) -> None:
        budget = f" of {self._budget_s:g}s" if self._budget_s is not None else ""
        with self._lock:
            status = self._status
        self._line(f"{self.command} {self._label}: {status}, {self.elapsed():.0f}s{budget}")

    def _line(self, text: str) -> None:
        with self._lock:
            self._last_line = time.monotonic()
            print(text, file=self.stream, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or wrapped stream
        return False
