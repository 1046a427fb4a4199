"""The canonical upstream model: tables, schema versions, row changes, transactions, DDL.

This is the ground truth every protocol is an image of. Values inside the model are Python
values in the *canonical value form* (see `canonical.py` and docs/canonical-values.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property
from typing import Any, Optional, Union

from ticdc_contract.tidb_types import TiDBType

Row = dict[str, Any]  # column name -> canonical Python value (None = SQL NULL)

# TiDB's hidden handle of a table without a primary key or NOT NULL unique key. The model keeps it
# in such rows so that each row has an identity; TiCDC never sends it, and the sink simulator
# strips it before encoding.
ROWID = "_tidb_rowid"


@dataclass(frozen=True)
class Column:
    name: str
    type: TiDBType
    nullable: bool = True
    default: Any = None  # canonical value of the DEFAULT clause, None = no default / DEFAULT NULL
    has_default: bool = False
    auto_increment: bool = False
    comment: str = ""
    column_id: int = 0  # TiDB's column ID, stable across renames; set by TableSchema
    # Generated column: the SQL expression, and whether TiDB stores the value (STORED) or
    # computes it on read (VIRTUAL). TiCDC replicates only stored columns' values
    # (TiCDC pkg/common/table_info.go IsColCDCVisible).
    generated: Optional[str] = None
    generated_stored: bool = False

    @property
    def is_virtual(self) -> bool:
        return self.generated is not None and not self.generated_stored


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]
    primary: bool = False
    unique: bool = False
    # For a primary key: whether it is the clustered index (TiDB cannot drop a clustered PK).
    clustered: bool = True


@dataclass(frozen=True)
class Partition:
    name: str
    partition_id: int  # the physical table ID rows of this partition carry
    less_than: Optional[int]  # RANGE bound (exclusive); None = MAXVALUE


@dataclass(frozen=True)
class Partitioning:
    """RANGE partitioning on an integer column (the kind that supports ADD/DROP/TRUNCATE/EXCHANGE)."""

    column: str
    partitions: tuple[Partition, ...]

    def partition_of(self, value: int) -> Partition:
        for p in self.partitions:
            if p.less_than is None or value < p.less_than:
                return p
        raise ValueError(f"value {value} falls in no partition (TiDB rejects it: no partition for value)")


@dataclass(frozen=True)
class TableSchema:
    """One schema version of one table.

    `schema_version` is the TSO at which this version came into force (TiDB's table info
    UpdateTS, which TiCDC publishes as Simple's `schemaVersion`).
    """

    schema: str
    table: str
    table_id: int
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...]
    schema_version: int
    charset: str = "utf8mb4"
    collate: str = "utf8mb4_bin"
    # True when the integer primary key is TiDB's row handle (clustered INT PK).
    pk_is_handle: bool = False
    comment: str = ""
    partitioning: Optional[Partitioning] = None

    def physical_id(self, row: Row) -> int:
        """The physical table ID a row is stored under (its partition's ID for partitioned tables)."""
        if self.partitioning is None:
            return self.table_id
        return self.partitioning.partition_of(row[self.partitioning.column]).partition_id

    @cached_property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.table}"

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.qualified_name} has no column {name!r}")

    # The derived facts below are asked for every row a table version sees, so each version
    # computes them once (cached_property keeps them in the instance's __dict__, beside the frozen
    # fields: equality, hashing, repr and `replace` see the fields only).
    @cached_property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @cached_property
    def primary_key(self) -> Optional[Index]:
        for ix in self.indexes:
            if ix.primary:
                return ix
        return None

    @cached_property
    def handle_key(self) -> tuple[str, ...]:
        """The columns TiCDC uses as the row's handle: the PK, else the NOT NULL unique key with the
        fewest columns, the earliest on a tie (TiCDC pkg/common/table_info_helper.go)."""
        pk = self.primary_key
        if pk is not None:
            return pk.columns
        best: tuple[str, ...] = ()
        for ix in self.indexes:
            if ix.unique and all(not self.column(c).nullable for c in ix.columns):
                if not best or len(ix.columns) < len(best):
                    best = ix.columns
        return best

    def key_of(self, row: Row) -> tuple:
        return tuple([row[c] for c in self.handle_key])

    def row_key(self, row: Row) -> tuple:
        """The row's identity: its handle key, or TiDB's hidden row ID in a table without one."""
        key = self.handle_key
        if key:
            return (row[key[0]],) if len(key) == 1 else tuple([row[c] for c in key])
        return (row[ROWID],)

    @cached_property
    def has_generated(self) -> bool:
        return any(c.generated for c in self.columns)

    def with_generated(self, row: Row) -> Row:
        """The row with its generated columns computed from the others, as TiDB stores it."""
        if not self.has_generated:
            return row
        from ticdc_contract.generated import evaluate
        out = dict(row)
        for c in self.columns:
            if c.generated is not None:
                out[c.name] = evaluate(c.generated, out)
        return out

    def with_columns(self, columns: tuple[Column, ...], schema_version: int) -> "TableSchema":
        return replace(self, columns=columns, schema_version=schema_version)

    def create_sql(self) -> str:
        parts = []
        for c in self.columns:
            p = f"`{c.name}` {c.type.sql()}"
            if not c.nullable:
                p += " NOT NULL"
            if c.generated is not None:
                p += f" AS ({c.generated}) {'STORED' if c.generated_stored else 'VIRTUAL'}"
            if c.has_default:
                p += " DEFAULT " + sql_literal(c.default)
            parts.append(p)
        for ix in self.indexes:
            cols = ",".join(f"`{c}`" for c in ix.columns)
            if ix.primary:
                parts.append(f"PRIMARY KEY ({cols})")
            elif ix.unique:
                parts.append(f"UNIQUE KEY `{ix.name}` ({cols})")
            else:
                parts.append(f"KEY `{ix.name}` ({cols})")
        sql = f"CREATE TABLE `{self.schema}`.`{self.table}` (" + ", ".join(parts) + ")"
        if self.partitioning is not None:
            # The statement a user runs names the partitions; TiCDC forwards it as the DDL's query,
            # which is all Open Protocol and Canal-JSON consumers learn of the partitions.
            partitioning = self.partitioning
            bounds = ", ".join(f"PARTITION `{x.name}` VALUES LESS THAN "
                               f"({'MAXVALUE' if x.less_than is None else x.less_than})"
                               for x in partitioning.partitions)
            sql += f" PARTITION BY RANGE (`{partitioning.column}`) ({bounds})"
        return sql


