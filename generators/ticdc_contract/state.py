"""Upstream table states: the one interpreter of what DDL and DML do to the data.

The upstream model applies every event it generates here, and the ground truth replays the
same events here, so "what a DDL does to existing rows" is written once:
- CREATE/TRUNCATE TABLE start empty (TRUNCATE gives the table a new ID);
- DROP TABLE / DROP SCHEMA remove tables;
- RENAME TABLE moves rows to the new name (the schema version does not change, spec 004);
- ADD COLUMN backfills the DDL's `backfill` value (TiDB's "original default"), DROP COLUMN removes;
- DROP/TRUNCATE PARTITION remove the rows of the partitions that disappeared (TiCDC sends no row
  events for them: the consumer must apply the DDL's meaning itself);
- EXCHANGE PARTITION swaps the rows of a partition with those of a normal table.

With `keep_history=True` it also answers "what did table T look like at commit ts t" and "which
schema version was in force" (bisect over per-key version chains; cost O(keys · log versions)).
"""
from __future__ import annotations

import bisect
from typing import Iterable, Optional

from ticdc_contract.model import DDL, ROWID, DDLType, Row, TableSchema, Transaction

Name = tuple[str, str]

_RESETTING = (DDLType.CREATE_TABLE, DDLType.TRUNCATE_TABLE)


