"""Scenario `smoke`: two tables, ~100 transactions, a primary-key update and an ADD COLUMN midway.

`smoke.orders` has an INT handle primary key, `smoke.customers` a clustered VARCHAR primary key;
between them they hold INT, BIGINT UNSIGNED, VARCHAR, DECIMAL(20,6), DATETIME(3), BLOB and
nullable columns. Values come from faker (names, sentences in several scripts) and from the
edges of each type's domain; everything is drawn from one seeded generator.
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from decimal import Decimal
from typing import Iterator

from faker import Faker

from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema, Transaction
from ticdc_contract.tidb_types import TiDBType, datetime, decimal, int_type, varchar
from ticdc_contract.tso import TSOClock

from .base import Scenario

SCHEMA = "smoke"
START_PHYSICAL_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
TRANSACTIONS = 100
ALTER_AFTER = 50

U64_MAX = 2**64 - 1
_EPOCH_2006 = dt.datetime(2006, 1, 1)


def _columns(*cols: Column) -> tuple[Column, ...]:
    return tuple(replace(c, column_id=i + 1) for i, c in enumerate(cols))


def orders_table(version: int) -> TableSchema:
    return TableSchema(
        schema=SCHEMA, table="orders", table_id=104, schema_version=version, pk_is_handle=True,
        columns=_columns(
            Column("id", int_type("int"), nullable=False),
            Column("customer", varchar(32), nullable=False),
            Column("amount", decimal(20, 6), nullable=False),
            Column("quantity", int_type("bigint", unsigned=True), nullable=False),
            Column("created_at", datetime(3), nullable=False),
            Column("receipt", TiDBType("blob")),
            Column("note", varchar(255)),
        ),
        indexes=(Index("PRIMARY", ("id",), primary=True, unique=True),),
    )


def customers_table(version: int) -> TableSchema:
    return TableSchema(
        schema=SCHEMA, table="customers", table_id=106, schema_version=version,
        columns=_columns(
            Column("code", varchar(32), nullable=False),
            Column("name", varchar(128), nullable=False),
            Column("balance", decimal(20, 6)),
            Column("visits", int_type("int")),
            Column("last_seen", datetime(3)),
            Column("avatar", TiDBType("blob")),
            Column("points", int_type("bigint", unsigned=True)),
        ),
        indexes=(Index("PRIMARY", ("code",), primary=True, unique=True),),
    )


class _Values:
    """Value builders: realistic by default, the type's edge values now and then."""

    def __init__(self, rng: random.Random, faker: Faker) -> None:
        self.rng = rng
        self.faker = faker

    def decimal_20_6(self) -> str:
        r = self.rng.random()
        if r < 0.05:
            return "99999999999999.999999"
        if r < 0.10:
            return "-99999999999999.999999"
        if r < 0.13:
            return "0.000000"
        digits = self.rng.randint(1, 14)
        whole = self.rng.randint(0, 10**digits - 1)
        frac = self.rng.randint(0, 999_999)
        sign = "-" if self.rng.random() < 0.15 else ""
        text = f"{sign}{whole}.{frac:06d}"
        return format(Decimal(text), "f") if text != "-0.000000" else "0.000000"

    def u64(self) -> int:
        r = self.rng.random()
        if r < 0.08:
            return U64_MAX
        if r < 0.14:
            return 2**63
        if r < 0.18:
            return 0
        return self.rng.randint(1, 10**self.rng.randint(1, 19))

    def int32(self) -> int:
        r = self.rng.random()
        if r < 0.05:
            return 2**31 - 1
        if r < 0.10:
            return -(2**31)
        return self.rng.randint(-1000, 100_000)

    def datetime3(self) -> str:
        r = self.rng.random()
        if r < 0.04:
            return "1000-01-01 00:00:00.000"
        if r < 0.08:
            return "9999-12-31 23:59:59.999"
        moment = _EPOCH_2006 + dt.timedelta(seconds=self.rng.randint(0, 20 * 365 * 86400),
                                            milliseconds=self.rng.randint(0, 999))
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"

    def blob(self) -> bytes | None:
        r = self.rng.random()
        if r < 0.15:
            return None
        if r < 0.22:
            return bytes(range(256))
        if r < 0.26:
            return b""
        return self.rng.randbytes(self.rng.randint(1, 48))

    def text(self, max_len: int) -> str:
        r = self.rng.random()
        if r < 0.1:
            return ""
        if r < 0.2:
            return "emoji 🚀 résumé 中文 テスト"[:max_len]
        return self.faker.sentence(nb_words=6)[:max_len]

    def maybe(self, value, p_null: float = 0.2):
        return None if self.rng.random() < p_null else value


