"""An independent judge of histories: would TiDB have produced this sequence of events?

`check_history(events)` replays a history and raises `HistoryError` at the first event TiDB
could not have committed, or whose effect `ticdc_contract.state` gets wrong. It re-derives
what it checks rather than asking the upstream model, so histories built by hand, by scenarios
or by these strategies can all be held to it:

- commit ts never go back; events share a commit ts only within one multi-table job (CREATE
  TABLES, RENAME TABLES); a transaction's start ts is below its commit ts; every schema version a
  DDL brings in is below its commit ts;
- a DDL names a table that exists (a CREATE one that does not), and its `table_before` is the
  schema in force;
- a transaction's changes use the schema in force; UPDATE/DELETE before-images are the rows as
  they are; after-images hold every column, NULL only where allowed, values of the column's
  domain, partitioning values some partition takes; unique keys stay unique under the columns'
  collations once the transaction is applied (a transaction's collapsed changes apply all at
  once: the rows it leaves are the old ones minus every before-image plus every after-image);
- the state interpreter, applying the event, arrives at those same rows.
"""
from __future__ import annotations

from typing import Iterable

from ticdc_contract.model import DDL, ROWID, DDLType, HistoryEvent, Op, Row, TableSchema, Transaction
from ticdc_contract.state import TableStates

from .rows import is_valid, key_form

MULTI_TABLE_KINDS = (DDLType.CREATE_TABLE, DDLType.RENAME_TABLE)


class HistoryError(AssertionError):
    def __init__(self, index: int, event: HistoryEvent, reason: str) -> None:
        kind = event.ddl_type.name if isinstance(event, DDL) else "transaction"
        super().__init__(f"event #{index} ({kind} at {event.commit_ts}): {reason}")
        self.index, self.event, self.reason = index, event, reason


def check_row(t: TableSchema, row: Row, time_zone: str = "UTC") -> None:
    """Raises ValueError when `row` is not a full row of `t` with values its columns accept (and,
    in a table without a handle key, its hidden row ID)."""
    expected = set(t.column_names) | (set() if t.handle_key else {ROWID})
    if set(row) != expected:
        raise ValueError(f"columns {sorted(row)} != {sorted(expected)}")
    for c in t.columns:
        if not is_valid(c.type, row[c.name], nullable=c.nullable, time_zone=time_zone):
            raise ValueError(f"column {c.name} ({c.type.sql()}{'' if c.nullable else ' NOT NULL'}): "
                             f"{row[c.name]!r} is not a value of its domain")
    if t.partitioning is not None:
        t.partitioning.partition_of(row[t.partitioning.column])


