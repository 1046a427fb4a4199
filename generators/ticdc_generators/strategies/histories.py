"""Whole upstream histories: DDL and transactions in commit order, as the upstream model makes them.

Every history comes from driving `ticdc_generators.upstream.Upstream` (see `ops.Driver`), so it
is one TiDB accepts. Histories shrink toward few steps (a step draws "stop" as its simplest
choice), transactions rather than DDL, one table, plain key shapes and simple values.

Transactions may move rows onto keys other rows of the same transaction left, rows trading keys
included (`UPDATE t SET id=3 WHERE id=1; UPDATE t SET id=1 WHERE id=2; UPDATE t SET id=2 WHERE
id=3`).
"""
from __future__ import annotations

from typing import Optional, Sequence

from hypothesis import strategies as st
from hypothesis.control import reject
from hypothesis.strategies import SearchStrategy

from ticdc_contract.model import HistoryEvent, Transaction

from ..upstream import Upstream
from .ops import DDL_KINDS, DEFAULT_START_MS, Driver
from .schemas import ALL_SHAPES, KeyShape


@st.composite
def _step(draw, driver: Driver, kinds: Sequence[str]) -> Optional[list[HistoryEvent]]:
    """One step: None (stop here: the simplest choice, so histories shrink short), else a
    transaction, or a DDL of `kinds`. As a strategy of its own, a step's choices form one span,
    which the shrinker can drop as a whole."""
    if draw(st.integers(0, 7)) == 0:
        return None
    if kinds and draw(st.integers(0, 2)) == 2:
        return driver.step(draw, draw(st.sampled_from(tuple(kinds))))
    return driver.transaction(draw)


def transactions(upstream: Upstream, *, max_statements: int = 4, tables: Optional[Sequence[tuple[str, str]]] = None,
                 advance_ms: Optional[SearchStrategy[int]] = None
                 ) -> SearchStrategy[Transaction]:
    """One transaction against `upstream`'s current tables, committed to it when drawn.

    Drawing changes `upstream`: draw from this strategy only inside the example that owns the
    upstream (in a `@composite`, through `st.data()`, or in a state machine rule)."""
    @st.composite
    def build(draw) -> Transaction:
        kw = {} if advance_ms is None else {"advance_ms": advance_ms}
        driver = Driver(upstream, max_statements=max_statements, **kw)
        only = draw(st.sampled_from(list(tables))) if tables else None
        out = driver.transaction(draw, only=only)
        if not out:
            reject()
        return out[0]
    return build()


@st.composite
def histories(draw, *, max_steps: int = 10, max_tables: int = 3, max_statements: int = 4, max_columns: int = 5,
              schemas: Sequence[str] = ("d0", "d1"), ddl: bool = True, ddl_kinds: Sequence[str] = DDL_KINDS,
              partitions: bool = True, types: Optional[SearchStrategy] = None, exotic_names: bool = False,
              shapes: Sequence[KeyShape] = ALL_SHAPES,
              start_physical_ms: int = DEFAULT_START_MS, time_zone: str = "UTC",
              create_schema_events: bool = True) -> list[HistoryEvent]:
    """A history: CREATE DATABASE, a CREATE TABLE, then up to `max_steps` transactions and DDL.

    `schemas`: the databases to create (shrinks toward the first alone); `max_statements`: per
    transaction; `ddl=False` keeps to transactions after the first CREATE TABLE, `ddl_kinds` to
    some DDL (names of `Driver` operations, see DDL_KINDS); `types` narrows the types of non-key
    columns (default: all of `tidb_types()`), `shapes` the tables' key shapes;
    `create_schema_events=False` leaves the CREATE DATABASE events out."""
    n_schemas = draw(st.integers(1, len(schemas)))
    up = Upstream(start_physical_ms, time_zone=time_zone)
    kw = dict(schemas=schemas[:n_schemas], max_tables=max_tables, max_statements=max_statements,
              max_columns=max_columns, types=types, partitions=partitions, exotic_names=exotic_names,
              shapes=shapes)
    driver = Driver(up, **kw)
    schema_events = driver.create_schemas()
    driver.create_table(draw)
    kinds = tuple(k for k in ddl_kinds if partitions or "partition" not in k)
    for _ in range(max_steps):
        if draw(_step(driver, kinds if ddl else ())) is None:
            break
    events = driver.events
    if not create_schema_events:
        skip = {id(e) for e in schema_events}
        events = [e for e in events if id(e) not in skip]
    return events
