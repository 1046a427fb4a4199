"""The golden matrix as data, the value cap, and the checkpoints a consumer reaches."""
import pytest

from ticdc_contract.record import KafkaRecord
from ticdc_contract.model import Column, Index, Op, Transaction
from ticdc_generators.pipeline import config_for, encoding_names
from ticdc_generators.scenarios import SCENARIOS, get_scenario
from ticdc_contract.state import TableStates
from ticdc_contract.tidb_types import TiDBType, int_type
from ticdc_generators.upstream import TxnBuilder, Upstream
from ticdc_conformance.golden.cap import capped_history, largest_value
from ticdc_conformance.golden.expected import global_checkpoints, partition_order, read_order
from ticdc_conformance.golden.matrix import (SCENARIO_CASES, VARIANTS, GoldenMatrixError, Variant, cases,
                                                    level_of, variant_config)
from ticdc_conformance.rules.catalogue import default_catalogue

from tests.helpers import kafka_record


def test_every_listed_scenario_has_cases_and_every_variant_is_used():
    all_cases = list(cases())
    assert {c.scenario for c in all_cases} == set(SCENARIOS)
    assert {c.variant.name for c in all_cases} == {v.name for v in VARIANTS}
    for scenario, spec in SCENARIO_CASES.items():
        expected = len(spec.variants) if spec.variants is not None else len(VARIANTS)
        assert sum(c.scenario == scenario for c in all_cases) == expected
    assert len({c.path for c in all_cases}) == len(all_cases)


def test_the_matrix_holds_the_required_variants():
    def has(encoding, **options):
        """A variant of `encoding` whose sink options in effect hold these (TiCDC names)."""
        ticdc = {k.replace("_", "-"): v for k, v in options.items()}
        return any(v.encoding == encoding and all(variant_config("smoke", v).ticdc_options()[k] == x
                                                  for k, x in ticdc.items()) for v in VARIANTS)

    assert has("open-protocol", output_old_value=True) and has("open-protocol", output_old_value=False)
    assert has("canal-json", enable_tidb_extension=True) and has("canal-json", enable_tidb_extension=False)
    assert has("canal-json", content_compatible=True)
    assert has("debezium", debezium_disable_schema=True)
    for enc in ("simple-json", "simple-avro"):
        assert has(enc, send_bootstrap_to_all_partition=True) and has(enc, send_bootstrap_to_all_partition=False)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_a_variant_sets_its_options_under_ticdc_names_and_nothing_else(variant):
    config = variant_config("smoke", variant)
    options = config.ticdc_options()
    for name, value in variant.options.items():
        assert options[name] == value
    base = config_for("smoke", variant.encoding).ticdc_options()
    assert {k for k in options if options[k] != base[k]} <= set(variant.options)


def test_an_unknown_option_or_encoding_is_refused():
    with pytest.raises(GoldenMatrixError, match="output-old-values"):
        variant_config("smoke", Variant("x", "open-protocol", {"output-old-values": False}, "x", ()))
    with pytest.raises(GoldenMatrixError, match="failovers"):
        variant_config("smoke", Variant("x", "open-protocol", {"failovers": 2}, "x", ()))  # a simulator setting
    with pytest.raises(GoldenMatrixError, match="encoding"):
        variant_config("smoke", Variant("x", "protobuf", {}, "x", ()))


def test_rules_are_catalogue_ids_and_fit_the_ordering():
    catalogue = default_catalogue()
    case = next(c for c in cases() if c.path == "replays/canal-json-no-tidb-extension")
    arrival, watermark = case.rules("arrival"), case.rules("watermark")
    assert all(r in catalogue for r in watermark)
    assert "CONSUMER-DEDUP-1" in watermark and "CONSUMER-CHECKPOINT-1" in watermark
    assert "CONSUMER-DEDUP-1" not in arrival and "CONSUMER-CHECKPOINT-1" not in arrival
    assert level_of(arrival) == "required"
    assert level_of(["CONSUMER-DEDUP-2"]) == "recommended"


def test_each_encoding_has_a_variant_of_its_name_with_its_default_options():
    by_name = {v.name: v for v in VARIANTS}
    for encoding in encoding_names():
        assert variant_config("smoke", by_name[encoding]) == config_for("smoke", encoding)


