"""What `fuzz` draws and writes: configurations of each encoding, schedules only for a consumer the
suite feeds, case folders byte for byte the same for the same drawn case, budgets that say what is
wrong with them."""
from __future__ import annotations

import filecmp
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ticdc_conformance.consumers.adapters import Capabilities
from ticdc_conformance.delivery import Schedule
from ticdc_conformance.fuzz import Budget, FuzzCase, encodings, fuzz_cases, parse_duration
from ticdc_conformance.fuzz.example import write_stream
from ticdc_conformance.fuzz.regression import config_from_json, config_to_json
from ticdc_conformance.fuzz.space import KNOWN_GAPS, base_config, schedules, sink_configs

FED = Capabilities(applied_log=True, states=True, schedules=True)
READS_FILES = Capabilities(applied_log=True, states=True)
FEW = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@pytest.mark.parametrize("encoding", encodings())
@FEW
@given(data=st.data())
def test_configurations_are_of_the_encoding_and_round_trip_through_json(encoding, data):
    config = data.draw(sink_configs(encoding))
    assert config.encoding == encoding
    assert config_from_json(config_to_json(config)) == config


@FEW
@given(st.data())
def test_a_consumer_reading_files_gets_the_default_schedule(data):
    assert data.draw(schedules(READS_FILES)) == Schedule()


@FEW
@given(schedule=schedules(FED))
def test_schedules_of_a_fed_consumer_round_trip_through_their_spec(schedule):
    assert Schedule.parse(schedule.spec()) == schedule


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=fuzz_cases("simple-json", FED, max_steps=4))
def test_the_same_case_writes_the_same_bytes(case, tmp_path_factory):
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    write_stream(case, a)
    write_stream(case, b)
    for folder in ("records", "truth"):
        cmp = filecmp.dircmp(a / folder, b / folder)
        assert not cmp.diff_files and not cmp.left_only and not cmp.right_only
    assert (a / "manifest.json").read_bytes() == (b / "manifest.json").read_bytes()


def test_known_gaps_are_left_out_unless_asked_for():
    from ticdc_conformance.fuzz.space import upstream_histories

    assert set(KNOWN_GAPS) == {"arrival-undecidable-key", "late-join-partitions", "keyless-resend",
                               "keyless-no-old-value"}
    # Every DDL kind is drawn in every encoding (SET DEFAULT and MODIFY COLUMN in Debezium included).
    assert "'set_default'" in repr(upstream_histories()) and "'modify_column'" in repr(upstream_histories())


def test_case_size_counts_the_history():
    case = FuzzCase((), base_config("canal-json"), Schedule(), 0)
    assert case.size == {"events": 0, "transactions": 0, "row_changes": 0, "ddl": 0}
    assert replace(case, seed=1) != case


@pytest.mark.parametrize("text,seconds", [("90", 90), ("90s", 90), ("10m", 600), ("1h", 3600), ("2.5m", 150)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten", "-1m", "0"])
def test_bad_durations_name_the_text(text):
    with pytest.raises(ValueError, match="--budget"):
        parse_duration(text)


def test_a_budget_needs_a_limit():
    with pytest.raises(ValueError, match="--budget.*--examples"):
        Budget()
    with pytest.raises(ValueError, match="--examples"):
        Budget(examples=0)


def test_failovers_are_drawn_for_keyed_histories_only():
    """keyless-resend: a failover only where every table has a key; keyless-no-old-value: Open
    Protocol keeps the old image once a table has none."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    keyed = find(sink_configs("canal-json", keyless=False), lambda c: c.failovers > 0)
    assert keyed.failovers > 0
    for encoding in ("canal-json", "open-protocol", "simple-json"):
        with pytest.raises(NoSuchExample, match="No examples found"):
            find(sink_configs(encoding, keyless=True), lambda c: c.failovers > 0)
    with pytest.raises(NoSuchExample, match="No examples found"):
        find(sink_configs("open-protocol", keyless=True), lambda c: not c.output_old_value)
    assert not find(sink_configs("open-protocol", keyless=False), lambda c: not c.output_old_value).output_old_value


def test_simple_sends_bootstrap_to_every_partition_when_the_history_exchanges_a_partition():
    """The exchanged normal table's new version is named by a BOOTSTRAP only: to the first partition
    alone it would leave that table's rows elsewhere unreadable per partition (docs/fuzz.md)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    for encoding in ("simple-json", "simple-avro"):
        assert not find(sink_configs(encoding), lambda c: not c.send_bootstrap_to_all_partition
                        ).send_bootstrap_to_all_partition
        with pytest.raises(NoSuchExample, match="No examples found"):
            find(sink_configs(encoding, exchanges=True), lambda c: not c.send_bootstrap_to_all_partition)


def test_many_table_histories_write_rows_of_several_tables_between_ddl():
    """What drops_resends (ticdc#4051) needs: rows of two tables in two transactions with no DDL
    between them; many_table_histories starts with two or three tables, so many of its draws have
    it (30 draws with a fixed seed; the plain mix of upstream_histories has it in few)."""
    from ticdc_conformance.fuzz.space import many_table_histories
    from ticdc_contract.model import DDL, Transaction

    def two_tables_in_two_transactions(history) -> bool:
        window: list[set] = []  # the tables of each transaction since the last DDL
        for e in history:
            if isinstance(e, DDL):
                window = []
            elif isinstance(e, Transaction):
                tables = {(c.table.schema, c.table.table) for c in e.changes}
                if any(t != u for earlier in window for t in earlier for u in tables):
                    return True
                window.append(tables)
        return False

    drawn: list[bool] = []

    @settings(max_examples=30, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(history=many_table_histories())
    def draw(history):
        drawn.append(two_tables_in_two_transactions(history))

    draw()
    assert len(drawn) >= 30 and sum(drawn) >= len(drawn) // 4, f"{sum(drawn)} of {len(drawn)} draws"


def test_a_history_ticdc_cannot_replicate_is_not_applicable_not_a_crash(tmp_path):
    """New TiCDC panics on a NULL DATE in a column with a DEFAULT (Debezium): the drawn history
    tests no consumer, so the example is not applicable with TiCDC's reason, not a traceback."""
    from ticdc_conformance.consumers.adapters import adapter_for
    from ticdc_conformance.fuzz.example import run_case
    from ticdc_contract.model import Column, Index
    from ticdc_contract.tidb_types import TiDBType, int_type
    from ticdc_generators.upstream import TxnBuilder, Upstream

    up = Upstream(1_000_000, keep_history=True)
    history = up.create_schema("d") + up.create_table(
        "d", "t", [Column("id", int_type(), nullable=False),
                   Column("c", TiDBType("date"), nullable=True, has_default=True, default="2023-01-01")],
        [Index("PRIMARY", ("id",), primary=True, unique=True)], pk_is_handle=True)
    txn = TxnBuilder()
    txn.insert(up.table("d", "t"), {"id": 1, "c": None})
    history.append(up.commit(txn, 10))
    case = FuzzCase(tuple(history), base_config("debezium"), Schedule(), 0)
    verdict = run_case(case, adapter_for("local"), tmp_path / "case", 60.0, replay="fuzz --replay X")
    assert not verdict.failed
    assert verdict.not_applicable is not None and "NULL DATE with a DEFAULT" in verdict.not_applicable
