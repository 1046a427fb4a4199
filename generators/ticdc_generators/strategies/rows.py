"""Values and rows: canonical Python values TiDB accepts, as the value domains define them.

`values(t)` is the domain's own strategy (`ticdc_generators.values.domain_for(t).strategy()`),
with None added for nullable columns. `rows(table)` draws one value per column and keeps to what
the table itself demands: NOT NULL columns get a value, the partitioning column a value some
partition takes, and strings in a unique key no trailing spaces (under TiDB's PAD SPACE
collations 'a' and 'a ' are one key, which the model would take for two). Whether a row's keys
are free is the caller's concern.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Optional

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ticdc_contract.model import Column, Row, TableSchema
from ticdc_contract.tidb_types import TiDBType, type_collation


@lru_cache(maxsize=4096)
def domain(t: TiDBType, nullable: bool = False, time_zone: str = "UTC"):
    """The value domain of a column type (cached: types are immutable)."""
    from ..values import domain_for
    return domain_for(t, nullable=nullable, time_zone=time_zone)


def is_valid(t: TiDBType, v: Any, *, nullable: bool = False, time_zone: str = "UTC") -> bool:
    """Whether `v` is a canonical value TiDB accepts for a column of type `t`."""
    try:
        ok = domain(t, nullable, time_zone).validate(v)
    except (ValueError, TypeError):
        return False
    return ok is not False


@lru_cache(maxsize=4096)
def values(t: TiDBType, *, nullable: bool = False, time_zone: str = "UTC") -> SearchStrategy[Any]:
    """Canonical values of type `t`; None first (the simplest value) when `nullable`."""
    s = domain(t, False, time_zone).strategy()
    return st.none() | s if nullable else s


@lru_cache(maxsize=4096)
def _defaults(t: TiDBType, nullable: bool, time_zone: str) -> SearchStrategy[Any]:
    candidates = list(domain(t, nullable, time_zone).default_candidates())
    if nullable and None not in candidates:
        candidates.insert(0, None)
    elif not nullable:
        candidates = [c for c in candidates if c is not None]
    return st.sampled_from(candidates) if candidates else st.nothing()


def default_values(column: Column, *, time_zone: str = "UTC") -> SearchStrategy[Any]:
    """Values a DEFAULT clause of the column may state (empty strategy when none may)."""
    return _defaults(column.type, column.nullable, time_zone)


def pads_space(t: TiDBType) -> bool:
    """Whether trailing spaces are ignored when TiDB compares strings of `t` (PAD SPACE)."""
    return t.is_text and type_collation(t).pad_space


def collation_form(t: TiDBType, v: Any) -> Any:
    """`v` as TiDB's comparisons under the column's collation see it: two values of a unique key
    collide in TiDB exactly when their collation forms are equal. (ENUM and SET keys hold the
    member number / bitmask, which distinct members never share.)"""
    if not isinstance(v, str) or not t.is_text:
        return v
    coll = type_collation(t)
    if coll.pad_space:
        v = v.rstrip(" ")
    if coll.case_insensitive:
        v = v.casefold()
    return v


def key_form(table: TableSchema, columns: Iterable[str], row: Row) -> tuple:
    return tuple(collation_form(table.column(c).type, row[c]) for c in columns)


def unique_column_names(table: TableSchema) -> set[str]:
    return {c for ix in table.indexes if ix.unique or ix.primary for c in ix.columns}


def partition_values(table: TableSchema, column: Column, time_zone: str = "UTC") -> SearchStrategy[int]:
    """Values of the partitioning column that some partition of `table` takes."""
    return _partition_values(column.type, table.partitioning.partitions[-1].less_than, time_zone)


@lru_cache(maxsize=4096)
def _partition_values(t: TiDBType, last: Optional[int], time_zone: str) -> SearchStrategy[int]:
    lo, hi = t.int_range
    if last is not None:
        hi = min(hi, last - 1)
    return st.integers(lo, hi).filter(lambda v: is_valid(t, v, time_zone=time_zone))


@lru_cache(maxsize=4096)
def _stripped(t: TiDBType, nullable: bool, time_zone: str) -> SearchStrategy[Any]:
    return values(t, nullable=nullable, time_zone=time_zone).map(lambda v: v.rstrip(" ") if isinstance(v, str) else v)


def column_values(table: TableSchema, column: Column, *, time_zone: str = "UTC",
                  keys: Optional[set[str]] = None) -> SearchStrategy[Any]:
    """Values one column of `table` may take in a row."""
    if table.partitioning is not None and table.partitioning.column == column.name:
        return partition_values(table, column, time_zone)
    if keys is None:
        keys = unique_column_names(table)
    if column.name in keys and pads_space(column.type):
        return _stripped(column.type, column.nullable, time_zone)
    return values(column.type, nullable=column.nullable, time_zone=time_zone)


def draw_values(draw, table: TableSchema, names: Iterable[str], *, time_zone: str = "UTC") -> Row:
    """Values for some columns of `table`, drawn one by one (see `column_values`)."""
    keys = unique_column_names(table)
    return {n: draw(column_values(table, table.column(n), time_zone=time_zone, keys=keys)) for n in names}


def rows(table: TableSchema, *, time_zone: str = "UTC") -> SearchStrategy[Row]:
    """A full row (every column, in table order) valid for `table`."""
    keys = unique_column_names(table)
    names = table.column_names
    return st.tuples(*[column_values(table, c, time_zone=time_zone, keys=keys) for c in table.columns]).map(
        lambda vs: dict(zip(names, vs)))
