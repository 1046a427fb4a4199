"""Every merge keeps each partition's offset order and delivers every record exactly once; the same
schedule gives the same steps; the timestamp merge is the reference consumers' order; the
adversarial merges really deliver out of the usual order."""
from collections import defaultdict

import pytest

from ticdc_conformance.consumers.sequential.consumer import merged_records
from ticdc_conformance.delivery import MERGES, AskTables, Commit, Poll, Restart
from ticdc_conformance.delivery.classify import Classifier, stream_options

from .helpers import delivered, delivery, manifest_of

ENCODINGS = ["canal-json", "open-protocol", "simple-avro"]


def coordinates(records) -> list[tuple]:
    return [(r.topic, r.partition, r.offset) for r in records]


def by_partition(records) -> dict[tuple, list[int]]:
    out = defaultdict(list)
    for r in records:
        out[(r.topic, r.partition)].append(r.offset)
    return out


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("merge", MERGES)
def test_every_merge_keeps_offset_order_and_delivers_every_record_once(case, merge, encoding):
    folder = case("smoke", encoding)
    manifest = manifest_of(folder)
    for seed in (1, 2):
        steps = list(delivery(folder, f"{merge}:seed={seed},lag=7,batch=1-9").steps())
        assert not [s for s in steps if isinstance(s, (Commit, Restart))], "commits and restarts only when asked"
        records = delivered(steps)
        assert len(records) == manifest["records"]
        for (topic, partition), offsets in by_partition(records).items():
            assert offsets == list(range(manifest["records_per_partition"][f"{topic}-{partition}"])), (topic, partition)
        assert all(1 <= len(s.records) <= 9 for s in steps if isinstance(s, Poll))
        assert sum(isinstance(s, AskTables) for s in steps) == 1  # once, halfway


def test_the_timestamp_merge_is_the_reference_consumers_order(case):
    for encoding in ENCODINGS:
        folder = case("smoke", encoding)
        assert delivered(delivery(folder, "timestamp:seed=5").steps()) == list(merged_records(folder / "records"))


@pytest.mark.parametrize("merge", MERGES)
def test_the_same_schedule_gives_the_same_steps_and_another_seed_other_ones(case, merge):
    folder = case("smoke", "open-protocol")
    spec = f"{merge}:seed=11,batch=1-16,lag=5,restarts=2,skew=40"

    def played(spec: str) -> list:
        out = []
        d = delivery(folder, spec)
        for step in d.steps():
            out.append(coordinates(step.records) if isinstance(step, Poll) else step)
            if isinstance(step, Restart):
                d.resume({tp: max(0, at - 3) for tp, at in ((tp, r.position) for tp, r in d.readers.items())})
        return out

    assert played(spec) == played(spec)
    assert played(spec) != played(spec.replace("seed=11", "seed=12"))


def test_round_robin_takes_partitions_in_turn_one_partition_a_poll(case):
    folder = case("smoke", "canal-json")
    polls = [s.records for s in delivery(folder, "round-robin:seed=2,batch=3").steps() if isinstance(s, Poll)]
    assert all(len({r.partition for r in p}) == 1 for p in polls)
    turns = [p[0].partition for p in polls[:3]]
    assert sorted(turns) == [0, 1, 2], turns  # every partition once before any twice
    assert all(len(p) == 3 for p in polls[:-3])


def test_random_draws_batch_sizes_from_the_range(case):
    folder = case("smoke", "canal-json")
    sizes = {len(s.records) for s in delivery(folder, "random:seed=3,batch=2-5").steps() if isinstance(s, Poll)}
    assert sizes - {1} <= {2, 3, 4, 5} and len(sizes & {2, 3, 4, 5}) >= 3, sizes  # a partition's last may be short


def test_lagging_with_lag_zero_delivers_one_partition_after_all_others(case):
    folder = case("smoke", "canal-json")
    records = delivered(delivery(folder, "lagging:seed=4").steps())
    last = records[-1].partition
    first_of_last = next(i for i, r in enumerate(records) if r.partition == last)
    assert all(r.partition == last for r in records[first_of_last:])


def test_lagging_holds_one_partition_behind_the_timestamp_order(case):
    folder = case("smoke", "canal-json")
    lag = 30
    order = coordinates(merged_records(folder / "records"))
    records = coordinates(delivered(delivery(folder, f"lagging:seed=4,lag={lag}").steps()))
    moved = {c[:2] for c in records if records.index(c) > order.index(c)}
    assert len(moved) == 1, moved  # one partition comes later than in the timestamp order, no other
    slow = moved.pop()
    for at, c in enumerate(records):
        if c[:2] == slow and at < len(records) - 1:
            before = records[:at]
            was = order.index(c)
            # every record of the others before it in the timestamp order came before it, and `lag` more
            others_before = [o for o in order[:was] if o[:2] != slow]
            assert set(others_before) <= set(before)
            assert sum(1 for o in before if o[:2] != slow) >= min(len(others_before) + lag,
                                                                  sum(1 for o in order if o[:2] != slow))


def _carried(folder, records):
    classifier = Classifier(manifest_of(folder)["protocol"], stream_options(manifest_of(folder), folder))
    return {(r.topic, r.partition, r.offset): classifier.carried(r)
            for r in sorted(records, key=lambda r: (r.topic, r.partition, r.offset))}


@pytest.mark.parametrize("merge, scenario, encoding, kind", [
    ("watermark-first", "smoke", "canal-json", "watermark"),
    ("watermark-first", "smoke", "simple-json", "watermark"),
    ("ddl-first", "ddl-evolution", "open-protocol", "ddl"),
])
def test_the_adversarial_merges_deliver_a_watermark_or_ddl_before_other_partitions_earlier_records(
        case, merge, scenario, encoding, kind):
    folder = case(scenario, encoding)
    for seed in (1, 2, 3):
        steps = list(delivery(folder, f"{merge}:seed={seed}").steps())
        records = delivered(steps)
        carried = _carried(folder, records)
        wanted = [i for i, r in enumerate(records) if kind in carried[(r.topic, r.partition, r.offset)].kinds]
        assert wanted
        # polls end at the record they run to
        for step in steps:
            if isinstance(step, Poll):
                inside = [r for r in step.records[:-1] if kind in carried[(r.topic, r.partition, r.offset)].kinds]
                assert not inside, f"a poll goes on past a {kind}"
        ahead = [i for i in wanted if any(later.partition != records[i].partition
                                          and later.timestamp_ms < records[i].timestamp_ms
                                          for later in records[i + 1:])]
        assert ahead, f"seed {seed}: no {kind} came before an earlier record of another partition"
