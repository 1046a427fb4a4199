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


def _simple_verdict(tmp_path, history, consumer: str, **config):
    case = FuzzCase(tuple(history), dataclasses.replace(base_config("simple-json"), **config), Schedule(), 0)
    return run_case(case, adapter_for(consumer), tmp_path / "case", 60.0, replay="fuzz --replay X")


def _delete(up: Upstream, row: dict, commit_ms: int):
    txn = TxnBuilder()
    txn.delete(up.table("d", "t"), row)
    return up.commit(txn, commit_ms)


@pytest.mark.parametrize("consumer", REFERENCES)
def test_a_bootstrap_ahead_of_its_ddl_changes_no_table_before_the_ddl_applies(tmp_path, consumer):
    """A BOOTSTRAP of the version an ADD COLUMN makes reaches the consumer on one partition while
    another partition's watermark still holds the checkpoint before the DDL: the reference took the
    BOOTSTRAP's columns on arrival, and its tables showed the column a checkpoint early
    (CONSUMER-COLUMN-1). A BOOTSTRAP only tells the decoder a schema; DDL changes the tables."""
    up = Upstream(1_000_000, keep_history=True)
    history = _table(up, Column("c", int_type(), nullable=True))
    history.append(_insert(up, [{"id": 0, "c": None}], 1))
    history.append(_insert(up, [{"id": 9_999_999, "c": None}], 0))
    history.append(_delete(up, {"id": 0, "c": None}, 1))
    history += up.add_column("d", "t", Column("a4", int_type(), nullable=False, has_default=True, default=0))
    history.append(_insert(up, [{"id": 0, "c": None, "a4": 0}], 0))
    verdict = _simple_verdict(tmp_path, history, consumer, partition_num=2, send_bootstrap_in_msg_count=1,
                              watermark_interval_ms=1)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary


@pytest.mark.parametrize("consumer", REFERENCES)
def test_a_restart_bootstrap_of_a_table_renamed_since_brings_no_old_name_back(tmp_path, consumer):
    """send-all-bootstrap-at-start: a restarted changefeed sends a BOOTSTRAP of every table as it was
    at the restart's checkpoint, a table renamed since under its old name; the reference made that
    table again (CONSUMER-TABLE-1; was known gap simple-bootstrap-at-start-failover)."""
    up = Upstream(1_000_000, keep_history=True)
    history = _table(up, Column("c", int_type(), nullable=True))
    for i in range(4):
        history.append(_insert(up, [{"id": i, "c": None}], 1000))
    history += up.rename_table("d", "t", "d", "u")
    for i in range(4, 8):
        txn = TxnBuilder()
        txn.insert(up.table("d", "u"), {"id": i, "c": None})
        history.append(up.commit(txn, 1000))
    verdict = _simple_verdict(tmp_path, history, consumer, send_all_bootstrap_at_start=True, failovers=1,
                              failover_spacing=8, checkpoint_lag=2)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.summary
