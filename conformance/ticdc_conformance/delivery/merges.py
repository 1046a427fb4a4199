"""The orders across partitions (docs/delivery-schedules.md). Each merge yields poll batches,
taking records from the partition readers, and keeps every partition's offset order: a reader only
ever gives its next record. A merge is started again (same random generator, carrying on) after a
restart re-positions the readers, so a merge holds nothing a restart must give back except
`lagging`'s held records, which are read again from the file after it.
"""
from __future__ import annotations

import heapq
import random
from collections import deque
from typing import Callable, Iterator, Optional

from ticdc_contract.record import KafkaRecord

from .classify import Carried, Classifier
from .partitions import PartitionReader
from .schedule import Schedule
from .steps import TopicPartition

Readers = dict[TopicPartition, PartitionReader]
Batch = tuple[KafkaRecord, ...]


class MergeContext:
    """What a merge works with: the readers (in topic-partition order), the schedule, the seeded
    random generator, and for the adversarial merges the classifier."""

    def __init__(self, readers: Readers, schedule: Schedule, rng: random.Random,
                 classifier: Optional[Classifier] = None) -> None:
        self.readers, self.schedule, self.rng, self.classifier = readers, schedule, rng, classifier
        self.order = sorted(readers)

    def size(self) -> int:
        low, high = self.schedule.batch
        return self.rng.randint(low, high)

    def live(self) -> list[TopicPartition]:
        return [tp for tp in self.order if not self.readers[tp].exhausted]


def by_timestamp(readers: list[PartitionReader]) -> Iterator[KafkaRecord]:
    """The records of `readers` side by side, the next always the one with the smallest (Kafka
    timestamp, topic, partition): the order of transport/record_files.py merge_by_timestamp."""
    heads = []
    for reader in readers:
        head = reader.peek()
        if head is not None:
            heads.append((head.timestamp_ms, head.topic, head.partition, reader))
    heapq.heapify(heads)
    while heads:
        reader = heads[0][3]
        record = reader.take(1)[0]
        head = reader.peek()
        if head is None:
            heapq.heappop(heads)
        else:
            heapq.heapreplace(heads, (head.timestamp_ms, head.topic, head.partition, reader))
        yield record


def _chunks(ctx: MergeContext, records: Iterator[KafkaRecord]) -> Iterator[Batch]:
    """A record order cut into polls of seeded sizes."""
    while True:
        batch = tuple(r for _, r in zip(range(ctx.size()), records))
        if not batch:
            return
        yield batch


def timestamp(ctx: MergeContext) -> Iterator[Batch]:
    yield from _chunks(ctx, by_timestamp([ctx.readers[tp] for tp in ctx.order]))


def round_robin(ctx: MergeContext) -> Iterator[Batch]:
    """Partitions in turn (topic-partition order from a seeded first one), a batch of seeded size each."""
    at = ctx.rng.randrange(len(ctx.order)) if ctx.order else 0
    while ctx.live():
        tp = ctx.order[at % len(ctx.order)]
        at += 1
        if not ctx.readers[tp].exhausted:
            yield ctx.readers[tp].take(ctx.size())


def random_partition(ctx: MergeContext) -> Iterator[Batch]:
    """Every poll a seeded partition (of those with records left) and a seeded batch size."""
    while True:
        live = ctx.live()
        if not live:
            return
        yield ctx.readers[ctx.rng.choice(live)].take(ctx.size())


def lagging(ctx: MergeContext) -> Iterator[Batch]:
    """The timestamp order with one seeded partition held back: each of its records comes only after
    `lag` records of the other partitions that came after it in the timestamp order; with lag=0 it
    comes after all of them."""
    slow = ctx.rng.choice(ctx.order) if ctx.order else None
    others = [ctx.readers[tp] for tp in ctx.order if tp != slow]
    lag = ctx.schedule.lag
    if not lag or slow is None:
        rest = [ctx.readers[slow]] if slow is not None else []
        yield from _chunks(ctx, _then(by_timestamp(others), by_timestamp(rest)))
        return
    def others_done() -> bool:
        return all(reader.exhausted for reader in others)

    yield from _chunks(ctx, _held_back(by_timestamp(others + [ctx.readers[slow]]), slow, lag, others_done))


def _then(first: Iterator[KafkaRecord], second: Iterator[KafkaRecord]) -> Iterator[KafkaRecord]:
    yield from first
    yield from second


def _held_back(records: Iterator[KafkaRecord], slow: TopicPartition, lag: int,
               others_done: Callable[[], bool]) -> Iterator[KafkaRecord]:
    # Held records wait for `lag` later records of the others; they are the slow partition's records
    # among `lag` records of the timestamp order, so memory stays bounded by the window. Once the
    # others are over nothing is held any more: the rest of the slow partition streams through.
    held: deque[tuple[int, KafkaRecord]] = deque()
    others = 0
    for record in records:
        if (record.topic, record.partition) == slow:
            if others_done():
                while held:
                    yield held.popleft()[1]
                yield record
            else:
                held.append((others + lag, record))
            continue
        yield record
        others += 1
        while held and held[0][0] <= others:
            yield held.popleft()[1]
    for _, record in held:
        yield record


def _up_to(ctx: MergeContext, wanted: Callable[[Carried], bool]) -> Iterator[Batch]:
    """A seeded partition delivered until a record `wanted` picks (a watermark, a DDL) has gone,
    while the others wait, in polls of seeded size that end at that record; then another."""
    assert ctx.classifier is not None
    while True:
        live = ctx.live()
        if not live:
            return
        reader = ctx.readers[ctx.rng.choice(live)]
        reached = False
        while not reached and not reader.exhausted:
            batch: list[KafkaRecord] = []
            for _ in range(ctx.size()):
                taken = reader.take(1)
                if not taken:
                    break
                batch.append(taken[0])
                if wanted(ctx.classifier.carried(taken[0])):
                    reached = True
                    break
            yield tuple(batch)


def watermark_first(ctx: MergeContext) -> Iterator[Batch]:
    yield from _up_to(ctx, lambda c: c.watermark is not None)


def ddl_first(ctx: MergeContext) -> Iterator[Batch]:
    yield from _up_to(ctx, lambda c: c.ddl)


MERGE_FUNCTIONS: dict[str, Callable[[MergeContext], Iterator[Batch]]] = {
    "timestamp": timestamp, "round-robin": round_robin, "random": random_partition, "lagging": lagging,
    "watermark-first": watermark_first, "ddl-first": ddl_first,
}
CLASSIFYING = ("watermark-first", "ddl-first")  # the merges that read what records carry
