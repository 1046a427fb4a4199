"""Operations on an upstream model, with their arguments drawn: the steps histories are made of.

`Driver` wraps a `ticdc_generators.upstream.Upstream`. Each operation draws what it needs with
the `draw` it is given (a `@composite`'s draw or `st.data().draw`), runs it against the upstream,
appends the resulting events to `driver.events` and returns them. An operation that does not
apply to the current state (no table to drop, no partitioned table, a drawn key already taken)
or that the upstream model rejects (`Rejected`) changes nothing and returns `[]`, so every
history a driver records is one TiDB accepts, and dropping a step while shrinking leaves the
others meaningful.

Transactions are built statement by statement as TiDB runs them: each statement sees the
effects of the earlier ones, and a statement that would break a unique key (judged under the
column's collation) is left out.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from hypothesis import strategies as st

from ticdc_contract.model import ROWID, Column, HistoryEvent, Index, Row, TableSchema
from ticdc_contract.tidb_types import INTEGER_TYPES, TiDBType, charset_info
from ticdc_contract.type_catalogue import DECIMAL_MAX_PRECISION

from ..upstream import Rejected, TxnBuilder, Upstream
from .names import fresh_name
from .rows import default_values, draw_values, key_form
from .schemas import (
    ALL_SHAPES,
    KeyShape,
    TableSpec,
    draw_column,
    draw_table_spec,
    index_bytes,
    indexable,
    takes_literal_default,
)
from .types import is_key_type, tidb_types

Draw = Callable[[Any], Any]
Name = tuple[str, str]

DEFAULT_START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

DDL_KINDS = (
    "create_table", "add_column", "drop_column", "modify_column", "set_default", "add_index", "drop_index",
    "truncate_table", "rename_table", "rename_tables", "drop_table", "create_tables",
    "add_partition", "drop_partition", "truncate_partition", "exchange_partition",
)
STATEMENT_KINDS = ("insert", "update", "update_key", "delete")


class Driver:
    """Drawn operations against one upstream model; `events` is the history so far."""

    def __init__(self, upstream: Upstream, *, schemas: Sequence[str] = ("d0",), max_tables: int = 4,
                 max_statements: int = 4, max_columns: int = 5, types=None, partitions: bool = True,
                 exotic_names: bool = False, shapes: Sequence[KeyShape] = ALL_SHAPES,
                 advance_ms=st.sampled_from((0, 1, 7, 400, 1000, 2500))) -> None:
        self.up = upstream
        self.schemas = tuple(schemas)
        self.max_tables = max_tables
        self.max_statements = max_statements
        self.max_columns = max_columns
        self.types = types if types is not None else tidb_types()
        self.partitions = partitions
        self.exotic_names = exotic_names
        self.shapes = tuple(shapes)
        self.advance_ms = advance_ms
        self.events: list[HistoryEvent] = []
        # Per transaction (by commit ts): the rows of each table it wrote to, as its statements
        # left them one by one; an account of the transaction independent of its collapsed changes.
        self.written: dict[int, dict[Name, dict[tuple, Row]]] = {}

    # --- helpers ------------------------------------------------------------------
    @property
    def time_zone(self) -> str:
        return self.up.time_zone

    def tables(self) -> list[Name]:
        return sorted(self.up.state.schemas)

    def table(self, name: Name) -> TableSchema:
        return self.up.table(*name)

    def _record(self, fn: Callable[..., list], *args, **kwargs) -> list[HistoryEvent]:
        try:
            out = fn(*args, **kwargs)
        except Rejected:
            return []
        self.events.extend(out)
        return out

    def _pick_table(self, draw: Draw, pred: Callable[[TableSchema], bool] = lambda t: True) -> Optional[Name]:
        names = [n for n in self.tables() if pred(self.table(n))]
        return choice(draw, names) if names else None

    def _fresh_table_name(self, draw: Draw, schema: str, avoid: set = frozenset()) -> str:
        taken = [t for s, t in self.up.state.schemas if s == schema] + list(avoid)
        return fresh_name(draw, taken, exotic=self.exotic_names)

    def _fresh_index_name(self, draw: Draw, t: TableSchema) -> str:
        return fresh_name(draw, [ix.name for ix in t.indexes] + ["primary"], exotic=self.exotic_names)

    # --- dispatch -----------------------------------------------------------------
    def step(self, draw: Draw, kind: str) -> list[HistoryEvent]:
        return getattr(self, kind)(draw)

    def create_schemas(self) -> list[HistoryEvent]:
        out = []
        for s in self.schemas:
            if s not in self.up.state.databases:
                out += self._record(self.up.create_schema, s)
        return out

    # --- tables -------------------------------------------------------------------
    def draw_spec(self, draw: Draw, schema: Optional[str] = None, avoid: set = frozenset(),
                  partitioned: Optional[bool] = None) -> TableSpec:
        schema = schema or choice(draw, self.schemas)
        if not self.partitions:
            partitioned = False
        return draw_table_spec(draw, schema=schema, table=self._fresh_table_name(draw, schema, avoid),
                               max_columns=self.max_columns, types=self.types, partitioned=partitioned,
                               shapes=self.shapes,
                               exotic_names=self.exotic_names, time_zone=self.time_zone)

    def create_table(self, draw: Draw, partitioned: Optional[bool] = None) -> list[HistoryEvent]:
        if len(self.tables()) >= self.max_tables:
            return []
        return self._record(self.draw_spec(draw, partitioned=partitioned).create, self.up)

    def create_tables(self, draw: Draw) -> list[HistoryEvent]:
        """CREATE TABLES (a batch create job): two tables sharing one commit ts."""
        if len(self.tables()) + 2 > self.max_tables:
            return []
        schema = choice(draw, self.schemas)
        first = self.draw_spec(draw, schema)
        second = self.draw_spec(draw, schema, avoid={first.table})
        return self._record(self.up.create_tables, [first.create_kwargs(self.up), second.create_kwargs(self.up)])

    def drop_table(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw)
        return self._record(self.up.drop_table, *name) if name else []

    def truncate_table(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw)
        return self._record(self.up.truncate_table, *name) if name else []

    def rename_table(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw)
        if name is None:
            return []
        schema = choice(draw, self.schemas)
        return self._record(self.up.rename_table, *name, schema, self._fresh_table_name(draw, schema))

    def rename_tables(self, draw: Draw) -> list[HistoryEvent]:
        """RENAME TABLE a TO a2, b TO b2 (one job, both at one commit ts), to names not in use."""
        names = self.tables()
        if len(names) < 2:
            return []
        pair = subset(draw, names, 2, 2)
        new1 = self._fresh_table_name(draw, pair[0][0])
        new2 = self._fresh_table_name(draw, pair[1][0], avoid={new1} if pair[1][0] == pair[0][0] else set())
        return self._record(self.up.rename_tables, [(pair[0], (pair[0][0], new1)), (pair[1], (pair[1][0], new2))])

    # --- columns ------------------------------------------------------------------
    def add_column(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw)
        if name is None:
            return []
        t = self.table(name)
        col = draw_column(draw, fresh_name(draw, t.column_names, exotic=self.exotic_names),
                          types=self.types, time_zone=self.time_zone)
        return self._record(self.up.add_column, *name, col)

    def _plain_columns(self, t: TableSchema) -> list[Column]:
        """Columns in no index and not the partitioning column."""
        indexed = {c for ix in t.indexes for c in ix.columns}
        part = t.partitioning.column if t.partitioning else None
        return [c for c in t.columns if c.name not in indexed and c.name != part]

    def drop_column(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw, lambda t: len(self._plain_columns(t)) > 0 and len(t.columns) > 1)
        if name is None:
            return []
        col = choice(draw, self._plain_columns(self.table(name)))
        return self._record(self.up.drop_column, *name, col.name)

    def modify_column(self, draw: Draw) -> list[HistoryEvent]:
        """A lossless MODIFY COLUMN of a column in no index: a wider integer, VARCHAR or DECIMAL,
        or NOT NULL dropped. MODIFY restates the column, so its DEFAULT goes."""
        name = self._pick_table(draw, lambda t: len(self._plain_columns(t)) > 0)
        if name is None:
            return []
        t = self.table(name)
        col = choice(draw, self._plain_columns(t))
        new_type = draw(_widenings(col.type, partitioned=t.partitioning is not None))
        nullable = col.nullable or draw(st.booleans())
        new = replace(col, type=new_type, nullable=nullable, default=None, has_default=False)
        return self._record(self.up.modify_column, *name, col.name, new)

    def set_default(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw)
        if name is None:
            return []
        t = self.table(name)
        candidates = [c for c in t.columns if takes_literal_default(c.type)]
        if not candidates:
            return []
        col = choice(draw, candidates)
        default = draw(default_values(col, time_zone=self.time_zone) | _NONE_S)
        if default is _NONE:
            return []
        return self._record(self.up.set_default, *name, col.name, default)

    # --- indexes ------------------------------------------------------------------
    def add_index(self, draw: Draw) -> list[HistoryEvent]:
        """ADD INDEX, ADD UNIQUE INDEX or (on a table without one) ADD PRIMARY KEY NONCLUSTERED.
        Unique ones only over key types, holding the partitioning column, over rows that are
        distinct under the columns' collations."""
        name = self._pick_table(draw)
        if name is None:
            return []
        t = self.table(name)
        kind = choice(draw, ("index", "unique", "primary"))
        if kind == "primary" and t.primary_key is not None:
            kind = "unique"
        unique = kind != "index"
        pool = [c.name for c in t.columns if (is_key_type(c.type) if unique else index_bytes(c.type) is not None)]
        if not pool:
            return []
        cols = subset(draw, pool, 1, 2)
        if unique and t.partitioning is not None and t.partitioning.column not in cols:
            cols.append(t.partitioning.column)
        if not indexable([t.column(c) for c in cols]):
            return []
        rows_now = self.up.rows(*name).values()
        if unique:
            seen = set()
            for r in rows_now:
                k = key_form(t, cols, r)
                if None in k:
                    if kind == "primary":
                        return []
                    continue
                if k in seen:
                    return []
                seen.add(k)
        ix_name = "PRIMARY" if kind == "primary" else self._fresh_index_name(draw, t)
        return self._record(self.up.add_index, *name, Index(ix_name, tuple(cols), primary=kind == "primary",
                                                            unique=unique, clustered=False))

    def drop_index(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw, lambda t: len(t.indexes) > 0)
        if name is None:
            return []
        ix = choice(draw, self.table(name).indexes)
        return self._record(self.up.drop_index, *name, ix.name)

    # --- partitions ---------------------------------------------------------------
    def _partitioned(self, t: TableSchema) -> bool:
        return t.partitioning is not None

    def add_partition(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw, lambda t: self._partitioned(t) and t.partitioning.partitions[-1].less_than is not None)
        if name is None:
            return []
        t = self.table(name)
        last = t.partitioning.partitions[-1].less_than
        hi = t.column(t.partitioning.column).type.int_range[1]
        bound = draw(st.none() | st.integers(last + 1, hi)) if last < hi else None
        return self._record(self.up.add_partition, *name, _fresh_partition_name(t), bound)

    def drop_partition(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw, lambda t: self._partitioned(t) and len(t.partitioning.partitions) > 1)
        if name is None:
            return []
        p = choice(draw, self.table(name).partitioning.partitions)
        return self._record(self.up.drop_partition, *name, p.name)

    def truncate_partition(self, draw: Draw) -> list[HistoryEvent]:
        name = self._pick_table(draw, self._partitioned)
        if name is None:
            return []
        p = choice(draw, self.table(name).partitioning.partitions)
        return self._record(self.up.truncate_partition, *name, p.name)

    def exchange_partition(self, draw: Draw) -> list[HistoryEvent]:
        """EXCHANGE PARTITION with a normal table of the same definition; now and then (always when
        there is none) creates that table first (CREATE TABLE nt LIKE pt, without partitioning)
        and fills it with rows that belong in the partition."""
        name = self._pick_table(draw, self._partitioned)
        if name is None:
            return []
        t = self.table(name)
        p = choice(draw, t.partitioning.partitions)
        targets = [n for n in self.tables() if _exchangeable(t, self.table(n))]
        out: list[HistoryEvent] = []
        if not targets or draw(st.integers(0, 3)) == 0:
            if len(self.tables()) > self.max_tables:
                return []
            nt = (t.schema, self._fresh_table_name(draw, t.schema))
            out += self._record(self.up.create_table, *nt, list(t.columns), list(t.indexes),
                                pk_is_handle=t.pk_is_handle, comment=t.comment)
            if not out:
                return []
            targets = [nt]
            if draw(st.booleans()):
                out += self._fill_for_partition(draw, t, p, nt)
        other = choice(draw, targets)
        return out + self._record(self.up.exchange_partition, *name, p.name, *other)

    def _fill_for_partition(self, draw: Draw, pt: TableSchema, p, nt: Name) -> list[HistoryEvent]:
        """INSERTs into `nt` of rows whose partitioning column falls in partition `p` of `pt`."""
        t = self.table(nt)
        col = t.column(pt.partitioning.column)
        lo, hi = col.type.int_range
        i = pt.partitioning.partitions.index(p)
        if i:
            lo = max(lo, pt.partitioning.partitions[i - 1].less_than)
        if p.less_than is not None:
            hi = min(hi, p.less_than - 1)
        if lo > hi:
            return []
        tx, current = TxnBuilder(), {}
        for _ in range(draw(st.integers(1, 3))):
            row = {**draw_values(draw, t, [c for c in t.column_names if c != col.name], time_zone=self.time_zone),
                   col.name: draw(st.integers(lo, hi))}
            if _fits(t, current, row):
                tx.insert(t, row)
                current[t.row_key(row)] = row
        if not tx.changes():
            return []
        txn = self._record(lambda: [self.up.commit(tx, draw(self.advance_ms))])
        if txn:
            self.written[txn[0].commit_ts] = {nt: current}
        return txn

    # --- data ---------------------------------------------------------------------
    def transaction(self, draw: Draw, only: Optional[Name] = None, *,
                    kinds: Sequence[str] = STATEMENT_KINDS, statements: Optional[st.SearchStrategy[int]] = None,
                    same_row: Optional[bool] = None) -> list[HistoryEvent]:
        """One transaction of INSERT/UPDATE/DELETE statements over the tables (or `only` one).

        `kinds`: statement kinds to draw from (see STATEMENT_KINDS; an INSERT stands in while a
        table is empty); `statements`: how many (default 1..max_statements); `same_row`: whether a
        statement goes back to the row the previous one wrote (default: drawn each time), so that
        changes pile up on one row."""
        names = [only] if only is not None else self.tables()
        if not names:
            return []
        count = draw(statements) if statements is not None else self.max_statements
        ctx = _Txn(names, tuple(kinds), same_row)
        for i in range(count):
            more = statements is not None or i == 0
            if in_span(draw, lambda d: self._statement(d, ctx, more)) is _STOP:
                break
        tx, written = ctx.tx, ctx.written
        if not tx.changes():
            return []
        try:
            txn = self.up.commit(tx, draw(self.advance_ms))
        except Rejected:
            return []
        self.events.append(txn)
        self.written[txn.commit_ts] = written
        return [txn]

    def _new_rowid(self, name: Name, current: dict[tuple, Row]) -> int:
        """A hidden row ID for a new row of a table without a handle key. The upstream model hands
        them out per table *name*, so after a RENAME it hands out IDs the table's rows already
        hold; those are passed over, as TiDB's per-table allocator never repeats one."""
        while True:
            rowid = self.up.new_rowid(*name)
            if (rowid,) not in current:
                return rowid

    def _statement(self, draw: Draw, ctx: "_Txn", more: bool) -> object:
        """One statement of a transaction being built (None when it is left out: a key taken, a
        twin, nothing to change); first, unless `more`, the choice to stop (_STOP)."""
        if not more and draw(_MORE) == 0:
            return _STOP  # "no more statements": the simplest choice, so transactions shrink short
        name = ctx.last[0] if ctx.same_row and ctx.last is not None else choice(draw, ctx.names)
        t = self.table(name)
        current = ctx.written.setdefault(name, dict(self.up.rows(*name)))
        kind = choice(draw, ctx.kinds)
        if kind == "insert" or not current:
            row = draw_values(draw, t, t.column_names, time_zone=self.time_zone)
            if not _fits(t, current, row):
                return None
            if not t.handle_key:
                row[ROWID] = self._new_rowid(name, current)
            ctx.tx.insert(t, row)
            current[t.row_key(row)] = row
            ctx.last = (name, t.row_key(row))
            return None
        again = ctx.last is not None and ctx.last[0] == name and ctx.last[1] in current
        if again and (ctx.same_row if ctx.same_row is not None else draw(st.booleans())):
            key = ctx.last[1]  # the same row again: changes pile up on one row
        else:
            key = choice(draw, list(current))
        before = current[key]
        if kind == "delete":
            ctx.tx.delete(t, before)
            del current[key]
            ctx.left[(name, key)] = before
            ctx.last = None
            return None
        handle = set(t.handle_key)
        left = [k for n, k in ctx.left if n == name]
        if kind == "update_key" and left and draw(st.booleans()):
            # Onto a key another statement of this transaction left (rows may trade keys).
            fresh = ctx.left[(name, choice(draw, left))]
            chosen = list(t.handle_key)
        else:
            pool = [c for c in t.column_names if (c in handle) == (kind == "update_key")]
            if not pool:
                return None
            chosen = subset(draw, pool)
            fresh = draw_values(draw, t, chosen, time_zone=self.time_zone)
        after = {**before, **{c: fresh[c] for c in chosen}}
        new_key = t.row_key(after)
        if new_key != key:
            if key_form(t, t.handle_key, after) == key_form(t, t.handle_key, before):
                return None  # equal under the collation: neither TiDB's key change nor an in-place update
        others = {k: r for k, r in current.items() if k != key}
        if not _fits(t, others, after):
            return None
        ctx.tx.update(t, before, after)
        del current[key]
        current[new_key] = after
        if new_key != key:
            ctx.left[(name, key)] = before
        ctx.last = (name, new_key)
        return None



