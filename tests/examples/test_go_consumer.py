"""The Go example consumer (examples/go-consumer/), written from the documents alone, held by the
suite as any consumer under test is: built with `go build`, plugged in as `cmd:BINARY` over the
streaming testee protocol (docs/testee-protocol.md), and run with `run` on every scenario it
applies to, under several delivery schedules, restarts included.

Exit codes and verdict words are `run`'s (docs/consumer-protocol.md): 0 conformant, 1 findings,
3 consumer error; an encoding the consumer answers `unsupported` for is `not applicable`.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT

SOURCE = ROOT / "examples" / "go-consumer"


def go_tool() -> str | None:
    """`go` on PATH, else the usual install location."""
    found = shutil.which("go")
    if found:
        return found
    usual = Path("/usr/local/go/bin/go")
    return str(usual) if usual.exists() else None


def go_env(scratch: Path) -> dict[str, str]:
    """No toolchain download and no module proxy (the module has no requirements); a build cache
    of its own where no HOME gives Go one."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOPROXY": "off"}
    if "HOME" not in env and "GOCACHE" not in env:
        env["GOCACHE"] = str(scratch / "gocache")
    return env


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = go_tool()
    if go is None:
        pytest.skip("no Go toolchain (`go` on PATH or /usr/local/go/bin/go): the Go example consumer cannot be built")
    scratch = tmp_path_factory.mktemp("go-consumer")
    out = scratch / "go-consumer"
    proc = subprocess.run([go, "build", "-o", str(out), "."], cwd=SOURCE, env=go_env(scratch),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"go build in {SOURCE} failed:\n{proc.stdout}{proc.stderr}"
    return out


class Run:
    def __init__(self, proc: subprocess.CompletedProcess, report: Path) -> None:
        self.code = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.results = [r for s in sorted(report.glob("*.summary.json")) for r in json.loads(s.read_text())["results"]]

    def starts(self) -> int:
        """How often the consumer was started, from the session marks in its log."""
        log = Path(self.results[0]["consumer_log"]).read_text(errors="replace")
        return log.count("== ticdc-conformance: start ")

    def __repr__(self) -> str:
        return f"exit {self.code}\n{self.output[-6000:]}"


def run(tmp_path: Path, binary: Path, scenario: str, *args: str) -> Run:
    report = tmp_path / "report"
    proc = subprocess.run(CLI + ["run", "--scenario", scenario, "--consumer", f"cmd:{binary}",
                                 "--work", str(tmp_path / "work"), "--report", str(report), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    return Run(proc, report)


def assert_conformant(result: Run) -> None:
    assert result.code == 0, result
    [summary] = result.results
    assert summary["outcome"] == "conformant", result
    # The applied log was checked at every checkpoint, not only the tables at the end.
    assert summary["ordering_verified"] is True and summary["checkpoints"]["checked"] is True, result


def session(binary: Path, tmp_path: Path, protocol: str, **sink: object) -> list[dict]:
    """The consumer's answer to a bare header (then stdin closes)."""
    header = {"type": "header", "protocol_version": 1, "protocol": protocol, "encoding": protocol,
              "sink": {"protocol": protocol, **sink}, "topics": {"t": 1}, "scenario": "smoke", "seed": 1,
              "state_dir": str(tmp_path), "start": {"restart": 0, "offsets": {"t": {"0": 0}}, "checkpoint_ts": None},
              "tables": "every-checkpoint"}
    proc = subprocess.run([str(binary)], input=json.dumps(header) + "\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("protocol,sink,reason", [
    ("canal-json", {"enable-tidb-extension": True}, None),
    ("canal-json", {"enable-tidb-extension": True, "content-compatible": True}, None),
    ("canal-json", {"enable-tidb-extension": False}, "enable-tidb-extension"),
    ("canal-json", {"enable-tidb-extension": True, "large-message-handle-option": "claim-check"}, "large-message"),
    ("open-protocol", {}, "only canal-json"),
    ("simple", {"encoding-format": "avro"}, "only canal-json"),
])
def test_ready_or_unsupported_with_a_reason(binary: Path, tmp_path: Path, protocol, sink, reason) -> None:
    lines = session(binary, tmp_path, protocol, **sink)
    if reason is None:
        assert lines == [{"type": "ready", "protocol_version": 1, "supports": ["restarts"]}]
    else:
        [line] = lines
        assert line["type"] == "unsupported" and reason in line["reason"], line


def test_go_unit_tests(tmp_path: Path) -> None:
    """The DDL effects the scenarios do not reach (CHANGE COLUMN, REORGANIZE PARTITION, defaults)."""
    go = go_tool()
    if go is None:
        pytest.skip("no Go toolchain (`go` on PATH or /usr/local/go/bin/go): the Go example's tests cannot run")
    proc = subprocess.run([go, "test", "./..."], cwd=SOURCE, env=go_env(tmp_path), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("options,reason", [
    (["--protocol", "open-protocol"], "only canal-json"),
    (["--protocol", "canal-json", "--sink-uri", "kafka://127.0.0.1:9092/t?protocol=canal-json&enable-tidb-extension=false"],
     "enable-tidb-extension"),
])
def test_another_encoding_is_not_applicable(binary: Path, tmp_path: Path, options: list[str], reason: str) -> None:
    result = run(tmp_path, binary, "smoke", *options)
    assert result.code == 5, result  # every case declined: nothing judged, never a green gate
    [summary] = result.results
    assert summary["outcome"] == "not applicable", result
    assert reason in result.output, result


def test_smoke_is_conformant(binary: Path, tmp_path: Path) -> None:
    assert_conformant(run(tmp_path, binary, "smoke", "--protocol", "canal-json"))


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made streams
@pytest.mark.parametrize("scenario", ["multi-table", "keys", "types", "replays", "ddl-evolution"])
def test_scenario_is_conformant(binary: Path, tmp_path: Path, scenario: str) -> None:
    assert_conformant(run(tmp_path, binary, scenario, "--protocol", "canal-json"))


def test_restarts_are_conformant(binary: Path, tmp_path: Path) -> None:
    """Stopped and killed mid-stream, the consumer resumes from its committed offsets and state."""
    result = run(tmp_path, binary, "smoke", "--protocol", "canal-json",
                 "--schedule", "random:seed=7,restarts=3,restart=mixed")
    assert_conformant(result)
    assert result.starts() == 4, result


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made streams
@pytest.mark.parametrize("scenario,schedule", [
    ("replays", "round-robin:seed=3"),
    ("replays", "random:seed=5,batch=1-4"),
    ("replays", "lagging:seed=1"),
    ("replays", "watermark-first:seed=2"),
    ("ddl-evolution", "ddl-first:seed=4"),
    ("ddl-evolution", "random:seed=2,skew=500,restarts=3,restart=crash"),
    ("replays", "timestamp:seed=1,restarts=2,restart=stop,commit-every=1"),
    ("multi-table", "round-robin:seed=6,restarts=4,restart=mixed"),
    ("keys", "random:seed=9,restarts=2,restart=crash"),
])
def test_schedules_are_conformant(binary: Path, tmp_path: Path, scenario: str, schedule: str) -> None:
    result = run(tmp_path, binary, scenario, "--protocol", "canal-json", "--schedule", schedule)
    assert_conformant(result)
    if "restarts=" in schedule:
        restarts = int(schedule.split("restarts=")[1].split(",")[0])
        assert result.starts() == restarts + 1, result
