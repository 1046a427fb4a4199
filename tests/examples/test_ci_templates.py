"""The CI templates of examples/ci/ run as a downstream repository would run them: each template's
gate job is read from its YAML, its shell commands are joined into one bash script (with the
job's variables exported, and `set -eo pipefail` as both CI services run them), and the script is
run in a scratch copy of `examples/` with the wheel `python -m build` makes, installed into a fresh
virtual environment the way setup-python's interpreter would take it. The run must exit 0 (every
consumer conformant or failing only as examples/ci/expected-failures.txt says, no stale entry) and
leave the JUnit files and the HTML report the upload steps publish.

Steps only a CI service can run are skipped and listed in the test's output and its JUnit
properties (`skipped_steps`): GitHub's `uses:` actions (checkout, setup-python/go/java, the JUnit
view, upload-artifact), GitLab's `image:` and `before_script:` (the toolchain installation: this
machine has Python, Go and Java already) and `artifacts:`.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.examples.test_go_consumer import go_tool

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed: the `test` extra needs pyyaml to read the CI "
                                          "templates (pip install pyyaml)")

pytestmark = pytest.mark.slow
CI = ROOT / "examples" / "ci"
PACKAGE_VARIABLE = "TICDC_CONFORMANCE_PACKAGE"  # what the templates `pip install`
GATE_RUNS = 4  # run commands per template: the Go, Java and Python consumers on smoke, Python on ddl-evolution


def github_gate(workflow: dict) -> tuple[dict[str, str], list[str], list[str]]:
    """The `gate` job of a GitHub Actions workflow: its environment, its `run:` commands in order and
    the steps skipped (the `uses:` actions)."""
    job = workflow["jobs"]["gate"]
    env = {**workflow.get("env", {}), **job.get("env", {})}
    commands, skipped = [], []
    for step in job["steps"]:
        if "uses" in step:
            skipped.append(f"uses: {step['uses']}" + (f" ({step['name']})" if "name" in step else ""))
            continue
        assert "${{" not in step["run"], f"step {step.get('name')}: an expression the script cannot evaluate"
        env.update(step.get("env", {}))
        commands.append(step["run"])
    return env, commands, skipped


def gitlab_gate(pipeline: dict) -> tuple[dict[str, str], list[str], list[str]]:
    """The `conformance` job of a GitLab CI pipeline: its variables, its `script:` lines and what is
    skipped (image, before_script, artifacts)."""
    job = pipeline["conformance"]
    env = {**pipeline.get("variables", {}), **job.get("variables", {})}
    skipped = [f"image: {job['image']}"] if "image" in job else []
    skipped += [f"before_script: {line}" for line in job.get("before_script", [])]
    skipped += [f"artifacts: {key}" for key in job.get("artifacts", {})]
    return env, list(job["script"]), skipped


TEMPLATES = {"github-actions.yml": github_gate, "gitlab-ci.yml": gitlab_gate}


def script_of(env: dict[str, str], commands: list[str]) -> str:
    exports = [f"export {name}={shlex.quote(str(value))}" for name, value in env.items()]
    return "\n".join(["set -eo pipefail", *exports, *commands]) + "\n"


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="session")
def wheel(built_distributions: dict[str, Path]) -> Path:
    return built_distributions["wheel"]  # tests/conftest.py: one build a session, shared with tests/packaging


@pytest.fixture(scope="module")
def ci_environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the skipped setup steps provide: a Python 3.11 of its own (a fresh virtual environment,
    first on PATH, nothing of this checkout importable), Go and Java with Maven."""
    go = go_tool()
    missing = [name for name, found in (("go", go), ("java", shutil.which("java")), ("mvn", shutil.which("mvn")))
               if found is None]
    if missing:
        pytest.skip(f"no {', '.join(missing)} on this machine: the templates build the Go and Java example consumers")
    venv = tmp_path_factory.mktemp("ci-python") / "venv"
    _ok(subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), str(Path(go).parent), env.get("PATH", "")])
    # No Go toolchain download and no module proxy (the Go example has no requirements).
    env.update(GOTOOLCHAIN="local", GOPROXY="off")
    return env


def scratch_repository(path: Path) -> Path:
    """A downstream repository's layout: the examples and the CI files, nothing built."""
    shutil.copytree(ROOT / "examples", path / "examples", ignore=shutil.ignore_patterns("target", "bin", "__pycache__"))
    return path


# CI runs the GitHub Actions template on every change; the GitLab one runs the same four gates after
# another set-up, so it runs in the nightly stage (CI's 30 minutes).
@pytest.mark.parametrize("template", [pytest.param(name, marks=[pytest.mark.nightly] if name == "gitlab-ci.yml" else [])
                                      for name in sorted(TEMPLATES)])
def test_template_gates_the_examples(template: str, wheel: Path, ci_environment: dict[str, str], tmp_path: Path,
                                     record_property) -> None:
    env, commands, skipped = TEMPLATES[template](yaml.safe_load((CI / template).read_text()))
    assert PACKAGE_VARIABLE in env, f"{template} no longer installs ${PACKAGE_VARIABLE}"
    env[PACKAGE_VARIABLE] = str(wheel)  # as a user points it at the wheel they committed
    print(f"{template}: skipped (only a CI service runs them): " + "; ".join(skipped))
    record_property("skipped_steps", "; ".join(skipped))

    repo = scratch_repository(tmp_path / "repo")
    script = repo / "gate.sh"
    script.write_text(script_of(env, commands))
    run_env = {**ci_environment, "CI": "true", "CI_PROJECT_DIR": str(repo)}
    proc = subprocess.run(["bash", str(script)], cwd=repo, env=run_env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{template}: exit {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"

    reports = repo / "reports"
    junit = sorted(reports.glob("*.junit.xml"))
    assert len(junit) == GATE_RUNS, (sorted(p.name for p in reports.iterdir()), proc.stdout[-3000:])
    assert sorted(reports.glob("*.html")), sorted(p.name for p in reports.iterdir())
    # The Python consumer's known gap is there, reported as expected (skipped), not as a failure.
    cases = [case for path in junit for case in ET.parse(path).getroot().iter("testcase")]
    assert not [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    expected = [c.get("name") for c in cases
                if c.find("skipped") is not None and "expected" in (c.find("skipped").get("message") or "")]
    assert sorted(expected) == ["ddl-evolution/open-protocol::CONSUMER-CHECKPOINT-1",
                                "ddl-evolution/open-protocol::CONSUMER-DDL-3"], expected
