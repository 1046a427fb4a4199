"""A watchdog over the Spark consumer's jobs on a local master: a stage that makes no progress for
a long time is named, its jobs are cancelled and the consumer fails with an error that says so,
instead of hanging until an outer timeout (or forever).

Why: once, at 1M records on `local[2]`, the admit stage stopped for good on an idle machine: its
Python worker blocked writing to its socket, the JVM task thread waiting on that same socket
(docs/performance.md, "A hang of the Spark consumer"). Spark has no timeout of its own for a task
that waits.

Progress is CPU time. Spark's own task metrics do not show it: a stage of Python functions spends
its time in the Python workers, whose CPU no metric counts, while its JVM task thread waits. On a
local master every part of the job is a process descended from the driver (the JVM, PySpark's
daemon and its workers), so the CPU time of that process tree tells a working stage from a stuck
one. A cluster's executors run elsewhere, so there the watchdog does not run.
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

import psutil

from ticdc_conformance.errors import ConsumerError

STALL_ENV = "TICDC_CONFORMANCE_SPARK_STALL_S"
STALL_SECONDS = 600.0  # no stage of a healthy run goes this long without using a CPU second
MIN_CPU_SECONDS = 1.0  # CPU time of the process tree that counts as progress


def stall_seconds() -> float:
    """The stall limit: $TICDC_CONFORMANCE_SPARK_STALL_S (0 turns the watchdog off), else 600."""
    text = os.environ.get(STALL_ENV)
    if text is None or text.strip() == "":
        return STALL_SECONDS
    try:
        value = float(text)
    except ValueError:
        raise ConsumerError(f"{STALL_ENV}={text!r} is no number of seconds") from None
    if value < 0:
        raise ConsumerError(f"{STALL_ENV}={text!r}: a stall limit cannot be negative")
    return value


def _tree_cpu_seconds(root: psutil.Process) -> float:
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # a worker that ended meanwhile
            continue
        total += t.user + t.system
    return total


class Stalled(ConsumerError):
    """A stage of the Spark consumer made no progress for the stall limit; its jobs were cancelled."""


@contextmanager
def watched(spark, stage: Callable[[], str], limit: Optional[float] = None, poll: float = 5.0) -> Iterator[None]:
    """Runs the block with a watchdog: when Spark has an active stage and the driver's process tree
    uses less than MIN_CPU_SECONDS of CPU for `limit` seconds (default: stall_seconds()), every job
    is cancelled and the block raises Stalled, naming `stage()` (the consumer's stage: decode,
    admit, replay, write) and Spark's active stages. Off on a master other than local."""
    limit = stall_seconds() if limit is None else limit
    sc = spark.sparkContext
    if limit <= 0 or not sc.master.startswith("local"):
        yield
        return
    tracker, root = sc.statusTracker(), psutil.Process()
    stop, fired = threading.Event(), []

    def watch() -> None:
        last_cpu, since = _tree_cpu_seconds(root), time.monotonic()
        while not stop.wait(poll):
            cpu, now = _tree_cpu_seconds(root), time.monotonic()
            active = tracker.getActiveStageIds()
            if cpu - last_cpu >= MIN_CPU_SECONDS or not active:
                last_cpu, since = cpu, now
                continue
            if now - since >= limit:
                infos = [tracker.getStageInfo(i) for i in active]
                named = ", ".join(f"stage {s.stageId} ({s.name}: {s.numCompletedTasks} of {s.numTasks} tasks done, "
                                  f"{s.numActiveTasks} running)" for s in infos if s is not None)
                fired.append(f"the Spark consumer's {stage()} stage made no progress for {now - since:.0f} s "
                             f"(under {MIN_CPU_SECONDS:g} CPU second in the driver's process tree) with Spark "
                             f"{named or 'stage(s) ' + str(list(active))} active; its jobs were cancelled "
                             f"(the limit is ${STALL_ENV}, {limit:g} s)")
                sc.cancelAllJobs()
                return

    thread = threading.Thread(target=watch, name="spark-stall-watchdog", daemon=True)
    thread.start()
    try:
        yield
    except Exception:
        if fired:
            raise Stalled(fired[0]) from None
        raise
    finally:
        stop.set()
        thread.join()
    if fired:  # the stage ended on its own as the jobs were cancelled: still no result to trust
        raise Stalled(fired[0])