# --- the value cap --------------------------------------------------------------------------------
def test_the_cap_leaves_a_row_out_for_its_whole_life_and_keeps_the_history_valid():
    up = Upstream(1_767_225_600_000)
    history = [*up.create_schema("s")]
    history += up.create_table("s", "t", [Column("id", int_type("int"), nullable=False),
                                          Column("v", TiDBType("text"))],
                               [Index("PRIMARY", ("id",), primary=True, unique=True)], pk_is_handle=True)

    def commit(build):
        txn = TxnBuilder()
        build(txn, up.table("s", "t"))
        history.append(up.commit(txn, 1))

    commit(lambda b, t: (b.insert(t, {"id": 1, "v": "x" * 50}), b.insert(t, {"id": 2, "v": "small"})))
    commit(lambda b, t: b.update(t, {"id": 1, "v": "x" * 50}, {"id": 3, "v": "y"}))  # the left-out row moves
    commit(lambda b, t: b.update(t, {"id": 2, "v": "small"}, {"id": 2, "v": "z" * 40}))  # a kept row grows
    commit(lambda b, t: b.delete(t, {"id": 3, "v": "y"}))
    commit(lambda b, t: b.insert(t, {"id": 1, "v": "back"}))
    counts: dict = {}
    capped = list(capped_history(history, 10, counts))
    assert counts["rows_left_out"] == 2
    assert largest_value(capped) <= 10 < largest_value(history)
    ops = [[(ch.op, (ch.before or ch.after)["id"]) for ch in e.changes] for e in capped if isinstance(e, Transaction)]
    assert ops == [[(Op.INSERT, 2)], [(Op.DELETE, 2)], [(Op.INSERT, 1)]]
    states = TableStates()
    for event in capped:
        states.apply(event)
    assert states.rows[("s", "t")] == {(1,): {"id": 1, "v": "back"}}


def test_the_capped_types_history_applies_cleanly():
    cap = SCENARIO_CASES["types"].max_value_bytes
    counts: dict = {}
    capped = list(capped_history(get_scenario("types").history(1, 5), cap, counts))
    assert counts["rows_left_out"] > 0 and largest_value(capped) <= cap
    states = TableStates()
    for event in capped:
        states.apply(event)


# --- checkpoints ----------------------------------------------------------------------------------
def _wm(partition: int, offset: int, ms: int, ts: int) -> tuple[KafkaRecord, int]:
    return kafka_record(b"", partition=partition, offset=offset, timestamp_ms=ms), ts


def test_the_global_watermark_is_the_minimum_and_ignores_a_restarts_lower_watermark():
    parts = [("t", 0), ("t", 1)]
    marks = [_wm(0, 0, 10, 100), _wm(1, 0, 10, 100), _wm(0, 1, 20, 200), _wm(1, 1, 20, 200),
             # a restart re-sends from checkpoint 100, then goes on
             _wm(0, 2, 21, 100), _wm(1, 2, 21, 100), _wm(0, 3, 30, 300), _wm(1, 3, 30, 300)]
    assert global_checkpoints(marks, parts, read_order) == [100, 200, 300]
    assert global_checkpoints(marks, parts, partition_order) == [100, 200, 300]


def test_no_checkpoint_before_every_partition_has_a_watermark():
    parts = [("t", 0), ("t", 1), ("t", 2)]
    marks = [_wm(0, 0, 10, 100), _wm(1, 0, 10, 100)]
    assert global_checkpoints(marks, parts, read_order) == []


def test_a_partition_that_missed_a_watermark_makes_the_checkpoints_depend_on_read_order():
    """What build_case refuses (GoldenExpectationError): then no single applied log is expected."""
    parts = [("t", 0), ("t", 1)]
    marks = [_wm(0, 0, 10, 100), _wm(0, 1, 30, 300),  # partition 0 never got 200
             _wm(1, 0, 10, 100), _wm(1, 1, 20, 200), _wm(1, 2, 30, 300)]
    assert global_checkpoints(marks, parts, read_order) == [100, 200, 300]
    assert global_checkpoints(marks, parts, lambda r: (-r.partition, r.offset)) == [100, 300]
