"""One start of a consumer under test as the session sees it: lines go in, lines come out.

A `Launcher` (the adapter: a program for `cmd:`, a Python class for `python:`) starts an
`Endpoint`; the session (session.py) writes suite lines to it and reads the consumer's lines from
it, each wait bounded by a deadline, and ends it by closing its input (a stop) or killing it (a
crash). What the consumer writes goes to the run's log file as it comes, so every error can name it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Optional

from ticdc_conformance.errors import ConsumerError


class SessionError(ConsumerError):
    """The consumer broke the testee protocol or its session could not go on; the message names
    the line, the request waited for and the log file."""


class AnswerTimeout(SessionError):
    """Nothing came (or nothing could be written) before the deadline."""


class Endpoint(ABC):
    """One start of the consumer."""

    log: Path

    @abstractmethod
    def send(self, messages: list[dict], deadline: float) -> None:
        """Writes suite lines (dicts; a record's bytes as bytes) in order. AnswerTimeout when the
        consumer takes none of them before `deadline` (time.monotonic()); SessionError when it
        failed on one."""

    @abstractmethod
    def read(self, deadline: float) -> Optional[tuple[int, bytes]]:
        """The consumer's next line (its number in this start's output, from 1, and its bytes),
        or None when its output ended; AnswerTimeout when none came before `deadline`."""

    @abstractmethod
    def ended_output(self) -> str:
        """Why `read` gave None, in words for an error ("stdout was closed", …)."""

    @abstractmethod
    def close_input(self) -> None:
        """The consumer's input ends (stdin closed): it should finish and exit."""

    @abstractmethod
    def wait(self, deadline: float) -> Optional[str]:
        """Waits for the end after close_input: None when it ended well (exit 0), else why not
        (its exit status, or that it did not end in time: then it is killed)."""

    @abstractmethod
    def kill(self) -> None:
        """Ends it at once, without warning (a crash; also every way out of a failed session)."""


class Launcher(ABC):
    """What starts the consumer; `spec` names it in errors."""

    spec: str

    @abstractmethod
    def start(self, log: Path, start: int) -> Endpoint:
        """Starts it (the `start`-th time in this run, from 0), its output appended to `log`;
        SessionError when it cannot be started."""