def choice(draw: Draw, seq: Sequence):
    """One element of `seq`, shrinking toward the first (through a cached integer strategy:
    cheaper than building `sampled_from` over a fresh list at every draw)."""
    seq = list(seq)
    return seq[draw(st.integers(0, len(seq) - 1))]  # drawn even from one: keeps later choices in place


def subset(draw: Draw, seq: Sequence, min_size: int = 1, max_size: Optional[int] = None) -> list:
    """Distinct elements of `seq`, in the order drawn."""
    seq = list(seq)
    top = len(seq) if max_size is None else min(max_size, len(seq))
    return [seq[i] for i in draw(st.lists(st.integers(0, len(seq) - 1), min_size=min_size, max_size=top, unique=True))]


class _Txn:
    """A transaction being drawn: its builder, the rows as its statements leave them, the keys
    its statements left."""

    def __init__(self, names: list, kinds: tuple, same_row: Optional[bool]) -> None:
        self.names, self.kinds, self.same_row = names, kinds, same_row
        self.tx = TxnBuilder()
        self.written: dict[Name, dict[tuple, Row]] = {}
        self.left: dict[tuple[Name, tuple], Row] = {}  # keys rows left (deleted or moved), the row then
        self.last: Optional[tuple[Name, tuple]] = None


@st.composite
def _span(draw, fn: Callable[[Draw], Any]) -> Any:
    return fn(draw)


