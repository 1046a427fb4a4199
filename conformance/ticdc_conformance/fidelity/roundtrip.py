"""One column's values through a real encoder and the reference decoder, for the fidelity matrix.

Each value becomes an INSERT of a two-column table (`id INT PRIMARY KEY`, `c` of the type under
test) at its own commit ts; the encoder of the simulated TiCDC writes the messages (after a
BOOTSTRAP where the protocol needs one) and the protocol's reference decoder reads them back, in
offset order, as a consumer of the partition would. What the decoder gives for `c` is what a
perfect consumer of that encoding can know of the value: the fidelity matrix claims it, and
tests/conformance/fidelity/test_fidelity_roundtrip.py holds the claim against it.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols import protocol
from ticdc_contract.canonical import value_to_json
from ticdc_contract.model import Column, Index, Op, RowChange, TableSchema
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tidb_types import TiDBType
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, RowEvent

# A fixed commit ts (2026-01-01 in TSO form): the values, not the clock, are under test.
BASE_TS = 1_767_225_600_000 << 18
TOPIC = "fidelity"
COLUMN = "c"


class _Absent:
    """The decoded row does not carry the column at all."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


def probe_table(t: TiDBType) -> TableSchema:
    return TableSchema(schema="fidelity", table="probe", table_id=100, schema_version=BASE_TS - 100,
                       pk_is_handle=True,
                       columns=(Column("id", TiDBType("int"), nullable=False, column_id=1),
                                Column(COLUMN, t, nullable=True, column_id=2)),
                       indexes=(Index("PRIMARY", ("id",), primary=True, unique=True),))


class RoundTripError(RuntimeError):
    """The encoder or the decoder failed on a value TiDB can store; names the value and the record."""


def round_trip(config: SinkConfig, t: TiDBType, values: Iterable[Any]) -> list[Any]:
    """What the reference decoder reads back for each value (canonical Python form in, canonical
    JSON form out), ABSENT where the decoded row lacks the column."""
    module = encoder_module(config.protocol)
    spec = protocol(config.protocol)
    table = probe_table(t)
    encoder = module.new_encoder(config, TOPIC, 0)
    decoder = spec.new_decoder(config.ticdc_options())
    pending = encoder.encode(BootstrapEvent(table)) if module.uses_bootstrap else []
    offset = 0
    out = []
    for i, value in enumerate(values):
        change = RowChange(table, Op.INSERT, None, {"id": i, COLUMN: value})
        try:
            pending += encoder.encode(RowEvent(change, BASE_TS + 2 * i, BASE_TS + 2 * i - 1)) + encoder.flush()
        except Exception as exc:  # noqa: BLE001 - any encoder failure is named with its value
            raise RoundTripError(f"{config.encoding} encoder failed on {t.sql()} value {value!r}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        rows = []
        for message in pending:
            record = KafkaRecord(TOPIC, 0, offset, message.key, message.value, 0, message.headers)
            try:
                rows += [e for e in decoder.decode(record) if isinstance(e, DecodedRow)]
            except Exception as exc:  # noqa: BLE001
                raise RoundTripError(f"{config.encoding} decoder failed on {record.coordinates} ({t.sql()} value "
                                     f"{value!r}): {type(exc).__name__}: {exc}") from exc
            offset += 1
        pending = []
        if len(rows) != 1:
            raise RoundTripError(f"{config.encoding}: {t.sql()} value {value!r} decoded into {len(rows)} row events")
        out.append(rows[0].after.get(COLUMN, ABSENT) if rows[0].after is not None else ABSENT)
    return out


def canonical(t: TiDBType, value: Any) -> Any:
    """A value in the canonical JSON form the decoders output (binary as base64)."""
    return value_to_json(t, value)


def same_value(a: Any, b: Any) -> bool:
    """Equal as canonical JSON values: numbers by exact value (1 and 1.0 alike, 2**63 and
    9223372036854776000 not; -0.0 and 0.0 not), booleans only with booleans, strings and null
    as themselves."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, numbers) or isinstance(b, numbers):
        return False
    return type(a) is type(b) and a == b
