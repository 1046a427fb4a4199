"""Broadcasts within one topic: a DDL or watermark sent to every partition must reach each of them.

Partitions are read side by side, so a broadcast is pending from its first sighting on. A partition
misses it once that partition's own watermark passes the broadcast's ts without it (spec 002: a
resolved ts means everything below it was sent there, DDL included), or when the stream ends first.
A broadcast is forgotten once every partition has passed it, so memory holds the few in flight
between partitions, not the stream.

Only broadcasts above everything the topic saw are tracked as watermarks: a watermark at or below
another partition's frontier is a restarted changefeed's fallen-back checkpoint (a replay), not a
new broadcast.

The partitions of a topic are best known before reading (a manifest, the record files, the topic's
metadata). One that shows up late is judged only for broadcasts above what the others had passed
when it appeared: older ones may have been forgotten already.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Optional

from .findings import NO_OFFSET, Findings


@dataclass
class _Broadcast:
    what: str  # how a finding names it
    ts: int
    rule: str
    first: tuple[int, int]  # partition and offset of its first sighting
    has: set[int] = field(default_factory=set)
    missed: set[int] = field(default_factory=set)


class TopicBroadcasts:
    def __init__(self, topic: str, findings: Findings) -> None:
        self.topic = topic
        self.findings = findings
        self._pending: dict[Hashable, _Broadcast] = {}
        # partition -> the ts below which it is not judged (None: judged for everything)
        self._since: dict[int, Optional[int]] = {}
        self._frontier: dict[int, tuple[int, int]] = {}  # partition -> (highest watermark, its offset)
        self._last_offset: dict[int, int] = {}

    @property
    def partitions(self) -> set[int]:
        return set(self._since)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def join(self, partition: int, late: bool) -> None:
        """A partition of the topic: known beforehand, or (`late`) first seen in the stream now."""
        if partition in self._since:
            return
        self._since[partition] = self.frontier() if late else None

    def saw_record(self, partition: int, offset: int) -> None:
        self._last_offset[partition] = offset

    def frontier(self) -> Optional[int]:
        return max((wm for wm, _ in self._frontier.values()), default=None)

    def _judged(self, partition: int, ts: int) -> bool:
        since = self._since.get(partition)
        return since is None or ts > since

    def ddl(self, key: Hashable, ts: int, rule: str, what: str, partition: int, offset: int) -> None:
        """A first-sent DDL on `partition`. A partition whose watermark already passed its ts without it
        has missed it."""
        item = self._pending.get(key)
        if item is None:
            if not self._judged(partition, ts):
                return
            item = self._pending[key] = _Broadcast(what, ts, rule, (partition, offset))
            for other, (wm, wm_offset) in sorted(self._frontier.items()):
                if other != partition and wm > ts and self._judged(other, ts):
                    self._miss(item, other, wm_offset, f"its watermark {wm} passed the DDL's commit ts")
        item.has.add(partition)

    def watermark(self, key: Hashable, ts: int, rule: str, partition: int, offset: int) -> None:
        """A first-sent watermark on `partition`, tracked when it is new to the topic."""
        item = self._pending.get(key)
        if item is None:
            frontier = self.frontier()
            if frontier is not None and ts <= frontier:
                return
            item = self._pending[key] = _Broadcast(f"watermark {ts}", ts, rule, (partition, offset))
        item.has.add(partition)

    def passed(self, partition: int, watermark: int, offset: int) -> None:
        """`partition`'s watermark advanced to `watermark`: what it has not got below that, it missed."""
        self._frontier[partition] = (watermark, offset)
        for key, item in list(self._pending.items()):
            if item.ts < watermark and partition not in item.has | item.missed and self._judged(partition, item.ts):
                self._miss(item, partition, offset, f"its watermark {watermark} passed it")
            self._forget_if_passed(key, item)

    def finish(self) -> None:
        for item in self._pending.values():
            for partition in sorted(self.partitions - item.has - item.missed):
                if self._judged(partition, item.ts):
                    self._miss(item, partition, self._last_offset.get(partition, NO_OFFSET),
                               "the stream ended first")
        self._pending.clear()

    def _miss(self, item: _Broadcast, partition: int, offset: int, why: str) -> None:
        item.missed.add(partition)
        first_partition, first_offset = item.first
        self.findings.violation(
            item.rule, self.topic, partition, offset,
            f"{item.what} (first on partition {first_partition} at offset {first_offset}) never reached "
            f"partition {partition}: {why}")

    def _forget_if_passed(self, key: Hashable, item: _Broadcast) -> None:
        """Every partition has passed it (and has it or was told it missed it): nothing more to judge."""
        for partition in self._since:
            frontier = self._frontier.get(partition)
            if frontier is None or frontier[0] <= item.ts:
                return
        del self._pending[key]
