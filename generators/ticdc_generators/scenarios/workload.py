"""A seeded DML workload over an `Upstream`: realistic rows from the value domains, transactions
of several statements, key-changing updates, and now and then a type's edge value.

Every statement is one TiDB accepts: keys are checked against the live rows (and the model
rejects anything else), and values come from `values.domain_for`, which only yields values
TiDB stores.
"""
from __future__ import annotations

import random
from typing import Any, Optional

from faker import Faker

from ticdc_contract.model import ROWID, Row, TableSchema, Transaction

from ..upstream import Rejected, TxnBuilder, Upstream
from ..values import domain_for

MAX_KEY_TRIES = 50


def seeded_faker(seed: int) -> Faker:
    faker = Faker(["en_US", "zh_CN", "ja_JP", "de_DE", "ru_RU"])
    faker.seed_instance(seed)
    return faker


class Workload:
    def __init__(self, up: Upstream, rng: random.Random, faker: Faker) -> None:
        self.up, self.rng, self.faker = up, rng, faker
        self._domains: dict[tuple, Any] = {}

    def domain(self, table: TableSchema, column: str):
        c = table.column(column)
        key = (c.type, c.nullable)
        d = self._domains.get(key)
        if d is None:
            d = self._domains[key] = domain_for(c.type, nullable=c.nullable, time_zone=self.up.time_zone)
        return d

    def value(self, table: TableSchema, column: str) -> Any:
        return self.domain(table, column).draw(self.rng, self.faker)

    def fresh_row(self, table: TableSchema, taken: set, fixed: Optional[dict] = None) -> Optional[Row]:
        """A new row whose key is free (None when the key space looks exhausted)."""
        fixed = fixed or {}
        for _ in range(MAX_KEY_TRIES):
            row = {c.name: fixed[c.name] if c.name in fixed else self.value(table, c.name) for c in table.columns}
            if not table.handle_key:
                # A table without a handle key: rows are told apart by TiDB's hidden row ID only,
                # and so by their whole image downstream, so the workload never writes a twin.
                image = {k: v for k, v in row.items()}
                if any({k: v for k, v in r.items() if k != ROWID} == image for r in self._live(table)):
                    continue
                row[ROWID] = self.up.new_rowid(table.schema, table.table)
                return row
            if table.partitioning is not None:
                try:
                    table.physical_id(row)
                except ValueError:
                    continue
            k = table.key_of(row)
            if None in k or k in taken:
                continue
            return row
        return None

    def _live(self, table: TableSchema):
        return self.up.state.rows[(table.schema, table.table)].values()

    def changed_row(self, table: TableSchema, before: Row, change_key: bool, taken: set) -> Optional[Row]:
        after = dict(before)
        non_key = [c.name for c in table.columns if c.name not in table.handle_key]
        for name in self.rng.sample(non_key, k=min(len(non_key), self.rng.randint(1, 3))):
            after[name] = self.value(table, name)
        if not table.handle_key:
            image = {k: v for k, v in after.items() if k != ROWID}
            if any({k: v for k, v in r.items() if k != ROWID} == image for r in self._live(table)):
                return None
            return after
        if change_key:
            fresh = self.fresh_row(table, taken)
            if fresh is None:
                return None
            for name in table.handle_key:
                after[name] = fresh[name]
            if table.partitioning is not None:
                after[table.partitioning.column] = fresh[table.partitioning.column]
        return after

    def transaction(self, tables: list[tuple[str, str]], changes: int, p_delete: float = 0.2,
                    p_key_update: float = 0.05, advance_ms: tuple[int, int] = (1, 300)) -> Optional[Transaction]:
        """One transaction of up to `changes` statements on the given tables; None if nothing changed."""
        txn = TxnBuilder()
        pending: dict[tuple[str, str], dict[tuple, Row]] = {}
        for _ in range(changes):
            name = self.rng.choice(tables)
            t = self.up.table(*name)
            rows = pending.setdefault(name, dict(self.up.state.rows[name]))
            r = self.rng.random()
            try:
                if not rows or r < 0.45:
                    row = self.fresh_row(t, set(rows))
                    if row is None:
                        continue
                    txn.insert(t, row)
                    rows[t.row_key(row)] = row
                    continue
                key = self.rng.choice(list(rows)) if len(rows) < 64 else _sample_key(self.rng, rows)
                before = rows[key]
                if r < 0.45 + p_delete:
                    txn.delete(t, before)
                    del rows[key]
                    continue
                after = self.changed_row(t, before, self.rng.random() < p_key_update, set(rows))
                if after is None:
                    continue
                txn.update(t, before, after)
                del rows[key]
                rows[t.row_key(after)] = after
            except (Rejected, ValueError):
                continue
        try:
            out = self.up.commit(txn, self.rng.randint(*advance_ms))
        except Rejected:
            return None  # a secondary unique index refused it: TiDB rolls the transaction back
        return out if out.changes else None


def _sample_key(rng: random.Random, rows: dict) -> tuple:
    # dicts keep insertion order; a random position is a uniform choice without a list copy.
    i = rng.randrange(len(rows))
    for j, k in enumerate(rows):
        if j == i:
            return k
    raise AssertionError("unreachable")