def check_unique(t: TableSchema, rows: Iterable[Row]) -> None:
    """Raises ValueError when two rows share a unique key (NULLs aside) or the handle key (the
    hidden row ID in a table without one)."""
    ids = [t.row_key(r) for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two rows with one {'handle key' if t.handle_key else 'hidden row ID'}")
    for cols in [ix.columns for ix in t.indexes if ix.unique or ix.primary]:
        seen: set = set()
        for r in rows:
            k = key_form(t, cols, r)
            if None in k:
                continue
            if k in seen:
                raise ValueError(f"duplicate entry {k} for key ({', '.join(cols)})")
            seen.add(k)


def check_history(events: Iterable[HistoryEvent], time_zone: str = "UTC") -> TableStates:
    """Replays `events`, raising HistoryError at the first one TiDB could not have produced;
    returns the final states."""
    states = TableStates(keep_history=False)
    prev: HistoryEvent | None = None
    for i, e in enumerate(events):
        def fail(reason: str) -> HistoryError:
            return HistoryError(i, e, reason)

        if prev is not None:
            if e.commit_ts < prev.commit_ts:
                raise fail(f"commit ts goes back from {prev.commit_ts}")
            if e.commit_ts == prev.commit_ts and not (
                    isinstance(e, DDL) and isinstance(prev, DDL) and e.ddl_type == prev.ddl_type
                    and e.ddl_type in MULTI_TABLE_KINDS):
                raise fail("shares its commit ts with the previous event but is not part of one multi-table job")
        if isinstance(e, Transaction):
            _check_txn(states, e, time_zone, fail)
        else:
            _check_ddl(states, e, time_zone, fail)
        prev = e
    return states


def _check_txn(states: TableStates, txn: Transaction, time_zone: str, fail) -> None:
    if not txn.start_ts < txn.commit_ts:
        raise fail(f"start ts {txn.start_ts} not below commit ts")
    if not txn.changes:
        raise fail("a transaction without changes")
    expected: dict[tuple[str, str], dict[tuple, Row]] = {}
    for ch in txn.changes:
        name = (ch.table.schema, ch.table.table)
        if states.schemas.get(name) != ch.table:
            raise fail(f"change to {name} uses a schema that is not the one in force")
        if ch.table.schema_version >= txn.commit_ts:
            raise fail("change uses a schema version from the future")
        expected.setdefault(name, dict(states.rows[name]))
    seen_befores: set = set()
    for ch in txn.changes:
        t, name = ch.table, (ch.table.schema, ch.table.table)
        if (ch.op is Op.INSERT) != (ch.before is None) or (ch.op is Op.DELETE) != (ch.after is None):
            raise fail(f"{ch.op.value} with before={ch.before is not None} after={ch.after is not None}")
        if ch.before is not None:
            k = t.row_key(ch.before)
            if states.rows[name].get(k) != ch.before:
                raise fail(f"{ch.op.value} before-image {k} is not the row as it is: {states.rows[name].get(k)}")
            if (name, k) in seen_befores:
                raise fail(f"two changes to row {k} (changes to one row collapse into one)")
            seen_befores.add((name, k))
            del expected[name][k]
    for ch in txn.changes:
        t, name = ch.table, (ch.table.schema, ch.table.table)
        if ch.after is None:
            continue
        try:
            check_row(t, ch.after, time_zone)
        except ValueError as exc:
            raise fail(f"{ch.op.value} of {t.row_key(ch.after)}: {exc}") from None
        k = t.row_key(ch.after)
        if k in expected[name]:
            raise fail(f"{ch.op.value} to key {k}, which a row holds")
        expected[name][k] = ch.after
    for name, rows in expected.items():
        try:
            check_unique(states.schemas[name], rows.values())
        except ValueError as exc:
            raise fail(str(exc)) from None
    states.apply(txn)
    for name, rows in expected.items():
        if states.rows[name] != rows:
            raise fail(f"the state interpreter leaves {name} as {states.rows[name]}, the changes make it {rows}")


def _check_ddl(states: TableStates, ddl: DDL, time_zone: str, fail) -> None:
    for t in (ddl.table_after, ddl.other_after):
        if t is not None and t.schema_version >= ddl.commit_ts:
            raise fail(f"schema version {t.schema_version} not below the commit ts")
    kind = ddl.ddl_type
    if kind is DDLType.CREATE_SCHEMA:
        if ddl.schema in states.databases:
            raise fail("database exists")
    elif kind is DDLType.DROP_SCHEMA:
        if ddl.schema not in states.databases:
            raise fail("no such database")
    elif kind is DDLType.CREATE_TABLE:
        name = (ddl.table_after.schema, ddl.table_after.table)
        if name in states.schemas:
            raise fail(f"table {name} exists")
        if ddl.table_after.schema not in states.databases:
            raise fail(f"no database {ddl.table_after.schema}")
    else:
        before = ddl.table_before
        if before is None or states.schemas.get((before.schema, before.table)) != before:
            raise fail("table_before is not the schema in force")
        if ddl.other_before is not None and \
                states.schemas.get((ddl.other_before.schema, ddl.other_before.table)) != ddl.other_before:
            raise fail("other_before is not the schema in force")
        if kind is DDLType.RENAME_TABLE:
            new = (ddl.table_after.schema, ddl.table_after.table)
            if new in states.schemas:
                raise fail(f"rename target {new} exists")
            if ddl.table_after.schema_version != before.schema_version:
                raise fail("RENAME TABLE changed the schema version")
    states.apply(ddl)
    for name in ((ddl.table_after.schema, ddl.table_after.table),) if ddl.table_after is not None else ():
        t = states.schemas[name]
        try:
            for row in states.rows[name].values():
                check_row(t, row, time_zone)
            check_unique(t, states.rows[name].values())
        except ValueError as exc:
            raise fail(f"rows after the DDL: {exc}") from None
