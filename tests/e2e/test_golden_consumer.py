"""The expected files are right: the reference sequential consumer, given only a golden case's
records and case.json, writes exactly its expected applied log and final state.

The expected files are computed from the ground truth (golden/expected.py), the consumer
decodes the records with the reference decoders; agreement on every case of the sample (every
variant of the matrix, so every protocol) and, in the slow test, on every case of the corpus."""
import json
import shutil

import orjson
import pytest

from tests.conftest import ROOT
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.golden.corpus import iter_case_dirs
from ticdc_conformance.golden.verify import verify_output, write_record_files

GOLDEN = ROOT / "golden"
ALL = [d.relative_to(GOLDEN).as_posix() for d in iter_case_dirs(GOLDEN)]
# Every variant once (smoke), and cases whose expectations are special: restarts and re-sends,
# DDL of every kind, content-compatible types, stream-undetermined tables, large values, size.
SAMPLE = sorted({p for p in ALL if p.startswith("smoke/")} | {
    "replays/simple-avro-bootstrap-partition-0", "replays/canal-json-no-tidb-extension", "ddl-evolution/debezium",
    "types/canal-json-content-compatible", "types/debezium-no-schema", "keys/open-protocol-no-old-value",
    "multi-table/canal-json-no-tidb-extension", "wide-rows/canal-json", "large/simple-json"})


def run_reference(case: str, work) -> tuple:
    case_dir = GOLDEN / case
    manifest = json.loads((case_dir / "case.json").read_text())  # case.json is the run's manifest
    write_record_files(case_dir, work / "records")
    consume_local(work / "records", manifest, work / "out")
    return case_dir, work / "out"


def test_the_sample_covers_every_protocol_and_variant():
    cases = [json.loads((GOLDEN / c / "case.json").read_text()) for c in SAMPLE]
    assert {c["protocol"] for c in cases} == {"open-protocol", "canal-json", "debezium", "simple"}
    assert {c["variant"] for c in cases} == {json.loads((GOLDEN / c / "case.json").read_text())["variant"]
                                             for c in ALL}
    assert {c["expected"]["ordering"] for c in cases} == {"watermark", "arrival"}
    assert any(c["fidelity"]["undetermined_tables"] for c in cases)


@pytest.mark.parametrize("case", SAMPLE)
def test_the_reference_consumer_writes_the_expected_files(case, tmp_path):
    case_dir, out = run_reference(case, tmp_path)
    problems = verify_output(case_dir, out)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(set(ALL) - set(SAMPLE)))
def test_the_reference_consumer_writes_the_expected_files_of_every_case(case, tmp_path):
    case_dir, out = run_reference(case, tmp_path)
    problems = verify_output(case_dir, out)
    assert not problems, "\n".join(problems)


# --- the comparison can fail ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference_output(tmp_path_factory):
    work = tmp_path_factory.mktemp("golden-reference")
    case_dir, out = run_reference("smoke/simple-json", work)
    return case_dir, out


def _copy_out(reference_output, tmp_path):
    case_dir, out = reference_output
    shutil.copytree(out, tmp_path / "out")
    return case_dir, tmp_path / "out"


def _rewrite(path, change):
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    lines = change(lines)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def test_a_lost_final_row_is_named(reference_output, tmp_path):
    case_dir, out = _copy_out(reference_output, tmp_path)
    _rewrite(out / "final" / "smoke.orders.ndjson", lambda rows: rows[1:])
    problems = verify_output(case_dir, out)
    assert len(problems) == 1 and problems[0].startswith("final/smoke.orders.ndjson: missing row (1x): {")


