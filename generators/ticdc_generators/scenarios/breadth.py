"""Named scenarios for breadth: every type, every key shape, DDL evolution, many tables, wide rows.

Each is a seeded history driven through the upstream model (`upstream/`), so every event is one
TiDB would produce, and each keeps to a size that runs in seconds.
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from ticdc_contract.model import DDL, Column, Index, Partition, Partitioning, Transaction
from ticdc_contract.tidb_types import TiDBType, datetime, decimal, int_type, varchar
from ticdc_contract.type_catalogue import all_types_matrix

from ..upstream import Rejected, TxnBuilder, Upstream
from .base import Scenario
from .workload import Workload, seeded_faker

START_MS = 1_767_225_600_000
PK = Index("PRIMARY", ("id",), primary=True, unique=True)


def _col_name(i: int, t: TiDBType) -> str:
    return f"c{i:02d}_{t.base}{'_u' if t.unsigned else ''}"


class TypesScenario(Scenario):
    name = "types"
    description = ("the whole type matrix: one column per type variant, every edge value of every type at "
                   "least once, NULL in every nullable column, then updates and deletes")

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        yield from up.create_schema("types")
        matrix = all_types_matrix()
        # Tables of at most 24 type columns keep messages readable and rows under TiDB's limits.
        tables = []
        for n, start in enumerate(range(0, len(matrix), 24)):
            cols = [Column("id", int_type("int"), nullable=False)]
            cols += [Column(_col_name(start + i, t), t) for i, t in enumerate(matrix[start:start + 24])]
            # Generated columns: TiCDC sends a STORED one's value and never a VIRTUAL one's.
            cols += [Column("gen_stored", int_type("bigint"), generated="`id` * 2 + 1", generated_stored=True),
                     Column("gen_virtual", int_type("bigint"), generated="`id` - 1")]
            yield from up.create_table("types", f"t{n}", cols, [PK], pk_is_handle=True)
            tables.append(("types", f"t{n}"))
        next_id = 0
        for name in tables:
            t = up.table(*name)
            # Every edge value of every column, one row per edge (other columns realistic).
            plain = [c for c in t.columns[1:] if c.generated is None]
            depth = max(len(w.domain(t, c.name).edges()) for c in plain)
            for i in range(depth):
                next_id += 1
                fixed = {"id": next_id}
                for c in plain:
                    edges = w.domain(t, c.name).edges()
                    if i < len(edges):
                        fixed[c.name] = edges[i]
                txn = TxnBuilder()
                txn.insert(t, w.fresh_row(t, set(up.state.rows[name]), fixed))
                yield up.commit(txn, rng.randint(1, 50))
            # NULL in every nullable column.
            next_id += 1
            txn = TxnBuilder()
            txn.insert(t, {c.name: (next_id if c.name == "id" else None) for c in t.columns})
            yield up.commit(txn, 5)
        for _ in range(events or 60):
            out = w.transaction(tables, rng.randint(1, 4), p_key_update=0.05)
            if out is not None:
                yield out


class KeysScenario(Scenario):
    name = "keys"
    description = ("every key shape: INT handle PK, clustered VARCHAR PK, composite PK, NOT NULL unique key "
                   "without PK, no key at all, a RANGE-partitioned table; key-changing updates")

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        yield from up.create_schema("keys")
        small = TiDBType("smallint", unsigned=True)  # a small key space, so key updates collide and retry
        yield from up.create_table("keys", "int_handle", [
            Column("id", int_type("bigint"), nullable=False), Column("v", varchar(32)),
            Column("u", int_type("int"), nullable=False)],
            [PK, Index("uk_u", ("u",), unique=True)], pk_is_handle=True)
        yield from up.create_table("keys", "varchar_pk", [
            Column("code", varchar(24), nullable=False), Column("v", decimal(12, 2))],
            [Index("PRIMARY", ("code",), primary=True, unique=True)])
        yield from up.create_table("keys", "composite_pk", [
            Column("region", small, nullable=False), Column("name", varchar(16), nullable=False),
            Column("at", datetime(6)), Column("v", TiDBType("double"))],
            [Index("PRIMARY", ("region", "name"), primary=True, unique=True)])
        yield from up.create_table("keys", "unique_only", [
            Column("email", varchar(64), nullable=False), Column("tenant", small, nullable=False),
            Column("note", TiDBType("text"))],
            [Index("uk_tenant_email", ("tenant", "email"), unique=True), Index("ix_note_tenant", ("tenant",))])
        yield from up.create_table("keys", "partitioned", [
            Column("id", int_type("int"), nullable=False), Column("v", varchar(16))], [PK], pk_is_handle=True,
            partitioning=lambda tid: Partitioning("id", (
                Partition("p0", tid + 1, 0), Partition("p1", tid + 2, 1_000_000), Partition("pmax", tid + 3, None))))
        yield from up.create_table("keys", "no_key", [
            Column("label", varchar(16)), Column("qty", int_type("int")), Column("seen", datetime(0))], [])
        tables = [("keys", n) for n in ("int_handle", "varchar_pk", "composite_pk", "unique_only", "partitioned",
                                        "no_key")]
        for _ in range(events or 150):
            out = w.transaction(tables, rng.randint(1, 5), p_key_update=0.25)
            if out is not None:
                yield out


class DDLEvolutionScenario(Scenario):
    name = "ddl-evolution"
    description = ("DML interleaved with every DDL a consumer sees: add/drop/modify column, defaults, indexes, "
                   "primary key, comment, charset, truncate, rename, partitions, schema create/drop")

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        yield from up.create_schema("evo")
        yield from up.create_table("evo", "accounts", [
            Column("id", int_type("int"), nullable=False), Column("name", varchar(32)),
            Column("balance", decimal(10, 2)), Column("nick", varchar(16), nullable=False)],
            [PK], pk_is_handle=True)
        yield from up.create_table("evo", "events", [
            Column("seq", int_type("int"), nullable=False), Column("kind", varchar(8)),
            Column("payload", TiDBType("json"))], [Index("PRIMARY", ("seq",), primary=True, unique=True)],
            pk_is_handle=True, partitioning=lambda tid: Partitioning("seq", (
                Partition("p0", tid + 1, 1000), Partition("p1", tid + 2, 1_000_000_000))))
        yield from up.create_table("evo", "staging", [
            Column("seq", int_type("int"), nullable=False), Column("kind", varchar(8)),
            Column("payload", TiDBType("json"))], [Index("PRIMARY", ("seq",), primary=True, unique=True)],
            pk_is_handle=True)
        yield from up.create_table("evo", "tags", [
            Column("tag", varchar(24), nullable=False), Column("weight", int_type("int"), nullable=False)],
            [Index("uk_tag", ("tag",), unique=True)])
        acc, ev, tags = ("evo", "accounts"), ("evo", "events"), ("evo", "tags")

        def dml(n: int, tables=(acc, ev, tags)) -> Iterator[Transaction]:
            for _ in range(n):
                out = w.transaction(list(tables), rng.randint(1, 4), p_key_update=0.1)
                if out is not None:
                    yield out

        steps = [
            lambda: up.add_column("evo", "accounts", Column("tier", varchar(8), default="basic", has_default=True)),
            lambda: up.add_column("evo", "accounts", Column("score", int_type("int"))),
            lambda: up.modify_column("evo", "accounts", "balance", Column("balance", decimal(16, 2))),
            lambda: up.set_default("evo", "accounts", "score", 10),
            lambda: up.add_index("evo", "accounts", Index("ix_name", ("name",))),
            lambda: up.set_comment("evo", "accounts", "customer accounts"),
            lambda: up.drop_index("evo", "accounts", "ix_name"),
            lambda: up.drop_column("evo", "accounts", "name"),
            lambda: up.set_charset("evo", "accounts", "utf8mb4", "utf8mb4_general_ci"),
            lambda: up.modify_column("evo", "tags", "weight", Column("weight", int_type("bigint"), nullable=False)),
            lambda: up.add_index("evo", "tags", Index("PRIMARY", ("tag", "weight"), primary=True, unique=True)),
            lambda: up.drop_index("evo", "tags", "PRIMARY"),
            lambda: up.add_partition("evo", "events", "p2", None),
            lambda: up.truncate_partition("evo", "events", "p0"),
            lambda: up.drop_partition("evo", "events", "p0"),
            lambda: up.exchange_partition("evo", "events", "p2", "evo", "staging"),
            lambda: up.rename_table("evo", "accounts", "evo", "customers"),
            lambda: up.create_schema("evo_archive"),
            lambda: up.rename_table("evo", "staging", "evo_archive", "staging"),
            lambda: up.truncate_table("evo", "customers"),
            lambda: up.drop_table("evo_archive", "staging"),
            lambda: up.drop_schema("evo_archive"),
        ]
        yield from dml(20)
        for step in steps:
            try:
                yield from step()
            except Rejected:
                continue  # the data made TiDB refuse this DDL; the history goes on without it
            current = [n for n in (acc, ("evo", "customers"), ev, tags) if n in up.state.schemas]
            yield from dml(rng.randint(3, 8), current)
        yield from dml(events or 20, [n for n in (("evo", "customers"), ev, tags) if n in up.state.schemas])


class MultiTableScenario(Scenario):
    name = "multi-table"
    description = ("twelve tables in three schemas, transactions spanning tables, CREATE TABLES and RENAME "
                   "TABLES jobs whose per-table DDLs share one commit ts")

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        names = []
        for s in ("sales", "stock", "audit"):
            yield from up.create_schema(s)
        def spec(schema: str, table: str) -> dict:
            return dict(schema=schema, table=table, columns=[
                Column("id", int_type("int", unsigned=True), nullable=False), Column("label", varchar(24)),
                Column("qty", int_type("smallint")), Column("at", datetime(0))],
                indexes=[PK], pk_is_handle=True, partitioning=None, comment="")
        for s in ("sales", "stock", "audit"):
            batch = [spec(s, f"t{i}") for i in range(4)]
            yield from up.create_tables(batch)
            names += [(s, f"t{i}") for i in range(4)]
        for _ in range((events or 120) // 2):
            out = w.transaction(names, rng.randint(2, 8))
            if out is not None:
                yield out
        yield from up.rename_tables([(("sales", "t0"), ("sales", "orders")), (("stock", "t0"), ("stock", "items"))])
        names = [n for n in names if n not in (("sales", "t0"), ("stock", "t0"))] + [("sales", "orders"), ("stock", "items")]
        for _ in range((events or 120) // 2):
            out = w.transaction(names, rng.randint(2, 8))
            if out is not None:
                yield out


class WideRowsScenario(Scenario):
    name = "wide-rows"
    description = "a 120-column table and large TEXT/BLOB/JSON values (up to 256 KiB) close to message limits"

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        yield from up.create_schema("wide")
        cols = [Column("id", int_type("int"), nullable=False)]
        kinds = [int_type("bigint"), varchar(64), decimal(20, 4), datetime(3), TiDBType("double")]
        cols += [Column(f"c{i:03d}", kinds[i % len(kinds)]) for i in range(120)]
        yield from up.create_table("wide", "many_columns", cols, [PK], pk_is_handle=True)
        yield from up.create_table("wide", "big_values", [
            Column("id", int_type("int"), nullable=False), Column("doc", TiDBType("mediumtext")),
            Column("blob", TiDBType("mediumblob")), Column("meta", TiDBType("json"))], [PK], pk_is_handle=True)
        for i in range(events or 30):
            txn = TxnBuilder()
            t = up.table("wide", "big_values")
            size = rng.choice([1, 1024, 64 * 1024, 256 * 1024])
            txn.insert(t, {"id": i + 1, "doc": faker.text(max_nb_chars=200) * max(1, size // 200),
                           "blob": rng.randbytes(size), "meta": '{"size": %d}' % size})
            yield up.commit(txn, rng.randint(1, 100))
            out = w.transaction([("wide", "many_columns")], rng.randint(1, 3))
            if out is not None:
                yield out
