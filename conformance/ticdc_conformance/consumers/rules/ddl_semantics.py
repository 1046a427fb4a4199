"""What a DDL does to a consumer's tables, derived from the DDL message alone.

TiCDC sends no row events for the rows a DDL removes or moves (a TRUNCATE, a DROP PARTITION, an
EXCHANGE PARTITION, a RENAME), so a consumer that rebuilds tables must apply the DDL's meaning
itself, as TiCDC's own consumer does by executing the DDL downstream (TiCDC cmd/kafka-consumer
writer.go flushDDLEvent -> WriteBlockEvent). The rules, one per effect:

- CREATE TABLE starts an empty table; CREATE TABLE ... LIKE copies the other's columns and partitions;
- DROP TABLE / DROP DATABASE remove tables and their rows; TRUNCATE TABLE removes the rows;
- RENAME TABLE (each table of a RENAME TABLES job arrives as its own DDL) moves the rows;
- ADD COLUMN gives existing rows the column's DEFAULT (NULL without one; the type's zero value for
  NOT NULL without one, as TiDB backfills), DROP COLUMN removes the column, CHANGE/RENAME COLUMN
  renames it;
- DROP/TRUNCATE PARTITION remove the rows whose partitioning value falls in the partitions, using
  the partition definitions of the table's CREATE TABLE / ADD PARTITION / REORGANIZE statements;
- EXCHANGE PARTITION p WITH TABLE nt swaps the rows of partition p and of nt;
- everything else (indexes, comments, charsets, MODIFY COLUMN, defaults) changes no row.

Two forms use the same rules: event by event (`effects_of`, `apply_to_metas`, `row_fate` over a
consumer's live tables) and as a plan over a small DDL list (`DDLPlan.fate`: where a row version
written at commit ts t is at checkpoint W, and what it looks like then), for a consumer that
materializes by "last version per key" instead of applying events in order.
"""
from __future__ import annotations

import bisect
import copy
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Union

from ticdc_conformance.consumers.rules.ddl_sql import (
    ColumnDef,
    Cursor,
    DDLSyntaxError,
    UnknownValue,
    canonical_literal,
    column_def,
)

Name = tuple[str, str]


# --- partitions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionDef:
    name: str
    less_than: Any = None  # RANGE: exclusive upper bound; None = MAXVALUE
    values: Optional[tuple] = None  # LIST: the values the partition holds


@dataclass(frozen=True)
class Partitioning:
    kind: str  # "range" | "list"
    column: str
    partitions: tuple[PartitionDef, ...]

    def partition_of(self, value: Any) -> Optional[str]:
        """The partition that holds a row whose partitioning column has `value` (None: none does)."""
        if self.kind == "list":
            return next((p.name for p in self.partitions if value in (p.values or ())), None)
        if value is None:  # RANGE puts NULL in the lowest partition (MySQL partitioning-handling-nulls)
            return self.partitions[0].name if self.partitions else None
        for p in self.partitions:
            if p.less_than is None:
                return p.name
            if type(p.less_than) is not type(value) and not (isinstance(value, int) and isinstance(p.less_than, int)):
                return None
            if value < p.less_than:
                return p.name
        return None

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.partitions)


# --- effects -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CreateSchema:
    schema: str


@dataclass(frozen=True)
class DropSchema:
    schema: str


@dataclass(frozen=True)
class CreateTable:
    name: Name
    columns: tuple[str, ...]
    partitioning: Optional[Partitioning] = None
    like: Optional[Name] = None


@dataclass(frozen=True)
class DropTable:
    name: Name


@dataclass(frozen=True)
class TruncateTable:
    name: Name


@dataclass(frozen=True)
class RenameTable:
    old: Name
    new: Name


@dataclass(frozen=True)
class AddColumn:
    name: Name
    column: str
    value: Any  # what existing rows get, canonical JSON
    first: bool = False
    after: Optional[str] = None
    # Why `value` is not known (DEFAULT NOW(), an unknown type): existing rows then get NULL.
    unknown: Optional[str] = None
    # A VIRTUAL generated column: TiCDC never sends its values, so the consumer's table has no such column.
    virtual: bool = False


