"""Properties of the value domains over the full type matrix: Hypothesis strategies and seeded
draws only ever produce values TiDB accepts, TiDB's JSON print is a fixed point, and every edge
value survives each encoding of the default matrix (project encoder -> reference decoder) as the
protocol's fidelity projection says it should."""
from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import kafka_record
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.canonical import value_to_json
from ticdc_contract.model import Column, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType
from ticdc_contract.type_catalogue import all_types_matrix
from ticdc_generators.pipeline import DEFAULT_MATRIX
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, RowEvent
from ticdc_generators.values import domain_for, jsondoc

MATRIX = all_types_matrix()
DRAWS = 2000


def _id(t: TiDBType) -> str:
    return t.sql()[:48]


def _zone_for(t: TiDBType) -> str:
    return "America/New_York" if t.base == "timestamp" else "UTC"


@pytest.mark.parametrize("t", MATRIX, ids=_id)
@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_strategy_values_always_validate(t, data):
    d = domain_for(t, nullable=True, time_zone=_zone_for(t))
    d.validate(data.draw(d.strategy()))


@pytest.mark.parametrize("t", MATRIX, ids=_id)
def test_seeded_draws_always_validate(t):
    d = domain_for(t, nullable=True, time_zone=_zone_for(t))
    rng = random.Random(f"draws/{t.sql()}")
    for _ in range(DRAWS):
        v = d.draw(rng)
        d.validate(v)


@pytest.mark.parametrize("allow", [("zero-dates",), ("invalid-enum",)])
@pytest.mark.parametrize("t", [TiDBType("date"), TiDBType("datetime", decimal=3), TiDBType("timestamp"),
                               TiDBType("enum", elements=("a", "b"))], ids=_id)
def test_opt_in_domains_draw_and_validate(t, allow):
    d = domain_for(t, allow=allow)
    rng = random.Random(3)
    for _ in range(500):
        d.validate(d.draw(rng))


_JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=8), c, max_size=5),
    max_leaves=25)


@settings(max_examples=150, deadline=None, database=None)
@given(_JSON_TREES)
def test_tidb_json_print_is_a_fixed_point(doc):
    text = jsondoc.dumps(doc)
    jsondoc.check_text(text)
    assert jsondoc.dumps(jsondoc.loads(text)) == text


# --- round trip through the project's encoders and the reference decoders ------------------------------
T0 = 1_767_225_600_000 << 18


def _table(t: TiDBType) -> TableSchema:
    return TableSchema(schema="vals", table="t", table_id=100, schema_version=T0 - 100, pk_is_handle=True,
                       columns=(Column("id", TiDBType("int"), nullable=False, column_id=1),
                                Column("c", t, nullable=True, column_id=2)),
                       indexes=(Index("PRIMARY", ("id",), primary=True, unique=True),))


def _same(got: Any, expected: Any) -> bool:
    if isinstance(got, float) and isinstance(expected, float):
        return got == expected and math.copysign(1, got) == math.copysign(1, expected)
    if isinstance(got, bool) or isinstance(expected, bool):
        return got is expected
    return got == expected


def _roundtrip_problems(encoding: str, time_zone: str, types: list[TiDBType]) -> list[str]:
    config = SinkConfig(topic="t", partition_num=1, time_zone=time_zone, **DEFAULT_MATRIX[encoding])
    options = config.ticdc_options()
    module = encoder_module(config.protocol)
    package = protocol_spec(config.protocol)
    problems = []
    for t in types:
        table = _table(t)
        d = domain_for(t, nullable=True, time_zone=time_zone)
        rng = random.Random(f"roundtrip/{t.sql()}")
        values = d.edges() + [d.draw(rng) for _ in range(10)]
        encoder = decoder = None
        offset = 0
        for i, v in enumerate(values):
            what = f"{encoding} {t.sql()[:60]} value {v!r:.80}"
            if encoder is None:  # one pair per type; a fresh one after any failure
                encoder, decoder, offset = module.new_encoder(config, "t", 0), package.new_decoder(options), 0
                messages = encoder.encode(BootstrapEvent(table)) if module.uses_bootstrap else []
            else:
                messages = []
            try:
                row = RowChange(table, Op.INSERT, None, {"id": i, "c": v})
                messages += encoder.encode(RowEvent(row, T0 + i, T0 + i - 1)) + encoder.flush()
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                problems.append(f"{what}: encoder raised {type(exc).__name__}: {exc}")
                encoder = None
                continue
            try:
                rows = []
                for m in messages:
                    record = kafka_record(m.value, m.key, offset=offset, headers=m.headers)
                    offset += 1
                    rows += [e for e in decoder.decode(record) if isinstance(e, DecodedRow)]
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{what}: decoder raised {type(exc).__name__}: {exc}")
                encoder = None
                continue
            expected = package.project_value(t, value_to_json(t, v), options)
            got = rows[0].after.get("c", "<absent>") if len(rows) == 1 else f"<{len(rows)} rows>"
            if not _same(got, expected):
                problems.append(f"{what}: decoded {got!r:.80}, projected {expected!r:.80}")
    return problems


@pytest.mark.parametrize("encoding", list(DEFAULT_MATRIX))
def test_every_edge_survives_each_encoding_as_projected(encoding):
    assert _roundtrip_problems(encoding, "UTC", MATRIX) == []


@pytest.mark.parametrize("encoding", list(DEFAULT_MATRIX))
def test_temporal_edges_survive_each_encoding_in_a_dst_zone(encoding):
    temporal = [t for t in MATRIX if t.base in ("date", "datetime", "timestamp", "time")]
    for tz in ("America/New_York", "Australia/Lord_Howe"):
        assert _roundtrip_problems(encoding, tz, temporal) == []
