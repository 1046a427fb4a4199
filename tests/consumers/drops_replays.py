"""A deliberately broken consumer: it takes every row event whose commit ts is not above the
highest one its partition delivered so far for a re-send, and drops it. Right after a TiCDC restart
that drops the re-sent events that were never applied, and with tables interleaved it drops the
rows of one table that arrive after a later transaction of another.

The checkpoint check must report the lost rows (CONSUMER-LOSS-1, CONSUMER-CHECKPOINT-1).
"""
from _common import run

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class DropsReplays(LocalConsumer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.highest = {}

    def on_row(self, tp, ev):
        ts = ev["commit_ts"]
        if ts is not None:
            if ts < self.highest.get(tp, 0):
                return
            self.highest[tp] = ts
        super().on_row(tp, ev)


if __name__ == "__main__":
    run(DropsReplays)
