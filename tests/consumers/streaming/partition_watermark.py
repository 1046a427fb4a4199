"""Broken: flushes at the watermark of the partition that just delivered one, not at the global
watermark (the minimum over all partitions, spec 002). Rows another partition has not delivered
yet are then below what it applied, and it drops them as re-sends."""
from __future__ import annotations

from ticdc_conformance.consumers.streaming import StreamingConsumer
from ticdc_conformance.consumers.streaming.consumer import FedConsumer


class PartitionWatermarkFed(FedConsumer):
    own_mark = 0

    def on_watermark(self, tp, offset, ts) -> None:
        super().on_watermark(tp, offset, ts)
        self.own_mark = self.watermarks.marks.get(tp, 0)

    def advance(self) -> None:
        if self.watermarks.seen and self.own_mark > self.applied_wm:
            self.flush(self.own_mark)


class PartitionWatermark(StreamingConsumer):
    fed_consumer = PartitionWatermarkFed
