"""A stateful model of upstream TiDB, for Hypothesis's rule-based state machines.

`UpstreamMachine` drives an upstream model (`ticdc_generators.upstream.Upstream`) with one rule
per kind of operation: CREATE TABLE (plain and RANGE-partitioned, single and batch), INSERT /
UPDATE / DELETE in single- and multi-statement transactions (key-changing updates, several
changes to one row), ADD / DROP / MODIFY COLUMN, SET DEFAULT, ADD / DROP INDEX (primary keys
included), TRUNCATE / RENAME / DROP TABLE, RENAME TABLES, and ADD / DROP / TRUNCATE / EXCHANGE
PARTITION. Next to it the machine keeps a naive model of every table's rows, written from the
statements as they run (not from the collapsed events), and holds four invariants:

1. replaying the events produced so far (`state.replay`) gives exactly the naive model's rows,
   and the upstream's own rows and schemas;
2. commit ts strictly increase from job to job (the tables of one CREATE TABLES / RENAME TABLES
   job share one), start ts lie below commit ts, and every DDL's schema version lies below its
   commit ts;
3. every value of every row belongs to its column's domain (`values.domain_for(...).validate`);
4. `rows_at(schema, table, ts)` of the replayed history, at every earlier commit ts, is what a
   plain replay of the history up to that ts gave.

    from ticdc_generators.strategies.machine import UpstreamMachine
    TestUpstreamMachine = UpstreamMachine.TestCase
"""
from __future__ import annotations

import copy
from typing import Optional

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ticdc_contract.model import DDL, ROWID, DDLType, HistoryEvent, Partitioning, Row, TableSchema, Transaction
from ticdc_contract.state import TableStates, replay

from ..upstream import Upstream
from .checks import MULTI_TABLE_KINDS, check_row
from .ops import DEFAULT_START_MS, Driver

Name = tuple[str, str]


