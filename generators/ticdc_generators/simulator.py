"""The TiCDC Kafka sink simulator: upstream history in, Kafka records out, streaming.

It runs the sink (sink/: config, dispatch, column selection, delivery, failover) with the
protocol's encoder (protocols/); it sits above both, so the encoders, which read the sink's
config and events, never import it back.
What it decides (and where TiCDC decides the same):
- row dispatch by the partition dispatcher (sink/dispatch.py); several changes to one row in one
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
  see `_maybe_bootstrap`); with `send-all-bootstrap-at-start`, also every existing table's at
  each changefeed (re)start (see `_bootstrap_all`);
- with `interleave_tables`, rows of different tables interleave between checkpoints as TiCDC's
  per-table dispatchers let them (sink/delivery.py);
- with `failovers`, the changefeed restarts from an earlier checkpoint and sends everything
  above it again (sink/failover.py, `_failover`).
Offsets are contiguous per partition; the Kafka timestamp is the physical part of the event's TSO.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator, Optional

from ticdc_contract.model import DDL, ROWID, Op, RowChange, TableSchema, Transaction
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tso import physical_ms

from .protocols import EncoderModule, PartitionEncoder, encoder_module
from .sink.column_selector import dispatch_row, select_columns
from .sink.config import SinkConfig
from .sink.delivery import InterleaveWindow, table_pieces
from .sink.dispatch import Router
from .sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from .sink.failover import FailoverSchedule, ReplayLog, Restart

_INACTIVE_MS = 30 * 60 * 1000  # TiCDC bootstraper.go defaultMaxInactiveDuration


# run_into's writer: (topic, partition, offset, key, value, timestamp_ms, headers) of a record,
# as ticdc_contract.record_files.RecordFileWriter.write_fields takes them.
RecordFields = Callable[[str, int, int, Optional[bytes], Optional[bytes], int, tuple], None]


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


@dataclass(frozen=True)
class Sent:
    """One event the simulator handed an encoder, as an observer sees it: the records that carry
    it (none when the encoder holds it for a later batch, several when one event spans records;
    a batch that also carries other events is reported with the event that completed it)."""

    topic: str
    partition: int
    event: SinkEvent
    records: tuple[KafkaRecord, ...]
    # A row event's change as upstream made it, before TiCDC hid virtual columns and the row ID
    # (`cdc_visible`); None for other events.
    upstream_change: Optional[RowChange] = None


# Called with every Sent, in send order, before its records are yielded.
Observer = Callable[[Sent], None]

# Table versions whose routing is kept (_TableRoute); a history with more versions than this starts over.
_ROUTES_KEPT = 4096


@dataclass
class _TableRoute:
    """What the simulator decides once per table version rather than per row: the columns the
    selector keeps, the version TiCDC's row events carry (virtual columns and the row ID hidden),
    the topic and the partition function. Found by the version's identity (`table`, kept so the
    identity cannot be reused)."""

    table: TableSchema
    selected: Optional[frozenset[str]]
    visible: TableSchema
    hidden: Optional[frozenset[str]]  # names cdc_visible strips from the images; None: nothing
    topic: str
    partition: Callable[[dict, int], int]


def _visible_table(t: TableSchema) -> tuple[TableSchema, Optional[frozenset[str]]]:
    """cdc_visible's table and the names it strips, for one table version."""
    virtual = {c.name for c in t.columns if c.is_virtual}
    if not virtual and t.handle_key:
        return t, None
    table = replace(t, columns=tuple(c for c in t.columns if c.name not in virtual)) if virtual else t
    return table, frozenset(virtual | {ROWID})


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
    def __init__(self, config: SinkConfig, seed: int = 0, observer: Optional[Observer] = None) -> None:
        """`seed` drives the delivery choices (table interleaving, where restarts fall, what
        a restart loses in flight); the same config, seed and history give the same records.
        `observer`, when given, is told of every event sent and the records carrying it (`Sent`);
        it does not change what is sent."""
        self.config = config
        self._observer = observer
        self.module: EncoderModule = encoder_module(config.protocol)
        self.router = Router(config)
        self.partitions: dict[tuple[str, int], _Partition] = {}
        self._last_watermark_ms: Optional[int] = None
        self._last_ts = 0
        self._bootstrap_stats: dict[int, _BootstrapStat] = {}  # by table ID (_maybe_bootstrap)
        self._window = InterleaveWindow(random.Random(f"interleave/{seed}")) if config.interleave_tables else None
        self._schedule = FailoverSchedule(config.failovers, config.failover_spacing,
                                          random.Random(f"failover/{seed}"))
        self._replay = ReplayLog(config.checkpoint_lag) if config.failovers else None
        self._loss_rng = random.Random(f"in-flight/{seed}")
        self.restarts: list[Restart] = []
        self._routes: dict[int, _TableRoute] = {}
        self._write: Optional[RecordFields] = None  # run_into's destination

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
        write = self._write
        if write is not None:
            # run_into: the record's fields go straight to the writer, nothing is yielded
            topic, partition = p.topic, p.partition
            for m in messages:
                write(topic, partition, p.next_offset, m.key, m.value, physical_ms(m.ts), m.headers)
                p.next_offset += 1
            return
        for m in messages:
            yield KafkaRecord(
                topic=p.topic, partition=p.partition, offset=p.next_offset, key=m.key, value=m.value,
                timestamp_ms=physical_ms(m.ts), headers=m.headers,
            )
            p.next_offset += 1

    def _send(self, p: _Partition, event: SinkEvent,
              upstream_change: Optional[RowChange] = None) -> Iterator[KafkaRecord]:
        if self._observer is None:
            yield from self._emit(p, p.encoder.encode(event))
            return
        records = tuple(self._emit(p, p.encoder.encode(event)))
        self._observer(Sent(p.topic, p.partition, event, records, upstream_change))
        yield from records

    # --- events ---------------------------------------------------------------------
    def _route(self, t: TableSchema) -> _TableRoute:
        route = self._routes.get(id(t))
        if route is not None and route.table is t:
            return route
        # sink.column-selectors, judged on the whole table (virtual columns count for its keys).
        selected = select_columns(self.config, t, self.router.rule_for(t))
        visible, hidden = _visible_table(t)
        topic = self.router.topic_for(visible)
        partition = self.router.partitioner(visible, self.config.partition_num)
        if len(self._routes) >= _ROUTES_KEPT:
            self._routes.clear()
        route = self._routes[id(t)] = _TableRoute(t, selected, visible, hidden, topic, partition)
        return route

    def _row(self, change: RowChange, txn: Transaction) -> Iterator[KafkaRecord]:
        route = self._route(change.table)
        upstream_change = change
        if route.hidden is not None:
            # cdc_visible, with the visible table of this version made once
            hidden = route.hidden
            change = RowChange(route.visible, change.op,
                               None if change.before is None else {k: v for k, v in change.before.items()
                                                                   if k not in hidden},
                               None if change.after is None else {k: v for k, v in change.after.items()
                                                                  if k not in hidden})
        selected = route.selected
        row = change.after if change.after is not None else change.before
        if selected is not None:
            row = dispatch_row(self.config, row, selected)
        p = self._partition(route.topic, route.partition(row, txn.commit_ts))
        if self.module.uses_bootstrap:
            yield from self._maybe_bootstrap(p, upstream_change, physical_ms(txn.commit_ts))
        yield from self._send(p, RowEvent(change, txn.commit_ts, txn.start_ts, selected), upstream_change)

    def _maybe_bootstrap(self, p: _Partition, change: RowChange, now_ms: int) -> Iterator[KafkaRecord]:
        """TiCDC pkg/sink/codec/bootstraper.go: a table's first row event sends a BOOTSTRAP at once;
        later ones when `send-bootstrap-in-msg-count` rows were sent or
        `send-bootstrap-interval-in-sec` passed since the last one; a table without row events for
        30 minutes is forgotten, so its next row event counts as a first one again.
        A table is known by its ID, not its name: new TiCDC keys it by the table's ID
        (`TableInfo.TableName.TableID`), tiflow by the row's physical table ID (a partition's own
        ID, so each partition has its first row). A table that took another ID (TRUNCATE, the
        normal table of EXCHANGE PARTITION) therefore sends a BOOTSTRAP with its next row, and a
        consumer learns that version before its rows, which no DDL message describes for the
        exchanged normal table."""
        cfg = self.config
        if not self._bootstrap_enabled():
            return
        # A BOOTSTRAP describes the upstream table, virtual columns included, like the DDL's tableSchema
        # of the same version (TiCDC pkg/sink/codec/simple/message.go newTableSchema: every column).
        t = change.table
        table_id = t.physical_id(change.after if change.after is not None else change.before) \
            if cfg.version_profile == "tiflow" else t.table_id
        stat = self._bootstrap_stats.get(table_id)
        if stat is not None and now_ms - stat.last_row_ms > _INACTIVE_MS:
            stat = None
        if stat is None:
            stat = self._bootstrap_stats[table_id] = _BootstrapStat(last_sent_ms=now_ms, last_row_ms=now_ms)
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

    def _bootstrap_enabled(self) -> bool:
        """TiCDC pkg/config/sink.go ShouldSendBootstrapMsg: Simple sends BOOTSTRAP only while both
        `send-bootstrap-interval-in-sec` and `send-bootstrap-in-msg-count` are above 0 (spec 004:
        set both to 0 to disable)."""
        cfg = self.config
        return cfg.send_bootstrap_interval_in_sec > 0 and cfg.send_bootstrap_in_msg_count > 0

    def _bootstrap_all(self, tables: Iterable[TableSchema]) -> Iterator[KafkaRecord]:
        """send-all-bootstrap-at-start: when a changefeed (re)starts, a BOOTSTRAP of every table
        existing at its start ts, before any other event of that run (TiCDC
        downstreamadapter/dispatcher/event_dispatcher.go EmitBootstrap, run by
        dispatcher_manager.go before the table trigger dispatcher receives events; tiflow
        cdc/owner/ddl_manager.go trySendBootstrap, which holds the changefeed back until done).
        They go the DDL way (kafka sink.go sendDDLEvent): to every partition whatever
        `send-bootstrap-to-all-partition` says, and in new TiCDC to the default topic, since the
        bootstrap DDL event carries no schema/table name for GetTopicForDDL (tiflow routes it by its
        TableInfo). New TiCDC lists physical tables, so a partitioned table's BOOTSTRAP goes out once
        per partition (pkg/common/event/table_schema_store.go GetAllNormalTableIds; schemastore
        adds every partition ID). Tables created later get theirs before their first row as usual."""
        cfg = self.config
        if not (self.module.uses_bootstrap and cfg.send_all_bootstrap_at_start and self._bootstrap_enabled()):
            return
        ticdc = cfg.version_profile == "ticdc"
        for t in sorted(tables, key=lambda t: t.table_id):
            topic = cfg.topic if ticdc else self.router.topic_for(t)
            targets = self._topic_partitions(topic) if self.module.ddl_to_all_partitions(cfg) \
                else [self._partition(topic, 0)]
            copies = len(t.partitioning.partitions) if ticdc and t.partitioning is not None else 1
            for _ in range(copies):
                for p in targets:
                    yield from self._send(p, BootstrapEvent(t, at_start=True))

    def _transaction(self, txn: Transaction) -> Iterator[KafkaRecord]:
        if self._window is not None:
            # Held until the window closes; there the rows go per table (sink/delivery.py), each
            # table's key-changing inserts after that table's other rows of the transaction.
            self._window.add(table_pieces(txn, lambda c: split_if_key_changed(c, self.config.output_raw_change_event)))
            self._last_ts = txn.commit_ts
            return
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
        yield from self._flush_window()  # a DDL is a barrier no row crosses
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

    def _flush_window(self) -> Iterator[KafkaRecord]:
        if self._window is not None:
            yield from self._send_pieces(self._window.drain())

    def _send_pieces(self, pieces) -> Iterator[KafkaRecord]:
        for txn, rows in pieces:
            for change in rows:
                yield from self._row(change, txn)

    def _checkpoint(self, ts: int) -> Iterator[KafkaRecord]:
        """The changefeed's checkpoint advanced to `ts`: every row up to it is out, then it is
        broadcast; a later restart may go back to it."""
        yield from self._flush_window()
        if self._replay is not None:
            self._replay.checkpoint(ts)
        yield from self._watermark(ts)

    def _deliver(self, event: Transaction | DDL) -> Iterator[KafkaRecord]:
        if isinstance(event, Transaction):
            yield from self._transaction(event)
        else:
            yield from self._ddl(event)
        if self._replay is not None:
            self._replay.processed(event)
        now = physical_ms(self._last_ts)
        if self._last_watermark_ms is None:
            self._last_watermark_ms = now
        elif now - self._last_watermark_ms >= self.config.watermark_interval_ms:
            self._last_watermark_ms = now
            yield from self._checkpoint(self._last_ts)

    def _failover(self, pending: deque) -> Iterator[KafkaRecord]:
        """The changefeed fails after the event just delivered and restarts from a checkpoint
        (failover.py). In flight when it fails: a seeded part of the open window reaches Kafka,
        the rest never does, nor does an Open Protocol message still being filled. The restarted
        changefeed has new producers and encoders (batches are cut anew; Simple's bootstrap
        worker, pkg/sink/codec/bootstraper.go, starts with no table, so each table's first row
        brings a BOOTSTRAP again), first sends the at-start BOOTSTRAPs and its checkpoint, then
        every event above the checkpoint: those of the failed run, then those still pending."""
        if self._window is not None:
            pieces = self._window.drain()
            yield from self._send_pieces(pieces[:self._loss_rng.randint(0, len(pieces))])
        checkpoint, tables, replay = self._replay.restart()
        self.restarts.append(Restart(checkpoint, {k: p.next_offset for k, p in sorted(self.partitions.items())}))
        old, self.partitions = self.partitions, {}
        for key in sorted(old):
            self._partition(*key).next_offset = old[key].next_offset
        self._bootstrap_stats = {}
        self._last_ts = checkpoint
        self._last_watermark_ms = physical_ms(checkpoint)
        yield from self._bootstrap_all(tables)
        yield from self._watermark(checkpoint)
        pending.extendleft(reversed(replay))

    def run_into(self, history: Iterable[Transaction | DDL], write: RecordFields) -> None:
        """`run`, each record handed to `write` as its fields (topic, partition, offset, key, value,
        timestamp_ms, headers) instead of yielded as a KafkaRecord: the same records in the same
        order (tests/generators/test_simulator_write.py). A generation writes hundreds of thousands
        of records, and building each frozen KafkaRecord and passing it up the generators' frames
        cost more than the writer's work on it. With an observer, which is shown the records, the
        records are made and taken apart."""
        if self._observer is not None:
            for r in self.run(history):
                write(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp_ms, r.headers)
            return
        self._write = write
        try:
            for _ in self.run(history):
                raise AssertionError("a record was yielded while run_into writes them")
        finally:
            self._write = None

    def run(self, history: Iterable[Transaction | DDL]) -> Iterator[KafkaRecord]:
        """All Kafka records of the changefeed, in send order (offsets per partition contiguous).
        At its first start the changefeed's start ts lies just below the history's first event,
        so no table exists yet and send-all-bootstrap-at-start has nothing to send."""
        pending: deque[Transaction | DDL] = deque()  # events a restart sends again
        source = iter(history)
        while True:
            event = pending.popleft() if pending else next(source, None)
            if event is None:
                break
            yield from self._deliver(event)
            if self._schedule.due():
                yield from self._failover(pending)
        # The final checkpoint: everything has been sent.
        yield from self._flush_window()
        yield from self._watermark(self._last_ts)
        for key in sorted(self.partitions):
            p = self.partitions[key]
            yield from self._emit(p, p.encoder.flush())
