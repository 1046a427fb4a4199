"""A deliberately broken consumer: it follows every rule except that it never applies a DELETE.

It speaks the consumer protocol of docs/consumer-protocol.md, so the suite runs it exactly as it
runs any consumer under test, and must report it as non-conformant.
"""
from _common import run

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class IgnoresDeletes(LocalConsumer):
    def apply_rows(self, commit_ts, events):
        # Deletes vanish, and an update no longer removes the row under its old key.
        kept = [dict(ev, before=None) for ev in events if ev["op"] != "delete"]
        if kept:
            super().apply_rows(commit_ts, kept)


if __name__ == "__main__":
    run(IgnoresDeletes)