def test_a_changed_value_in_the_applied_log_is_named_by_line_and_field(reference_output, tmp_path):
    case_dir, out = _copy_out(reference_output, tmp_path)
    where = {}

    def change(entries):
        for i, e in enumerate(entries):
            if e["kind"] == "txn" and e["rows"][0]["op"] == "update":
                e["rows"] = e["rows"][:1]
                e["rows"][0]["before"] = dict(e["rows"][0]["before"], **{next(iter(e["rows"][0]["before"])): "x"})
                where["line"] = f"applied.ndjson line {i + 1} (txn at commit ts {e['commit_ts']})"
                return entries
        raise AssertionError("no update")

    _rewrite(out / "applied.ndjson", change)
    problems = verify_output(case_dir, out, applied=True)
    assert problems and all(p.startswith(where["line"]) for p in problems), problems


def test_checkpoints_out_of_order_are_caught(reference_output, tmp_path):
    case_dir, out = _copy_out(reference_output, tmp_path)

    def swap(entries):
        marks = [i for i, e in enumerate(entries) if e["kind"] == "checkpoint"]
        a, b = marks[0], marks[1]
        entries[a], entries[b] = entries[b], entries[a]
        return entries

    _rewrite(out / "applied.ndjson", swap)
    problems = verify_output(case_dir, out)
    assert any("(checkpoint " in p and "field ['ts']" in p for p in problems), problems


def test_rows_of_one_transaction_may_come_in_any_order(reference_output, tmp_path):
    case_dir, out = _copy_out(reference_output, tmp_path)

    def reverse(entries):
        for e in entries:
            if e["kind"] == "txn":
                e["rows"].reverse()
        return entries

    _rewrite(out / "applied.ndjson", reverse)
    assert verify_output(case_dir, out) == []


def test_a_missing_applied_log_is_named_unless_only_the_final_state_is_compared(reference_output, tmp_path):
    case_dir, out = _copy_out(reference_output, tmp_path)
    (out / "applied.ndjson").unlink()
    assert verify_output(case_dir, out) == ["applied.ndjson: the consumer wrote none"]
    assert verify_output(case_dir, out, applied=False) == []


def test_a_stream_with_commit_ts_but_no_watermark_is_expected_in_commit_ts_order(tmp_path):
    """No variant of the matrix has this ordering (Debezium without the TiDB extension carries
    commit ts but sends no WATERMARK); a case built on the side shows the reference consumer
    agrees with it too."""
    from ticdc_conformance.golden.corpus import build_case
    from ticdc_conformance.golden.matrix import Case, Variant

    variant = Variant("debezium-no-tidb-extension", "debezium", {"enable-tidb-extension": False}, "test", ())
    case_dir = tmp_path / "case"
    doc = build_case(Case("smoke", variant, 1, None), case_dir)
    assert doc["expected"]["ordering"] == "commit-ts" and doc["expected"]["checkpoints"] == 0
    manifest = json.loads((case_dir / "case.json").read_text())
    write_record_files(case_dir, tmp_path / "records")
    consume_local(tmp_path / "records", manifest, tmp_path / "out")
    assert verify_output(case_dir, tmp_path / "out") == []


def test_a_broken_record_line_is_named_by_file_line_and_record(tmp_path):
    from ticdc_conformance.golden.verify import GoldenFileError

    case_dir = tmp_path / "case"
    shutil.copytree(GOLDEN / "smoke" / "canal-json", case_dir)
    path = case_dir / "records.ndjson"
    lines = path.read_bytes().splitlines()
    rec = orjson.loads(lines[2])
    rec["value"] = "%%%"
    lines[2] = orjson.dumps(rec)
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(GoldenFileError, match=rf"records.ndjson line 3 \(record {rec['topic']}/{rec['partition']}"
                                              rf"@{rec['offset']}\): not a record line"):
        write_record_files(case_dir, tmp_path / "records")
    (case_dir / "expected" / "applied.ndjson").write_text('{"kind": "txn"\n')
    (tmp_path / "applied.ndjson").write_text("")
    with pytest.raises(GoldenFileError, match=r"applied.ndjson line 1: not JSON"):
        verify_output(case_dir, tmp_path)