def sql_literal(v: Any) -> str:
    """A canonical value as a SQL literal (DEFAULT clauses, generated queries)."""
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, bytes):
        return "0x" + v.hex() if v else "''"
    return "'" + str(v).replace("\\", "\\\\").replace("'", "''") + "'"


class Op(str, Enum):
    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


@dataclass(frozen=True)
class RowChange:
    """One row event as TiCDC emits it: several changes to one row in one transaction are
    already collapsed to one event (spec 002, "multiple changes to the same row in a transaction
    are only sent in one Row Changed Event")."""

    table: TableSchema
    op: Op
    before: Optional[Row]  # None for INSERT
    after: Optional[Row]  # None for DELETE

    @property
    def _image(self) -> Row:
        """The row as the event leaves it, or as it was for a DELETE."""
        row = self.after if self.after is not None else self.before
        assert row is not None, "a row change has a before or an after image"
        return row

    @property
    def physical_id(self) -> int:
        return self.table.physical_id(self._image)

    @property
    def key(self) -> tuple:
        return self.table.row_key(self._image)


def row_change(table: TableSchema, op: Op, before: Optional[Row], after: Optional[Row]) -> RowChange:
    """RowChange(table, op, before, after), its fields set as the frozen dataclass's __init__ sets
    them but without its object.__setattr__ call per field: every row change of a history read back
    (truth.read_history) or received from the process drawing it (history_process.py) is made here
    (tests/contract/test_truth.py reads every scenario back equal)."""
    change = _new(RowChange)
    change.__dict__.update(table=table, op=op, before=before, after=after)
    return change


