"""Scenario `large`: N row events (default 100 000; `--events N`), streamed with bounded memory.

Four tables with a fixed working set of live rows each: once a table holds its working set,
every insert is paired with a delete, so the upstream state — and every buffer on the way —
stays the same size however many events are generated. Values are drawn straight from the
seeded generator (no faker) so that generation cost stays linear and small per event.
"""
from __future__ import annotations

import random
from typing import Callable, Iterator, Optional

from ticdc_contract.model import DDL, Column, Index, Transaction
from ticdc_contract.tidb_types import TiDBType, datetime, decimal, int_type, varchar

from ..upstream import TxnBuilder, Upstream
from .base import Scenario

DEFAULT_EVENTS = 100_000
WORKING_SET = 2_000  # live rows per table
TABLES = 4
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 éß中文"


class LargeScenario(Scenario):
    name = "large"
    description = (f"N row events (default {DEFAULT_EVENTS}, --events N) over {TABLES} tables with a fixed "
                   "working set, streamed with bounded memory (for benchmarks and soak runs)")
    partition_num = 3
    sized = True
    default_events = DEFAULT_EVENTS

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        total = DEFAULT_EVENTS if events is None else events
        rng = random.Random(seed)
        up = Upstream(1_767_225_600_000, time_zone=time_zone, keep_history=False)
        yield from up.create_schema("large")
        tables = []
        for i in range(TABLES):
            yield from up.create_table("large", f"t{i}", [
                Column("id", int_type("bigint"), nullable=False),
                Column("k", int_type("int", unsigned=True), nullable=False),
                Column("name", varchar(64), nullable=False),
                Column("amount", decimal(18, 4)),
                Column("at", datetime(3)),
                Column("payload", TiDBType("varbinary", flen=64)),
            ], [Index("PRIMARY", ("id",), primary=True, unique=True)], pk_is_handle=True)
            tables.append(f"t{i}")
        next_id = [0] * TABLES
        live: list[list[int]] = [[] for _ in range(TABLES)]
        sent = 0
        below, random_ = _draws(rng)
        rows = up.state.rows
        while sent < total:
            txn = TxnBuilder()
            n = min(1 + below(8), total - sent)  # rng.randint(1, 8)
            touched: set[tuple[int, int]] = set()
            for _ in range(n):
                ti = below(TABLES)  # rng.randrange(TABLES)
                t = up.table("large", tables[ti])
                ids = live[ti]
                r = random_()
                if len(ids) < WORKING_SET and r < 0.7 or not ids:
                    next_id[ti] += 1
                    row = _row(rng, next_id[ti])
                    txn.insert(t, row)
                    ids.append(next_id[ti])
                    touched.add((ti, next_id[ti]))
                    continue
                pos = below(len(ids))  # rng.randrange(len(ids))
                key = ids[pos]
                if (ti, key) in touched:
                    continue
                touched.add((ti, key))
                before = rows[("large", tables[ti])][(key,)]
                if r < 0.85:
                    after = dict(before, name=_text(rng, 1, 64), amount=_amount(rng))
                    txn.update(t, before, after)
                else:
                    txn.delete(t, before)
                    ids[pos] = ids[-1]
                    ids.pop()
            txn_out = up.commit(txn, advance_ms=below(4))  # rng.randint(0, 3)
            sent += len(txn_out.changes)
            if txn_out.changes:
                yield txn_out


def _draws(rng: random.Random) -> tuple[Callable[[int], int], Callable[[], float]]:
    """`rng.randrange(n)` as one call, and `rng.random`. random.Random's randint(a, b) is
    randrange(a, b + 1), which is a + _randbelow(b + 1 - a) (CPython 3.9 to 3.13): the scenario
    draws several per row, so it calls _randbelow itself, without the wrappers' argument checks.
    The numbers, and so the history, are the same (tests/generators/test_large_draws.py). Each
    draw below is commented with the call it stands for."""
    return rng._randbelow, rng.random


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choices(_ALPHABET, k=lo + rng._randbelow(hi + 1 - lo)))  # k=rng.randint(lo, hi)


def _amount(rng: random.Random) -> Optional[str]:
    below, random_ = _draws(rng)
    if random_() < 0.1:
        return None
    return f"{below(2 * 10**13 + 1) - 10**13}.{below(10000):04d}"  # randint(-10**13, 10**13), randint(0, 9999)


def _row(rng: random.Random, key: int) -> dict:
    below, random_ = _draws(rng)
    secs = below(10**9 + 1)  # randint(0, 10**9)
    return {
        "id": key,
        "k": below(2**32),  # randint(0, 2**32 - 1)
        "name": _text(rng, 0, 64),
        "amount": _amount(rng),
        "at": f"20{secs % 30:02d}-{1 + secs % 12:02d}-{1 + secs % 28:02d} "
              f"{secs % 24:02d}:{secs % 60:02d}:{secs // 60 % 60:02d}.{secs % 1000:03d}",
        "payload": rng.randbytes(below(65)) if random_() < 0.9 else None,  # randint(0, 64)
    }
