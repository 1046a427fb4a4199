"""The checkpoint check of a consumer that joined late (start_ts): upstream up to the snapshot is its
starting tables, not events it owes, and its first checkpoint compares the loaded rows too.

A correct late joiner's output is made from the reference consumer's output of the whole stream:
what it applied up to W left out, its tables from the first checkpoint after W on."""
import json
import shutil
from pathlib import Path

import orjson
import pytest

from tests.helpers import checked_both_ways
from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.consumers.sequential.consumer import consume_local

from .helpers import delivery, manifest_of


def _late_output(full: Path, out: Path, w: int) -> int:
    """`full` as a consumer that started from the snapshot at W writes it; returns its first checkpoint."""
    shutil.copytree(full, out)
    entries = [orjson.loads(line) for line in (full / "applied.ndjson").read_bytes().splitlines() if line.strip()]
    first = min(e["ts"] for e in entries if e["kind"] == "checkpoint" and e["ts"] > w)
    kept = [e for e in entries if (e.get("ts") if e["kind"] == "checkpoint" else e["commit_ts"]) > w]
    (out / "applied.ndjson").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in kept))
    for path in (out / "states").glob("*.ndjson"):
        lines = []
        for line in path.read_bytes().splitlines():
            doc = orjson.loads(line)
            if doc["to"] is None or doc["to"] > first:  # a row it holds at its first checkpoint or later
                doc["from"] = max(doc["from"], first)
                lines.append(orjson.dumps(doc) + b"\n")
        path.write_bytes(b"".join(lines))
    return first


@pytest.fixture(scope="module")
def late(case, tmp_path_factory):
    folder = case("smoke", "canal-json")
    manifest = manifest_of(folder)
    full = tmp_path_factory.mktemp("full") / "out"
    consume_local(folder / "records", manifest, full)
    w = delivery(folder, "timestamp:seed=2,late-join").start.checkpoint_ts
    return folder, manifest, full, w


def test_a_correct_late_joiner_passes_only_when_the_check_knows_its_start(late, tmp_path):
    folder, manifest, full, w = late
    out = tmp_path / "late"
    _late_output(full, out, w)
    verdict = checked_both_ways(folder / "truth", out, manifest, start_ts=w)
    assert verdict.checked and verdict.findings == [], [f.render() for f in verdict.findings]
    blind = check_checkpoints(folder / "truth", out, manifest)
    assert {"CONSUMER-LOSS-1", "CONSUMER-DDL-1"} & {f.rule for f in blind.findings}


def test_a_snapshot_row_missing_at_the_first_checkpoint_is_found(late, tmp_path):
    folder, manifest, full, w = late
    out = tmp_path / "late"
    first = _late_output(full, out, w)
    for path in sorted((out / "states").glob("*.ndjson")):
        lines = path.read_bytes().splitlines()
        loaded = [i for i, line in enumerate(lines) if orjson.loads(line)["from"] == first]
        if loaded:
            del lines[loaded[0]]
            path.write_bytes(b"".join(line + b"\n" for line in lines))
            break
    verdict = checked_both_ways(folder / "truth", out, manifest, start_ts=w)
    assert any(f.rule == "CONSUMER-CHECKPOINT-1" and f.checkpoint == first for f in verdict.findings), \
        [f.render() for f in verdict.findings]


def test_a_resent_transaction_below_the_snapshot_applied_again_is_a_double_apply(late, tmp_path):
    folder, manifest, full, w = late
    out = tmp_path / "late"
    _late_output(full, out, w)
    entries = [json.loads(line) for line in (full / "applied.ndjson").read_text().splitlines() if line.strip()]
    below = [e for e in entries if e["kind"] == "txn" and e["commit_ts"] <= w][-1]
    with open(out / "applied.ndjson", "r+") as f:
        lines = f.read().splitlines(keepends=True)
        f.seek(0)
        f.writelines([json.dumps(below) + "\n"] + lines)
    verdict = checked_both_ways(folder / "truth", out, manifest, start_ts=w)
    assert any(f.rule == "CONSUMER-DEDUP-1" and f.commit_ts == below["commit_ts"] for f in verdict.findings), \
        [f.render() for f in verdict.findings]


def test_a_checkpoint_at_or_below_the_snapshot_is_a_watermark_finding(late, tmp_path):
    folder, manifest, full, w = late
    out = tmp_path / "late"
    _late_output(full, out, w)
    text = (out / "applied.ndjson").read_text()
    (out / "applied.ndjson").write_text(json.dumps({"kind": "checkpoint", "ts": w}) + "\n" + text)
    verdict = checked_both_ways(folder / "truth", out, manifest, start_ts=w)
    assert any(f.rule == "CONSUMER-WATERMARK-1" and "late join" in f.message for f in verdict.findings)
