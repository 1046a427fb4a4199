"""A sequential, pure-Python consumer that follows TiCDC's consumer rules event by event.

It reads all partitions merged by Kafka timestamp (as one consumer subscribed to every partition
would), and applies the rules of TiCDC's own Kafka consumer (cmd/kafka-consumer):
- each partition's watermark only moves forward; a lower one is a replay and is ignored;
- the global watermark is the minimum over all partitions;
- row events wait in a buffer and are applied, in commit-ts order, once the global watermark
  reaches their commit ts; a row event at or below the already-applied global watermark is a
  duplicate of an applied one and is dropped (spec 003, WATERMARK Event);
- DDL is applied once, when the global watermark reaches its commit ts.
Without any watermark in the stream (e.g. Canal-JSON without the TiDB extension) events apply in
arrival order. It is small enough to read in one sitting, which is why the test consumers
(tests/consumers/) derive from it.
"""
from __future__ import annotations

import heapq
import json
from pathlib import Path
from typing import Iterable, Iterator

import orjson
import pyarrow.parquet as pq

from ticdc_generators.kafka_record import KafkaRecord
from ticdc_generators.sink.records import records_from_batch

from ..errors import ConsumerError
from .decode_stage import PartitionDecoders
from .output import final_file_name, parse_columns, project_row


def merged_records(records_dir: Path) -> Iterator[KafkaRecord]:
    """All record files merged by (timestamp, topic, partition, offset), streaming."""
    def one(path: Path) -> Iterator[tuple]:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=4096):
            for r in records_from_batch(batch):
                yield (r.timestamp_ms, r.topic, r.partition, r.offset, r)

    streams = [one(p) for p in sorted(Path(records_dir).glob("*.parquet"))]
    for item in heapq.merge(*streams, key=lambda t: t[:4]):
        yield item[4]


class LocalConsumer:
    def __init__(self, protocol: str, options: dict, partitions: Iterable[tuple[str, int]]) -> None:
        self.decoders = PartitionDecoders(protocol, options)
        self.partition_wm: dict[tuple[str, int], int] = {tp: 0 for tp in partitions}
        self.applied_wm = 0
        self.saw_watermark = False
        self.buffer: list[tuple[int, int, dict]] = []  # (commit_ts, arrival, decoded row)
        self.pending_ddl: dict[tuple, dict] = {}
        self.arrival = 0
        self.tables: dict[tuple[str, str], dict[str, tuple[str, dict]]] = {}
        self.columns: dict[tuple[str, str], list[str]] = {}
        self.errors: list[str] = []
        self.duplicates_dropped = 0
        self.regressions = 0

    # --- input -------------------------------------------------------------------
    def feed(self, record: KafkaRecord) -> None:
        for ev in self.decoders.decode(record):
            self.arrival += 1
            kind = ev["kind"]
            if kind == "error":
                self.errors.append(ev["error"])
            elif kind == "watermark":
                self.on_watermark(record, ev["commit_ts"])
            elif kind == "ddl":
                self.on_ddl(ev)
            elif kind == "row":
                self.on_row(ev)
            elif kind == "bootstrap":
                self.columns.setdefault((ev["schema"], ev["table"]), parse_columns(ev["columns"]))

    def on_row(self, ev: dict) -> None:
        ts = ev["commit_ts"]
        if not self.saw_watermark or ts is None:
            self.apply_row(ev)
        elif ts <= self.applied_wm:
            self.duplicates_dropped += 1
        else:
            self.buffer.append((ts, self.arrival, ev))

    def on_ddl(self, ev: dict) -> None:
        ident = (ev["commit_ts"], ev["schema"], ev["table"], ev["query"])
        if ev["commit_ts"] is not None and self.saw_watermark and ev["commit_ts"] <= self.applied_wm:
            return  # applied already
        self.pending_ddl.setdefault(ident, ev)
        if not self.saw_watermark:
            self._apply_ddl(ev)

    def on_watermark(self, record: KafkaRecord, ts: int) -> None:
        tp = (record.topic, record.partition)
        self.saw_watermark = True
        if ts < self.partition_wm.get(tp, 0):
            self.regressions += 1
            return
        self.partition_wm[tp] = ts
        global_wm = min(self.partition_wm.values())
        if global_wm > self.applied_wm:
            self.flush(global_wm)

    # --- apply -------------------------------------------------------------------
    def flush(self, global_wm: int) -> None:
        ready = sorted((e for e in self.buffer if e[0] <= global_wm), key=lambda e: (e[0], e[1]))
        self.buffer = [e for e in self.buffer if e[0] > global_wm]
        ddls = sorted((d for d in self.pending_ddl.values() if d["commit_ts"] <= global_wm),
                      key=lambda d: d["commit_ts"])
        seen: set[tuple] = set()
        for ts, _, ev in ready:
            while ddls and ddls[0]["commit_ts"] < ts:
                self._apply_ddl(ddls.pop(0))
            ident = (ev["schema"], ev["table"], ev["key"], ts, ev["op"])
            if ident in seen:
                self.duplicates_dropped += 1
                continue
            seen.add(ident)
            self.apply_row(ev)
        for d in ddls:
            self._apply_ddl(d)
        self.applied_wm = global_wm

    def _apply_ddl(self, ev: dict) -> None:
        self.pending_ddl.pop((ev["commit_ts"], ev["schema"], ev["table"], ev["query"]), None)
        name = (ev["schema"], ev["table"])
        if ev["table"]:
            self.tables.setdefault(name, {})
        if ev["columns"]:
            self.columns[name] = parse_columns(ev["columns"])

    def apply_row(self, ev: dict) -> None:
        name = (ev["schema"], ev["table"])
        rows = self.tables.setdefault(name, {})
        self.columns[name] = parse_columns(ev["columns"]) or self.columns.get(name, [])
        if ev["old_key"] is not None:
            rows.pop(ev["old_key"], None)
        if ev["op"] == "delete":
            rows.pop(ev["key"], None)
        else:
            rows[ev["key"]] = (ev["key_order"], orjson.loads(ev["after"]))

    # --- output ------------------------------------------------------------------
    def write(self, out: Path) -> dict:
        final = Path(out) / "final"
        final.mkdir(parents=True, exist_ok=True)
        for (schema, table), rows in sorted(self.tables.items()):
            cols = self.columns.get((schema, table), [])
            with open(final / final_file_name(schema, table), "wb") as f:
                for _, (_, image) in sorted(rows.items(), key=lambda kv: kv[1][0]):
                    f.write(project_row(image, cols))
        figures = {
            "applied_watermark": self.applied_wm,
            "duplicates_dropped": self.duplicates_dropped,
            "watermark_regressions": self.regressions,
            "rows_waiting_above_watermark": len(self.buffer),
        }
        (Path(out) / "consumer.json").write_text(json.dumps(figures, indent=2) + "\n")
        return figures


def consume_local(records_dir: Path, manifest: dict, out: Path, consumer_cls: type = LocalConsumer) -> dict:
    partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
    consumer = consumer_cls(manifest["protocol"], manifest["sink"], partitions)
    for record in merged_records(records_dir):
        consumer.feed(record)
    if consumer.errors:
        raise ConsumerError(f"{len(consumer.errors)} record(s) could not be decoded as {manifest['protocol']}:\n"
                            + "\n".join(f"  {e}" for e in consumer.errors[:20]))
    return consumer.write(out)

