"""A model of upstream TiDB: databases, tables, IDs, the PD clock, and every DDL a consumer sees.

Each operation checks what TiDB would check (an unknown table, a duplicate key, a unique index
over duplicate values, a NOT NULL column added without a default to a non-empty table…) and
raises `Rejected` instead of producing a history TiDB could not have produced. Successful
operations return the history events (DDL or Transaction) and apply them to `self.state`, the
same interpreter the ground truth replays (ticdc_contract/state.py).

Schema versions: a DDL's new table info gets a TSO drawn just before the DDL's commit ts (TiDB's
table-info UpdateTS); RENAME keeps the version (spec 004 note on RENAME TABLE).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from ticdc_contract.model import (
    DDL,
    Column,
    DDLType,
    Index,
    Partition,
    Partitioning,
    Row,
    RowChange,
    TableSchema,
    Transaction,
    sql_literal,
)
from ticdc_contract.state import TableStates
from ticdc_contract.tso import TSOClock

from .txn import TxnBuilder

Name = tuple[str, str]


class Rejected(ValueError):
    """TiDB would refuse this operation."""


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _renumber(columns: Sequence[Column], start: int = 1) -> tuple[Column, ...]:
    return tuple(replace(c, column_id=c.column_id or start + i) for i, c in enumerate(columns))


class Upstream:
    def __init__(self, start_physical_ms: int, time_zone: str = "UTC", first_id: int = 100,
                 keep_history: bool = False) -> None:
        self.clock = TSOClock(start_physical_ms)
        self.time_zone = time_zone
        self._next_id = first_id
        self.state = TableStates(keep_history=keep_history)
        self._rowids: dict[int, int] = {}

    # --- helpers ------------------------------------------------------------------
    def new_id(self) -> int:
        self._next_id += 2  # TiDB's global ID allocator hands out IDs to jobs and tables alike
        return self._next_id

    def table(self, schema: str, table: str) -> TableSchema:
        try:
            return self.state.schemas[(schema, table)]
        except KeyError:
            raise Rejected(f"table {schema}.{table} does not exist") from None

    def rows(self, schema: str, table: str) -> dict[tuple, Row]:
        self.table(schema, table)
        return self.state.rows[(schema, table)]

    def _versioned_ddl(self, ddl_type: DDLType, query: str, after: Optional[TableSchema],
                       before: Optional[TableSchema], keep_version: bool = False, **extra) -> DDL:
        version = self.clock.next()
        if after is not None and not keep_version:
            after = replace(after, schema_version=version)
        commit_ts = self.clock.next()
        schema = (after or before).schema if (after or before) is not None else extra.pop("schema")
        table = (after or before).table if (after or before) is not None else ""
        ddl = DDL(commit_ts, ddl_type, query, schema, table, after, before, **extra)
        self.state.apply(ddl)
        return ddl

    def _check_table_name_free(self, schema: str, table: str) -> None:
        if schema not in self.state.databases:
            raise Rejected(f"database {schema} does not exist")
        if (schema, table) in self.state.schemas:
            raise Rejected(f"table {schema}.{table} already exists")

    # --- databases ----------------------------------------------------------------
    def create_schema(self, schema: str) -> list[DDL]:
        if schema in self.state.databases:
            raise Rejected(f"database {schema} already exists")
        self.clock.next()
        ddl = DDL(self.clock.next(), DDLType.CREATE_SCHEMA, f"CREATE DATABASE {_q(schema)}", schema, "", None, None)
        self.state.apply(ddl)
        return [ddl]

    def drop_schema(self, schema: str) -> list[DDL]:
        if schema not in self.state.databases:
            raise Rejected(f"database {schema} does not exist")
        self.clock.next()
        ddl = DDL(self.clock.next(), DDLType.DROP_SCHEMA, f"DROP DATABASE {_q(schema)}", schema, "", None, None)
        self.state.apply(ddl)
        return [ddl]

    # --- tables -------------------------------------------------------------------
    def _new_table(self, schema: str, table: str, columns: Sequence[Column], indexes: Sequence[Index],
                   pk_is_handle: bool, partitioning: Optional[Callable[[int], Partitioning]],
                   comment: str) -> TableSchema:
        self._check_table_name_free(schema, table)
        table_id = self.new_id()
        t = TableSchema(schema, table, table_id, _renumber(columns), tuple(indexes), schema_version=0,
                        pk_is_handle=pk_is_handle, comment=comment,
                        partitioning=partitioning(table_id) if partitioning else None)
        return t

    def create_table(self, schema: str, table: str, columns: Sequence[Column], indexes: Sequence[Index],
                     pk_is_handle: bool = False, partitioning: Optional[Callable[[int], Partitioning]] = None,
                     comment: str = "") -> list[DDL]:
        t = self._new_table(schema, table, columns, indexes, pk_is_handle, partitioning, comment)
        return [self._versioned_ddl(DDLType.CREATE_TABLE, t.create_sql(), t, None)]

    def create_tables(self, specs: Sequence[dict]) -> list[DDL]:
        """One CREATE TABLES job (batch create): every table's DDL shares the job's commit ts."""
        tables = [self._new_table(**spec) for spec in specs]
        version = self.clock.next()
        commit_ts = self.clock.next()
        out = []
        for t in tables:
            t = replace(t, schema_version=version)
            ddl = DDL(commit_ts, DDLType.CREATE_TABLE, t.create_sql(), t.schema, t.table, t, None)
            self.state.apply(ddl)
            out.append(ddl)
        return out

    def drop_table(self, schema: str, table: str) -> list[DDL]:
        t = self.table(schema, table)
        return [self._versioned_ddl(DDLType.DROP_TABLE, f"DROP TABLE {_q(schema)}.{_q(table)}", None, t)]

    def truncate_table(self, schema: str, table: str) -> list[DDL]:
        t = self.table(schema, table)
        new_id = self.new_id()
        parts = None
        if t.partitioning is not None:
            parts = replace(t.partitioning, partitions=tuple(replace(p, partition_id=self.new_id())
                                                             for p in t.partitioning.partitions))
        after = replace(t, table_id=new_id, partitioning=parts)
        return [self._versioned_ddl(DDLType.TRUNCATE_TABLE, f"TRUNCATE TABLE {_q(schema)}.{_q(table)}", after, t)]

    def rename_table(self, schema: str, table: str, new_schema: str, new_table: str) -> list[DDL]:
        t = self.table(schema, table)
        self._check_table_name_free(new_schema, new_table)
        after = replace(t, schema=new_schema, table=new_table)
        q = f"RENAME TABLE {_q(schema)}.{_q(table)} TO {_q(new_schema)}.{_q(new_table)}"
        return [self._versioned_ddl(DDLType.RENAME_TABLE, q, after, t, keep_version=True)]

    def rename_tables(self, pairs: Sequence[tuple[Name, Name]]) -> list[DDL]:
        """One RENAME TABLES job: a RENAME TABLE event per table, all at the job's commit ts."""
        befores = [self.table(*old) for old, _ in pairs]
        targets = {new for _, new in pairs}
        if len(targets) != len(pairs):
            raise Rejected("RENAME TABLES names one target twice")
        for _, new in pairs:
            if new in self.state.schemas and new not in {old for old, _ in pairs}:
                raise Rejected(f"table {new[0]}.{new[1]} already exists")
        self.clock.next()
        commit_ts = self.clock.next()
        out = []
        for t, (old, new) in zip(befores, pairs):
            after = replace(t, schema=new[0], table=new[1])
            q = f"RENAME TABLE {_q(old[0])}.{_q(old[1])} TO {_q(new[0])}.{_q(new[1])}"
            ddl = DDL(commit_ts, DDLType.RENAME_TABLE, q, new[0], new[1], after, t)
            self.state.apply(ddl)
            out.append(ddl)
        return out

    # --- columns ------------------------------------------------------------------
    def add_column(self, schema: str, table: str, column: Column) -> list[DDL]:
        t = self.table(schema, table)
        if column.name.lower() in {c.lower() for c in t.column_names}:
            raise Rejected(f"duplicate column {column.name}")
        if not column.nullable and not column.has_default and self.rows(schema, table):
            # TiDB fills NOT NULL columns without default with the type's zero value; the model
            # keeps to defaults it can state.
            raise Rejected("NOT NULL column without DEFAULT on a non-empty table")
        column = replace(column, column_id=max(c.column_id for c in t.columns) + 1)
        after = replace(t, columns=t.columns + (column,))
        clause = f"{_q(column.name)} {column.type.sql()}" + ("" if column.nullable else " NOT NULL")
        if column.has_default:
            clause += " DEFAULT " + sql_literal(column.default)
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} ADD COLUMN {clause}"
        return [self._versioned_ddl(DDLType.ADD_COLUMN, q, after, t, backfill={column.name: column.default})]

    def drop_column(self, schema: str, table: str, name: str) -> list[DDL]:
        t = self.table(schema, table)
        t.column(name)
        if any(name in ix.columns for ix in t.indexes):
            raise Rejected(f"column {name} is part of an index")
        if t.partitioning is not None and t.partitioning.column == name:
            raise Rejected(f"column {name} is the partitioning column")
        if len(t.columns) == 1:
            raise Rejected("cannot drop the last column")
        after = replace(t, columns=tuple(c for c in t.columns if c.name != name))
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} DROP COLUMN {_q(name)}"
        return [self._versioned_ddl(DDLType.DROP_COLUMN, q, after, t)]

    def modify_column(self, schema: str, table: str, name: str, new: Column) -> list[DDL]:
        """Lossless changes only: widening an integer, a VARCHAR or a DECIMAL's integer part,
        or dropping NOT NULL. Existing values stay what they are."""
        t = self.table(schema, table)
        old = t.column(name)
        if not _widens(old, new):
            raise Rejected(f"MODIFY COLUMN {name}: {old.type.sql()} -> {new.type.sql()} is not a lossless widening")
        new = replace(new, name=name, column_id=old.column_id)
        after = replace(t, columns=tuple(new if c.name == name else c for c in t.columns))
        q = (f"ALTER TABLE {_q(schema)}.{_q(table)} MODIFY COLUMN {_q(name)} {new.type.sql()}"
             + ("" if new.nullable else " NOT NULL"))
        return [self._versioned_ddl(DDLType.MODIFY_COLUMN, q, after, t)]

    def set_default(self, schema: str, table: str, name: str, default: Any) -> list[DDL]:
        t = self.table(schema, table)
        col = t.column(name)
        new = replace(col, default=default, has_default=True)
        after = replace(t, columns=tuple(new if c.name == name else c for c in t.columns))
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} ALTER COLUMN {_q(name)} SET DEFAULT {sql_literal(default)}"
        return [self._versioned_ddl(DDLType.SET_DEFAULT_VALUE, q, after, t)]

    # --- indexes ------------------------------------------------------------------
    def add_index(self, schema: str, table: str, index: Index) -> list[DDL]:
        t = self.table(schema, table)
        if index.name.lower() in {ix.name.lower() for ix in t.indexes}:
            raise Rejected(f"duplicate index {index.name}")
        for c in index.columns:
            t.column(c)
        if index.unique or index.primary:
            seen = set()
            for row in self.rows(schema, table).values():
                k = tuple(row[c] for c in index.columns)
                if None in k and not index.primary:
                    continue
                if None in k:
                    raise Rejected("PRIMARY KEY over NULL values")
                if k in seen:
                    raise Rejected(f"duplicate entry {k} for unique index {index.name}")
                seen.add(k)
        cols = ", ".join(_q(c) for c in index.columns)
        if index.primary:
            if t.primary_key is not None:
                raise Rejected("multiple primary key defined")
            # An added primary key is NONCLUSTERED in TiDB, and its columns become NOT NULL.
            columns = tuple(replace(c, nullable=False) if c.name in index.columns else c for c in t.columns)
            after = replace(t, columns=columns, indexes=t.indexes + (replace(index, clustered=False),))
            kind, q = DDLType.ADD_PRIMARY_KEY, f"ALTER TABLE {_q(schema)}.{_q(table)} ADD PRIMARY KEY ({cols}) NONCLUSTERED"
        else:
            after = replace(t, indexes=t.indexes + (index,))
            kw = "UNIQUE INDEX" if index.unique else "INDEX"
            kind, q = DDLType.ADD_INDEX, f"ALTER TABLE {_q(schema)}.{_q(table)} ADD {kw} {_q(index.name)} ({cols})"
        return [self._versioned_ddl(kind, q, after, t)]

    def drop_index(self, schema: str, table: str, name: str) -> list[DDL]:
        t = self.table(schema, table)
        ix = next((i for i in t.indexes if i.name.lower() == name.lower()), None)
        if ix is None:
            raise Rejected(f"index {name} does not exist")
        if ix.primary and (t.pk_is_handle or ix.clustered):
            raise Rejected("unsupported drop primary key when the table is using clustered index")
        after = replace(t, indexes=tuple(i for i in t.indexes if i is not ix))
        if not after.handle_key:
            raise Rejected("the model keeps a key on every table")
        if ix.primary:
            kind, q = DDLType.DROP_PRIMARY_KEY, f"ALTER TABLE {_q(schema)}.{_q(table)} DROP PRIMARY KEY"
        else:
            kind, q = DDLType.DROP_INDEX, f"ALTER TABLE {_q(schema)}.{_q(table)} DROP INDEX {_q(name)}"
        return [self._versioned_ddl(kind, q, after, t)]

    # --- table options ------------------------------------------------------------
    def set_comment(self, schema: str, table: str, comment: str) -> list[DDL]:
        t = self.table(schema, table)
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} COMMENT = {sql_literal(comment)}"
        return [self._versioned_ddl(DDLType.MODIFY_TABLE_COMMENT, q, replace(t, comment=comment), t)]

    def set_charset(self, schema: str, table: str, charset: str, collate: str) -> list[DDL]:
        t = self.table(schema, table)
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} CHARACTER SET = {charset} COLLATE = {collate}"
        return [self._versioned_ddl(DDLType.MODIFY_TABLE_CHARSET_AND_COLLATE, q,
                                    replace(t, charset=charset, collate=collate), t)]

    # --- partitions ---------------------------------------------------------------
    def add_partition(self, schema: str, table: str, name: str, less_than: Optional[int]) -> list[DDL]:
        t = self.table(schema, table)
        parts = _partitioning(t).partitions
        if parts[-1].less_than is None or (less_than is not None and less_than <= parts[-1].less_than):
            raise Rejected("VALUES LESS THAN value must be strictly increasing for each partition")
        new = Partition(name, self.new_id(), less_than)
        after = replace(t, partitioning=replace(t.partitioning, partitions=parts + (new,)))
        bound = "MAXVALUE" if less_than is None else str(less_than)
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} ADD PARTITION (PARTITION {_q(name)} VALUES LESS THAN ({bound}))"
        return [self._versioned_ddl(DDLType.ADD_TABLE_PARTITION, q, after, t)]

    def drop_partition(self, schema: str, table: str, name: str) -> list[DDL]:
        t = self.table(schema, table)
        parts = _partitioning(t).partitions
        if len(parts) == 1 or name not in {p.name for p in parts}:
            raise Rejected(f"cannot drop partition {name}")
        after = replace(t, partitioning=replace(t.partitioning, partitions=tuple(p for p in parts if p.name != name)))
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} DROP PARTITION {_q(name)}"
        return [self._versioned_ddl(DDLType.DROP_TABLE_PARTITION, q, after, t)]

    def truncate_partition(self, schema: str, table: str, name: str) -> list[DDL]:
        t = self.table(schema, table)
        parts = _partitioning(t).partitions
        if name not in {p.name for p in parts}:
            raise Rejected(f"partition {name} does not exist")
        after = replace(t, partitioning=replace(t.partitioning, partitions=tuple(
            replace(p, partition_id=self.new_id()) if p.name == name else p for p in parts)))
        q = f"ALTER TABLE {_q(schema)}.{_q(table)} TRUNCATE PARTITION {_q(name)}"
        return [self._versioned_ddl(DDLType.TRUNCATE_TABLE_PARTITION, q, after, t)]

    def exchange_partition(self, schema: str, table: str, name: str, other_schema: str, other: str) -> list[DDL]:
        t = self.table(schema, table)
        nt = self.table(other_schema, other)
        parts = _partitioning(t).partitions
        p = next((x for x in parts if x.name == name), None)
        if p is None:
            raise Rejected(f"partition {name} does not exist")
        if nt.partitioning is not None or [c.type for c in nt.columns] != [c.type for c in t.columns] \
                or nt.column_names != t.column_names:
            raise Rejected("tables have different definitions")
        bounds = _bounds(parts, p)
        for row in self.rows(other_schema, other).values():
            v = row[t.partitioning.column]
            if not (bounds[0] is None or v >= bounds[0]) or not (bounds[1] is None or v < bounds[1]):
                raise Rejected("found row which does not match the partition")
        after = replace(t, partitioning=replace(t.partitioning, partitions=tuple(
            replace(x, partition_id=nt.table_id) if x is p else x for x in parts)))
        nt_after = replace(nt, table_id=p.partition_id)
        q = (f"ALTER TABLE {_q(schema)}.{_q(table)} EXCHANGE PARTITION {_q(name)} "
             f"WITH TABLE {_q(other_schema)}.{_q(other)}")
        version = self.clock.next()
        ddl = DDL(self.clock.next(), DDLType.EXCHANGE_TABLE_PARTITION, q, schema, table,
                  replace(after, schema_version=version), t,
                  other_before=nt, other_after=replace(nt_after, schema_version=version))
        self.state.apply(ddl)
        return [ddl]

    # --- data ---------------------------------------------------------------------
    def new_rowid(self, schema: str, table: str) -> int:
        """The next hidden row ID of a table without a handle key. TiDB allocates them per table ID,
        so a renamed table goes on counting where it was."""
        table_id = self.table(schema, table).table_id
        self._rowids[table_id] = self._rowids.get(table_id, 0) + 1
        return self._rowids[table_id]

    def commit(self, txn: TxnBuilder, advance_ms: int = 0) -> Transaction:
        """Commits a built transaction at the next TSOs (start ts, then commit ts)."""
        self.clock.advance(advance_ms)
        start_ts = self.clock.next()
        changes = tuple(_with_generated(ch) for ch in txn.changes())
        for ch in changes:
            t = self.table(ch.table.schema, ch.table.table)
            if ch.table is not t and ch.table != t:
                raise Rejected(f"{t.qualified_name}: change built against an old schema version")
            if t.partitioning is not None:
                for image in (ch.before, ch.after):
                    if image is not None:
                        try:
                            t.physical_id(image)
                        except ValueError as e:
                            raise Rejected(str(e)) from None
        self._check_unique(changes)
        txn_out = Transaction(start_ts, self.clock.next(), changes)
        self.state.apply(txn_out)
        return txn_out

    def _check_unique(self, changes) -> None:
        """Primary and unique keys stay unique after the transaction (TiDB: "Duplicate entry").

        Only the touched keys are looked up, so a commit costs O(changes), not O(table), unless
        the table has secondary unique indexes."""
        by_table: dict[Name, list] = {}
        for ch in changes:
            by_table.setdefault((ch.table.schema, ch.table.table), []).append(ch)
        for name, chs in by_table.items():
            t = chs[0].table
            rows = self.state.rows[name]
            freed = {t.row_key(ch.before) for ch in chs if ch.before is not None}
            taken: set[tuple] = set()
            for ch in chs:
                if ch.after is None:
                    continue
                k = t.row_key(ch.after)
                if k in taken or (k in rows and k not in freed):
                    raise Rejected(f"duplicate entry {k} for key PRIMARY of {t.qualified_name}")
                taken.add(k)
            for ix in t.indexes:
                if not ix.unique or ix.primary:
                    continue
                changed = {t.row_key(ch.before) for ch in chs if ch.before is not None}
                seen: set[tuple] = set()
                for key, r in rows.items():
                    if key not in changed:
                        v = tuple(r[c] for c in ix.columns)
                        if None not in v:
                            seen.add(v)
                for ch in chs:
                    if ch.after is not None:
                        v = tuple(ch.after[c] for c in ix.columns)
                        if None in v:
                            continue
                        if v in seen:
                            raise Rejected(f"duplicate entry {v} for key {ix.name} of {t.qualified_name}")
                        seen.add(v)

def _with_generated(ch: RowChange) -> RowChange:
    t = ch.table
    if not t.has_generated:
        return ch
    return replace(ch, before=None if ch.before is None else t.with_generated(ch.before),
                   after=None if ch.after is None else t.with_generated(ch.after))


def _partitioning(t: TableSchema) -> Partitioning:
    if t.partitioning is None:
        raise Rejected(f"{t.qualified_name} is not partitioned")
    return t.partitioning


def _bounds(parts: Sequence[Partition], p: Partition) -> tuple[Optional[int], Optional[int]]:
    i = parts.index(p)
    return (parts[i - 1].less_than if i else None, p.less_than)


def _widens(old: Column, new: Column) -> bool:
    a, b = old.type, new.type
    if not new.nullable and old.nullable:
        return False
    if a == b:
        return True
    order = ("tinyint", "smallint", "mediumint", "int", "bigint")
    if a.is_integer and b.is_integer:
        return a.unsigned == b.unsigned and order.index(b.base) >= order.index(a.base)
    if a.base == b.base == "varchar":
        return b.effective_flen >= a.effective_flen and a.effective_charset == b.effective_charset
    if a.base == b.base == "decimal":
        return b.scale == a.scale and b.effective_flen >= a.effective_flen
    return False

