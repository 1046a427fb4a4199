"""A late join starts every partition right after its watermark record of a checkpoint W that all
partitions carry, with upstream's tables at W as the snapshot, at the protocol's fidelity as the
checks see upstream; a stream without watermarks refuses it."""
import random
from collections import Counter

import orjson
import pytest

from ticdc_conformance.checks.projected_truth import ProjectedTruth, unjudged_by_table
from ticdc_conformance.delivery import Delivery, LateJoinRefused, Poll, Schedule, late_join_refusal
from ticdc_conformance.delivery.classify import Classifier, stream_options
from ticdc_conformance.transport.record_files import file_records
from ticdc_contract.truth import read_history

from .helpers import delivered, delivery, manifest_of

# Simple: a late joiner reads row events only after its table's BOOTSTRAP, so these send it often.
OFTEN = {"send_bootstrap_in_msg_count": 20}
CASES = [pytest.param(scenario, encoding, overrides, id=f"{scenario}-{encoding}") for scenario, encoding, overrides in (
    ("smoke", "canal-json", {}), ("smoke", "debezium", {}), ("ddl-evolution", "open-protocol", {}),
    ("ddl-evolution", "debezium", {}), ("ddl-evolution", "simple-json", OFTEN), ("multi-table", "simple-avro", OFTEN))]


@pytest.mark.parametrize("scenario, encoding, overrides", CASES)
def test_late_join_starts_after_each_partitions_watermark_of_the_checkpoint(case, scenario, encoding, overrides):
    folder = case(scenario, encoding, **overrides)
    manifest = manifest_of(folder)
    classifier = Classifier(manifest["protocol"], stream_options(manifest, folder))
    for seed in (1, 2):
        d = delivery(folder, f"round-robin:seed={seed},late-join")
        w = d.start.checkpoint_ts
        assert w is not None and all(offset > 0 for offset in d.start.offsets.values())
        for (topic, partition), start in d.start.offsets.items():
            before = [r for r in file_records(folder / "records" / f"{topic}-{partition}.parquet", 256)
                      if r.offset < start]
            carried = [classifier.carried(r) for r in before]
            assert carried[-1].watermark == w, (topic, partition)  # the cut is a watermark record of ts W ...
            assert all(c.commit_ts is None or c.commit_ts <= w for c in carried)  # ... after nothing above W
            assert not [c for c in carried[:-1] if c.watermark == w]  # ... its first
            # a consumer starting there afresh reads every record after it and holds no row at the end
            fresh = Classifier(manifest["protocol"], stream_options(manifest, folder))
            after = [fresh.carried(r) for r in file_records(folder / "records" / f"{topic}-{partition}.parquet", 256)
                     if r.offset >= start]
            assert not [c.error for c in after if c.error] and fresh.held((topic, partition)) == 0
        records = delivered(d.steps())
        assert {(r.topic, r.partition): r.offset for r in reversed(records)} == d.start.offsets
        assert len(records) == manifest["records"] - sum(d.start.offsets.values())


@pytest.mark.parametrize("scenario, encoding, overrides", CASES)
def test_the_snapshot_is_upstream_at_the_checkpoint_as_the_checks_project_it(case, scenario, encoding, overrides):
    folder = case(scenario, encoding, **overrides)
    manifest = manifest_of(folder)
    d = delivery(folder, "timestamp:seed=3,late-join")
    w = d.start.checkpoint_ts
    options = manifest["sink"]
    truth = ProjectedTruth(manifest["protocol"], options, unjudged_by_table(folder / "truth", options))
    for event in read_history(folder / "truth"):
        if event.commit_ts > w:
            break
        truth.apply(event)
    expected = {name: Counter(orjson.dumps(proj, option=orjson.OPT_SORT_KEYS) for _, proj, _ in rows.values())
                for name, rows in truth.proj.items() if name in truth.schemas}
    expected.update({name: Counter() for name in truth.schemas if name not in expected})
    got: dict = {}
    for schema, table, columns, row in d.start.snapshot():
        view = truth.view((schema, table))
        assert columns == [c.name for c in view.columns if not c.is_virtual]
        rows = got.setdefault((schema, table), Counter())
        if row is not None:
            rows[orjson.dumps(row, option=orjson.OPT_SORT_KEYS)] += 1
    assert got == expected
    assert sum(len(rows) for rows in got.values()) > 0