def in_span(draw: Draw, fn: Callable[[Draw], Any]) -> Any:
    """`fn(draw)` with its choices grouped into one span, which the shrinker can drop whole."""
    return draw(_span(fn))


_STOP = object()
_NONE = object()
_NONE_S = st.just(_NONE)
_MORE = st.integers(0, 2)


def _fits(t: TableSchema, current: dict[tuple, Row], row: Row) -> bool:
    """Whether `row` may join `current` (rows of `t` by row key): its handle key and every unique
    key (NULLs aside) free under the columns' collations, as TiDB checks per statement. In a table
    without a handle key no row may be another's twin: consumers tell such rows apart by their
    images alone."""
    if not t.handle_key:
        image = {c: row[c] for c in t.column_names}
        if any({c: r[c] for c in t.column_names} == image for r in current.values()):
            return False
    elif t.row_key(row) in current:
        return False
    for ix in t.indexes:
        if not (ix.unique or ix.primary):
            continue
        k = key_form(t, ix.columns, row)
        if None in k:
            continue
        if any(key_form(t, ix.columns, r) == k for r in current.values()):
            return False
    if not t.handle_key:
        return True
    hk = key_form(t, t.handle_key, row)
    return not any(key_form(t, t.handle_key, r) == hk for r in current.values())