class UpstreamMachine(RuleBasedStateMachine):
    """Upstream TiDB under DDL and DML; see the module docstring for the invariants."""

    time_zone = "UTC"
    schemas = ("d0", "d1")
    max_tables = 4

    def __init__(self) -> None:
        super().__init__()
        self.up = Upstream(DEFAULT_START_MS, time_zone=self.time_zone)
        self.driver = Driver(self.up, schemas=self.schemas, max_tables=self.max_tables, max_statements=5,
                             max_columns=5)
        self.events: list[HistoryEvent] = self.driver.events
        self.naive: dict[Name, dict[tuple, Row]] = {}
        # (commit ts, rows of every table then), after each group of events sharing a commit ts.
        self.snapshots: list[tuple[int, dict[Name, dict[tuple, Row]]]] = []
        self._running = TableStates(keep_history=False)
        self._jobs: list[list[HistoryEvent]] = []
        self._replayed: Optional[tuple[int, TableStates]] = None

    # --- bookkeeping --------------------------------------------------------------
    def _run(self, events: list[HistoryEvent]) -> None:
        for e in events:
            self._naive_apply(e)
            self._running.apply(e)
            if not self._jobs or self._jobs[-1][-1].commit_ts != e.commit_ts:
                self._jobs.append([])
            self._jobs[-1].append(e)
            snap = (e.commit_ts, copy.deepcopy(self._running.rows))
            if self.snapshots and self.snapshots[-1][0] == e.commit_ts:
                self.snapshots[-1] = snap
            else:
                self.snapshots.append(snap)

    def _do(self, kind: str, data, **kw) -> None:
        self._run(getattr(self.driver, kind)(data.draw, **kw))

    def _tables(self) -> list[Name]:
        return self.driver.tables()

    def _has_tables(self) -> bool:
        return bool(self.up.state.schemas)

    def _tables_with_rows(self, n: int) -> list[Name]:
        return sorted(name for name, rows in self.up.state.rows.items() if len(rows) >= n)

    def _has_partitioned(self) -> bool:
        return any(t.partitioning is not None for t in self.up.state.schemas.values())

    def _replay(self) -> TableStates:
        if self._replayed is None or self._replayed[0] != len(self.events):
            self._replayed = (len(self.events), replay(self.events, keep_history=True))
        return self._replayed[1]

    # --- the naive model ----------------------------------------------------------
    def _naive_apply(self, e: HistoryEvent) -> None:
        """What each event does to the rows, from first principles (transactions: the rows their
        statements left, recorded by the driver statement by statement)."""
        if isinstance(e, Transaction):
            for name, rows in self.driver.written[e.commit_ts].items():
                self.naive[name] = {k: dict(r) for k, r in rows.items()}
            return
        kind = e.ddl_type
        if kind in (DDLType.CREATE_SCHEMA, DDLType.DROP_SCHEMA):
            return
        before, after = e.table_before, e.table_after
        if kind is DDLType.CREATE_TABLE:
            self.naive[(after.schema, after.table)] = {}
            return
        old = (before.schema, before.table)
        if kind is DDLType.DROP_TABLE:
            del self.naive[old]
            return
        rows = list(self.naive.pop(old).values())
        if kind is DDLType.TRUNCATE_TABLE:
            rows = []
        elif kind in (DDLType.DROP_TABLE_PARTITION, DDLType.TRUNCATE_TABLE_PARTITION):
            gone = [p for p in before.partitioning.partitions if p not in after.partitioning.partitions]
            rows = [r for r in rows if not any(_in_partition(before.partitioning, p.name, r) for p in gone)]
        elif kind is DDLType.EXCHANGE_TABLE_PARTITION:
            swapped = next(p for p in before.partitioning.partitions if p not in after.partitioning.partitions)
            other = (e.other_before.schema, e.other_before.table)
            inside = [r for r in rows if _in_partition(before.partitioning, swapped.name, r)]
            rows = [r for r in rows if not _in_partition(before.partitioning, swapped.name, r)]
            rows += list(self.naive[other].values())
            self.naive[other] = {e.other_after.row_key(r): r for r in inside}
        # Columns as the table now has them; the hidden row ID stays while the table has no key.
        names = after.column_names + (() if after.handle_key else (ROWID,))
        rows = [{c: r[c] if c in r else e.backfill.get(c, after.column(c).default) for c in names} for r in rows]
        self.naive[(after.schema, after.table)] = {after.row_key(r): r for r in rows}

    # --- rules --------------------------------------------------------------------
    @initialize(data=st.data())
    def start(self, data) -> None:
        self._run(self.driver.create_schemas())
        self._do("create_table", data)

    @rule(data=st.data())
    def create_table(self, data) -> None:
        self._do("create_table", data)

    @rule(data=st.data())
    def create_partitioned_table(self, data) -> None:
        self._do("create_table", data, partitioned=True)

    @rule(data=st.data())
    def create_tables(self, data) -> None:
        self._do("create_tables", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def insert(self, data) -> None:
        self._do("transaction", data, kinds=("insert",))

    @precondition(_has_tables)
    @rule(data=st.data())
    def update(self, data) -> None:
        self._do("transaction", data, kinds=("update",), statements=st.just(1))

    @precondition(_has_tables)
    @rule(data=st.data())
    def update_key(self, data) -> None:
        self._do("transaction", data, kinds=("update_key",), statements=st.integers(1, 4))

    @precondition(_has_tables)
    @rule(data=st.data())
    def delete(self, data) -> None:
        self._do("transaction", data, kinds=("delete",), statements=st.integers(1, 2))

    @precondition(_has_tables)
    @rule(data=st.data())
    def transaction(self, data) -> None:
        self._do("transaction", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def churn_one_row(self, data) -> None:
        """Several statements on one row in one transaction (insert/update/key change/delete)."""
        self._do("transaction", data, statements=st.integers(2, 5), same_row=True)

    @precondition(lambda self: self._tables_with_rows(2))
    @rule(data=st.data())
    def move_keys_around(self, data) -> None:
        """Rows of one table moving onto keys others left in the same transaction (key changes
        mixed with deletes and plain updates)."""
        name = data.draw(st.sampled_from(self._tables_with_rows(2)))
        self._do("transaction", data, only=name, kinds=("update_key", "update_key", "delete", "update"),
                 statements=st.integers(3, 6))

    @precondition(_has_tables)
    @rule(data=st.data())
    def add_column(self, data) -> None:
        self._do("add_column", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def drop_column(self, data) -> None:
        self._do("drop_column", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def modify_column(self, data) -> None:
        self._do("modify_column", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def set_default(self, data) -> None:
        self._do("set_default", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def add_index(self, data) -> None:
        self._do("add_index", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def drop_index(self, data) -> None:
        self._do("drop_index", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def truncate_table(self, data) -> None:
        self._do("truncate_table", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def rename_table(self, data) -> None:
        self._do("rename_table", data)

    @precondition(lambda self: len(self.up.state.schemas) >= 2)
    @rule(data=st.data())
    def rename_tables(self, data) -> None:
        self._do("rename_tables", data)

    @precondition(_has_tables)
    @rule(data=st.data())
    def drop_table(self, data) -> None:
        self._do("drop_table", data)

    @precondition(_has_partitioned)
    @rule(data=st.data())
    def add_partition(self, data) -> None:
        self._do("add_partition", data)

    @precondition(_has_partitioned)
    @rule(data=st.data())
    def drop_partition(self, data) -> None:
        self._do("drop_partition", data)

    @precondition(_has_partitioned)
    @rule(data=st.data())
    def truncate_partition(self, data) -> None:
        self._do("truncate_partition", data)

    @precondition(_has_partitioned)
    @rule(data=st.data())
    def exchange_partition(self, data) -> None:
        self._do("exchange_partition", data)

    # --- invariants ---------------------------------------------------------------
    @invariant()
    def replay_gives_the_current_state(self) -> None:
        replayed = self._replay()
        assert replayed.rows == self.naive, "replaying the history does not give the rows the statements left"
        assert self.up.state.rows == self.naive, "the upstream model's rows differ from the statements' result"
        assert replayed.schemas == self.up.state.schemas, "replaying the history does not give the schemas"

    @invariant()
    def timestamps_increase(self) -> None:
        prev = 0
        for job in self._jobs:
            ts = job[0].commit_ts
            assert ts > prev, f"commit ts {ts} does not follow {prev}"
            if len(job) > 1:
                kinds = {e.ddl_type if isinstance(e, DDL) else None for e in job}
                assert len(kinds) == 1 and kinds <= set(MULTI_TABLE_KINDS), \
                    f"events of different jobs share commit ts {ts}"
            for e in job:
                if isinstance(e, Transaction):
                    assert e.start_ts < e.commit_ts
                    assert all(ch.table.schema_version < e.commit_ts for ch in e.changes)
                else:
                    for t in (e.table_after, e.other_after):
                        assert t is None or t.schema_version < e.commit_ts, \
                            f"{e.ddl_type.name}: schema version {t.schema_version} not below commit ts {ts}"
            prev = ts

    @invariant()
    def values_belong_to_their_domains(self) -> None:
        for name, rows in self.up.state.rows.items():
            t: TableSchema = self.up.state.schemas[name]
            for row in rows.values():
                check_row(t, row, self.time_zone)

    @invariant()
    def history_answers_every_earlier_ts(self) -> None:
        replayed = self._replay()
        names = {n for _, rows in self.snapshots for n in rows}
        for ts, rows in self.snapshots:
            for name in names:
                assert replayed.rows_at(*name, ts) == rows.get(name), f"rows_at({name}, {ts}) differs from the replay"


def _in_partition(p: Partitioning, name: str, row: Row) -> bool:
    """Whether `row` lies in partition `name`, judged by the RANGE bounds alone."""
    v = row[p.column]
    lower = None
    for part in p.partitions:
        if part.name == name:
            return (lower is None or v >= lower) and (part.less_than is None or v < part.less_than)
        lower = part.less_than
    return False
