"""Columns and table definitions: every key shape TiCDC tells apart, optionally RANGE-partitioned.

A `TableSpec` is a CREATE TABLE before TiDB has given it IDs: `spec.create(upstream)` runs it
against an upstream model, `spec.to_schema()` gives a stand-alone `TableSchema`. Key shapes:

- INT_HANDLE: an integer primary key that is the row handle (`pk_is_handle=True`);
- CLUSTERED: a single-column non-integer clustered primary key;
- COMPOSITE: a primary key over two or three columns, clustered or not;
- NONCLUSTERED: a single-column NONCLUSTERED primary key (the handle is a hidden row ID);
- UNIQUE_NOT_NULL: no primary key, a NOT NULL unique key takes its place;
- NO_KEY: neither (unique keys over nullable columns at most): TiDB tells rows apart by a
  hidden row ID, which the upstream model keeps in each row under `model.ROWID`.

Partitioned tables partition by RANGE on an integer column of the key; TiDB wants every unique
key to hold the partitioning column, and so do these strategies.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from typing import Callable, Optional, Sequence

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ticdc_contract.model import DDL, Column, Index, Partition, Partitioning, TableSchema
from ticdc_contract.tidb_types import TiDBType, charset_info

from .names import fresh_name, identifiers, name_key
from .rows import default_values
from .types import integer_types, is_key_type, key_types, tidb_types

MAX_INDEX_KEY_BYTES = 3072  # TiDB's max-index-length


class KeyShape(str, Enum):
    INT_HANDLE = "int-handle"
    CLUSTERED = "clustered"
    COMPOSITE = "composite"
    NONCLUSTERED = "nonclustered"
    UNIQUE_NOT_NULL = "unique-not-null"
    NO_KEY = "no-key"


ALL_SHAPES = tuple(KeyShape)


def takes_literal_default(t: TiDBType) -> bool:
    """TiDB refuses a literal DEFAULT on BLOB, TEXT and JSON columns."""
    return not (t.is_blob_family or t.base == "json")


def index_bytes(t: TiDBType) -> Optional[int]:
    """Bytes one column takes in an index key at most; None when it needs a prefix length."""
    if t.is_blob_family or t.base == "json":
        return None
    if t.base in ("char", "varchar"):
        return t.effective_flen * charset_info(t.effective_charset).maxlen
    if t.base in ("binary", "varbinary"):
        return t.effective_flen
    if t.base in ("enum", "set"):
        return 8
    return 32


def indexable(columns: Sequence[Column]) -> bool:
    """Whether an index over `columns` (no prefix lengths) fits TiDB's key length limit."""
    sizes = [index_bytes(c.type) for c in columns]
    return None not in sizes and sum(sizes) <= MAX_INDEX_KEY_BYTES


# --- columns -------------------------------------------------------------------------------
def draw_column(draw, name: str, *, types: Optional[SearchStrategy[TiDBType]] = None, nullable: Optional[bool] = None,
                defaults: bool = True, time_zone: str = "UTC") -> Column:
    """A column named `name`: type, NULL or NOT NULL, and now and then a DEFAULT its domain offers."""
    t = draw(types if types is not None else tidb_types())
    null = draw(st.booleans()) if nullable is None else nullable
    col = Column(name, t, nullable=null)
    if defaults and takes_literal_default(t) and draw(st.booleans()):
        default = draw(default_values(col, time_zone=time_zone) | _NO_DEFAULT_S)
        if default is not _NO_DEFAULT:
            col = replace(col, default=default, has_default=True)
    return col


@st.composite
def columns(draw, *, names: SearchStrategy[str] = identifiers(), types: Optional[SearchStrategy[TiDBType]] = None,
            nullable: Optional[bool] = None, defaults: bool = True, time_zone: str = "UTC") -> Column:
    """A column: name, type, NULL or NOT NULL, and now and then a DEFAULT its domain offers."""
    return draw_column(draw, draw(names), types=types, nullable=nullable, defaults=defaults, time_zone=time_zone)


_NO_DEFAULT = object()
_NO_DEFAULT_S = st.just(_NO_DEFAULT)