@dataclass(frozen=True)
class DropColumn:
    name: Name
    column: str


@dataclass(frozen=True)
class RenameColumn:
    name: Name
    old: str
    new: str


@dataclass(frozen=True)
class AddPartitions:
    name: Name
    partitions: tuple[PartitionDef, ...]


@dataclass(frozen=True)
class RemovePartitionRows:
    """DROP PARTITION (definitions go too) or TRUNCATE PARTITION (definitions stay)."""
    name: Name
    partitions: tuple[str, ...]  # empty with all_=True: TRUNCATE PARTITION ALL
    drop: bool
    all_: bool = False


@dataclass(frozen=True)
class ExchangePartition:
    name: Name
    partition: str
    other: Name


@dataclass(frozen=True)
class Repartition:
    """PARTITION BY ... (new definitions) or REMOVE PARTITIONING (None); rows stay."""
    name: Name
    partitioning: Optional[Partitioning]


@dataclass(frozen=True)
class ReorganizePartitions:
    name: Name
    old: tuple[str, ...]
    new: tuple[PartitionDef, ...]


@dataclass(frozen=True)
class NoRowEffect:
    name: Optional[Name]
    what: str


@dataclass(frozen=True)
class NotUnderstood:
    query: str
    reason: str


Effect = Union[CreateSchema, DropSchema, CreateTable, DropTable, TruncateTable, RenameTable, AddColumn, DropColumn,
               RenameColumn, AddPartitions, RemovePartitionRows, ExchangePartition, Repartition,
               ReorganizePartitions, NoRowEffect, NotUnderstood]


# --- reading a statement -----------------------------------------------------------------------
def effects_of(query: str, schema: str = "", table: str = "") -> list[Effect]:
    """The effects of one DDL message. `schema`/`table` are what the message names; they qualify
    unqualified names and pick this table's pair out of a multi-table RENAME TABLE statement."""
    try:
        return _statement(Cursor(query), query, schema, table)
    except DDLSyntaxError as e:
        return [NotUnderstood(query, str(e))]


def _statement(c: Cursor, query: str, schema: str, table: str) -> list[Effect]:
    verb = c.take_kw("CREATE", "DROP", "TRUNCATE", "RENAME", "ALTER")
    if verb == "CREATE":
        c.take_kw("TEMPORARY", "GLOBAL", "LOCAL")  # modifiers before TABLE
        c.take_kw("TEMPORARY")
        if c.take_kw("DATABASE", "SCHEMA"):
            c.skip_if_exists()
            return [CreateSchema(c.name())]
        if c.take_kw("TABLE"):
            c.skip_if_exists()
            return [_create_table(c, c.qualified(schema), schema)]
        return [NoRowEffect(None, "CREATE " + str(c.peek().value))]
    if verb == "DROP":
        c.take_kw("TEMPORARY")
        if c.take_kw("DATABASE", "SCHEMA"):
            c.skip_if_exists()
            return [DropSchema(c.name())]
        if c.take_kw("TABLE", "TABLES"):
            c.skip_if_exists()
            out: list[Effect] = [DropTable(c.qualified(schema))]
            while c.take_punct(","):
                out.append(DropTable(c.qualified(schema)))
            return out
        return [NoRowEffect(None, "DROP " + str(c.peek().value))]
    if verb == "TRUNCATE":
        c.take_kw("TABLE")
        return [TruncateTable(c.qualified(schema))]
    if verb == "RENAME":
        c.expect_kw("TABLE", "TABLES")
        pairs = []
        while True:
            old = c.qualified(schema)
            c.expect_kw("TO")
            pairs.append(RenameTable(old, c.qualified(schema)))
            if not c.take_punct(","):
                break
        # TiCDC splits a RENAME TABLES job into one DDL per table (TiCDC pkg/common/event/ddl_event.go
        # GetEvents); should a message still carry the whole statement, only its own pair applies.
        mine = [p for p in pairs if p.new == (schema, table)]
        return mine if (mine and len(pairs) > 1) else pairs
    if verb == "ALTER":
        if c.take_kw("DATABASE", "SCHEMA"):
            return [NoRowEffect(None, "ALTER DATABASE")]
        c.take_kw("ONLINE", "OFFLINE")
        c.take_kw("IGNORE")
        c.expect_kw("TABLE")
        name = c.qualified(schema)
        out = []
        while not c.done():
            out.extend(_alter_spec(c, name, schema))
            c.skip_item()  # what a spec says beyond its effect (e.g. NONCLUSTERED)
            if not c.take_punct(","):
                break
        return out
    return [NotUnderstood(query, "not a DDL statement this consumer knows")]


