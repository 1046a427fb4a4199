"""Row events and DDL waiting for the global watermark.

Row events wait per partition and table, as TiCDC's consumer groups them (TiCDC cmd/util/
event_group.go EventsGroup: appended in arrival order, sorted by commit ts when a group went out of
order, resolved up to the watermark with commitTs <= watermark). Unlike TiCDC's consumer, which
relies on its MySQL sink being idempotent, the buffer also drops a copy of a row event that is
still waiting: applying a replayed DELETE again after its transaction's INSERT would remove a row.

A copy is recognised by its content (table, commit ts, op, both images). Rows of a table without
any key are told apart only by their image, so two identical row events of one transaction are
legitimate there; for them a copy counts as a replay only when it arrives in a later "epoch" of its
partition, i.e. after the partition showed a re-send (a watermark or a commit ts going back).

DDL is decoded from every partition that carries it (Open Protocol and Simple broadcast it) and
queued once per (commit ts, schema, table, query), as TiCDC's classic consumer keys DDL events to
ignore replays and broadcast copies (tiflow cmd/kafka-consumer writer.go ddlEventKey).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

TopicPartition = tuple[str, int]
# (commit ts, arrival number, decoded event, its entry in DMLBuffer.index: the entry's count goes
# down as the event leaves, without building the event's identity again to find it)
Pending = tuple[int, int, dict, list]


def row_identity(ev: dict) -> tuple:
    return (ev["schema"], ev["table"], ev["commit_ts"], ev["op"], ev["before"], ev["after"])


def is_image_keyed(ev: dict) -> bool:
    """True when the message named no key columns, so the row is identified by its image."""
    return ev.get("key_columns") in (None, "[]")


_commit_ts = itemgetter(0)
_arrival = itemgetter(1)


@dataclass
class _Group:
    events: list[Pending] = field(default_factory=list)
    high: int = 0  # highest commit ts seen (TiCDC's HighWatermark)
    out_of_order: bool = False


class DMLBuffer:
    def __init__(self) -> None:
        self.groups: dict[tuple[TopicPartition, str, str], _Group] = {}
        self.epochs: dict[TopicPartition, int] = {}
        # identity -> [partition, epoch, copies waiting, identity]
        self.index: dict[tuple, list[Any]] = {}
        self.copies_dropped = 0
        self.size = 0

    def new_epoch(self, tp: TopicPartition) -> None:
        """`tp` showed a re-send: what arrives from now on may repeat what is waiting."""
        self.epochs[tp] = self.epochs.get(tp, 0) + 1

    def add(self, tp: TopicPartition, arrival: int, ev: dict) -> bool:
        """Queues a row event; False when it is a copy of one already waiting (dropped)."""
        ts = ev["commit_ts"]
        where = (tp, ev["schema"], ev["table"])
        group = self.groups.get(where)
        if group is None:
            group = self.groups[where] = _Group()
        if ts < group.high:
            group.out_of_order = True
            self.new_epoch(tp)  # a commit ts going back within one table is a re-send
        epoch = self.epochs.get(tp, 0)
        ident = (ev["schema"], ev["table"], ts, ev["op"], ev["before"], ev["after"])  # row_identity(ev)
        seen = self.index.get(ident)
        if seen is not None:
            if not is_image_keyed(ev) or (seen[0], seen[1]) != (tp, epoch):
                self.copies_dropped += 1
                return False
            seen[2] += 1
        else:
            seen = self.index[ident] = [tp, epoch, 1, ident]
        if ts > group.high:
            group.high = ts
        group.events.append((ts, arrival, ev, seen))
        self.size += 1
        return True

    def pop_ready(self, watermark: int) -> list[Pending]:
        """Every waiting event with commit ts <= watermark, in (commit ts, arrival) order."""
        ready: list[Pending] = []
        for group in self.groups.values():
            if not group.events or group.events[0][0] > watermark and not group.out_of_order:
                continue
            if group.out_of_order:
                group.events.sort(key=_commit_ts)  # stable: arrival order within a commit ts
                group.out_of_order = False
            n = bisect.bisect_right(group.events, watermark, key=_commit_ts)
            ready.extend(group.events[:n])
            del group.events[:n]
        if len(ready) == self.size:
            # Everything waiting leaves, as at most watermarks (a partition's rows above the global
            # watermark are the exception): every entry's count would go to 0 one event at a time.
            self.index.clear()
        else:
            index = self.index
            for _, _, _, seen in ready:
                seen[2] -= 1
                if seen[2] <= 0:
                    del index[seen[3]]
        self.size -= len(ready)
        # In (commit ts, arrival) order: by arrival, then stably by commit ts; integer keys compare
        # several times faster than the pair, which a key would also build for every event.
        ready.sort(key=_arrival)
        ready.sort(key=_commit_ts)
        return ready

    def __len__(self) -> int:
        return self.size


def ddl_identity(ev: dict) -> tuple:
    return (ev["commit_ts"], ev["schema"], ev["table"], ev["query"])


class DDLQueue:
    def __init__(self) -> None:
        self.waiting: dict[tuple, tuple[int, dict]] = {}
        self.copies_dropped = 0

    def add(self, arrival: int, ev: dict) -> bool:
        ident = ddl_identity(ev)
        if ident in self.waiting:
            self.copies_dropped += 1
            return False
        self.waiting[ident] = (arrival, ev)
        return True

    def pop_ready(self, watermark: int) -> list[dict]:
        """DDL with commit ts <= watermark, in (commit ts, first arrival) order: the DDLs of one
        multi-table job share a commit ts and keep the order TiCDC sent them in."""
        ready = sorted((v for k, v in self.waiting.items() if k[0] <= watermark), key=lambda v: (v[1]["commit_ts"], v[0]))
        for _, ev in ready:
            del self.waiting[ddl_identity(ev)]
        return [ev for _, ev in ready]

    def __len__(self) -> int:
        return len(self.waiting)


def arrival_copy(ddl: dict, seen: set[tuple]) -> bool:
    """A DDL without commit ts that repeats one already applied: same record timestamp (the
    millisecond it happened, Canal-JSON `es`), schema, table and query -- a copy a restarted
    changefeed sent again. Applying it again would, for a CREATE TABLE, empty a table that later
    rows filled. Records `ddl` as seen otherwise."""
    ident = (ddl["record_ts"], ddl["schema"], ddl["table"], ddl["query"])
    if ident in seen:
        return True
    seen.add(ident)
    return False
