"""Row delivery between two barriers: how TiCDC's per-table pipelines interleave tables.

TiCDC runs one dispatcher per table (downstreamadapter/dispatcher). Each hands the Kafka sink
whole DMLEvents: the rows of one transaction on one table, in the transaction's order, the
inserts of key-changing updates last (pkg/eventservice/event_scanner.go flushCachedInsertRows),
cut into pieces of at most `DML_EVENT_MAX_ROWS` rows because a Kafka changefeed's
transaction-atomicity is "none" (pkg/config/sink.go ShouldSplitTxn; event_scanner.go
TxnEvent.AppendRow; pkg/config/debug.go DMLEventMaxRows). Every dispatcher pushes into the one
channel of the shared sink (downstreamadapter/sink/kafka/sink.go AddDMLEvent), whose single
routing goroutine (calculateKeyPartitions) pushes all rows of one DMLEvent together and keeps
that order per partition. So, per partition:
- a table's rows keep their commit order, and the rows of one piece stay together;
- pieces of different tables arrive in whatever order the dispatchers happened to run.
Spec 002 (Open Protocol, Restrictions) promises no more than that: "On the same table, the Row
Changed Events of each version which is first sent are incremented in the order of timestamps".

The simulator lets tables interleave only inside one window: between two checkpoints
(watermark broadcasts) and never across a DDL. TiCDC allows more (a dispatcher can run ahead of a
checkpoint that another table still holds back); the windows are a subset of its orders that
keep every row above the watermarks and DDLs sent before it. DMLEventMaxBytes (1 MiB) also cuts
pieces; only the row limit is applied here.
"""
from __future__ import annotations

import random
from collections import deque
from typing import Callable, Optional

from ticdc_contract.model import RowChange, Transaction

# TiCDC pkg/config/debug.go: DMLEventMaxRows' default.
DML_EVENT_MAX_ROWS = 256

# One DMLEvent as the sink receives it: the transaction and its rows on one table.
Piece = tuple[Transaction, tuple[RowChange, ...]]
Split = Callable[[RowChange], tuple[Optional[RowChange], Optional[RowChange]]]


def table_pieces(txn: Transaction, split: Split) -> list[tuple[int, Piece]]:
    """A transaction as TiCDC's dispatchers hand it over: per table (by table ID, in order of
    first appearance) the rows in transaction order with deferred inserts last, in pieces of at
    most DML_EVENT_MAX_ROWS rows. `split` is the key-changing-update rule (in place, deferred)."""
    per_table: dict[int, tuple[list[RowChange], list[RowChange]]] = {}
    for change in txn.changes:
        now, later = split(change)
        rows, deferred = per_table.setdefault(change.table.table_id, ([], []))
        if now is not None:
            rows.append(now)
        if later is not None:
            deferred.append(later)
    out: list[tuple[int, Piece]] = []
    for table_id, (rows, deferred) in per_table.items():
        ordered = rows + deferred
        for i in range(0, len(ordered), DML_EVENT_MAX_ROWS):
            out.append((table_id, (txn, tuple(ordered[i:i + DML_EVENT_MAX_ROWS]))))
    return out


class InterleaveWindow:
    """The pieces of one window, queued per table until the window closes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._queues: dict[int, deque[Piece]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, pieces: list[tuple[int, Piece]]) -> None:
        for table_id, piece in pieces:
            self._queues.setdefault(table_id, deque()).append(piece)
            self._count += 1

    def drain(self) -> list[Piece]:
        """Every queued piece, in a seeded order that keeps each table's own order. The next piece
        comes from a table chosen with odds proportional to what it still holds, so every
        interleaving of the tables' sequences is equally likely."""
        tables = sorted(self._queues)
        out: list[Piece] = []
        remaining = self._count
        while remaining:
            pick = self.rng.randrange(remaining)
            for table_id in tables:
                queue = self._queues[table_id]
                if pick < len(queue):
                    out.append(queue.popleft())
                    break
                pick -= len(queue)
            remaining -= 1
        self._queues.clear()
        self._count = 0
        return out