def _create_table(c: Cursor, name: Name, schema: str) -> CreateTable:
    if c.take_kw("LIKE"):
        return CreateTable(name, (), None, like=c.qualified(schema))
    if c.peek().is_punct("(") and c.peek(1).is_kw("LIKE"):
        c.take()
        c.take()
        return CreateTable(name, (), None, like=c.qualified(schema))
    s, e = c.group()
    columns = []
    for item in c.sub(s, e).items():
        first = item.peek()
        if first.kind == "word" and first.value in ("PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN",
                                                    "CHECK", "FULLTEXT", "SPATIAL"):
            continue
        col = column_def(item)
        if not col.virtual:  # TiCDC never sends a virtual generated column (docs/consumer-rules.md)
            columns.append(col.name)
    partitioning = None
    while not c.done():
        if c.take_kw("PARTITION") and c.take_kw("BY"):
            partitioning = _partition_by(c)
            break
        c.take()
    return CreateTable(name, tuple(columns), partitioning)


def _partition_by(c: Cursor) -> Optional[Partitioning]:
    """`RANGE [COLUMNS] (col) (defs)` / `LIST [COLUMNS] (col) (defs)`; None for kinds whose rows
    cannot be placed from the statement (HASH, KEY)."""
    kind = c.expect_kw("RANGE", "LIST", "HASH", "KEY", "LINEAR").lower()
    if kind not in ("range", "list"):
        return None
    c.take_kw("COLUMNS")
    s, e = c.group()
    cols = c.sub(s, e)
    column = cols.name()
    if not cols.done():
        return None  # an expression or several columns: not placeable from the statement
    if not c.peek().is_punct("("):
        return None
    s, e = c.group()
    return Partitioning(kind, column, tuple(_partition_def(item) for item in c.sub(s, e).items()))


def _partition_def(c: Cursor) -> PartitionDef:
    c.expect_kw("PARTITION")
    name = c.name()
    c.expect_kw("VALUES")
    if c.take_kw("LESS"):
        c.expect_kw("THAN")
        if c.take_kw("MAXVALUE"):
            return PartitionDef(name, None)
        s, e = c.group()
        inner = c.sub(s, e)
        if inner.take_kw("MAXVALUE"):
            return PartitionDef(name, None)
        return PartitionDef(name, _bound_value(inner))
    c.expect_kw("IN")
    s, e = c.group()
    return PartitionDef(name, values=tuple(_bound_value(item) for item in c.sub(s, e).items()))


def _bound_value(c: Cursor) -> Any:
    t = c.take()
    neg = t.is_punct("-")
    if neg:
        t = c.take()
    if t.kind == "num":
        return -int(t.value) if neg else int(t.value)
    if t.kind == "str":
        return t.value
    if t.is_kw("NULL"):
        return None
    raise DDLSyntaxError(f"partition bound at offset {t.start} is not a literal")


def _names(c: Cursor) -> tuple[str, ...]:
    """`p0, p1, ...`: a comma continues the list unless a new ALTER specification follows it."""
    out = [c.name()]
    while c.peek().is_punct(",") and (c.peek(1).kind == "ident" or
                                      (c.peek(1).kind == "word" and c.peek(1).value not in _SPEC_WORDS)):
        c.take()
        out.append(c.name())
    return tuple(out)


