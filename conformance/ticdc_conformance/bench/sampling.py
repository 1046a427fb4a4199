"""Peak resident memory and CPU time of a Spark driver's process tree, sampled with psutil.

A PySpark driver is a Python process whose JVM is its child (launched through spark-submit, which
execs java); in local mode the JVM also runs the executor, whose Python workers (the pyspark
daemon and its forks) are the JVM's children. `ru_maxrss` of the Python process would miss the
JVM entirely, so the tree is sampled from outside and each role's peak is kept separately:
- python: the driver's Python process itself;
- jvm: every java process under it (the driver JVM; in local mode also the executor), but not a
  JVM's fork caught before it execs, which reports its parent's RSS again;
- workers: the sum over the Python worker processes under the JVM (executor side);
- total: the sum over the whole tree at one instant.
It also adds up the CPU time (user + system) the tree used, as last seen of each process: unlike
elapsed time, that does not grow when other work shares the machine; and the machine's mean
1-minute load average over the run, which says how much other work there was. With `probe_every`
it also runs calibration.py's probe that often, on its own thread: how fast the machine ran
during the run.
Sampling misses peaks shorter than its interval (0.1 s by default); RSS counts pages shared
between forked workers once per process, so `workers` and `total` lean high.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, replace
from typing import Optional

import psutil

from .calibration import probe_seconds


@dataclass
class TreeFigures:
    python: int = 0
    jvm: int = 0
    workers: int = 0
    total: int = 0
    samples: int = 0
    cpu_seconds: float = 0.0
    load_sum: float = 0.0
    probe_sum: float = 0.0
    probes: int = 0

    @property
    def load_mean(self) -> float:
        return self.load_sum / max(1, self.samples)

    @property
    def calibration(self) -> Optional[float]:
        """The mean probe, in calibration.py's unit (seconds of its whole work), or None."""
        return self.probe_sum / self.probes if self.probes else None


def _is_java(proc: psutil.Process) -> bool:
    try:
        return proc.name() == "java" or proc.exe().endswith("/java")
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def _cpu(proc: psutil.Process) -> tuple[tuple[int, float], float] | None:
    """((pid, create time), CPU seconds): the create time keeps a reused pid apart."""
    try:
        t = proc.cpu_times()
        return (proc.pid, proc.create_time()), t.user + t.system
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _rss(proc: psutil.Process) -> int:
    try:
        return proc.memory_info().rss
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return 0


def _ppid(proc: psutil.Process) -> int:
    try:
        return proc.ppid()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return 0


def _role(pid: int, ppid: int, java: set[int]) -> str | None:
    """`jvm`, `workers`, or None for a process not to count: a java process whose parent is one.

    That is a JVM's fork caught before it execs its command (the JVM starts processes by fork or
    posix_spawn); it still shares the parent's pages, whose RSS it reports, so counting it would
    double the JVM's. Executors of a cluster run in JVMs of their own, not under the driver's."""
    if pid in java:
        return None if ppid in java else "jvm"
    return "workers"


class TreeSampler:
    """Samples a process and its descendants on a thread until stopped; use as a context manager."""

    def __init__(self, pid: int, interval: float = 0.1, probe_every: Optional[float] = None) -> None:
        self.root = psutil.Process(pid)
        self.interval = interval
        self.probe_every = probe_every
        self.tree = TreeFigures()
        self._cpu: dict[tuple[int, float], float] = {}  # (pid, create time) -> CPU seconds last seen
        self._stop = threading.Event()
        self._lock = threading.Lock()  # the thread's samples and a caller's snapshot take turns
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def snapshot(self) -> TreeFigures:
        """The figures up to now, with a sample taken at the call (not at the thread's next)."""
        with self._lock:
            self.sample()
            return replace(self.tree)

    def sample(self) -> None:
        python = _rss(self.root)
        jvm = workers = 0
        try:
            descendants = self.root.children(recursive=True)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            descendants = []
        java = {proc.pid for proc in descendants if _is_java(proc)}
        for proc in descendants:
            role = _role(proc.pid, _ppid(proc), java)
            if role == "jvm":
                jvm += _rss(proc)
            elif role == "workers":
                workers += _rss(proc)
        for proc in (self.root, *descendants):
            seen = _cpu(proc)
            if seen is not None:
                self._cpu[seen[0]] = seen[1]
        p = self.tree
        p.cpu_seconds = sum(self._cpu.values())
        p.python, p.jvm, p.workers = max(p.python, python), max(p.jvm, jvm), max(p.workers, workers)
        p.total = max(p.total, python + jvm + workers)
        p.load_sum += os.getloadavg()[0]
        p.samples += 1

    def _run(self) -> None:
        next_probe = time.monotonic()  # a probe at once: a step shorter than the period has one too
        while not self._stop.is_set():
            with self._lock:
                self.sample()
            if self.probe_every is not None and time.monotonic() >= next_probe:
                probe = probe_seconds()
                with self._lock:
                    self.tree.probe_sum += probe
                    self.tree.probes += 1
                next_probe = time.monotonic() + self.probe_every
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
