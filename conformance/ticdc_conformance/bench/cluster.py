"""A Spark standalone cluster on 127.0.0.1 for `bench pipeline --cluster`: a master and two one-core
workers with 1 GiB each (`spark-class` of the PySpark installation, what sbin/start-*.sh run); the
spark-submit test (tests/e2e/test_spark_cluster.py) starts the same one.

The consumer then runs in the same child process as on `local[N]` (consume.py), with the cluster's
URL as its master: the driver is that child, the executors are the workers' JVMs, whose Python
workers run this interpreter (PYSPARK_PYTHON), which has the project installed. The cluster is
always stopped, its processes in sessions of their own so that a worker's executors stop with it.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

START_TIMEOUT_S = 180
WORKERS = 2
_MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
_REGISTERED = "Successfully registered with master"


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


class StandaloneCluster:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        # Nothing from a Spark session of the calling process (a gateway port would make a child
        # attach to the wrong JVM) but the configuration folder the caller chose; the executors'
        # Python workers run this interpreter.
        self.env = {k: v for k, v in os.environ.items()
                    if k == "SPARK_CONF_DIR" or not k.startswith(("PYSPARK_", "SPARK_"))}
        self.env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                        SPARK_LOG_DIR=str(folder / "logs"), PYSPARK_PYTHON=sys.executable)
        self.procs: list[subprocess.Popen] = []
        self.url = ""

    def _spawn(self, name: str, args: list[str]) -> Path:
        log = self.folder / f"{name}.log"
        with open(log, "wb") as f:
            self.procs.append(subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=self.env,
                                               stdout=f, stderr=subprocess.STDOUT, start_new_session=True))
        return log

    def _wait_for(self, log: Path, pattern: re.Pattern | str) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            found = pattern.search(text) if isinstance(pattern, re.Pattern) else (pattern in text and pattern)
            if found:
                return found.group(1) if isinstance(found, re.Match) else found
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"a process of the standalone cluster exited early; whole log in {log}")
            time.sleep(0.5)
        raise RuntimeError(f"the standalone cluster did not start within {START_TIMEOUT_S} s "
                           f"(no {pattern if isinstance(pattern, str) else pattern.pattern!r}); whole log in {log}")

    def __enter__(self) -> "StandaloneCluster":
        self.start()
        return self

    def start(self) -> str:
        """Starts the master and the workers; the master's URL. What fails to start is stopped."""
        try:
            master = self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                            "--port", "0", "--webui-port", "0"])
            self.url = self._wait_for(master, _MASTER_URL)
            for i in range(WORKERS):
                log = self._spawn(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                                  "--port", "0", "--webui-port", "0", "--cores", "1", "--memory",
                                                  "1g", "--work-dir", str(self.folder / f"worker-{i}"), self.url])
                self._wait_for(log, _REGISTERED)
        except BaseException:
            self.stop()
            raise
        return self.url

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for proc in reversed(self.procs):  # workers (and their executors) first, then the master
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
