"""A deliberately broken consumer: it follows every rule except that it never applies a DELETE.

It speaks the consumer protocol of docs/consumer-protocol.md, so the suite runs it exactly as it
runs any consumer under test, and must report it as non-conformant.
"""
import argparse
import json
from pathlib import Path

from ticdc_conformance.consumer.local import LocalConsumer, consume_local


class IgnoresDeletes(LocalConsumer):
    def apply_row(self, ev: dict) -> None:
        if ev["op"] == "delete":
            return
        super().apply_row(dict(ev, old_key=None))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True, type=Path)
    ap.add_argument("--manifest", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    consume_local(a.records, json.loads(a.manifest.read_text()), a.out, IgnoresDeletes)


if __name__ == "__main__":
    main()
