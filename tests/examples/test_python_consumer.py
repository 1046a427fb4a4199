"""The Python example consumer (examples/python-consumer/), written from the documents alone, held by
the suite as any consumer under test is: plugged in as `cmd:python consumer.py` over the streaming
testee protocol (docs/testee-protocol.md), and run with `run` on every scenario it applies to (Open
Protocol), under several delivery schedules, restarts included.

Exit codes and verdict words are `run`'s (docs/consumer-protocol.md): 0 conformant, 1 findings,
3 consumer error; an encoding the consumer answers `unsupported` for is `not applicable`.
"""
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from tests.examples.test_go_consumer import Run, assert_conformant  # the same verdict reading for every cmd: example

CONSUMER = ROOT / "examples" / "python-consumer" / "consumer.py"
COMMAND = f"cmd:{sys.executable} {CONSUMER}"


def run(tmp_path: Path, scenario: str, *args: str) -> Run:
    report = tmp_path / "report"
    proc = subprocess.run(CLI + ["run", "--scenario", scenario, "--consumer", COMMAND, "--work", str(tmp_path / "work"),
                                 "--report", str(report), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=1200)
    return Run(proc, report)


def session(tmp_path: Path, protocol: str, **sink: object) -> list[dict]:
    """The consumer's answer to a bare header (then stdin closes)."""
    header = {"type": "header", "protocol_version": 1, "protocol": protocol, "encoding": protocol,
              "sink": {"protocol": protocol, **sink}, "topics": {"t": 1}, "scenario": "smoke", "seed": 1,
              "state_dir": str(tmp_path), "start": {"restart": 0, "offsets": {"t": {"0": 0}}, "checkpoint_ts": None},
              "tables": "every-checkpoint"}
    proc = subprocess.run([sys.executable, str(CONSUMER)], input=json.dumps(header) + "\n", capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("protocol,sink,reason", [
    ("open-protocol", {"output-old-value": True}, None),
    ("open-protocol", {"output-old-value": False}, "output-old-value=false"),
    ("open-protocol", {"large-message-handle-option": "handle-key-only"}, "large-message"),
    ("canal-json", {"enable-tidb-extension": True}, "only open-protocol"),
    ("debezium", {}, "only open-protocol"),
])
def test_ready_or_unsupported_with_a_reason(tmp_path: Path, protocol, sink, reason) -> None:
    lines = session(tmp_path, protocol, **sink)
    if reason is None:
        assert lines == [{"type": "ready", "protocol_version": 1, "supports": ["restarts"]}]
    else:
        [line] = lines
        assert line["type"] == "unsupported" and reason in line["reason"], line


def test_a_record_it_cannot_decode_is_named(tmp_path: Path) -> None:
    """A key that is no Open Protocol batch ends the consumer (a consumer error for the suite) with a
    message naming the record, not a traceback."""
    header = {"type": "header", "protocol_version": 1, "protocol": "open-protocol", "encoding": "open-protocol",
              "sink": {}, "topics": {"t": 1}, "scenario": "smoke", "seed": 1, "state_dir": str(tmp_path),
              "start": {"restart": 0, "offsets": {"t": {"0": 0}}, "checkpoint_ts": None}, "tables": "on-request"}
    record = {"type": "record", "topic": "t", "partition": 0, "offset": 5, "timestamp": 0, "timestampType": 0,
              "key": base64.b64encode(b"garbage").decode(), "value": None, "headers": []}
    proc = subprocess.run([sys.executable, str(CONSUMER)], input=f"{json.dumps(header)}\n{json.dumps(record)}\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("record t/0@5: cannot decode:") and "Traceback" not in proc.stderr, proc.stderr


def test_another_encoding_is_not_applicable(tmp_path: Path) -> None:
    result = run(tmp_path, "smoke", "--protocol", "canal-json")
    assert result.code == 5, result  # every case declined: nothing judged, never a green gate
    [summary] = result.results
    assert summary["outcome"] == "not applicable", result
    assert "only open-protocol" in result.output, result


def test_smoke_is_conformant(tmp_path: Path) -> None:
    assert_conformant(run(tmp_path, "smoke", "--protocol", "open-protocol"))


def test_restarts_are_conformant(tmp_path: Path) -> None:
    """Stopped and killed mid-stream, the consumer resumes from its committed offsets and state_dir."""
    result = run(tmp_path, "smoke", "--protocol", "open-protocol", "--schedule", "random:seed=7,restarts=3,restart=mixed")
    assert_conformant(result)
    assert result.starts() == 4, result


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made sessions
@pytest.mark.parametrize("scenario", ["multi-table", "keys", "types", "replays", "wide-rows"])
def test_scenario_is_conformant(tmp_path: Path, scenario: str) -> None:
    assert_conformant(run(tmp_path, scenario, "--protocol", "open-protocol"))


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made sessions
def test_classic_ticdc_layout_is_conformant(tmp_path: Path) -> None:
    """tiflow's row keys leave an empty `scm`/`tbl` out and sort a row's columns by name
    (docs/version-profiles.md); every type still reads back."""
    assert_conformant(run(tmp_path, "types", "--protocol", "open-protocol", "--version-profile", "tiflow"))


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made sessions
def test_ddl_evolution_shows_only_the_documented_partition_gap(tmp_path: Path) -> None:
    """The consumer does not implement partition DDL (its README says so): on ddl-evolution the rows
    TRUNCATE PARTITION removed stay, and that is all that is wrong (examples/ci/expected-failures.txt
    lists these two checks)."""
    result = run(tmp_path, "ddl-evolution", "--protocol", "open-protocol")
    assert result.code == 1, result
    [summary] = result.results
    findings = [f for t in summary["tables"] for f in t["findings"]] + summary["checkpoints"]["findings"]
    assert {f["rule"] for f in findings} == {"CONSUMER-DDL-3", "CONSUMER-CHECKPOINT-1"}, result
    assert all("TRUNCATE PARTITION" in f["message"] for f in findings), result


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made sessions
@pytest.mark.parametrize("scenario,schedule", [
    ("replays", "round-robin:seed=3"),
    ("replays", "random:seed=5,batch=1-4"),
    ("replays", "lagging:seed=1"),
    ("replays", "watermark-first:seed=2"),
    ("multi-table", "ddl-first:seed=4"),
    ("replays", "timestamp:seed=1,restarts=2,restart=stop,commit-every=1"),
    ("multi-table", "round-robin:seed=6,restarts=4,restart=mixed"),
    ("keys", "random:seed=9,restarts=2,restart=crash"),
    ("types", "round-robin:seed=1,restarts=2,restart=crash"),
])
def test_schedules_are_conformant(tmp_path: Path, scenario: str, schedule: str) -> None:
    result = run(tmp_path, scenario, "--protocol", "open-protocol", "--schedule", schedule)
    assert_conformant(result)
    if "restarts=" in schedule:
        restarts = int(schedule.split("restarts=")[1].split(",")[0])
        assert result.starts() == restarts + 1, result
