"""Per-partition watermarks and the global watermark a consumer applies up to.

- A partition's watermark only moves forward. A lower one is a re-send after a TiCDC restart
  (spec 003 WATERMARK: "TiCDC provides the 'At Least Once' semantics, data might be sent
  repeatedly"); it is tolerated and logged, never applied (TiCDC cmd/kafka-consumer writer.go
  partitionProgress.updateWatermark: "partition resolved ts fall back, ignore it").
- The global watermark is the minimum over every partition of every topic (TiCDC writer.go
  globalWatermark): only then has every partition sent everything up to it (spec 002: "any events
  smaller than the Resolved TS (including Row Changed Event and DDL Event) have been sent").
- A partition whose decoder still holds row events waiting for their schema (Simple, spec 004
  "Message consumption scenarios", scenario 2) counts with the watermark it had when the first of
  them arrived: those rows are not yet visible, so the consumer must not move past them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

TopicPartition = tuple[str, int]
MAX_LOGGED = 50


@dataclass(frozen=True)
class Regression:
    topic: str
    partition: int
    offset: int
    ts: int  # the watermark that arrived
    kept: int  # the partition's watermark, which stays

    def to_json(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset, "ts": self.ts,
                "kept": self.kept}


class WatermarkTracker:
    def __init__(self, partitions: Iterable[TopicPartition]) -> None:
        self.marks: dict[TopicPartition, int] = {tp: 0 for tp in partitions}
        self.frozen: dict[TopicPartition, int] = {}
        self.seen = False
        self.regressions = 0
        self.regression_log: list[Regression] = []
        self._global: Optional[int] = None  # global_mark() until a mark, a partition or a hold changes
        self._stale = True

    def observe(self, tp: TopicPartition, ts: int, offset: int) -> bool:
        """A watermark arrived on `tp`; False when it is a regression (and is ignored)."""
        self.seen = True
        current = self.marks.get(tp, 0)
        if ts < current:
            self.regressions += 1
            if len(self.regression_log) < MAX_LOGGED:
                self.regression_log.append(Regression(tp[0], tp[1], offset, ts, current))
            return False
        if self.marks.get(tp) != ts:
            self.marks[tp] = ts
            self._stale = True
        return True

    def know(self, tp: TopicPartition) -> None:
        """A partition the manifest did not list sends records: it counts from now on."""
        if tp not in self.marks:
            self.marks[tp] = 0
            self._stale = True

    def hold(self, tp: TopicPartition, waiting: bool) -> None:
        """Whether `tp`'s decoder holds row events waiting for their schema."""
        if waiting:
            if tp not in self.frozen:
                self.frozen[tp] = self.marks.get(tp, 0)
                self._stale = True
        elif tp in self.frozen:
            del self.frozen[tp]
            self._stale = True

    def global_mark(self) -> Optional[int]:
        """The minimum over all partitions (None before any partition is known)."""
        if self._stale:
            self._global = min(self.frozen.get(tp, ts) for tp, ts in self.marks.items()) if self.marks else None
            self._stale = False
        return self._global