class SmokeScenario(Scenario):
    name = "smoke"
    description = ("two tables (INT and VARCHAR primary keys), ~100 transactions of inserts, updates "
                   "and deletes, a primary-key update and an ADD COLUMN midway, 3 partitions")
    partition_num = 3

    def history(self, seed: int, events: int | None = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng = random.Random(seed)
        faker = Faker(["en_US", "zh_CN", "ja_JP", "de_DE"])
        faker.seed_instance(seed)
        values = _Values(rng, faker)
        clock = TSOClock(START_PHYSICAL_MS)

        def ddl(ddl_type: DDLType, query: str, after: TableSchema, before: TableSchema | None,
                backfill: dict | None = None) -> DDL:
            return DDL(clock.peek(), ddl_type, query, SCHEMA, after.table, after, before, backfill or {})

        clock.advance(5)
        v = clock.next()
        clock.next()
        orders = orders_table(v)
        yield ddl(DDLType.CREATE_TABLE, orders.create_sql(), orders, None)
        clock.advance(7)
        v = clock.next()
        clock.next()
        customers = customers_table(v)
        yield ddl(DDLType.CREATE_TABLE, customers.create_sql(), customers, None)

        live = {"orders": {}, "customers": {}}
        next_id = [1]
        used_codes: set[str] = set()

        def new_order_id() -> int:
            if next_id[0] == 7:
                next_id[0] += 1
                return 2**31 - 1  # the INT maximum as a key, once
            i = next_id[0]
            next_id[0] += 1
            return i

        def new_code() -> str:
            while True:
                code = faker.bothify("C-####-??").upper()
                if code not in used_codes:
                    used_codes.add(code)
                    return code

        def order_row(key: int) -> dict:
            row = {
                "id": key,
                "customer": faker.name()[:32],
                "amount": values.decimal_20_6(),
                "quantity": values.u64(),
                "created_at": values.datetime3(),
                "receipt": values.blob(),
                "note": values.maybe(values.text(255)),
            }
            if "status" in orders.column_names:
                row["status"] = values.maybe(rng.choice(["new", "paid", "shipped", "cancelled"]))
            return row

        def customer_row(key: str) -> dict:
            return {
                "code": key,
                "name": faker.name()[:128],
                "balance": values.maybe(values.decimal_20_6()),
                "visits": values.maybe(values.int32()),
                "last_seen": values.maybe(values.datetime3()),
                "avatar": values.blob(),
                "points": values.maybe(values.u64()),
            }

        pk_updates_left = {"orders": 2, "customers": 2}
        for n in range(TRANSACTIONS):
            if n == ALTER_AFTER:
                clock.advance(rng.randint(100, 400))
                v = clock.next()
                clock.next()
                before = orders
                status = Column("status", varchar(16), column_id=len(orders.columns) + 1)
                orders = orders.with_columns(orders.columns + (status,), v)
                yield ddl(DDLType.ADD_COLUMN, "ALTER TABLE `smoke`.`orders` ADD COLUMN `status` VARCHAR(16) NULL",
                          orders, before, {"status": None})
                for row in live["orders"].values():
                    row["status"] = None
            clock.advance(rng.randint(40, 400))
            start_ts = clock.next()
            changes: list[RowChange] = []
            touched: set[tuple[str, object]] = set()
            for _ in range(rng.randint(1, 4)):
                name = rng.choice(["orders", "customers"])
                table = orders if name == "orders" else customers
                rows = live[name]
                candidates = [k for k in rows if (name, k) not in touched]
                action = rng.random()
                if not candidates or action < 0.45 or len(rows) < 4:
                    key = new_order_id() if name == "orders" else new_code()
                    after = order_row(key) if name == "orders" else customer_row(key)
                    rows[key] = after
                    changes.append(RowChange(table, Op.INSERT, None, dict(after)))
                    touched.add((name, key))
                    continue
                key = rng.choice(sorted(candidates, key=str))
                before = dict(rows[key])
                if action < 0.78:
                    after = dict(before)
                    fresh = order_row(key) if name == "orders" else customer_row(key)
                    for col in rng.sample(sorted(fresh), k=rng.randint(1, 3)):
                        if col not in table.handle_key:
                            after[col] = fresh[col]
                    if pk_updates_left[name] and rng.random() < 0.35:
                        pk_updates_left[name] -= 1
                        new_key = new_order_id() if name == "orders" else new_code()
                        after[table.handle_key[0]] = new_key
                        del rows[key]
                        rows[new_key] = after
                        touched.add((name, new_key))
                    else:
                        rows[key] = after
                    changes.append(RowChange(table, Op.UPDATE, before, dict(after)))
                else:
                    del rows[key]
                    changes.append(RowChange(table, Op.DELETE, before, None))
                touched.add((name, key))
            if n == TRANSACTIONS - 1:
                for name, table in (("orders", orders), ("customers", customers)):
                    while pk_updates_left[name]:
                        # Guarantee the primary-key updates the scenario promises.
                        key = sorted((k for k in live[name] if (name, k) not in touched), key=str)[0]
                        before = dict(live[name].pop(key))
                        new_key = new_order_id() if name == "orders" else new_code()
                        after = dict(before, **{table.handle_key[0]: new_key})
                        live[name][new_key] = after
                        changes.append(RowChange(table, Op.UPDATE, before, dict(after)))
                        touched.update({(name, key), (name, new_key)})
                        pk_updates_left[name] -= 1
            commit_ts = clock.next()
            yield Transaction(start_ts, commit_ts, tuple(changes))
