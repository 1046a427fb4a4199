"""A scenario's history without the rows that hold very large values, for a corpus of reasonable size.

Scenario `types` inserts every edge value of every type, the 1 MiB MEDIUMTEXT/LONGBLOB edges among
them; each such row appears in the records, the applied log and the final state of every variant,
tens of megabytes per case. A golden case may therefore leave out rows holding a value longer than
a cap (matrix.ScenarioCases.max_value_bytes, recorded in case.json). Large values stay
covered by scenario `wide-rows`.

What remains is still a history TiDB could have run: a row is left out for its whole life under
that key. Its INSERT is dropped; an UPDATE that gives a kept row a too-large value becomes a DELETE
of the row as it was (the row leaves); every later change of a left-out row is dropped, until an
INSERT brings the key back. Transactions left empty disappear. Only CREATE DDL may follow a left-out
row (a DDL that reshapes, renames or empties a table would need the left-out rows tracked through
it), which holds for the scenarios that use the cap.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Optional

from ticdc_contract.model import DDL, DDLType, Op, Row, RowChange, Transaction

_CREATES = (DDLType.CREATE_SCHEMA, DDLType.CREATE_TABLE)


class ValueCapError(ValueError):
    """The history does something the cap cannot follow."""


def _too_big(row: Optional[Row], cap: int) -> bool:
    return row is not None and any(isinstance(v, (str, bytes)) and len(v) > cap for v in row.values())


def largest_value(history: Iterable[DDL | Transaction]) -> int:
    """The length of the longest string or bytes value any row of the history holds."""
    return max((len(v) for event in history if isinstance(event, Transaction) for ch in event.changes
                for row in (ch.before, ch.after) if row is not None for v in row.values()
                if isinstance(v, (str, bytes))), default=0)


def capped_history(history: Iterable[DDL | Transaction], cap: int,
                   counts: Optional[dict] = None) -> Iterator[DDL | Transaction]:
    """The history without rows holding a value over `cap` bytes (characters for text);
    `counts["rows_left_out"]` counts the rows (INSERTs and UPDATEs) it left out."""
    left_out: set[tuple[str, str, tuple]] = set()  # (schema, table, row key)
    if counts is not None:
        counts.setdefault("rows_left_out", 0)
    for event in history:
        if isinstance(event, DDL):
            if event.ddl_type not in _CREATES and any(k[:2] == (event.schema, event.table) for k in left_out):
                raise ValueCapError(f"DDL at {event.commit_ts} ({event.query}) changes a table with left-out rows")
            yield event
            continue
        # A transaction's changes commute (every old image goes, then every new one arrives, as
        # ticdc_contract.state applies them), so membership is read before any is updated.
        kept: list[RowChange] = []
        gone: set[tuple] = set()
        out_now: set[tuple] = set()
        for ch in event.changes:
            t = ch.table
            old = (t.schema, t.table, t.row_key(ch.before)) if ch.before is not None else None
            new = (t.schema, t.table, t.row_key(ch.after)) if ch.after is not None else None
            if old is not None and old in left_out:
                gone.add(old)
                if new is not None:
                    out_now.add(new)  # the left-out row lives on under its new key
            elif _too_big(ch.after, cap):
                out_now.add(new)
                if counts is not None:
                    counts["rows_left_out"] += 1
                if ch.op is Op.UPDATE:
                    kept.append(RowChange(t, Op.DELETE, ch.before, None))  # the kept row leaves
            else:
                kept.append(ch)
        left_out = (left_out - gone) | out_now
        if kept:
            yield Transaction(event.start_ts, event.commit_ts, tuple(kept))
