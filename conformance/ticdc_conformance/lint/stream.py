"""Stream-level checks over decoded events, one pass, per partition and per topic.

Per partition: watermarks never fall back except in a replay (reported as info, KAFKA-DELIVERY-1);
a first-sent event (one the partition did not carry before, see seen.py) is never below an earlier
watermark of the partition, nor (Simple) below an earlier DDL; first-sent row events of a table come
in commit-ts order. Per topic: all changes of a row (table + handle key) in one partition; DDL and
watermarks on every partition (broadcast.py), Canal-JSON DDL on partition 0 only. Which of these a
protocol's spec states is in profile.py.

Memory is per partition and table (frontiers, the recent-event window) and per row key (8 bytes of
digest and a partition number, capped like the window), never per record of the stream.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ticdc_contract.record import KafkaRecord

from ..events import DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ..rules import checks_rules
from .broadcast import TopicBroadcasts
from .findings import Findings
from .identity import ddl_identity, digest, row_identity, row_key, watermark_identity
from .profile import BROADCAST_RULES, DISPATCH_RULES, ORDER_RULES, REPLAY_RULE, WATERMARK_RULES, stream_rules
from .seen import SeenWindow
from .settings import LintSettings


@dataclass
class PartitionCounts:
    records: int = 0
    rows: int = 0
    ddl: int = 0
    watermarks: int = 0
    resent: int = 0  # events the partition carried before (at-least-once re-sends)
    unjudged: int = 0  # events below the seen window's floor, too old to tell re-sent from new
    untimed: int = 0  # events without a commit ts (Canal-JSON, Debezium without the TiDB extension)
    replays: int = 0  # watermarks that fell back

    def add(self, other: "PartitionCounts") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class _Partition:
    topic: str
    partition: int
    seen: SeenWindow
    watermark: Optional[tuple[int, int]] = None  # (highest watermark, its offset)
    ddl_floor: Optional[tuple[int, int]] = None  # (highest first-sent DDL commit ts, its offset)
    tables: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # table -> (ts, offset)
    counts: PartitionCounts = field(default_factory=PartitionCounts)


@dataclass
class _Topic:
    broadcasts: TopicBroadcasts
    row_partition: dict[int, int] = field(default_factory=dict)  # row key digest -> partition
    untracked_keys: int = 0


def _what(ev: DecodedEvent) -> str:
    if isinstance(ev, DecodedRow):
        return f"{ev.op} of {ev.schema}.{ev.table}"
    if isinstance(ev, DecodedDDL):
        return f"DDL {ev.query!r}"
    return "event"


class StreamChecker:
    def __init__(self, settings: LintSettings, findings: Findings) -> None:
        self.settings = settings
        self.rules = stream_rules(settings.protocol)
        self.findings = findings
        self._partitions: dict[tuple[str, int], _Partition] = {}
        self._topics: dict[str, _Topic] = {}
        for topic, count in settings.topics.items():
            self.expect(topic, range(count))

    # --- topology -----------------------------------------------------------------------------
    def expect(self, topic: str, partitions: Iterable[int]) -> None:
        """Partitions known before their records arrive (from a manifest, the record files, the topic)."""
        broadcasts = self._topic(topic).broadcasts
        for partition in partitions:
            broadcasts.join(partition, late=False)

    def _topic(self, topic: str) -> _Topic:
        t = self._topics.get(topic)
        if t is None:
            t = self._topics[topic] = _Topic(TopicBroadcasts(topic, self.findings))
        return t

    def _partition(self, record: KafkaRecord) -> _Partition:
        key = (record.topic, record.partition)
        p = self._partitions.get(key)
        if p is None:
            p = self._partitions[key] = _Partition(
                record.topic, record.partition, SeenWindow(self.settings.horizon, self.settings.capacity))
            self._topic(record.topic).broadcasts.join(record.partition, late=True)
        return p

    # --- events -------------------------------------------------------------------------------
    def record(self, record: KafkaRecord) -> None:
        """Every record, decodable or not, before its events."""
        self._partition(record).counts.records += 1
        self._topic(record.topic).broadcasts.saw_record(record.partition, record.offset)

    def event(self, record: KafkaRecord, ev: DecodedEvent) -> None:
        p = self._partition(record)
        if isinstance(ev, DecodedRow):
            p.counts.rows += 1
            self._row(p, record, ev)
        elif isinstance(ev, DecodedDDL):
            p.counts.ddl += 1
            self._ddl(p, record, ev)
        elif isinstance(ev, DecodedWatermark):
            p.counts.watermarks += 1
            self._watermark(p, record, ev.ts)
        # A BOOTSTRAP carries no commit ts and takes part in no stream rule here (the Simple reader
        # checks that one precedes each table's DML).

    def _first_sent(self, p: _Partition, identity: int, ts: int) -> bool:
        """Whether the event is new to the partition (and remember it); re-sent and too-old events are
        counted, not judged."""
        if identity in p.seen:
            p.counts.resent += 1
            return False
        if ts < p.seen.floor:
            p.counts.unjudged += 1
            return False
        p.seen.add(identity, ts)
        return True

    def _row(self, p: _Partition, record: KafkaRecord, row: DecodedRow) -> None:
        if row.commit_ts is None:
            p.counts.untimed += 1
            return
        if not self._first_sent(p, row_identity(row), row.commit_ts):
            return
        self._below_watermark(p, record, row.commit_ts, _what(row))
        self._after_ddl(p, record, row)
        self._table_order(p, record, row)
        self._same_partition(p, record, row)

    def _ddl(self, p: _Partition, record: KafkaRecord, ddl: DecodedDDL) -> None:
        self._ddl_partition(record, ddl)
        if ddl.commit_ts is None:
            p.counts.untimed += 1
            return
        identity = ddl_identity(ddl)
        if not self._first_sent(p, identity, ddl.commit_ts):
            return
        self._below_watermark(p, record, ddl.commit_ts, _what(ddl))
        if p.ddl_floor is None or ddl.commit_ts > p.ddl_floor[0]:
            p.ddl_floor = (ddl.commit_ts, record.offset)
        if self.rules.ddl_broadcast:
            self._topic(record.topic).broadcasts.ddl(
                identity, ddl.commit_ts, self.rules.ddl_broadcast,
                f"DDL {ddl.query!r} (commit ts {ddl.commit_ts})", record.partition, record.offset)

    # --- checks -------------------------------------------------------------------------------
    @checks_rules(*WATERMARK_RULES, name="lint.stream.below-watermark",
                  description="no first-sent row event or DDL below an earlier watermark of its partition")
    def _below_watermark(self, p: _Partition, record: KafkaRecord, ts: int, what: str) -> None:
        if p.watermark is not None and ts < p.watermark[0]:
            wm, offset = p.watermark
            self.findings.at(record, self.rules.watermark,
                             f"first-sent {what} at commit ts {ts} is below the partition's watermark {wm} "
                             f"(offset {offset}), which said everything below it was sent")

    @checks_rules("SIMPLE-ORDER-1", name="lint.stream.after-ddl",
                  description="no first-sent row event below an earlier DDL of its partition (Simple)")
    def _after_ddl(self, p: _Partition, record: KafkaRecord, row: DecodedRow) -> None:
        if self.rules.ddl_barrier and p.ddl_floor is not None and row.commit_ts < p.ddl_floor[0]:
            floor, offset = p.ddl_floor
            self.findings.at(record, self.rules.ddl_barrier,
                             f"first-sent {_what(row)} at commit ts {row.commit_ts} follows the DDL at commit ts "
                             f"{floor} (offset {offset}), which is sent only after every earlier transaction")

    @checks_rules(*ORDER_RULES, name="lint.stream.table-order",
                  description="first-sent row events of a table come in non-decreasing commit ts order "
                              "in each partition")
    def _table_order(self, p: _Partition, record: KafkaRecord, row: DecodedRow) -> None:
        table = (row.schema, row.table)
        last = p.tables.get(table)
        if last is not None and row.commit_ts < last[0]:
            if self.rules.order:
                self.findings.at(record, self.rules.order,
                                 f"first-sent {_what(row)} at commit ts {row.commit_ts} comes after one of the "
                                 f"same table at commit ts {last[0]} (offset {last[1]})")
            return
        p.tables[table] = (row.commit_ts, record.offset)

    @checks_rules(*DISPATCH_RULES, name="lint.stream.same-partition",
                  description="every change of a row (table + handle key) lands in one partition of the topic")
    def _same_partition(self, p: _Partition, record: KafkaRecord, row: DecodedRow) -> None:
        if not self.rules.dispatch or not self.settings.keeps_rows_in_place(row.schema, row.table):
            return
        key = row_key(row)
        if key is None:
            return
        topic = self._topic(record.topic)
        token = digest("key", row.schema, row.table, key)
        known = topic.row_partition.get(token)
        if known is None:
            if len(topic.row_partition) < self.settings.capacity:
                topic.row_partition[token] = record.partition
            else:
                topic.untracked_keys += 1
        elif known != record.partition:
            self.findings.at(record, self.rules.dispatch,
                             f"{_what(row)} with key {dict(zip(*key))} at commit ts {row.commit_ts} is on "
                             f"partition {record.partition}; earlier changes of that row were on partition {known}")

    @checks_rules(*BROADCAST_RULES, name="lint.stream.broadcast",
                  description="DDL and watermarks reach every partition of their topic before the stream "
                              "ends (Canal-JSON: DDL on partition 0 only)")
    def _ddl_partition(self, record: KafkaRecord, ddl: DecodedDDL) -> None:
        if self.rules.ddl_partition_zero and record.partition != 0:
            self.findings.at(record, self.rules.ddl_partition_zero,
                             f"DDL {ddl.query!r} is on partition {record.partition}; the protocol sends DDL "
                             f"to partition 0 only")

    @checks_rules(REPLAY_RULE, name="lint.stream.replays",
                  description="re-sent events and fallen-back watermarks are at-least-once replays: counted "
                              "and reported as info, never as violations")
    def _watermark(self, p: _Partition, record: KafkaRecord, ts: int) -> None:
        topic = self._topic(record.topic)
        identity = watermark_identity(ts)
        if self.rules.watermark_broadcast and ts >= p.seen.floor and identity not in p.seen:
            p.seen.add(identity, ts)
            topic.broadcasts.watermark(identity, ts, self.rules.watermark_broadcast, record.partition,
                                       record.offset)
        if p.watermark is None or ts > p.watermark[0]:
            p.watermark = (ts, record.offset)
            p.seen.advance(ts)
            topic.broadcasts.passed(record.partition, ts, record.offset)
        elif ts < p.watermark[0]:
            p.counts.replays += 1
            self.findings.info(REPLAY_RULE, record.topic, record.partition, record.offset,
                               f"watermark {ts} falls back below {p.watermark[0]} (offset {p.watermark[1]}): "
                               f"a replay, as after a changefeed restart; not a violation")

    # --- end ----------------------------------------------------------------------------------
    def finish(self) -> None:
        for name in sorted(self._topics):
            self._topics[name].broadcasts.finish()

    def summary(self) -> dict[str, Any]:
        total = PartitionCounts()
        partitions = {}
        for (topic, partition), p in sorted(self._partitions.items()):
            total.add(p.counts)
            partitions[f"{topic}/{partition}"] = {
                **p.counts.__dict__,
                "watermark": p.watermark[0] if p.watermark else None,
            }
        return {"totals": dict(total.__dict__), "partitions": partitions,
                "untracked_row_keys": sum(t.untracked_keys for t in self._topics.values())}
