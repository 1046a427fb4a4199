import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The project's shared/ folder (specifications, real TiCDC artifacts) stands beside the checkout.
SHARED = next((p for p in (ROOT.parent / "shared", Path("/work/shared")) if p.exists()), ROOT.parent / "shared")
CLI = [sys.executable, "-m", "ticdc_conformance"]
# pytest's own plugin tester (tests/pytest_plugin/); pytest reads pytest_plugins only in the top conftest.
pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def spark():
    from ticdc_conformance.consumers.spark.job import spark_session
    session = spark_session()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def built_distributions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`python -m build` of the checkout, once a session: the sdist, then the wheel built from that
    sdist (so a file the sdist leaves out is missing from the wheel too)."""
    import subprocess

    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"python -m build exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture
def no_process_left():
    """Fails the test if it leaves a process running that was not there before it (the child
    processes of generate and check end with the step that started them, however it ends)."""
    from tests.helpers.processes import live_children

    before = live_children()
    yield
    assert live_children() - before == set(), "a child process outlived the test"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
# Short-lived JVMs compile with the quick compiler only (tests/spark-conf/spark-defaults.conf says why).
os.environ.setdefault("SPARK_CONF_DIR", str(ROOT / "tests" / "spark-conf"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Regenerate golden/ (atomically, as `ticdc-conformance golden --update`) before the tests run.")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not session.config.getoption("--update-golden"):
        return
    from ticdc_conformance.golden.corpus import render_changes, update

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in render_changes(update(ROOT / "golden")):
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)
