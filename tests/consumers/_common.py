"""The command line every test consumer shares: docs/consumer-protocol.md's `--records --manifest --out`."""
import argparse
import json
from pathlib import Path

from ticdc_conformance.consumers.sequential.consumer import consume_local


def run(consumer_cls) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True, type=Path)
    ap.add_argument("--manifest", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    consume_local(a.records, json.loads(a.manifest.read_text()), a.out, consumer_cls)
