"""The reference Kafka black box: Kafka -> the sequential consumer -> OUT or a database.

Each partition is read from offset 0 to its end offset (`--end-offsets`, what the suite
published) and the partitions are merged by (timestamp, topic, partition), the order the
sequential consumer reads record files in (sequential/consumer.py `merged_records`), so its
outputs equal the `local` consumer's. Once every partition is read to its end, the group
(`--group-id`) commits the end offsets, the outputs are written and the program exits 0; a
record that cannot be decoded, a DDL that cannot be applied, or a partition that ends early is
an error on stderr and exit 2.
"""
from __future__ import annotations

import argparse
import heapq
import json
import sys
import tempfile
from itertools import takewhile
from pathlib import Path
from typing import Iterator, Optional

from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.transport.errors import TransportError
from ticdc_contract.record import KafkaRecord

DEFAULT_TIMEOUT_S = 30.0


def parse_end_offsets(text: str) -> dict[tuple[str, int], int]:
    """`topic:partition=offset,…` -> {(topic, partition): offset}; ValueError naming a bad entry."""
    ends: dict[tuple[str, int], int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        where, eq, offset = item.rpartition("=")
        topic, colon, partition = where.rpartition(":")
        if not eq or not colon or not topic or not partition.isdigit() or not offset.isdigit():
            raise ValueError(f"{item!r} is no topic:partition=offset")
        ends[(topic, int(partition))] = int(offset)
    return ends


def format_end_offsets(ends: dict[tuple[str, int], int]) -> str:
    return ",".join(f"{t}:{p}={o}" for (t, p), o in sorted(ends.items()))


class _Counted:
    """A partition's records below its end offset, counted, so a partition that ends early is named."""

    def __init__(self, records: Iterator[KafkaRecord], end: int) -> None:
        self.records, self.end, self.read = records, end, 0

    def __iter__(self) -> Iterator[KafkaRecord]:
        for record in takewhile(lambda r: r.offset < self.end, self.records):
            self.read = record.offset + 1
            yield record


def read_to_end(bootstrap: str, ends: dict[tuple[str, int], int], timeout_s: float) -> Iterator[KafkaRecord]:
    """Every partition's records from 0 to its end offset, merged by (timestamp, topic, partition)."""
    from ticdc_conformance.transport.kafka_io import kafka_records

    parts = {tp: _Counted(kafka_records(bootstrap, tp[0], [tp[1]], timeout_s), end)
             for tp, end in sorted(ends.items()) if end > 0}
    yield from heapq.merge(*parts.values(), key=lambda r: (r.timestamp_ms, r.topic, r.partition))
    short = [(tp, c.read, c.end) for tp, c in parts.items() if c.read < c.end]
    if short:
        (t, p), read, end = short[0]
        raise TransportError(f"the partition ended at offset {read}, before its end offset {end}", t, p)


def commit_offsets(bootstrap: str, group_id: str, ends: dict[tuple[str, int], int], timeout_s: float) -> None:
    """The group's committed offsets become the end offsets: it has consumed everything."""
    from ticdc_conformance.transport.kafka_io import _client, client_config

    ck = _client()
    consumer = ck.Consumer({**client_config(bootstrap, timeout_s), "group.id": group_id,
                            "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[ck.TopicPartition(t, p, o) for (t, p), o in sorted(ends.items())],
                        asynchronous=False)
    except ck.KafkaException as e:
        raise TransportError(f"committing the end offsets of group {group_id} failed: {e}") from None
    finally:
        consumer.close()


def consume(bootstrap: str, ends: dict[tuple[str, int], int], manifest: dict, run_dir: Path, out: Path,
            timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """The sequential consumer over the topics up to `ends`; writes OUT; ConsumerError as consume_local does."""
    partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
    consumer = LocalConsumer(manifest["protocol"], decoder_options(manifest, run_dir), partitions, out=out)
    for record in read_to_end(bootstrap, ends, timeout_s):
        consumer.feed(record)
    figures = consumer.write(out)
    for what, items in (("record(s) could not be decoded as " + manifest["protocol"], consumer.errors),
                        ("DDL(s) could not be applied", consumer.problems)):
        if items:
            raise ConsumerError(f"{len(items)} {what}:\n" + "\n".join(f"  {e}" for e in items[:20]))
    return figures


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ticdc_conformance.consumers.kafka_reference",
                                     description="The reference TiCDC consumer reading Kafka (docs/consumer-modes.md).")
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topics", required=True, help="T1,T2,…")
    parser.add_argument("--group-id", required=True)
    parser.add_argument("--end-offsets", required=True, help="topic:partition=offset,…")
    parser.add_argument("--manifest", required=True, type=Path, help="The case's manifest.json (protocol, sink).")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="Write the output folder of docs/consumer-protocol.md.")
    target.add_argument("--jdbc", help="Write the final tables into this PostgreSQL database.")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="Seconds any Kafka call may wait.")
    args = parser.parse_args(argv)
    try:
        ends = parse_end_offsets(args.end_offsets)
        manifest = json.loads(args.manifest.read_text())
        topics = set(filter(None, args.topics.split(",")))
        unknown = sorted({t for t, _ in ends} - topics)
        if unknown:
            raise ValueError(f"--end-offsets names topic(s) not in --topics: {', '.join(unknown)}")
        run_dir = args.manifest.resolve().parent
        if args.out is not None:
            figures = consume(args.bootstrap_servers, ends, manifest, run_dir, args.out, args.timeout)
        else:
            from .database import write_database

            with tempfile.TemporaryDirectory(prefix="ticdc-kafka-reference-") as scratch:
                figures = consume(args.bootstrap_servers, ends, manifest, run_dir, Path(scratch), args.timeout)
                write_database(Path(scratch) / "final", args.jdbc)
        commit_offsets(args.bootstrap_servers, args.group_id, ends, args.timeout)
    except (ValueError, OSError, ConsumerError, TransportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: figures[k] for k in ("ordering", "applied_watermark", "transactions_applied",
                                              "rows_applied", "ddl_applied")}))
    return 0
