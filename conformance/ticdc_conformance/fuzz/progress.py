"""Progress of a fuzz run: a rich progress bar on a terminal, otherwise a plain line at least
every 30 seconds (CI logs), so a long budget never looks hung."""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

LINE_EVERY_S = 30.0


class Progress:
    """`start` an encoding, `tick` after every example, `stop` at its end."""

    def __init__(self, stream: Optional[TextIO] = None, terminal: Optional[bool] = None,
                 every_s: float = LINE_EVERY_S) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.every_s = every_s
        self._bar = None
        self._task = None
        self._label = ""
        self._started = 0.0
        self._last_line = 0.0
        self._seconds: Optional[float] = None

    def start(self, label: str, seconds: Optional[float], examples: Optional[int]) -> None:
        self._label, self._seconds = label, seconds
        self._started = self._last_line = time.monotonic()
        if self.terminal:
            from rich.console import Console
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                            TimeElapsedColumn(), console=Console(file=self.stream), transient=False)
            total = seconds if seconds is not None else examples
            self._task = self._bar.add_task(label, total=total, status="starting")
            self._bar.start()
        else:
            self._line(f"fuzz {label}: started")

    def tick(self, examples: int, failures: int, phase: str, not_applicable: int = 0) -> None:
        now = time.monotonic()
        elapsed = now - self._started
        status = f"{examples} examples, {failures} failing" + (f", {not_applicable} not applicable"
                                                               if not_applicable else "") + f", {phase}"
        if self._bar is not None:
            done = min(elapsed, self._seconds) if self._seconds is not None else examples
            self._bar.update(self._task, completed=done, status=status)
        elif now - self._last_line >= self.every_s:
            self._last_line = now
            budget = f" of {self._seconds:g}s" if self._seconds is not None else ""
            self._line(f"fuzz {self._label}: {status}, {elapsed:.0f}s{budget}")

    def stop(self, summary: str) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._line(f"fuzz {self._label}: {summary}")

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