def _alter_spec(c: Cursor, name: Name, schema: str) -> list[Effect]:
    w = c.take().value
    if w == "ADD":
        if c.take_kw("PARTITION"):
            s, e = c.group()
            return [AddPartitions(name, tuple(_partition_def(i) for i in c.sub(s, e).items()))]
        if c.peek().is_kw("PRIMARY", "INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "CONSTRAINT", "FOREIGN",
                          "CHECK", "CLUSTERED"):
            return [NoRowEffect(name, "ADD " + c.peek().value)]
        c.take_kw("COLUMN")
        if c.peek().is_punct("("):
            s, e = c.group()
            return [_add_column(name, column_def(i)) for i in c.sub(s, e).items()]
        return [_add_column(name, column_def(c.item()))]
    if w == "DROP":
        if c.take_kw("PARTITION"):
            return [RemovePartitionRows(name, _names(c), drop=True)]
        if c.peek().is_kw("PRIMARY", "INDEX", "KEY", "FOREIGN", "CHECK", "CONSTRAINT"):
            return [NoRowEffect(name, "DROP " + c.peek().value)]
        c.take_kw("COLUMN")
        return [DropColumn(name, c.name())]
    if w == "TRUNCATE":
        c.expect_kw("PARTITION")
        if c.take_kw("ALL"):
            return [RemovePartitionRows(name, (), drop=False, all_=True)]
        return [RemovePartitionRows(name, _names(c), drop=False)]
    if w == "EXCHANGE":
        c.expect_kw("PARTITION")
        part = c.name()
        c.expect_kw("WITH")
        c.expect_kw("TABLE")
        return [ExchangePartition(name, part, c.qualified(schema))]
    if w == "RENAME":
        if c.take_kw("COLUMN"):
            old = c.name()
            c.expect_kw("TO")
            return [RenameColumn(name, old, c.name())]
        if c.peek().is_kw("INDEX", "KEY"):
            return [NoRowEffect(name, "RENAME INDEX")]
        c.take_kw("TO", "AS")
        return [RenameTable(name, c.qualified(schema))]
    if w == "CHANGE":
        c.take_kw("COLUMN")
        old = c.name()
        new = column_def(c.item())
        return [RenameColumn(name, old, new.name)] if new.name != old else [NoRowEffect(name, "CHANGE COLUMN")]
    if w == "REMOVE":
        c.expect_kw("PARTITIONING")
        return [Repartition(name, None)]
    if w == "PARTITION":
        c.expect_kw("BY")
        return [Repartition(name, _partition_by(c))]
    if w == "REORGANIZE":
        c.expect_kw("PARTITION")
        old = _names(c)
        c.expect_kw("INTO")
        s, e = c.group()
        return [ReorganizePartitions(name, old, tuple(_partition_def(i) for i in c.sub(s, e).items()))]
    return [NoRowEffect(name, w)]


# Words that start an ALTER TABLE specification; any other bare word after a comma continues a
# partition-name list.
_SPEC_WORDS = ("ADD", "DROP", "TRUNCATE", "EXCHANGE", "RENAME", "CHANGE", "REMOVE", "PARTITION", "REORGANIZE",
               "MODIFY", "ALTER", "COMMENT", "CHARACTER", "CHARSET", "DEFAULT", "COLLATE", "ENGINE", "AUTO_INCREMENT",
               "CONVERT", "ORDER", "FORCE", "LOCK", "ALGORITHM", "SET", "CACHE", "NOCACHE", "SHARD_ROW_ID_BITS",
               "PRE_SPLIT_REGIONS", "AUTO_ID_CACHE", "AUTO_RANDOM_BASE", "TTL", "TTL_ENABLE", "TTL_JOB_INTERVAL",
               "PLACEMENT", "COALESCE", "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR", "DISCARD", "IMPORT",
               "ROW_FORMAT", "KEY_BLOCK_SIZE", "STATS_PERSISTENT", "FIRST", "SECONDARY_LOAD", "SECONDARY_UNLOAD")


def _add_column(name: Name, col: ColumnDef) -> AddColumn:
    try:
        value, unknown = canonical_literal(col.type, col.default, col.nullable, col.has_default), None
    except UnknownValue as e:
        value, unknown = None, str(e)
    if col.virtual:
        return AddColumn(name, col.name, None, virtual=True)
    return AddColumn(name, col.name, value, col.first, col.after, unknown)


