"""Broken: takes a row event whose commit ts is below the highest its partition delivered for a
re-send and drops it (the shape of pingcap/ticdc#4051). After a changefeed failover the re-sent
rows that were never applied are lost; with tables interleaved, rows of one table that arrive after
a later transaction of another are too."""
from __future__ import annotations

from ticdc_conformance.consumers.streaming import StreamingConsumer
from ticdc_conformance.consumers.streaming.consumer import FedConsumer


class DropsResendsFed(FedConsumer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.highest: dict = {}

    def on_row(self, tp, ev) -> None:
        ts = ev["commit_ts"]
        if ts is not None:
            if ts < self.highest.get(tp, 0):
                return
            self.highest[tp] = ts
        super().on_row(tp, ev)


class DropsResends(StreamingConsumer):
    fed_consumer = DropsResendsFed