# --- table specs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TableSpec:
    schema: str
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...]
    pk_is_handle: bool
    shape: KeyShape
    partition_column: Optional[str] = None
    # Upper bounds (exclusive) of the RANGE partitions in order; None = MAXVALUE (last only).
    partition_bounds: tuple[Optional[int], ...] = field(default=())

    @property
    def partitioned(self) -> bool:
        return self.partition_column is not None

    def renamed(self, schema: str, table: str) -> "TableSpec":
        return replace(self, schema=schema, table=table)

    def partitioning_for(self, new_id: Callable[[], int]) -> Optional[Callable[[int], Partitioning]]:
        """The `partitioning` argument of `Upstream.create_table`: partition IDs from `new_id`."""
        if not self.partitioned:
            return None
        return lambda _table_id: Partitioning(self.partition_column, tuple(
            Partition(f"p{i}", new_id(), b) for i, b in enumerate(self.partition_bounds)))

    def create_kwargs(self, upstream) -> dict:
        """Keyword arguments of `Upstream.create_table` (and the specs of `create_tables`)."""
        return dict(schema=self.schema, table=self.table, columns=list(self.columns), indexes=list(self.indexes),
                    pk_is_handle=self.pk_is_handle, partitioning=self.partitioning_for(upstream.new_id),
                    comment="")

    def create(self, upstream) -> list[DDL]:
        return upstream.create_table(**self.create_kwargs(upstream))

    def to_schema(self, table_id: int = 100, schema_version: int = 0) -> TableSchema:
        ids = iter(range(table_id + 2, table_id + 2 + 2 * len(self.partition_bounds), 2))
        part = self.partitioning_for(lambda: next(ids))
        return TableSchema(self.schema, self.table, table_id,
                           tuple(replace(c, column_id=i + 1) for i, c in enumerate(self.columns)),
                           self.indexes, schema_version, pk_is_handle=self.pk_is_handle,
                           partitioning=part(table_id) if part else None)


_MORE = st.integers(0, 3)


@st.composite
def _extra_column(draw, taken: tuple[str, ...], types, exotic_names: bool, time_zone: str) -> Optional[Column]:
    """None ("no more columns"), else a column with a name not in `taken`; one span per column."""
    if draw(_MORE) == 0:
        return None
    return draw_column(draw, fresh_name(draw, taken, exotic=exotic_names), types=types, time_zone=time_zone)
_KEY_COLUMN_TYPES = {
    KeyShape.INT_HANDLE: st.lists(integer_types(), min_size=1, max_size=1),
    KeyShape.CLUSTERED: st.lists(key_types().filter(lambda t: not t.is_integer), min_size=1, max_size=1),
    KeyShape.COMPOSITE: st.lists(key_types(), min_size=2, max_size=3),
    KeyShape.NONCLUSTERED: st.lists(key_types(), min_size=1, max_size=2),
    KeyShape.UNIQUE_NOT_NULL: st.lists(key_types(), min_size=1, max_size=2),
    KeyShape.NO_KEY: st.just([]),
}


@lru_cache(maxsize=None)
def partition_bounds(t: TiDBType) -> SearchStrategy[tuple[Optional[int], ...]]:
    """Strictly increasing RANGE bounds inside the column's range, MAXVALUE last now and then."""
    lo, hi = t.int_range
    return st.builds(lambda bs, maxvalue: tuple(sorted(bs)) + ((None,) if maxvalue else ()),
                     st.lists(st.integers(lo + 1, hi), min_size=1, max_size=4, unique=True), st.booleans())


@st.composite
def table_specs(draw, *, schema: str = "d0", table: Optional[str] = None,
                shapes: Sequence[KeyShape] = ALL_SHAPES, max_columns: int = 6,
                partitioned: Optional[bool] = None, types: Optional[SearchStrategy[TiDBType]] = None,
                exotic_names: bool = False, time_zone: str = "UTC") -> TableSpec:
    """A table definition TiDB accepts, of one of `shapes`, with unique column names and mixed
    types; `partitioned` None = sometimes."""
    return draw_table_spec(draw, schema=schema, table=table, shapes=tuple(shapes), max_columns=max_columns,
                           partitioned=partitioned, types=types, exotic_names=exotic_names, time_zone=time_zone)


