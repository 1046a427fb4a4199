"""The Spark consumer's driver-side plan: checkpoints, the apply order, DDL and BOOTSTRAP admission.

Everything here works on the small part of the stream the driver collects (progress, watermark,
DDL, BOOTSTRAP and end rows of the decode stage, consumers/rules/decode_stage.py), never on row events. It
reproduces, as sets, what the sequential consumer (sequential/consumer.py) decides event by event:

- arrival order: a decoded event's place is `position(row)` = (pos_ts, topic, partition,
  pos_offset, offset, seq), the order in which sequential/consumer.py's merge reads the records (consumers/rules/decode_stage.py);
- checkpoints: walking the partitions' progress rows in arrival order, the global watermark (the
  minimum over every partition, consumers/rules/watermarks.py) is recorded as a checkpoint each time it rises above
  the last one, at the record where it did (after that record's events);
- what is applied when (`APPLY_KEY`): every applied item has a checkpoint index k (the checkpoint
  whose flush applies it; K = number of checkpoints for what is applied after the last one) and a
  phase: 0 = applied on arrival (no commit ts; BOOTSTRAP), ordered by arrival; 1 = applied by the
  flush at checkpoint k, ordered by commit ts, row events before the DDLs of the same commit ts,
  rows of one transaction by (schema, table, key order, op, arrival) as sequential/consumer.py sorts them, DDLs
  by first arrival; 2 = the checkpoint line itself. A row event or DDL at or below the checkpoint
  before its arrival is a re-send and is dropped; one above it waits for the first checkpoint at
  or above its commit ts (every earlier checkpoint lies below it), or, when the stream carries no
  watermark at all, is applied at the end (k = 0 = K, phase 1);
- DDL: applied once per (commit ts, schema, table, query), at its first arrival not dropped
  (consumers/rules/ordering.py DDLQueue).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ticdc_conformance.consumers.rules.ordering import arrival_copy
from ticdc_conformance.consumers.rules.watermarks import MAX_LOGGED, Regression

Position = tuple  # (pos_ts, topic, partition, pos_offset, offset, seq)
# The apply order, as columns of the Spark consumer's row DataFrames and as Python tuples.
APPLY_KEY = ["k", "phase", "ts0", "kind_rank", "s_schema", "s_table", "s_key_order", "op_rank",
             "pos_ts", "topic", "partition", "pos_offset", "offset", "seq", "piece"]
PHASE_ARRIVAL, PHASE_FLUSH, PHASE_CHECKPOINT = 0, 1, 2
INTRO_PIECE = -1  # a table's columns named by a row event come before the event itself


def position(row: dict) -> Position:
    return (row["pos_ts"], row["topic"], row["partition"], row["pos_offset"], row["offset"], row["seq"])


def arrival_key(k: int, pos: Position, piece: int = 0) -> tuple:
    """An item applied on arrival (phase 0): ordered by its place in the stream."""
    return (k, PHASE_ARRIVAL, 0, 0, "", "", "", 0, *pos, piece)


def flush_row_key(k: int, ts: int, schema: str, table: str, key_order: Optional[str], op_rank: int,
                  pos: Position, piece: int = 0) -> tuple:
    return (k, PHASE_FLUSH, ts, 0, schema, table, key_order or "", op_rank, *pos, piece)


def flush_ddl_key(k: int, ts: int, pos: Position) -> tuple:
    return (k, PHASE_FLUSH, ts, 1, "", "", "", 0, *pos, 0)


def checkpoint_key(k: int) -> tuple:
    return (k, PHASE_CHECKPOINT, 0, 0, "", "", "", 0, 0, "", 0, 0, 0, 0, 0)


def txn_bound(key: tuple) -> tuple:
    """What must be applied before the transaction whose first row has `key`: everything ordered
    before it, the columns its own rows name, and not the DDLs of its commit ts."""
    if key[1] == PHASE_FLUSH:
        return (key[0], PHASE_FLUSH, key[2], 1)
    return key[:-1] + (0,)


@dataclass
class Checkpoints:
    values: list[int] = field(default_factory=list)  # W_0 < W_1 < ...
    positions: list[Position] = field(default_factory=list)  # where each was reached
    seen: bool = False  # the stream carried a watermark (sequential/consumer.py: watermarks.seen)

    @property
    def count(self) -> int:
        return len(self.values)

    @classmethod
    def from_progress(cls, progress: Iterable[dict], partitions: Iterable[tuple[str, int]],
                      seen: bool) -> "Checkpoints":
        """`progress`: the decode stage's progress rows. A partition the manifest did not list
        counts from its first record on (sequential/consumer.py: watermarks.know)."""
        marks: dict[tuple[str, int], int] = {tp: 0 for tp in partitions}
        out = cls(seen=seen)
        applied = 0
        for row in sorted(progress, key=position):
            marks[(row["topic"], row["partition"])] = row["mark"]
            mark = min(marks.values())
            if mark > applied:
                applied = mark
                out.values.append(mark)
                out.positions.append(position(row))
        return out

    def reached_before(self, pos: Position) -> int:
        """How many checkpoints were recorded before an event at `pos` arrived."""
        return bisect.bisect_left(self.positions, pos)

    def flush_of(self, ts: int) -> int:
        """The index of the first checkpoint at or above `ts` (= count: none yet)."""
        return bisect.bisect_left(self.values, ts)

    def is_resend(self, pos: Position, ts: int) -> bool:
        """At or below the global watermark applied when it arrived: already applied (sequential/consumer.py on_row)."""
        n = self.reached_before(pos)
        return n > 0 and ts <= self.values[n - 1]

    def flush_key(self, ts: int) -> Optional[int]:
        """The checkpoint index whose flush applies an event at `ts` not dropped; None: it waits."""
        if not self.seen:
            return 0  # no watermark ever: everything is applied at the end of the stream
        k = self.flush_of(ts)
        return k if k < self.count else None


@dataclass
class AdmittedDDLs:
    """The DDLs the consumer applies, keyed by apply order, and what it dropped."""
    items: list[tuple[tuple, dict]] = field(default_factory=list)
    dropped_below_watermark: int = 0
    copies_dropped: int = 0
    in_arrival_order: int = 0
    waiting: int = 0


def admit_ddls(rows: Iterable[dict], cps: Checkpoints) -> AdmittedDDLs:
    out = AdmittedDDLs()
    first: dict[tuple, tuple[Position, dict]] = {}
    seen_on_arrival: set[tuple] = set()
    for row in sorted(rows, key=position):
        pos, ts = position(row), row["commit_ts"]
        if ts is None:
            if arrival_copy(row, seen_on_arrival):
                out.copies_dropped += 1
                continue
            out.in_arrival_order += 1
            out.items.append((arrival_key(cps.reached_before(pos), pos), row))
        elif cps.is_resend(pos, ts):
            out.dropped_below_watermark += 1
        else:
            ident = (ts, row["schema"], row["table"], row["query"])
            if ident in first:
                out.copies_dropped += 1
            else:
                first[ident] = (pos, row)
    for (ts, *_), (pos, row) in first.items():
        k = cps.flush_key(ts)
        if k is None:
            out.waiting += 1
        else:
            out.items.append((flush_ddl_key(k, ts, pos), row))
    out.items.sort(key=lambda item: item[0])
    return out


def regressions(watermark_rows: Iterable[dict]) -> tuple[int, list[dict]]:
    """Watermarks below their partition's (decode stage `mark`): count and the first ones logged."""
    found = [r for r in sorted(watermark_rows, key=position) if r["commit_ts"] < r["mark"]]
    log = [Regression(r["topic"], r["partition"], r["offset"], r["commit_ts"], r["mark"]).to_json()
           for r in found[:MAX_LOGGED]]
    return len(found), log


def ddl_keys(ddls: AdmittedDDLs) -> list[tuple]:
    """Apply keys of the DDLs, to count how many come before a row event (its DDL segment)."""
    return [key for key, _ in ddls.items]
