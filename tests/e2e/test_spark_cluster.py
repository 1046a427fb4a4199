"""The reference Spark consumer under spark-submit on a standalone cluster.

A master and two one-core workers on 127.0.0.1 are started from the PySpark installation
(`spark-class org.apache.spark.deploy.master.Master` / `...worker.Worker`, what sbin/start-*.sh
run). The job is `consumers/spark/job.py` itself, submitted unchanged with the project shipped as
the `ticdc-conformance py-files` zip; driver and executors run a Python that has the third-party
dependencies but not this project, so the zip is the only way the project's modules reach them.
Its output must equal the output of the in-process local[2] run. The cluster is always stopped.
A fast test without Spark checks the zip alone: deterministic, and enough to import the job.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sysconfig
import time
import venv
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.consumers.spark import job as spark_job
from ticdc_generators.pipeline import config_for, generate

START_TIMEOUT_S = 180
WORKERS = 2
MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
REGISTERED = "Successfully registered with master"


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def daemon_env(tmp: Path) -> dict[str, str]:
    """The environment of the cluster's processes: nothing inherited from a Spark session of this
    test run (a gateway port would make spark-submit's Python attach to the wrong JVM)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
               SPARK_LOG_DIR=str(tmp / "logs"))
    return env


def python_without_project(target: Path) -> Path:
    """A virtual environment that sees this one's site-packages through a plain path entry, so its
    third-party packages import but the editable install of this project (a .pth hook, which only
    site directories run) does not."""
    venv.EnvBuilder(with_pip=False).create(target)
    site = Path(sysconfig.get_paths(vars={"base": str(target), "platbase": str(target)})["purelib"])
    site.mkdir(parents=True, exist_ok=True)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = target / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import pyarrow, orjson, fastavro, pyspark\n"
                            "try:\n import ticdc_conformance\nexcept ImportError:\n print('hidden')"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "hidden", "the project is importable without the zip"
    return python


class StandaloneCluster:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = daemon_env(tmp)
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.url = ""

    def _spawn(self, name: str, args: list[str]) -> Path:
        log = self.tmp / f"{name}.log"
        with open(log, "wb") as f:
            # A session of its own: stopping the group also stops the executors a worker started.
            self.procs.append(subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=self.env,
                                               stdout=f, stderr=subprocess.STDOUT, start_new_session=True))
        self.logs.append(log)
        return log

    def _wait_for(self, log: Path, pattern: re.Pattern | str) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            found = pattern.search(text) if isinstance(pattern, re.Pattern) else (pattern in text and pattern)
            if found:
                return found.group(1) if isinstance(found, re.Match) else found
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"a cluster process exited early; {log}:\n{text[-3000:]}")
            time.sleep(0.5)
        raise TimeoutError(f"no {pattern!r} in {log} after {START_TIMEOUT_S} s")

    def start(self) -> str:
        master_log = self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                            "--port", "0", "--webui-port", "0"])
        self.url = self._wait_for(master_log, MASTER_URL)
        for i in range(WORKERS):
            work_dir = self.tmp / f"worker-{i}"
            log = self._spawn(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                               "--port", "0", "--webui-port", "0", "--cores", "1", "--memory", "1g",
                                               "--work-dir", str(work_dir), self.url])
            self._wait_for(log, REGISTERED)
        return self.url

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_py_files_zip_is_all_the_project_the_job_needs(tmp_path):
    first, second = tmp_path / "a.zip", tmp_path / "b.zip"
    for target in (first, second):
        proc = subprocess.run(CLI + ["py-files", str(target)], capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
    assert first.read_bytes() == second.read_bytes()  # the same tree gives the same zip
    assert f"--py-files {second} " in proc.stdout and str(Path(spark_job.__file__).resolve()) in proc.stdout
    python = python_without_project(tmp_path / "venv")
    probe = ("import ticdc_conformance.consumers.spark.job as job, ticdc_conformance.protocols as p\n"
             "for name in ('open-protocol', 'canal-json', 'debezium', 'simple'): p.protocol(name)\n"
             "print(job.__file__)")
    proc = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(first)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{first}/ticdc_conformance/consumers/spark/job.py"


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_spark_submit_on_a_standalone_cluster_equals_local_run(cluster, tmp_path):
    data = tmp_path / "smoke"
    generate("smoke", 1, config_for("smoke", "simple-avro"), data)
    local = tmp_path / "local"
    proc = subprocess.run(CLI + ["consume", "--records", str(data / "records"), "--out", str(local),
                                 "--master", "local[2]"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]

    zip_path = tmp_path / "ticdc-conformance.zip"
    proc = subprocess.run(CLI + ["py-files", str(zip_path)], capture_output=True, text=True, check=True)
    python = python_without_project(tmp_path / "venv")
    env = dict(cluster.env, PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python))
    remote = tmp_path / "cluster"
    submit = [str(spark_home() / "bin" / "spark-submit"), "--master", cluster.url, "--py-files", str(zip_path),
              "--driver-memory", "512m", "--executor-memory", "512m", "--total-executor-cores", str(WORKERS),
              "--conf", "spark.executor.cores=1", str(Path(spark_job.__file__).resolve()),
              "--records", str(data / "records"), "--out", str(remote)]
    proc = subprocess.run(submit, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-6000:]

    assert _tree(remote / "final") == _tree(local / "final")
    assert _tree(remote / "states") == _tree(local / "states")
    for name in ("consumer.json", "applied.ndjson"):
        assert (remote / name).read_bytes() == (local / name).read_bytes(), name
    assert len(_tree(local / "final")) >= 2
    # Both workers ran executors of the application (each keeps a folder per executor it started).
    for i in range(WORKERS):
        assert list((cluster.tmp / f"worker-{i}").glob("app-*/*/stderr")), f"worker {i} ran no executor"