# --- table metadata ----------------------------------------------------------------------------
@dataclass
class TableMeta:
    """What a consumer knows of a table besides its rows."""
    columns: list[str] = field(default_factory=list)
    partitioning: Optional[Partitioning] = None
    # Columns a DDL dropped: a row event still carrying one (written before the DDL, arriving after
    # it, as in arrival order) does not bring it back.
    dropped: set[str] = field(default_factory=set)


def tables_touched(effect: Effect, known: Iterable[Name]) -> list[Name]:
    """The tables whose rows an effect may change or move."""
    if isinstance(effect, DropSchema):
        return sorted(n for n in known if n[0] == effect.schema)
    if isinstance(effect, RenameTable):
        return [effect.old, effect.new]
    if isinstance(effect, ExchangePartition):
        return [effect.name, effect.other]
    if isinstance(effect, (CreateTable, DropTable, TruncateTable, AddColumn, DropColumn, RenameColumn,
                           RemovePartitionRows)):
        return [effect.name]
    return []


def apply_to_metas(effect: Effect, metas: dict[Name, TableMeta]) -> None:
    """Updates table metadata (existence, columns, partitions) for one effect."""
    if isinstance(effect, CreateTable):
        base = metas.get(effect.like) if effect.like else None
        metas[effect.name] = (copy.deepcopy(base) if base is not None else
                              TableMeta(list(effect.columns), effect.partitioning))
    elif isinstance(effect, DropSchema):
        for n in [n for n in metas if n[0] == effect.schema]:
            del metas[n]
    elif isinstance(effect, DropTable):
        metas.pop(effect.name, None)
    elif isinstance(effect, RenameTable):
        if effect.old in metas:
            metas[effect.new] = metas.pop(effect.old)
    elif isinstance(effect, AddColumn):
        m = metas.setdefault(effect.name, TableMeta())
        m.dropped.discard(effect.column)
        if effect.column in m.columns or effect.virtual:
            return
        if effect.first:
            m.columns.insert(0, effect.column)
        elif effect.after in m.columns:
            m.columns.insert(m.columns.index(effect.after) + 1, effect.column)
        else:
            m.columns.append(effect.column)
    elif isinstance(effect, DropColumn):
        m = metas.get(effect.name)
        if m is not None:
            m.dropped.add(effect.column)
            if effect.column in m.columns:
                m.columns.remove(effect.column)
    elif isinstance(effect, RenameColumn):
        m = metas.get(effect.name)
        if m is not None:
            m.columns = [effect.new if c == effect.old else c for c in m.columns]
            m.dropped = (m.dropped - {effect.new}) | {effect.old}
            if m.partitioning is not None and m.partitioning.column == effect.old:
                m.partitioning = Partitioning(m.partitioning.kind, effect.new, m.partitioning.partitions)
    elif isinstance(effect, AddPartitions):
        m = metas.get(effect.name)
        if m is not None and m.partitioning is not None:
            p = m.partitioning
            m.partitioning = Partitioning(p.kind, p.column, p.partitions + effect.partitions)
    elif isinstance(effect, RemovePartitionRows) and effect.drop:
        m = metas.get(effect.name)
        if m is not None and m.partitioning is not None:
            p = m.partitioning
            m.partitioning = Partitioning(p.kind, p.column,
                                          tuple(x for x in p.partitions if x.name not in effect.partitions))
    elif isinstance(effect, Repartition):
        m = metas.get(effect.name)
        if m is not None:
            m.partitioning = effect.partitioning
    elif isinstance(effect, ReorganizePartitions):
        m = metas.get(effect.name)
        if m is not None and m.partitioning is not None:
            p, out, placed = m.partitioning, [], False
            for x in p.partitions:
                if x.name in effect.old:
                    if not placed:
                        out.extend(effect.new)
                        placed = True
                else:
                    out.append(x)
            m.partitioning = Partitioning(p.kind, p.column, tuple(out))