_new = object.__new__


@dataclass(frozen=True)
class Transaction:
    start_ts: int
    commit_ts: int
    changes: tuple[RowChange, ...]


def transaction(start_ts: int, commit_ts: int, changes: tuple[RowChange, ...]) -> Transaction:
    """Transaction(start_ts, commit_ts, changes), made as row_change makes a RowChange: every
    transaction of a history read back or received from the process drawing it is made here."""
    txn = _new(Transaction)
    txn.__dict__.update(start_ts=start_ts, commit_ts=commit_ts, changes=changes)
    return txn


# Open Protocol's DDL type codes are TiDB's model.ActionType values; the model uses them too.
class DDLType(int, Enum):
    CREATE_SCHEMA = 1
    DROP_SCHEMA = 2
    CREATE_TABLE = 3
    DROP_TABLE = 4
    ADD_COLUMN = 5
    DROP_COLUMN = 6
    ADD_INDEX = 7
    DROP_INDEX = 8
    ADD_FOREIGN_KEY = 9
    DROP_FOREIGN_KEY = 10
    TRUNCATE_TABLE = 11
    MODIFY_COLUMN = 12
    REBASE_AUTO_ID = 13
    RENAME_TABLE = 14
    SET_DEFAULT_VALUE = 15
    SHARD_ROW_ID = 16
    MODIFY_TABLE_COMMENT = 17
    RENAME_INDEX = 18
    ADD_TABLE_PARTITION = 19
    DROP_TABLE_PARTITION = 20
    CREATE_VIEW = 21
    MODIFY_TABLE_CHARSET_AND_COLLATE = 22
    TRUNCATE_TABLE_PARTITION = 23
    DROP_VIEW = 24
    RECOVER_TABLE = 25
    MODIFY_SCHEMA_CHARSET_AND_COLLATE = 26
    LOCK_TABLE = 27
    UNLOCK_TABLE = 28
    REPAIR_TABLE = 29
    SET_TIFLASH_REPLICA = 30
    UPDATE_TIFLASH_REPLICA_STATUS = 31
    ADD_PRIMARY_KEY = 32
    DROP_PRIMARY_KEY = 33
    CREATE_SEQUENCE = 34
    ALTER_SEQUENCE = 35
    DROP_SEQUENCE = 36
    ALTER_INDEX_VISIBILITY = 41
    EXCHANGE_TABLE_PARTITION = 42
    # Multi-table jobs; TiCDC splits them into one CREATE_TABLE / RENAME_TABLE event per table,
    # all with the job's commit ts (TiCDC pkg/common/event/ddl_event.go GetEvents).
    RENAME_TABLES = 47
    CREATE_TABLES = 60
    MULTI_SCHEMA_CHANGE = 61
    REORGANIZE_PARTITION = 64


@dataclass(frozen=True)
class DDL:
    commit_ts: int
    ddl_type: DDLType
    query: str
    schema: str
    table: str
    table_after: Optional[TableSchema]  # None for DROP TABLE / schema-level DDL
    table_before: Optional[TableSchema]  # None for CREATE TABLE / schema-level DDL
    # Value that rows existing before an ADD COLUMN take for the new column (TiDB backfills
    # the column's default, or its "origin default").
    backfill: dict[str, Any] = field(default_factory=dict)
    # EXCHANGE PARTITION: the normal table before and after the exchange.
    other_before: Optional[TableSchema] = None
    other_after: Optional[TableSchema] = None


HistoryEvent = Union[DDL, Transaction]
