"""One column value on the wire -> its canonical JSON form (docs/architecture.md).

With the schema, the column descriptor (type, Debezium semantic name, tidb_type) tells how the
value was encoded (spec 000, "Data type mapping"; TiCDC codec.go writeDebeziumFieldValue).
Without it (debezium-disable-schema) only the JSON value is known and passes through as is:
a consumer cannot tell epoch days from an integer or base64 from text, which the fidelity
projection accounts for. The one inference left is JSON booleans: only BIT(1) produces them.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any, Callable, Optional

import orjson

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.common.wire import is_json_int as _is_int

from . import temporal
from .message import FieldSpec
from .options import DebeziumOptions

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
# tidb_type spellings of binary-charset string columns (TiDB types.TypeToStr with charset
# "binary", which TiCDC helper.go getTiDBType uses). Their values are base64 (spec 000:
# "when the column has the BINARY flag, TiCDC encodes it as a String type after encoding it in
# Base64").
BINARY_TIDB_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
# Debezium's temporal types carried by an integer (already within its column's range) -> TiDB's print.
# Keyed by a field's semantic type, which a field may lack (None: no entry).
INT_TEMPORALS: dict[Optional[str], Callable[[int], str]] = {
    "io.debezium.time.Date": temporal.days_to_text,
    "io.debezium.time.Timestamp": lambda v: temporal.epoch_to_text(v, 1000, 3),
    "io.debezium.time.MicroTimestamp": lambda v: temporal.epoch_to_text(v, 1, 6),
    "io.debezium.time.MicroTime": temporal.micros_to_time_text,
}


def _b64(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise Malformed(f"{where}: expected a base64 string, got {type(text).__name__}")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise Malformed(f"{where}: invalid base64") from None


def decode_untyped(raw: Any, where: str) -> Any:
    """A value without schema: scalars pass through; true/false can only be BIT(1)."""
    if raw is None or isinstance(raw, (int, float, str)) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, bool):
        # TiCDC codec.go (TypeBit): BIT(1) is a JSON boolean; nothing else is.
        return int(raw)
    raise Malformed(f"{where}: a column value must be a scalar, got {type(raw).__name__}")


def decode_typed(spec: FieldSpec, raw: Any, opts: DebeziumOptions, where: str) -> Any:
    where = f"{where}.{spec.column}"
    if raw is None:
        if not spec.optional:
            raise Malformed(f"{where}: null in a non-optional column")
        return None
    t = spec.type
    if t in INT_RANGES:
        return _decode_int(spec, raw, where)
    if t in ("float", "double"):
        if not isinstance(raw, (int, float)) or isinstance(raw, bool):
            raise Malformed(f"{where}: expected a number for {t}, got {type(raw).__name__}")
        # Go's encoder prints integral floats without a fraction ("5"), which parses as an int.
        return float(raw)
    if t == "boolean":
        if not isinstance(raw, bool):
            raise Malformed(f"{where}: expected a boolean, got {type(raw).__name__}")
        return int(raw)  # BIT(1) (TiCDC codec.go, TypeBit n == 1)
    if t == "bytes":
        data = _b64(raw, where)
        if spec.semantic == "io.debezium.data.Bits":
            return _decode_bits(spec, data, where)
        return base64.b64encode(data).decode("ascii")
    # t == "string"
    if not isinstance(raw, str):
        raise Malformed(f"{where}: expected a string, got {type(raw).__name__}")
    if spec.semantic == "io.debezium.time.ZonedTimestamp":
        return temporal.zoned_to_text(raw, opts.time_zone)
    if spec.semantic == "io.debezium.data.Json":
        try:
            orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise Malformed(f"{where}: Json column holds no JSON document") from None
        return raw
    if spec.tidb_type in BINARY_TIDB_TYPES:
        # Re-encoding normalises the rare non-canonical padding bits to the canonical base64.
        return base64.b64encode(_b64(raw, where)).decode("ascii")
    return raw


def _decode_int(spec: FieldSpec, raw: Any, where: str) -> Any:
    if not _is_int(raw):
        raise Malformed(f"{where}: expected an integer for {spec.type}, got {type(raw).__name__}")
    lo, hi = INT_RANGES[spec.type]
    if not lo <= raw <= hi:
        raise Malformed(f"{where}: {raw} does not fit {spec.type}")
    convert = INT_TEMPORALS.get(spec.semantic)
    if convert is not None:
        return convert(raw)
    if raw < 0 and spec.type == "int64" and spec.tidb_type == "bigint unsigned":
        # TiCDC codec.go: an unsigned BIGINT goes out as int64(v), so values above 2**63-1
        # arrive negative; the extension's tidb_type says to undo the wrap.
        return raw + 2**64
    return raw


def _decode_bits(spec: FieldSpec, data: bytes, where: str) -> int:
    # Debezium: "The byte[] contains the bits in little-endian form and is sized to contain the
    # specified number of bits" (quoted in TiCDC codec.go, TypeBit).
    if spec.bits is not None and len(data) != (spec.bits + 7) // 8:
        raise Malformed(f"{where}: BIT({spec.bits}) needs {(spec.bits + 7) // 8} bytes, got {len(data)}")
    if len(data) > 8:
        raise Malformed(f"{where}: BIT value longer than 64 bits")
    value = int.from_bytes(data, "little")
    if spec.bits is not None and value >> spec.bits:
        raise Malformed(f"{where}: value {value} does not fit BIT({spec.bits})")
    return value


def decode_value(spec: Optional[FieldSpec], raw: Any, opts: DebeziumOptions, where: str) -> Any:
    if spec is None:
        return decode_untyped(raw, where)
    return decode_typed(spec, raw, opts, where)