def _widenings(t: TiDBType, partitioned: bool) -> st.SearchStrategy[TiDBType]:
    """Types a column of type `t` may be MODIFY'd to without loss and without reorganising data
    (TiDB does no reorganising type change on partitioned tables)."""
    if t.is_integer:
        wider = INTEGER_TYPES[INTEGER_TYPES.index(t.base):]
        return st.sampled_from(wider).map(lambda b: TiDBType(b, unsigned=t.unsigned))
    if t.base == "varchar":
        limit = 65535 // charset_info(t.effective_charset).maxlen
        return st.integers(t.effective_flen, max(t.effective_flen, min(limit, 4 * t.effective_flen + 16))).map(
            lambda n: replace(t, flen=n))
    if t.base == "decimal" and not partitioned:
        top = DECIMAL_MAX_PRECISION
        return st.integers(t.effective_flen, top).map(lambda m: replace(t, flen=m, decimal=t.scale))
    return st.just(t)


def _exchangeable(pt: TableSchema, nt: TableSchema) -> bool:
    return (nt.partitioning is None and (nt.schema, nt.table) != (pt.schema, pt.table)
            and nt.column_names == pt.column_names and [c.type for c in nt.columns] == [c.type for c in pt.columns]
            and [c.nullable for c in nt.columns] == [c.nullable for c in pt.columns]
            and [(i.name, i.columns, i.unique, i.primary, i.clustered) for i in nt.indexes]
            == [(i.name, i.columns, i.unique, i.primary, i.clustered) for i in pt.indexes]
            and nt.pk_is_handle == pt.pk_is_handle)


def _fresh_partition_name(t: TableSchema) -> str:
    used = {p.name for p in t.partitioning.partitions}
    i = len(used)
    while f"p{i}" in used:
        i += 1
    return f"p{i}"