def draw_table_spec(draw, *, schema: str = "d0", table: Optional[str] = None,
                    shapes: Sequence[KeyShape] = ALL_SHAPES, max_columns: int = 6,
                    partitioned: Optional[bool] = None, types: Optional[SearchStrategy[TiDBType]] = None,
                    exotic_names: bool = False, time_zone: str = "UTC") -> TableSpec:
    """`table_specs`, drawn with a `draw` of the caller's (a composite's, or `st.data().draw`)."""
    shape = draw(st.sampled_from(tuple(shapes)))
    key_ts = draw(_KEY_COLUMN_TYPES[shape])
    names: list[str] = []
    for _ in key_ts:
        names.append(fresh_name(draw, names, exotic=exotic_names))
    if table is None:
        table = draw(identifiers(exotic=exotic_names))
    key_cols = [Column(n, t, nullable=False) for n, t in zip(names, key_ts)]
    key_names = tuple(c.name for c in key_cols)
    # Further columns one at a time, each after a "more?" choice whose simplest value is "no", so
    # a shrinking example sheds columns one by one.
    extra: list[Column] = []
    while len(names) < max_columns:
        col = draw(_extra_column(tuple(names), types, exotic_names, time_zone))
        if col is None:
            break
        names.append(col.name)
        extra.append(col)

    indexes: list[Index] = []
    pk_is_handle = False
    if shape is KeyShape.INT_HANDLE:
        indexes.append(Index("PRIMARY", key_names, primary=True, unique=True, clustered=True))
        pk_is_handle = True
    elif shape is KeyShape.CLUSTERED:
        indexes.append(Index("PRIMARY", key_names, primary=True, unique=True, clustered=True))
    elif shape is KeyShape.COMPOSITE:
        indexes.append(Index("PRIMARY", key_names, primary=True, unique=True, clustered=draw(st.booleans())))
    elif shape is KeyShape.NONCLUSTERED:
        indexes.append(Index("PRIMARY", key_names, primary=True, unique=True, clustered=False))
    elif shape is KeyShape.UNIQUE_NOT_NULL:
        indexes.append(Index("uk", key_names, unique=True))
    if shape is KeyShape.NO_KEY and not extra:
        extra.append(draw_column(draw, fresh_name(draw, names, exotic=exotic_names), types=types,
                                 time_zone=time_zone))
        names.append(extra[-1].name)

    part_col: Optional[Column] = None
    bounds: tuple = ()
    int_keys = [c for c in key_cols if c.type.is_integer]
    if int_keys and (partitioned if partitioned is not None else draw(st.integers(0, 3)) == 3):
        part_col = int_keys[0]
        bounds = draw(partition_bounds(part_col.type))

    # Secondary indexes over the other columns: a plain one and a unique one, now and then.
    taken = {name_key(ix.name) for ix in indexes}
    by_name = {c.name: c for c in key_cols + extra}
    for unique in (False, True):
        # (A unique key over NOT NULL columns would give a NO_KEY table a handle.)
        pool = [c for c in extra if (is_key_type(c.type) and (c.nullable or shape is not KeyShape.NO_KEY)
                                     if unique else index_bytes(c.type) is not None)]
        if not pool or not draw(st.booleans()):
            continue
        chosen = [pool[i].name for i in draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=2, unique=True))]
        if unique and part_col is not None and part_col.name not in chosen:
            chosen.append(part_col.name)
        if not indexable([by_name[c] for c in chosen]):
            continue
        name = fresh_name(draw, taken | {"primary"}, exotic=exotic_names)
        taken.add(name_key(name))
        indexes.append(Index(name, tuple(chosen), unique=unique))

    cols = draw(st.permutations(key_cols + extra))
    return TableSpec(schema, table, tuple(cols), tuple(indexes), pk_is_handle, shape,
                     part_col.name if part_col is not None else None, bounds)


def table_schemas(**kwargs) -> SearchStrategy[TableSchema]:
    """Stand-alone table schemas (IDs as a fresh upstream would give them); see `table_specs`."""
    return table_specs(**kwargs).map(lambda spec: spec.to_schema())
