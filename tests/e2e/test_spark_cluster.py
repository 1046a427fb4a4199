"""The reference Spark consumer under spark-submit on a standalone cluster.

A master and two one-core workers on 127.0.0.1 are started from the PySpark installation: the
cluster of `bench pipeline --cluster` (ticdc_conformance/bench/cluster.py). The job is
`consumers/spark/job.py` itself, submitted unchanged with the project shipped as the
`ticdc-conformance py-files` zip; driver and executors run a Python that has the third-party
dependencies but not this project, so the zip is the only way the project's modules reach them.
Its output must equal the output of the in-process local[2] run. The cluster is always stopped.
A fast test without Spark checks the zip alone: deterministic, and enough to import the job.
"""
from __future__ import annotations

import os
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.bench.cluster import WORKERS, StandaloneCluster, spark_home
from ticdc_conformance.consumers.spark import job as spark_job
from ticdc_generators.pipeline import config_for, generate


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
                           capture_output=True, text=True, check=True, env=without_project_path(os.environ))
    assert probe.stdout.strip() == "hidden", "the project is importable without the zip"
    return python


def without_project_path(env) -> dict[str, str]:
    """`env` without PYTHONPATH, which may name a source tree of the project."""
    return {k: v for k, v in env.items() if k != "PYTHONPATH"}


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
                          env=dict(without_project_path(os.environ), PYTHONPATH=str(first)))
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
    # The JVM's start-up notes go to the scratch folder's log, not to the command's stderr.
    assert "Setting default log level" not in proc.stderr
    assert "Setting default log level" in (local / "work" / "spark.log").read_text()

    zip_path = tmp_path / "ticdc-conformance.zip"
    proc = subprocess.run(CLI + ["py-files", str(zip_path)], capture_output=True, text=True, check=True)
    python = python_without_project(tmp_path / "venv")
    env = dict(without_project_path(cluster.env), PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python))
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
        assert list((cluster.folder / f"worker-{i}").glob("app-*/*/stderr")), f"worker {i} ran no executor"
