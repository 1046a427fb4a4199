"""`python:module:Class`: a consumer class in this process, fed over the testee protocol.

The class is constructed with no arguments; `handle(message: dict) -> Iterable[dict]` receives
every suite line as a dict (a record's key, value and header values as bytes, not base64) and
returns the lines it answers, which the session reads as it reads a program's stdout (written to
the log file the same way, as JSON). A stop drops the object after its input ends; a crash drops it
at once, so only what it kept in `state_dir` survives into the next object. `handle` runs in a
worker thread, so one that never returns is a timeout like a program's, not a hung suite; an
exception it raises is a consumer error, its traceback in the log file.
"""
from __future__ import annotations

import importlib
import queue
import threading
import time
import traceback
from collections import deque
from pathlib import Path
from typing import IO, Any, Callable, Optional

import orjson

from ticdc_conformance.protocols.common import exact_json

from .interface import Capabilities, ConsumerAdapter, ConsumerRun, RunOptions, Stream
from .session import run_session
from .session_endpoint import AnswerTimeout, Endpoint, Launcher, SessionError


def _describe(message: dict) -> str:
    if message.get("type") == "record":
        return f"the record {message['topic']}/{message['partition']}@{message['offset']}"
    if "id" in message:
        return f"the {message['type']} request id {message['id']}"
    return f"the {message.get('type')} line"


class ObjectEndpoint(Endpoint):
    def __init__(self, factory: Callable[[], Any], spec: str, log: Path, start: int) -> None:
        self.log, self.spec = log, spec
        self._log: IO[bytes] = open(log, "ab", buffering=0)
        self._log.write(f"== ticdc-conformance: start {start + 1} of {spec} ==\n".encode())
        try:
            self.obj = factory()
        except Exception as e:
            self._failed(f"constructing it raised {type(e).__name__}: {e}")
        self._lines: deque[tuple[int, bytes]] = deque()
        self._n = 0
        self._tasks: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="consumer-handle", daemon=True)
        self._worker.start()

    def _failed(self, what: str) -> None:
        self._log.write(traceback.format_exc().encode())
        self._log.close()
        raise SessionError(f"consumer {self.spec!r}: {what}; its output: {self.log}") from None

    def _work(self) -> None:
        """Runs handle() on each task's messages; puts (answers, None) or (None, failure) in its box."""
        while True:
            task = self._tasks.get()
            if task is None:
                return
            messages, box = task
            answers: list[bytes] = []
            for message in messages:
                try:
                    for answer in self.obj.handle(message) or ():
                        answers.append(exact_json.dumps(answer))  # a Decimal as a number with its digits
                except orjson.JSONEncodeError as e:
                    box.put((None, f"handle() answered {_describe(message)} with a line that is not JSON: {e}",
                             traceback.format_exc()))
                    return
                except Exception as e:
                    box.put((None, f"handle() raised {type(e).__name__} on {_describe(message)}: {e}",
                             traceback.format_exc()))
                    return
            box.put((answers, None, None))

    def send(self, messages: list[dict], deadline: float) -> None:
        if self.obj is None:
            raise SessionError(f"consumer {self.spec!r} was dropped; its output: {self.log}")
        box: queue.Queue = queue.Queue(1)
        self._tasks.put((messages, box))
        try:
            answers, failure, trace = box.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AnswerTimeout("handle() did not return before the deadline") from None
        for raw in answers or ():
            self._n += 1
            self._log.write(raw + b"\n")
            self._lines.append((self._n, raw))
        if failure is not None:
            self._log.write(trace.encode())
            self.obj = None
            raise SessionError(f"consumer {self.spec!r}: {failure}; its output: {self.log}")

    def read(self, deadline: float) -> Optional[tuple[int, bytes]]:
        return self._lines.popleft() if self._lines else None

    def ended_output(self) -> str:
        return "handle() returned without it"

    def close_input(self) -> None:
        pass

    def wait(self, deadline: float) -> Optional[str]:
        self.kill()
        return None

    def kill(self) -> None:
        """Drops the object; a worker still inside handle() is left to its fate (a daemon thread)."""
        self.obj = None
        self._tasks.put(None)
        if not self._log.closed:
            self._log.close()


class ClassLauncher(Launcher):
    def __init__(self, target: str) -> None:
        module, sep, name = target.partition(":")
        if not sep or not module or not name:
            raise ValueError(f"python:{target}: expected python:MODULE:CLASS")
        self.spec = f"python:{target}"
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"python:{target}: cannot import {name} from {module}: {e}") from None
        if not callable(getattr(cls, "handle", None)):
            raise ValueError(f"python:{target}: {name} has no handle(message) method")
        self.cls = cls

    def start(self, log: Path, start: int) -> Endpoint:
        return ObjectEndpoint(self.cls, self.spec, log, start)


class PythonClassConsumer(ConsumerAdapter):
    """A class fed over the testee protocol in this process; like a program, it declares restarts
    and late join in its ready line."""

    capabilities = Capabilities(applied_log=True, states=True, schedules=True)

    def __init__(self, rest: str, spark: Any = None, master: Optional[str] = None) -> None:
        self.launcher = ClassLauncher(rest)
        self.spec = self.launcher.spec

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        return run_session(self.launcher, stream, out, options)
