"""A deliberately broken consumer: it keeps every row event, also a re-send whose commit ts the
global watermark already passed, and applies it again at the next checkpoint. Final tables may
still look right (a re-sent upsert writes the same image); the applied log shows the duplicate.

The checkpoint check must report CONSUMER-DEDUP-1.
"""
from _common import run

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class ReappliesReplays(LocalConsumer):
    def on_row(self, tp, ev):
        if ev["commit_ts"] is None:
            super().on_row(tp, ev)
        else:
            self.buffer.add(tp, self.arrival, ev)


if __name__ == "__main__":
    run(ReappliesReplays)
