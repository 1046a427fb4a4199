"""Scenario `replays`: at-least-once delivery as a consumer meets it after TiCDC restarts.

Six tables in two schemas (INT, VARCHAR and composite primary keys, one RANGE-partitioned) over
four partitions, transactions spanning up to three tables, and DDL on the way: a table created a
quarter in and an ADD COLUMN halfway. Its sink settings (for every encoding, a changefeed TOML
or sink URI still applies on top):
- three changefeed restarts, each from the checkpoint before the last one, so every row, DDL
  and watermark above it is sent again and the first watermark after a restart falls back;
- tables interleaved between checkpoints (per-table order kept);
- send-all-bootstrap-at-start (Simple): every restart first sends a BOOTSTRAP of every table.
Every table has a handle key, so a replayed row always names the row it repeats. Restart points
and interleavings come from the run's seed, like the history.
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from ticdc_contract.model import DDL, Column, Index, Partition, Partitioning, Transaction
from ticdc_contract.tidb_types import TiDBType, datetime, decimal, int_type, varchar

from ..upstream import Upstream
from .base import Scenario
from .workload import Workload, seeded_faker

START_MS = 1_767_225_600_000
PK = Index("PRIMARY", ("id",), primary=True, unique=True)
DEFAULT_TRANSACTIONS = 160


class ReplaysScenario(Scenario):
    name = "replays"
    description = ("six tables over four partitions with three changefeed restarts that resend everything above "
                   "a lagging checkpoint, tables interleaved between checkpoints, send-all-bootstrap-at-start")
    partition_num = 4
    sink_overrides = {
        "interleave_tables": True,
        "failovers": 3,
        "failover_spacing": DEFAULT_TRANSACTIONS // 4,
        "checkpoint_lag": 1,
        "send_all_bootstrap_at_start": True,
    }

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        rng, faker = random.Random(seed), seeded_faker(seed)
        up = Upstream(START_MS, time_zone=time_zone)
        w = Workload(up, rng, faker)
        for schema in ("shop", "ledger"):
            yield from up.create_schema(schema)
        yield from up.create_table("shop", "orders", [
            Column("id", int_type("int"), nullable=False), Column("customer", varchar(32)),
            Column("amount", decimal(12, 2)), Column("placed_at", datetime(3))], [PK], pk_is_handle=True)
        yield from up.create_table("shop", "items", [
            Column("sku", varchar(24), nullable=False), Column("title", varchar(64)),
            Column("stock", int_type("int", unsigned=True))],
            [Index("PRIMARY", ("sku",), primary=True, unique=True)])
        yield from up.create_table("shop", "visits", [
            Column("id", int_type("bigint"), nullable=False), Column("page", varchar(48))], [PK], pk_is_handle=True,
            partitioning=lambda tid: Partitioning("id", (
                Partition("p0", tid + 1, 0), Partition("p1", tid + 2, 1_000_000), Partition("pmax", tid + 3, None))))
        yield from up.create_table("ledger", "entries", [
            Column("account", int_type("smallint", unsigned=True), nullable=False),
            Column("seq", int_type("int"), nullable=False), Column("delta", decimal(14, 4)),
            Column("memo", TiDBType("text"))],
            [Index("PRIMARY", ("account", "seq"), primary=True, unique=True)])
        yield from up.create_table("ledger", "accounts", [
            Column("id", int_type("int"), nullable=False), Column("owner", varchar(32)),
            Column("balance", decimal(14, 4))], [PK], pk_is_handle=True)
        tables = [("shop", "orders"), ("shop", "items"), ("shop", "visits"), ("ledger", "entries"),
                  ("ledger", "accounts")]
        total = events or DEFAULT_TRANSACTIONS
        yield from self._transactions(w, rng, tables, total // 4)
        # Created a quarter in: restarts from a checkpoint below it resend its CREATE TABLE and
        # do not bootstrap it at start; restarts from above do.
        yield from up.create_table("ledger", "audit", [
            Column("id", int_type("int"), nullable=False), Column("action", varchar(16)),
            Column("at", datetime(0))], [PK], pk_is_handle=True)
        tables.append(("ledger", "audit"))
        yield from self._transactions(w, rng, tables, total // 4)
        yield from up.add_column("shop", "orders", Column("note", varchar(32)))
        yield from self._transactions(w, rng, tables, total - 2 * (total // 4))

    @staticmethod
    def _transactions(w: Workload, rng: random.Random, tables: list, count: int) -> Iterator[Transaction]:
        for _ in range(count):
            # Up to three tables per transaction, so one commit ts spans several pipelines.
            out = w.transaction(rng.sample(tables, k=min(3, len(tables))), rng.randint(1, 6), p_key_update=0.1)
            if out is not None:
                yield out