class TableStates:
    def __init__(self, keep_history: bool = False) -> None:
        self.schemas: dict[Name, TableSchema] = {}
        self.rows: dict[Name, dict[tuple, Row]] = {}
        self.databases: set[str] = set()
        self.keep_history = keep_history
        # History (keep_history): per table name, schema versions and per-key row versions.
        self._schema_log: dict[Name, list[tuple[int, Optional[TableSchema]]]] = {}
        self._row_log: dict[Name, dict[tuple, list[tuple[int, Optional[Row]]]]] = {}

    # --- applying ---------------------------------------------------------------
    def apply(self, event: DDL | Transaction) -> None:
        if isinstance(event, Transaction):
            self._apply_txn(event)
        else:
            self._apply_ddl(event)

    def _put(self, name: Name, key: tuple, row: Optional[Row], ts: int) -> None:
        rows = self.rows[name]
        if row is None:
            rows.pop(key, None)
        else:
            rows[key] = row
        if self.keep_history:
            self._row_log.setdefault(name, {}).setdefault(key, []).append((ts, None if row is None else dict(row)))

    def _set_schema(self, name: Name, schema: Optional[TableSchema], ts: int) -> None:
        if schema is None:
            self.schemas.pop(name, None)
        else:
            self.schemas[name] = schema
        if self.keep_history:
            self._schema_log.setdefault(name, []).append((ts, schema))

    def _clear(self, name: Name, ts: int) -> None:
        for key in list(self.rows.get(name, {})):
            self._put(name, key, None, ts)

    def _apply_txn(self, txn: Transaction) -> None:
        """A transaction's changes are collapsed per row, so they commute: every old image goes,
        then every new image arrives. Applying them one by one would let a row that moves to a key
        another row of the same transaction leaves (keys traded 1->2, 2->1) be removed again."""
        self.check_tables(txn)
        ts = txn.commit_ts
        if not self.keep_history and type(self)._put is TableStates._put:
            # _put's dict operations in line: the upstream model and the truth writer apply every
            # transaction, and without a history to log a change is one pop or one store. A
            # subclass that follows the changes through its own _put (the checks' projected
            # truth) keeps the calls.
            rows, schemas = self.rows, self.schemas
            for ch in txn.changes:
                if ch.before is not None:
                    name = (ch.table.schema, ch.table.table)
                    rows[name].pop(schemas[name].row_key(ch.before), None)
            for ch in txn.changes:
                if ch.after is not None:
                    name = (ch.table.schema, ch.table.table)
                    rows[name][schemas[name].row_key(ch.after)] = dict(ch.after)
            return
        for ch in txn.changes:
            if ch.before is not None:
                name = (ch.table.schema, ch.table.table)
                self._put(name, self.schemas[name].row_key(ch.before), None, ts)
        for ch in txn.changes:
            if ch.after is not None:
                name = (ch.table.schema, ch.table.table)
                self._put(name, self.schemas[name].row_key(ch.after), dict(ch.after), ts)

    def check_tables(self, txn: Transaction) -> None:
        """Refuses a transaction that writes a table the states do not hold, before any change."""
        for ch in txn.changes:
            name = (ch.table.schema, ch.table.table)
            if name not in self.rows:
                raise ValueError(f"transaction at {txn.commit_ts} writes {name[0]}.{name[1]}, which does not exist")

    def _apply_ddl(self, ddl: DDL) -> None:
        ts, kind = ddl.commit_ts, ddl.ddl_type
        if kind is DDLType.CREATE_SCHEMA:
            self.databases.add(ddl.schema)
            return
        if kind is DDLType.DROP_SCHEMA:
            for name in [n for n in self.schemas if n[0] == ddl.schema]:
                self._clear(name, ts)
                self._set_schema(name, None, ts)
                del self.rows[name]
            self.databases.discard(ddl.schema)
            return
        if kind is DDLType.DROP_TABLE:
            name = (ddl.schema, ddl.table)
            self._clear(name, ts)
            self._set_schema(name, None, ts)
            self.rows.pop(name, None)
            return
        after = ddl.table_after
        if after is None:
            return  # DDL that changes nothing a consumer sees
        new_name = (after.schema, after.table)
        if kind is DDLType.RENAME_TABLE and ddl.table_before is not None:
            old_name = (ddl.table_before.schema, ddl.table_before.table)
            moved = dict(self.rows.get(old_name, {}))
            self._clear(old_name, ts)
            self._set_schema(old_name, None, ts)
            self.rows.pop(old_name, None)
            self.rows[new_name] = {}
            self._set_schema(new_name, after, ts)
            for key, row in moved.items():
                self._put(new_name, key, row, ts)
            return
        if kind in _RESETTING or new_name not in self.rows:
            if new_name in self.rows:
                self._clear(new_name, ts)
            self.rows[new_name] = {}
            self._set_schema(new_name, after, ts)
            return
        if kind is DDLType.EXCHANGE_TABLE_PARTITION:
            self._exchange(ddl)
            return
        self._set_schema(new_name, after, ts)
        self._reshape_rows(new_name, ddl)

    def _reshape_rows(self, name: Name, ddl: DDL) -> None:
        """Rows after a DDL that keeps the table: new columns backfilled, dropped ones removed,
        rows of dropped or truncated partitions gone, keys recomputed when the handle changed."""
        after, before = ddl.table_after, ddl.table_before
        assert after is not None  # apply() returned before reshaping for a DDL that leaves no table
        gone_partitions: set[int] = set()
        if before is not None and before.partitioning is not None:
            kept = {p.partition_id for p in after.partitioning.partitions} if after.partitioning else set()
            gone_partitions = {p.partition_id for p in before.partitioning.partitions} - kept
        names = set(after.column_names)
        reshaped: dict[tuple, Row] = {}
        for key, row in list(self.rows[name].items()):
            if before is not None and gone_partitions and before.physical_id(row) in gone_partitions:
                self._put(name, key, None, ddl.commit_ts)
                continue
            new_row = {c.name: row[c.name] if c.name in row else ddl.backfill.get(c.name, c.default)
                       for c in after.columns}
            assert set(new_row) == names
            if not after.handle_key:
                new_row[ROWID] = row[ROWID]  # still identified by its hidden row ID
            reshaped[key] = after.with_generated(new_row)
        changed_handle = before is not None and before.handle_key != after.handle_key
        for key, new_row in reshaped.items():
            if changed_handle:
                self._put(name, key, None, ddl.commit_ts)
            if changed_handle or new_row != self.rows[name].get(key):
                self._put(name, after.row_key(new_row), new_row, ddl.commit_ts)

    def _exchange(self, ddl: DDL) -> None:
        """ALTER TABLE pt EXCHANGE PARTITION p WITH TABLE nt: `table_before`/`table_after` are pt,
        `other_before`/`other_after` are nt; the partition and nt swap rows (and physical IDs)."""
        pt_before, pt_after = ddl.table_before, ddl.table_after
        nt_after = ddl.other_after
        # The model's EXCHANGE PARTITION always names both tables, pt partitioned before and after.
        assert pt_before is not None and pt_after is not None and nt_after is not None
        assert pt_before.partitioning is not None and pt_after.partitioning is not None
        pt_name, nt_name = (pt_after.schema, pt_after.table), (nt_after.schema, nt_after.table)
        swapped_id = next(p.partition_id for p in pt_before.partitioning.partitions
                          if p.partition_id not in {q.partition_id for q in pt_after.partitioning.partitions})
        from_partition = {k: r for k, r in self.rows[pt_name].items() if pt_before.physical_id(r) == swapped_id}
        from_table = dict(self.rows[nt_name])
        for key in from_partition:
            self._put(pt_name, key, None, ddl.commit_ts)
        for key in from_table:
            self._put(nt_name, key, None, ddl.commit_ts)
        self._set_schema(pt_name, pt_after, ddl.commit_ts)
        self._set_schema(nt_name, nt_after, ddl.commit_ts)
        for row in from_table.values():
            self._put(pt_name, pt_after.row_key(row), dict(row), ddl.commit_ts)
        for row in from_partition.values():
            self._put(nt_name, nt_after.row_key(row), dict(row), ddl.commit_ts)

    # --- reading ----------------------------------------------------------------
    def tables(self) -> list[Name]:
        return sorted(self.schemas)

    def schema_at(self, schema: str, table: str, ts: int) -> Optional[TableSchema]:
        """The schema version in force at commit ts `ts` (None: the table did not exist)."""
        log = self._history_of(self._schema_log, (schema, table))
        i = bisect.bisect_right([e[0] for e in log], ts)
        return log[i - 1][1] if i else None

    def rows_at(self, schema: str, table: str, ts: int) -> Optional[dict[tuple, Row]]:
        """The table's rows as of commit ts `ts`, keyed by handle key (None: no such table then)."""
        if self.schema_at(schema, table, ts) is None:
            return None
        out: dict[tuple, Row] = {}
        for key, versions in self._row_log.get((schema, table), {}).items():
            i = bisect.bisect_right(versions, ts, key=lambda v: v[0])
            if i and (row := versions[i - 1][1]) is not None:
                out[key] = row
        return out

    def _history_of(self, log: dict, name: Name) -> list:
        if not self.keep_history:
            raise RuntimeError("this TableStates keeps no history (construct it with keep_history=True)")
        return log.get(name, [])


def replay(history: Iterable[DDL | Transaction], keep_history: bool = True) -> TableStates:
    states = TableStates(keep_history=keep_history)
    for event in history:
        states.apply(event)
    return states