class PartitionsUnknown(ValueError):
    """A partition DDL on a table whose partition definitions the consumer never saw."""


def row_fate(effect: Effect, name: Name, image: dict, metas: dict[Name, TableMeta]) -> Optional[tuple[Name, dict]]:
    """Where one row of table `name` is after the effect, and its image then (None: removed).
    `metas` is the metadata before the effect. Unaffected rows come back as they were."""
    if isinstance(effect, DropSchema):
        return None if name[0] == effect.schema else (name, image)
    if isinstance(effect, (DropTable, TruncateTable, CreateTable)):
        # CREATE TABLE of a name that still holds rows: the consumer missed their DROP; the new
        # table starts empty either way.
        return None if name == effect.name else (name, image)
    if isinstance(effect, RenameTable):
        return (effect.new, image) if name == effect.old else (name, image)
    if name != getattr(effect, "name", None) and not (isinstance(effect, ExchangePartition) and name == effect.other):
        return name, image
    if isinstance(effect, AddColumn):
        if effect.column in image or effect.virtual:
            return name, image
        return name, {**image, effect.column: effect.value}
    if isinstance(effect, DropColumn):
        return name, {k: v for k, v in image.items() if k != effect.column}
    if isinstance(effect, RenameColumn):
        return name, {(effect.new if k == effect.old else k): v for k, v in image.items()}
    if isinstance(effect, RemovePartitionRows):
        if effect.all_:
            return None
        return None if _partition(metas, name, image) in effect.partitions else (name, image)
    if isinstance(effect, ExchangePartition):
        if name == effect.other:
            return effect.name, image
        return (effect.other, image) if _partition(metas, name, image) == effect.partition else (name, image)
    return name, image


def _partition(metas: dict[Name, TableMeta], name: Name, image: dict) -> Optional[str]:
    m = metas.get(name)
    if m is None or m.partitioning is None:
        raise PartitionsUnknown(f"{name[0]}.{name[1]}: its partition definitions are unknown (the consumer saw "
                                "no CREATE TABLE ... PARTITION BY RANGE/LIST for it)")
    return m.partitioning.partition_of(image.get(m.partitioning.column))


# --- the plan form -----------------------------------------------------------------------------
@dataclass(frozen=True)
class DDLRecord:
    commit_ts: int
    schema: str
    table: str
    query: str


class DDLPlan:
    """A stream's DDLs (a small list) as a function over row versions.

    `fate(name, commit_ts, image, until)` follows a row version written to `name` at `commit_ts`
    through every DDL with commit_ts < ts <= until and answers where it is then and what it looks
    like (None: a DDL removed it). A materialization that keeps the last version per key applies
    it to each surviving version; the event-by-event consumer applies the very same `row_fate`.
    """

    def __init__(self, ddls: Iterable[DDLRecord]) -> None:
        metas: dict[Name, TableMeta] = {}
        self._steps: list[tuple[int, Effect, dict[Name, TableMeta]]] = []
        for d in sorted(ddls, key=lambda d: d.commit_ts):  # stable: a job's DDLs keep their order
            for eff in effects_of(d.query, d.schema, d.table):
                before = {n: copy.deepcopy(metas[n]) for n in tables_touched(eff, metas) if n in metas}
                self._steps.append((d.commit_ts, eff, before))
                apply_to_metas(eff, metas)
        self._ts = [s[0] for s in self._steps]
        self.metas = metas

    def fate(self, name: Name, commit_ts: int, image: dict, until: Optional[int] = None
             ) -> Optional[tuple[Name, dict]]:
        start = bisect.bisect_right(self._ts, commit_ts)
        stop = len(self._ts) if until is None else bisect.bisect_right(self._ts, until)
        where: Optional[tuple[Name, dict]] = (name, image)
        for _, eff, before in self._steps[start:stop]:
            where = row_fate(eff, where[0], where[1], before)
            if where is None:
                return None
        return where

    def effects(self) -> list[tuple[int, Effect]]:
        return [(ts, eff) for ts, eff, _ in self._steps]
