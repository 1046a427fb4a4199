"""The checkpoint check with upstream replayed in a child process (checks/upstream_process.py) gives
the verdict of one process, finding for finding, over correct and broken consumers' outputs; the
choice follows the case's size; a failure on the child's side is an error that names it, and no
process outlives the check."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import ROOT
from tests.helpers import checked_both_ways
from tests.helpers.processes import killed_mid_stream
from ticdc_conformance.checks import upstream_process
from ticdc_conformance.checks.checkpoints import CheckpointRun, check_checkpoints
from ticdc_conformance.checks.upstream_process import (
    CheckpointMark,
    UpstreamProcess,
    UpstreamProcessError,
    accepted_checkpoints,
)
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.runner import run_encoding
from ticdc_generators.pipeline import config_for, generate


def _case(root: Path, scenario: str, encoding: str, events: int | None = None) -> tuple[Path, dict]:
    manifest = generate(scenario, 1, config_for(scenario, encoding), root, events=events)
    consume_local(root / "records", manifest, root / "out")
    return root, manifest


# The reference consumer over DDLs of every kind (renames, partitions, key changes), keys, restarts
# that send events again, and a size with many checkpoints.
@pytest.mark.parametrize("scenario,encoding", [
    ("ddl-evolution", "open-protocol"), ("ddl-evolution", "canal-json"), ("ddl-evolution", "debezium"),
    ("ddl-evolution", "simple-json"), ("ddl-evolution", "simple-avro"), ("multi-table", "simple-avro"),
    ("keys", "canal-json"), ("replays", "simple-json"), ("large", "canal-json"),
])
def test_a_correct_consumer_has_the_same_verdict_both_ways(tmp_path, scenario, encoding, no_process_left):
    folder, manifest = _case(tmp_path, scenario, encoding, events=5000 if scenario == "large" else None)
    verdict = checked_both_ways(folder / "truth", folder / "out", manifest)
    assert verdict.checked and verdict.checkpoints >= 2 and verdict.findings == []


# Broken consumers: findings of every kind (rows, tables, DDLs, values in a form upstream never had,
# which the parent answers from its own replay of upstream's rows).
@pytest.mark.parametrize("broken,scenario,encoding", [
    ("ignores_deletes", "multi-table", "debezium"), ("widens_float", "types", "simple-json"),
    ("ignores_rename", "ddl-evolution", "canal-json"), ("extra_table", "smoke", "open-protocol"),
    ("applies_ddl_twice", "ddl-evolution", "simple-avro"), ("drops_replays", "replays", "canal-json"),
])
def test_a_broken_consumer_has_the_same_findings_both_ways(tmp_path, broken, scenario, encoding, no_process_left):
    program = f"{sys.executable} {ROOT / 'tests' / 'consumers' / f'{broken}.py'}"
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer=program)
    assert result.error is None, result.error
    manifest = json.loads((result.case / "manifest.json").read_text())
    verdict = checked_both_ways(result.case / "truth", result.case / "consumer", manifest)
    assert verdict.findings or [t for t in result.tables if t.findings], result.render()


def test_the_child_finds_the_checkpoints_the_check_accepts(tmp_path):
    log = tmp_path / "applied.ndjson"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [
        {"kind": "checkpoint", "ts": 5}, {"kind": "txn", "commit_ts": 7, "rows": []},
        {"kind": "checkpoint", "ts": 4},  # back: refused
        {"kind": "checkpoint", "ts": 9}, {"kind": "checkpoint", "ts": True},  # not an integer
    ]) + b'{"kind":"\\u0063heckpoint","ts":12}\n' + b"not json\n" + b'{"kind":"checkpoint","ts":12}\n')
    assert list(accepted_checkpoints(log, None)) == [5, 9, 12]
    assert list(accepted_checkpoints(log, 6)) == [9, 12]  # a late join's start: only later ones


def _every_line_read(log: Path) -> list[int]:
    """The accepted checkpoints as reading every line of the log finds them."""
    found: list[int] = []
    for line in log.read_bytes().split(b"\n"):
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if type(entry) is dict and entry.get("kind") == "checkpoint" and type(entry.get("ts")) is int:
            if not found or entry["ts"] > found[-1]:
                found.append(entry["ts"])
    return found


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 22])
def test_the_checkpoints_are_found_whatever_the_blocks_the_log_is_read_in(tmp_path, monkeypatch, block):
    monkeypatch.setattr(upstream_process, "_SCAN_BYTES", block)
    log = tmp_path / "applied.ndjson"
    long_row = {"kind": "txn", "commit_ts": 8, "rows": [{"schema": "s", "table": "t", "op": "insert",
                                                         "after": {"v": "checkpoint " * 40 + '\\ "'}}]}
    plain = {"kind": "txn", "commit_ts": 3, "rows": [{"schema": "s", "table": "t", "op": "delete", "before": {}}]}
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [
        plain, {"kind": "checkpoint", "ts": 5}, plain, long_row, plain, {"kind": "checkpoint", "ts": 9}, long_row,
    ]) + b'\n\n{"kind":"\\u0063heckpoint","ts":12}\n{"kind": "checkpoint", "ts": 15}')  # no last newline
    assert list(accepted_checkpoints(log, None)) == _every_line_read(log) == [5, 9, 12, 15]
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"")
    assert list(accepted_checkpoints(empty, None)) == []


def test_a_large_case_takes_a_second_process_and_a_small_one_does_not(tmp_path, monkeypatch, no_process_left):
    folder, manifest = _case(tmp_path, "smoke", "canal-json")
    monkeypatch.setattr(upstream_process.child_stream, "usable_cores", lambda: 2)
    monkeypatch.setattr(upstream_process, "TWO_PROCESSES_FROM", 2000)
    for events, processes in ((1999, None), (2000, 2), (None, None)):
        with CheckpointRun(folder / "truth", folder / "out", {**manifest, "events": events}) as run:
            assert run.check is not None
            assert (run.check.upstream is not None) == (processes == 2)
            assert run.verdict().findings == []
    monkeypatch.setattr(upstream_process.child_stream, "usable_cores", lambda: 1)
    with CheckpointRun(folder / "truth", folder / "out", {**manifest, "events": 10**6}) as run:
        assert run.check is not None and run.check.upstream is None
    with pytest.raises(ValueError, match="processes is 1, 2 or None"):
        check_checkpoints(folder / "truth", folder / "out", manifest, processes=3)


def test_an_error_replaying_upstream_is_raised_as_one_process_raises_it(tmp_path, no_process_left):
    folder, manifest = _case(tmp_path, "smoke", "canal-json")
    history = folder / "truth" / "history.ndjson"
    lines = history.read_bytes().splitlines(keepends=True)
    history.write_bytes(b"".join(lines[:20]) + b'{"kind": "txn", truncated\n' + b"".join(lines[21:]))
    errors = []
    for processes in (1, 2):
        with pytest.raises(ValueError) as e:
            check_checkpoints(folder / "truth", folder / "out", manifest, processes=processes)
        errors.append(e.value)
    assert type(errors[1]) is type(errors[0]) and str(errors[1]) == str(errors[0])
    assert any(f"raised in the process replaying upstream of {folder / 'truth'}" in n
               for n in getattr(errors[1], "__notes__", []))


def test_a_child_that_dies_mid_stream_is_an_error_naming_it(tmp_path, no_process_left):
    folder, manifest = _case(tmp_path, "large", "canal-json", events=5000)
    upstream = UpstreamProcess(folder / "truth", folder / "out" / "applied.ndjson", manifest["protocol"],
                               manifest["sink"], None)
    assert f"upstream of {folder / 'truth'}: its process" in killed_mid_stream(upstream, UpstreamProcessError)


def test_a_check_that_stops_early_stops_the_child(tmp_path, no_process_left):
    folder, manifest = _case(tmp_path, "large", "canal-json", events=5000)
    log = folder / "out" / "applied.ndjson"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:40]) + b"[1]\n" + b"".join(lines[40:]))  # the check stops at this line
    verdict = check_checkpoints(folder / "truth", folder / "out", manifest, processes=2)
    assert [f.rule for f in verdict.findings] == ["CONSUMER-OUTPUT-1"]
    assert "applied.ndjson line 41: a JSON list" in verdict.findings[0].message


@pytest.mark.parametrize("mark_images", [upstream_process.MARK_IMAGES, 3])
def test_the_stream_marks_every_checkpoint_after_its_events(tmp_path, no_process_left, mark_images):
    folder, manifest = _case(tmp_path, "smoke", "debezium")
    wanted = list(accepted_checkpoints(folder / "out" / "applied.ndjson", None))
    seen, last, images = [], 0, []
    with UpstreamProcess(folder / "truth", folder / "out" / "applied.ndjson", manifest["protocol"],
                         manifest["sink"], None, mark_images=mark_images) as upstream:
        for event in upstream:
            if type(event) is CheckpointMark:
                seen.append(event.commit_ts)
                images.append(sorted(image for _, held, gone in event.changed for image in [*held, *gone]))
                assert all(len(held) + len(gone) <= mark_images for _, held, gone in event.changed)
            assert event.commit_ts >= last  # commit order, a mark after the events up to it
            last = event.commit_ts
    assert seen == wanted and upstream.end == len(wanted)
    assert any(len(changed) > 3 for changed in images)  # parts were needed for the small size


def test_a_checkpoint_in_many_parts_has_the_verdict_of_one(tmp_path, monkeypatch, no_process_left):
    folder, manifest = _case(tmp_path, "ddl-evolution", "canal-json")
    for path in sorted((folder / "out" / "states").glob("*.ndjson"))[:2]:  # rows missing at many checkpoints
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(line for i, line in enumerate(lines) if i % 3))
    whole = check_checkpoints(folder / "truth", folder / "out", manifest, processes=1)
    assert whole.findings and sum(n for _, n in whole.divergence) > 10
    real = UpstreamProcess.__init__
    monkeypatch.setattr(UpstreamProcess, "__init__", lambda self, *a: real(self, *a, mark_images=2))
    parts = check_checkpoints(folder / "truth", folder / "out", manifest, processes=2)
    assert orjson.dumps(parts.to_json()) == orjson.dumps(whole.to_json())

