"""Histories that once failed the reference consumer or the checks (docs/fuzz.md, "Known gaps"):
each is replayed through the fuzz engine with the reference consumer and must pass, under every
TiCDC generation whose records differ for it."""
from __future__ import annotations

import dataclasses

import pytest

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.delivery import Schedule
from ticdc_conformance.fuzz.example import run_case
from ticdc_conformance.fuzz.space import FuzzCase, base_config
from ticdc_contract.model import Column, Index
from ticdc_contract.tidb_types import TiDBType, int_type
from ticdc_generators.upstream import TxnBuilder, Upstream

from .broken import REFERENCE

REFERENCES = ("local", REFERENCE)


def _verdict(tmp_path, history, profile: str = "ticdc", consumer: str = "local"):
    config = dataclasses.replace(base_config("debezium"), version_profile=profile)
    case = FuzzCase(tuple(history), config, Schedule(), 0)
    return run_case(case, adapter_for(consumer), tmp_path / "case", 60.0, replay="fuzz --replay X")


def _table(up: Upstream, column: Column) -> list:
    return up.create_schema("d") + up.create_table(
        "d", "t", [Column("id", int_type(), nullable=False), column],
        [Index("PRIMARY", ("id",), primary=True, unique=True)], pk_is_handle=True)


def _insert(up: Upstream, rows: list[dict], commit_ms: int):
    txn = TxnBuilder()
    for row in rows:
        txn.insert(up.table("d", "t"), row)
    return up.commit(txn, commit_ms)


@pytest.mark.parametrize("profile", ["ticdc", "tiflow"])
def test_a_null_time_with_a_default_in_debezium(tmp_path, profile):
    """New TiCDC writes the NULL as 0 (00:00:00), the classic generation as the default: the
    projection follows the case's version profile (was known gap debezium-time-default-null)."""
    up = Upstream(1_000_000, keep_history=True)
    history = up.create_schema("d") + up.create_table(
        "d", "t", [Column("id", int_type(), nullable=False),
                   Column("c", TiDBType("time", decimal=3), nullable=True, has_default=True, default="12:34:56.500")],
        [Index("PRIMARY", ("id",), primary=True, unique=True)], pk_is_handle=True)
    txn = TxnBuilder()
    txn.insert(up.table("d", "t"), {"id": 1, "c": None})
    txn.insert(up.table("d", "t"), {"id": 2, "c": "01:02:03.000"})
    history.append(up.commit(txn, 10))
    verdict = _verdict(tmp_path, history, profile)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary


@pytest.mark.parametrize("consumer", REFERENCES)
def test_a_null_keeps_the_default_it_was_written_with_after_modify_column(tmp_path, consumer):
    """Debezium writes a NULL as the column's DEFAULT at the time; MODIFY COLUMN drops the DEFAULT,
    and the row written before keeps the default it arrived with, a row written after is NULL."""
    up = Upstream(1_000_000, keep_history=True)
    history = _table(up, Column("c", int_type(), nullable=True, has_default=True, default=5))
    history.append(_insert(up, [{"id": 1, "c": None}], 10))
    history += up.modify_column("d", "t", "c", Column("c", int_type("bigint"), nullable=True))
    history.append(_insert(up, [{"id": 2, "c": None}], 30))
    verdict = _verdict(tmp_path, history, consumer=consumer)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary


@pytest.mark.parametrize("consumer", REFERENCES)
def test_a_null_written_before_set_default_stays_null(tmp_path, consumer):
    up = Upstream(1_000_000, keep_history=True)
    history = _table(up, Column("c", int_type(), nullable=True))
    history.append(_insert(up, [{"id": 1, "c": None}], 10))
    history += up.set_default("d", "t", "c", 7)
    history.append(_insert(up, [{"id": 2, "c": None}], 30))
    verdict = _verdict(tmp_path, history, consumer=consumer)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary


@pytest.mark.parametrize("consumer", REFERENCES)
@pytest.mark.parametrize("written", [None, 18446744073709551615, 9223372036854775808])
def test_the_largest_bigint_unsigned_in_debezium(tmp_path, consumer, written):
    """TiCDC sends BIGINT UNSIGNED as int64(v): 2^64-1 arrives as -1; as a NULL's DEFAULT it fails
    TiCDC's strconv.ParseInt and arrives as 0, which the consumers hold and the projection now
    expects (was known gap debezium-uint64-max)."""
    up = Upstream(1_000_000, keep_history=True)
    history = _table(up, Column("c", int_type("bigint", unsigned=True), nullable=True, has_default=True,
                                default=18446744073709551615))
    history.append(_insert(up, [{"id": 1, "c": written}], 10))
    verdict = _verdict(tmp_path, history, consumer=consumer)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary
