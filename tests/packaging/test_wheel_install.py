"""The package as a downstream team installs it (issue 20, README "Gate your consumer"): `python -m
build` gives a wheel and an sdist; the wheel carries every data file the packages hold; installed
into a fresh virtual environment WITHOUT extras (no PySpark, no Java) it gates a consumer program
end to end: a correct one exits 0, a broken one 1 with its finding, the default Spark consumer is
refused in one line naming the `[spark]` extra (2), and the pytest plugin is registered.

One build and one install serve the whole module (each takes tens of seconds; pip fetches the
dependencies from the package index)."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = (ROOT / "conformance", ROOT / "generators")
SCENARIO = ["--scenario", "smoke", "--protocol", "canal-json"]
# A record-file program (docs/consumer-protocol.md) built on the installed package's sequential
# consumer that never applies a DELETE: the verdict must name what it got wrong.
BROKEN_CONSUMER = '''
import argparse, json
from pathlib import Path
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer, consume_local

class IgnoresDeletes(LocalConsumer):
    def apply_rows(self, commit_ts, events):
        kept = [dict(ev, before=None) for ev in events if ev["op"] != "delete"]
        if kept:
            super().apply_rows(commit_ts, kept)

ap = argparse.ArgumentParser()
for name in ("--records", "--manifest", "--out"):
    ap.add_argument(name, required=True, type=Path)
a = ap.parse_args()
consume_local(a.records, json.loads(a.manifest.read_text()), a.out, IgnoresDeletes)
'''

pytestmark = pytest.mark.slow


def _run(argv: list, env: dict | None = None, cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def distributions(built_distributions) -> dict[str, Path]:
    return built_distributions  # tests/conftest.py: one build a session, shared with tests/examples


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory, distributions) -> dict[str, str]:
    """A fresh virtual environment holding the wheel without extras; the environment to run its
    commands in (its bin first on PATH, nothing of this checkout importable)."""
    venv = tmp_path_factory.mktemp("venv") / "base"
    _ok(_run([sys.executable, "-m", "venv", venv]))
    _ok(_run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
              distributions["wheel"]]))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_wheel_carries_every_data_file(distributions):
    names = set(zipfile.ZipFile(distributions["wheel"]).namelist())
    data = sorted(p.relative_to(base).as_posix() for base in PACKAGE_ROOTS for p in base.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
                  and ".egg-info" not in p.as_posix())
    assert any(name.startswith("ticdc_conformance/rules/catalogue/") for name in data), data
    assert [name for name in data if name not in names] == []
    # The project's own tests, docs and golden corpus stay out of the wheel.
    assert not [name for name in names if name.split("/")[0] in ("tests", "docs", "golden", "examples")]


def test_base_install_gates_a_consumer(base_venv, tmp_path):
    env = base_venv
    probe = _run(["python", "-c", "import importlib.util as u; print(u.find_spec('pyspark'), u.find_spec('pandas'))"],
                 env=env, cwd=tmp_path)
    assert _ok(probe).stdout.split() == ["None", "None"], "the base install must not bring PySpark or pandas"

    # The reference streaming consumer (a correct consumer) fed by the installed CLI over `cmd:`.
    good = _run(["ticdc-conformance", "run", *SCENARIO, "--consumer",
                 "cmd:python -m ticdc_conformance.consumers.streaming", "--work", tmp_path / "good"],
                env=env, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "conformant" in good.stdout

    (tmp_path / "ignores_deletes.py").write_text(BROKEN_CONSUMER)
    bad = _run(["ticdc-conformance", "run", *SCENARIO, "--consumer", "python ignores_deletes.py",
                "--work", tmp_path / "bad"], env=env, cwd=tmp_path)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "the DELETE was not applied" in bad.stdout and "replay: ticdc-conformance run" in bad.stdout

    # run's default consumer is the reference Spark consumer: refused in words, not a traceback.
    spark = _run(["ticdc-conformance", "run", *SCENARIO, "--work", tmp_path / "spark"], env=env, cwd=tmp_path)
    assert spark.returncode == 2, spark.stdout + spark.stderr
    assert "pip install 'ticdc-conformance[spark]'" in spark.stderr and "Traceback" not in spark.stderr

    # The pytest plugin comes with the package (entry point pytest11), once pytest is there.
    _ok(_run(["python", "-m", "pip", "install", "-q", "--disable-pip-version-check", "pytest"], env=env, cwd=tmp_path))
    assert "--ticdc-consumer" in _ok(_run(["pytest", "--help"], env=env, cwd=tmp_path)).stdout
