"""What TiCDC puts on the wire for one column: its schema descriptor and its JSON value.

This replays TiCDC's Debezium encoder for a TiDB type (TiCDC pkg/sink/codec/debezium/codec.go:
writeDebeziumFieldSchema, writeDebeziumFieldValue; helper.go: getTiDBType, getBitFromUint64)
so the fidelity projection is "decode(encode(value))" with the decoder's own value decoding.
Values are the canonical JSON form (ticdc_contract.canonical.value_to_json).
"""
from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any, Callable, Optional

from ticdc_conformance.protocols.common.floats import float32_as_read
from ticdc_conformance.protocols.debezium import temporal
from ticdc_conformance.protocols.debezium.options import DebeziumOptions
from ticdc_contract.tidb_types import TiDBType

from .message import FieldSpec

_SEMANTIC = {
    "date": ("int32", "io.debezium.time.Date"),
    "timestamp": ("string", "io.debezium.time.ZonedTimestamp"),
    "time": ("int64", "io.debezium.time.MicroTime"),
    "year": ("int32", "io.debezium.time.Year"),
    "enum": ("string", "io.debezium.data.Enum"),
    "set": ("string", "io.debezium.data.EnumSet"),
    "json": ("string", "io.debezium.data.Json"),
}


def tidb_type_of(t: TiDBType) -> str:
    """TiCDC helper.go getTiDBType: TiDB's type name (binary charset turns text into blob,
    char into binary), plus " unsigned" except for YEAR, BIT, CHAR, VARCHAR and DECIMAL."""
    name = t.base
    if t.unsigned and name not in ("year", "bit", "char", "varchar", "decimal", "binary", "varbinary"):
        name += " unsigned"
    return name


def field_spec(t: TiDBType, opts: DebeziumOptions, column: str = "c") -> FieldSpec:
    """The descriptor TiCDC writes for a column of type t (nullability aside: always optional)."""
    base = t.base
    if base == "bit":
        n = t.effective_flen
        ftype, name, bits = ("boolean", None, None) if n == 1 else ("bytes", "io.debezium.data.Bits", n)
    elif base == "datetime":
        ftype, bits = "int64", None
        name = "io.debezium.time.Timestamp" if t.fsp <= 3 else "io.debezium.time.MicroTimestamp"
    elif base in _SEMANTIC:
        (ftype, name), bits = _SEMANTIC[base], None
    else:
        ftype, name, bits = _plain_type(t), None, None
    return FieldSpec(column, ftype, name, True, bits, tidb_type_of(t) if opts.tidb_extension else None)


def _plain_type(t: TiDBType) -> str:
    base = t.base
    if base == "tinyint":
        return "int16"
    if base == "smallint":
        return "int32" if t.unsigned else "int16"
    if base == "mediumint":
        return "int32"
    if base == "int":
        return "int64" if t.unsigned else "int32"
    if base == "bigint":
        return "int64"
    if base == "float":
        return "float"
    if base in ("double", "decimal"):  # spec 000: DECIMAL travels as float64
        return "double"
    return "string"  # CHAR/VARCHAR/TEXT and BINARY/VARBINARY/BLOB alike


def go_json_float(value: float, bits: int) -> Any:
    """The number a JSON parser reads back from Go's shortest float printing (jsoniter
    WriteFloat32/WriteFloat64: strconv 'f' format, -1 precision, 'e' from 1e21 up): integral
    values come out without a fraction, as the shortest digits padded with zeros
    (1.059648641111153e18 prints 1059648641111153000), and parse as that integer, within 64 bits:
    a parser with 64-bit integers (orjson, which the decoder uses) reads a longer one as a double."""
    if bits == 32:
        value = float32_as_read(value)
    if value == 0:
        return 0
    if 1e-6 <= abs(value) < 1e21 and value.is_integer():
        printed = int(Decimal(repr(value)))  # repr: the shortest digits that read back, as Go's -1 precision
        if -2**63 <= printed < 2**64:
            return printed
    return value


def wire_value(t: TiDBType, v: Any, opts: DebeziumOptions) -> Any:
    """The JSON value TiCDC writes for canonical value v of a column of type t."""
    return None if v is None else value_writer(t, opts)(v)


def value_writer(t: TiDBType, opts: DebeziumOptions) -> Callable[[Any], Any]:
    """`wire_value` of a non-NULL value of a column of type t, the choice by type made once."""
    base = t.base
    if base == "bit":
        n = t.effective_flen
        if n == 1:
            return lambda v: v != 0
        width = (n + 7) // 8
        return lambda v: base64.b64encode(int(v).to_bytes(8, "little")[:width]).decode("ascii")
    if t.is_integer:
        # TiCDC codec.go: unsigned values go out as int64(v); only BIGINT can exceed int64.
        return lambda v: v - 2**64 if v > 2**63 - 1 else v
    if base == "float":
        return lambda v: go_json_float(float(v), 32)
    if base in ("double", "decimal"):  # DECIMAL: MyDecimal.ToFloat64, a correctly rounded parse
        return lambda v: go_json_float(float(v), 64)
    if base == "date":
        return temporal.date_text_to_days
    if base == "datetime":
        fsp = t.fsp
        return lambda v: temporal.datetime_text_to_epoch(v, fsp)
    if base == "timestamp":
        fsp, zone = t.fsp, opts.time_zone
        return lambda v: temporal.timestamp_text_to_zoned(v, fsp, zone)
    if base == "time":
        return temporal.time_text_to_micros
    # YEAR (int), ENUM/SET names, JSON text, strings, and binary columns, whose canonical form
    # is already the base64 TiCDC writes (spec 000: binary flag -> Base64 string).
    return _as_is


def _as_is(v: Any) -> Any:
    return v


def spec_or_none(t: TiDBType, opts: DebeziumOptions) -> Optional[FieldSpec]:
    return None if opts.disable_schema else field_spec(t, opts)
