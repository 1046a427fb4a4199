"""Restarts and commits appear as the schedule asks; resume re-delivers each partition from the
offsets given; skewed timestamps change timestamps only."""
from collections import defaultdict
from dataclasses import replace

import pytest

from ticdc_conformance.delivery import Commit, Poll, Restart

from .helpers import delivered, delivery, manifest_of


def play(d, offsets_at_restart):
    """The steps of `d`, resuming after each Restart at offsets_at_restart(after) (None: no resume), where
    `after` is, per partition, the offset after the last record delivered (a consumer commits at most that)."""
    steps, resumed = [], []
    after = dict(d.start.offsets)
    for step in d.steps():
        steps.append(step)
        if isinstance(step, Poll):
            after.update({(r.topic, r.partition): r.offset + 1 for r in step.records})
        if isinstance(step, Restart):
            offsets = offsets_at_restart(dict(after))
            if offsets is not None:
                resumed.append((len(steps), offsets, d.resume(offsets)))
    return steps, resumed


@pytest.mark.parametrize("merge", ["timestamp", "round-robin", "random", "lagging", "watermark-first"])
def test_resume_redelivers_each_partition_from_the_given_offsets(case, merge):
    folder = case("smoke", "canal-json")
    manifest = manifest_of(folder)
    d = delivery(folder, f"{merge}:seed=3,restarts=3,batch=1-8,lag=9")
    steps, resumed = play(d, lambda at: {tp: max(0, offset - 5) for tp, offset in at.items()})
    assert len(resumed) == 3
    for at, offsets, starts in resumed:
        assert starts == offsets
        following = defaultdict(list)
        for step in steps[at:]:
            if isinstance(step, Restart):
                break
            if isinstance(step, Poll):
                for r in step.records:
                    following[(r.topic, r.partition)].append(r.offset)
        for tp, offset in offsets.items():
            size = manifest["records_per_partition"][f"{tp[0]}-{tp[1]}"]
            # up to the next restart or the end, each partition goes on from its given offset, gapless
            got = following[tp]
            assert got == list(range(offset, size))[:len(got)], tp
    every = {(r.topic, r.partition, r.offset) for r in delivered(steps)}
    assert len(every) == manifest["records"]


def test_without_resume_the_delivery_goes_on_where_it_was(case):
    folder = case("smoke", "open-protocol")
    d = delivery(folder, "lagging:seed=2,lag=12,restarts=2")
    steps, _ = play(d, lambda at: None)
    records = delivered(steps)
    assert sum(isinstance(s, Restart) for s in steps) == 2
    assert len(records) == len({(r.topic, r.partition, r.offset) for r in records}) == manifest_of(folder)["records"]


def test_resume_never_goes_below_the_first_start_and_refuses_unknown_partitions(case):
    folder = case("smoke", "canal-json")
    d = delivery(folder, "timestamp:seed=1,restarts=1,late-join")
    assert d.resume({}) == d.start.offsets
    assert d.resume({tp: 0 for tp in d.start.offsets}) == d.start.offsets
    with pytest.raises(ValueError, match="nowhere/9"):
        d.resume({("nowhere", 9): 3})
    with pytest.raises(ValueError, match="-1"):
        d.resume({next(iter(d.start.offsets)): -1})


@pytest.mark.parametrize("kind, crashes", [("stop", {False}), ("crash", {True}), ("mixed", {False, True})])
def test_restarts_and_commits_appear_as_asked(case, kind, crashes):
    folder = case("smoke", "simple-json")
    d = delivery(folder, f"random:seed=5,batch=1-4,restarts=6,restart={kind},commit-every=3")
    steps, _ = play(d, lambda at: at)
    restarts = [s for s in steps if isinstance(s, Restart)]
    assert len(restarts) == 6 and {r.crash for r in restarts} == crashes
    polls = 0
    for at, step in enumerate(steps):
        if isinstance(step, Poll):
            polls += 1
        if isinstance(step, Commit):
            assert polls % 3 == 0 and isinstance(steps[at - 1], Poll)
    assert sum(isinstance(s, Commit) for s in steps) == polls // 3


def test_skew_changes_timestamps_only_within_the_bound_and_alike_on_redelivery(case):
    folder = case("smoke", "canal-json")
    plain = {(r.topic, r.partition, r.offset): r for r in delivered(delivery(folder, "round-robin:seed=1").steps())}
    d = delivery(folder, "round-robin:seed=1,skew=900,restarts=2")
    steps, _ = play(d, lambda at: {tp: 0 for tp in at})
    skewed = delivered(steps)
    assert len(skewed) > len(plain)  # delivered again from 0 after each restart
    moved = 0
    for r in skewed:
        original = plain[(r.topic, r.partition, r.offset)]
        assert replace(r, timestamp_ms=original.timestamp_ms) == original
        assert abs(r.timestamp_ms - original.timestamp_ms) <= 900
        moved += r.timestamp_ms != original.timestamp_ms
    assert moved > len(skewed) // 2
    again = {}
    for r in skewed:  # a record delivered again carries the same skewed timestamp
        assert again.setdefault((r.topic, r.partition, r.offset), r.timestamp_ms) == r.timestamp_ms


def test_asking_for_restarts_leaves_the_polls_before_the_first_restart_as_they_were(case):
    folder = case("smoke", "canal-json")
    plain = [s.records for s in delivery(folder, "random:seed=8,batch=1-6").steps() if isinstance(s, Poll)]
    with_restarts, _ = play(delivery(folder, "random:seed=8,batch=1-6,restarts=2"), lambda at: at)
    first = next(i for i, s in enumerate(with_restarts) if isinstance(s, Restart))
    before = [s.records for s in with_restarts[:first] if isinstance(s, Poll)]
    assert before and before == plain[:len(before)]


def test_committed_offsets_read_from_the_protocols_json():
    from ticdc_conformance.delivery import offsets_from_json

    assert offsets_from_json({"t": {"0": 5, "2": 0}}) == {("t", 0): 5, ("t", 2): 0}
    for bad, named in (([1], "expected an object"), ({"t": 3}, "topic 't'"), ({"t": {"x": 1}}, "t/x"),
                       ({"t": {"1": -2}}, "t/1 = -2"), ({"t": {"1": True}}, "t/1 = True")):
        with pytest.raises(ValueError, match=named):
            offsets_from_json(bad)