def test_a_late_join_is_seeded_and_lands_partway(case):
    folder = case("smoke", "canal-json")
    firsts = {delivery(folder, f"timestamp:seed={seed},late-join").start.checkpoint_ts for seed in range(6)}
    assert len(firsts) > 1
    assert delivery(folder, "timestamp:seed=4,late-join").start == delivery(folder, "random:seed=4,late-join").start
    manifest = manifest_of(folder)
    for seed in range(6):
        skipped = sum(delivery(folder, f"timestamp:seed={seed},late-join").start.offsets.values())
        assert 0 < skipped < manifest["records"]


def test_without_late_join_the_start_is_every_partitions_first_offset_and_no_snapshot(case):
    folder = case("smoke", "canal-json")
    d = delivery(folder, "random:seed=1")
    assert d.start.checkpoint_ts is None and list(d.start.snapshot()) == []
    assert d.start.offsets == {("ticdc-smoke", p): 0 for p in range(3)}
    assert d.start.offsets_json() == {"ticdc-smoke": {"0": 0, "1": 0, "2": 0}}


def test_a_stream_without_watermarks_refuses_a_late_join(case):
    folder = case("smoke", "canal-json", enable_tidb_extension=False)
    manifest = manifest_of(folder)
    reason = late_join_refusal(manifest)
    assert reason and "no watermark" in reason
    with pytest.raises(LateJoinRefused, match="no watermark"):
        delivery(folder, "timestamp:late-join")
    assert late_join_refusal(manifest_of(case("smoke", "canal-json"))) is None
    assert [s for s in delivery(folder, "timestamp").steps() if isinstance(s, Poll)]


def test_a_late_join_without_the_truth_says_it_needs_it(case):
    folder = case("smoke", "canal-json")
    with pytest.raises(ValueError, match="truth.*none was given"):
        Delivery(Schedule.parse("timestamp:late-join"), folder / "records", manifest_of(folder))
    with pytest.raises(ValueError, match="nowhere is no folder"):
        Delivery(Schedule.parse("timestamp:late-join"), folder / "records", manifest_of(folder), folder / "nowhere")


def test_a_stream_whose_schema_never_comes_again_refuses_a_late_join(case):
    # Simple sends each table's BOOTSTRAP at its start only (every 10,000 messages by default): a
    # consumer joining later could never read a row event, so no checkpoint is one to join at.
    folder = case("smoke", "simple-json")
    assert late_join_refusal(manifest_of(folder)) is None  # the protocol carries watermarks ...
    with pytest.raises(LateJoinRefused, match="still wait for their table's schema"):
        delivery(folder, "timestamp:late-join")  # ... but the stream gives a late joiner no schema


def test_a_late_join_comes_after_the_partition_ddls_of_the_tables_it_finds(case):
    from ticdc_conformance.delivery.late_join import choose_checkpoint, partition_blind_spans
    from ticdc_conformance.delivery.partitions import record_files

    folder = case("ddl-evolution", "canal-json")
    spans = partition_blind_spans(folder / "truth")
    assert spans  # the scenario truncates, drops and exchanges partitions of a table it created first
    for seed in range(4):
        w = delivery(folder, f"timestamp:seed={seed},late-join").start.checkpoint_ts
        assert not [(c, d) for c, d in spans if c <= w < d], w
    manifest = manifest_of(folder)
    options = stream_options(manifest, folder)
    with pytest.raises(LateJoinRefused, match="partition DDL"):
        choose_checkpoint(record_files(folder / "records"), Classifier(manifest["protocol"], options), options,
                          random.Random(1), [(0, 2**63)])
