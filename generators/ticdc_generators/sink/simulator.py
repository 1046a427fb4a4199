"""The TiCDC Kafka sink simulator: upstream history in, Kafka records out, streaming.

What it decides (and where TiCDC decides the same):
- row dispatch by the partition dispatcher (dispatch.py); several changes to one row in one
  transaction arrive already collapsed (model.RowChange);
- updates that change the handle key are split into DELETE + INSERT unless
  `output-raw-change-event`; the DELETE stays in place and the INSERTs follow at the end of the
  transaction (TiCDC pkg/eventservice/event_scanner.go caches the split inserts and appends them
  after the transaction's other rows);
- DDL waits for every earlier transaction (it is a barrier) and goes to all partitions or to
  partition 0, as the protocol's encoder module says;
- the changefeed's resolved ts is broadcast to every partition each time upstream physical time
  crosses `watermark_interval_ms`, and once more after the last event, as a watermark event when
  the protocol sends them (spec 002 "Resolved Events are periodically broadcasted to each MQ
  Partition");
- Simple BOOTSTRAP: before a table's first row event, to all partitions of its topic (or
  partition 0 only per `send-bootstrap-to-all-partition`), then periodically (spec 004, BOOTSTRAP;
  see `_maybe_bootstrap`).
Offsets are contiguous per partition; the Kafka timestamp is the physical part of the event's TSO.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Optional

from ..kafka_record import KafkaRecord
from ..model import DDL, ROWID, Op, RowChange, TableSchema, Transaction
from ..protocols import EncoderModule, PartitionEncoder, encoder_module
from ..tso import physical_ms
from .config import SinkConfig
from .dispatch import Router
from .events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent


_INACTIVE_MS = 30 * 60 * 1000  # TiCDC bootstraper.go defaultMaxInactiveDuration


@dataclass
class _BootstrapStat:
    last_sent_ms: int
    last_row_ms: int
    counter: int = 0


@dataclass
class _Partition:
    topic: str
    partition: int
    encoder: PartitionEncoder
    next_offset: int = 0


def cdc_visible(change: RowChange) -> RowChange:
    """The change as TiCDC's row events carry it: without virtual generated columns, whose values
    TiKV does not store (TiCDC pkg/common/event/chunk.go; every codec skips IsVirtualGenerated),
    and without the hidden row ID of a table that has no handle key."""
    t = change.table
    virtual = {c.name for c in t.columns if c.is_virtual}
    keyless = not t.handle_key
    if not virtual and not keyless:
        return change
    hidden = virtual | {ROWID}
    table = replace(t, columns=tuple(c for c in t.columns if c.name not in virtual)) if virtual else t

    def strip(image):
        return None if image is None else {k: v for k, v in image.items() if k not in hidden}

    return RowChange(table, change.op, strip(change.before), strip(change.after))


def split_if_key_changed(change: RowChange, raw: bool) -> tuple[Optional[RowChange], Optional[RowChange]]:
    """(in-place event, deferred insert). A handle-key update splits into DELETE + INSERT."""
    if raw or change.op is not Op.UPDATE:
        return change, None
    t = change.table
    if t.key_of(change.before) == t.key_of(change.after):
        return change, None
    return (RowChange(t, Op.DELETE, change.before, None), RowChange(t, Op.INSERT, None, change.after))


class SinkSimulator:
    def __init__(self, config: SinkConfig) -> None:
        self.config = config
        self.module: EncoderModule = encoder_module(config.protocol)
        self.router = Router(config)
        self.partitions: dict[tuple[str, int], _Partition] = {}
        self._last_watermark_ms: Optional[int] = None
        self._last_ts = 0
        self._bootstrap_stats: dict[tuple[str, str], _BootstrapStat] = {}

    # --- topology -------------------------------------------------------------------
    def topics(self) -> dict[str, int]:
        """Topics used so far and their partition counts."""
        return {topic: self.config.partition_num for topic in sorted({t for t, _ in self.partitions})}

    def _partition(self, topic: str, partition: int) -> _Partition:
        key = (topic, partition)
        p = self.partitions.get(key)
        if p is None:
            p = _Partition(topic, partition, self.module.new_encoder(self.config, topic, partition))
            self.partitions[key] = p
        return p

    def _topic_partitions(self, topic: str) -> list[_Partition]:
        return [self._partition(topic, i) for i in range(self.config.partition_num)]

    def _emit(self, p: _Partition, messages: Iterable[Message]) -> Iterator[KafkaRecord]:
        for m in messages:
            yield KafkaRecord(
                topic=p.topic, partition=p.partition, offset=p.next_offset, key=m.key, value=m.value,
                timestamp_ms=physical_ms(m.ts), headers=m.headers,
            )
            p.next_offset += 1

    def _send(self, p: _Partition, event: SinkEvent) -> Iterator[KafkaRecord]:
        yield from self._emit(p, p.encoder.encode(event))

    # --- events ---------------------------------------------------------------------
    def _row(self, change: RowChange, txn: Transaction) -> Iterator[KafkaRecord]:
        change = cdc_visible(change)
        t = change.table
        topic = self.router.topic_for(t)
        row = change.after if change.after is not None else change.before
        p = self._partition(topic, self.router.partition_for(t, row, txn.commit_ts, self.config.partition_num))
        if self.module.uses_bootstrap:
            yield from self._maybe_bootstrap(p, t, physical_ms(txn.commit_ts))
        yield from self._send(p, RowEvent(change, txn.commit_ts, txn.start_ts))

    def _maybe_bootstrap(self, p: _Partition, t: TableSchema, now_ms: int) -> Iterator[KafkaRecord]:
        """TiCDC pkg/sink/codec/bootstraper.go: a table's first row event sends a BOOTSTRAP at once;
        later ones when `send-bootstrap-in-msg-count` rows were sent or
        `send-bootstrap-interval-in-sec` passed since the last one; a table without row events for
        30 minutes is forgotten, so its next row event counts as a first one again."""
        cfg = self.config
        if cfg.send_bootstrap_interval_in_sec <= 0 and cfg.send_bootstrap_in_msg_count <= 0:
            return  # both 0 disables bootstrap (spec 004)
        name = (t.schema, t.table)
        stat = self._bootstrap_stats.get(name)
        if stat is not None and now_ms - stat.last_row_ms > _INACTIVE_MS:
            stat = None
        if stat is None:
            stat = self._bootstrap_stats[name] = _BootstrapStat(last_sent_ms=now_ms, last_row_ms=now_ms)
            due = True
        else:
            stat.counter += 1
            stat.last_row_ms = now_ms
            due = (now_ms - stat.last_sent_ms >= cfg.send_bootstrap_interval_in_sec * 1000
                   or stat.counter >= cfg.send_bootstrap_in_msg_count)
        if not due:
            return
        stat.last_sent_ms = now_ms
        stat.counter = 0
        targets = self._topic_partitions(p.topic) if cfg.send_bootstrap_to_all_partition \
            else [self._partition(p.topic, 0)]
        for target in targets:
            yield from self._send(target, BootstrapEvent(t))

    def _transaction(self, txn: Transaction) -> Iterator[KafkaRecord]:
        deferred: list[RowChange] = []
        for change in txn.changes:
            now, later = split_if_key_changed(change, self.config.output_raw_change_event)
            yield from self._row(now, txn)
            if later is not None:
                deferred.append(later)
        for change in deferred:
            yield from self._row(change, txn)
        self._last_ts = txn.commit_ts

    def _ddl(self, ddl: DDL) -> Iterator[KafkaRecord]:
        table = ddl.table_after or ddl.table_before
        topic = self.router.topic_for(table) if table is not None else self.config.topic
        targets = self._topic_partitions(topic) if self.module.ddl_to_all_partitions(self.config) \
            else [self._partition(topic, 0)]
        for p in self._topic_partitions(topic):
            yield from self._emit(p, p.encoder.flush())
        for p in targets:
            yield from self._send(p, DDLEvent(ddl))
        self._last_ts = ddl.commit_ts

    def _watermark(self, ts: int) -> Iterator[KafkaRecord]:
        if not self.module.sends_watermarks(self.config):
            return
        for topic in sorted({t for t, _ in self.partitions} | {self.config.topic}):
            for p in self._topic_partitions(topic):
                yield from self._emit(p, p.encoder.flush())
                yield from self._send(p, WatermarkEvent(ts))

    def run(self, history: Iterable[Transaction | DDL]) -> Iterator[KafkaRecord]:
        """All Kafka records of the changefeed, in send order (offsets per partition contiguous)."""
        for event in history:
            if isinstance(event, Transaction):
                yield from self._transaction(event)
            else:
                yield from self._ddl(event)
            now = physical_ms(self._last_ts)
            if self._last_watermark_ms is None:
                self._last_watermark_ms = now
            elif now - self._last_watermark_ms >= self.config.watermark_interval_ms:
                self._last_watermark_ms = now
                yield from self._watermark(self._last_ts)
        # The final resolved ts: everything has been sent.
        yield from self._watermark(self._last_ts)
        for key in sorted(self.partitions):
            p = self.partitions[key]
            yield from self._emit(p, p.encoder.flush())
