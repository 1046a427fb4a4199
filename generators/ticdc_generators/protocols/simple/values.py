"""Column values of Simple DML messages: canonical model values rendered as TiCDC renders them.

JSON (TiCDC pkg/sink/codec/simple/message.go, encodeValue): every non-NULL value is a string,
except TIMESTAMP, which is an object {"location", "value"}; binary strings are base64; ENUM and SET
are their numeric value (1-based member index, member bitmask) in decimal; BIT is its unsigned
integer in decimal; FLOAT/DOUBLE use Go's strconv.FormatFloat(v, 'f', -1, 32/64).

Avro (same file, encodeValue4Avro; spec 004 "mysqlType 参考表格"): one branch of the value union
per mysqlType (long/float/double/string/bytes, Timestamp record, UnsignedBigint record).
"""
from __future__ import annotations

import base64
from typing import Any, Callable

from ticdc_contract.tidb_types import BINARY_TYPES, INTEGER_TYPES, STRING_TYPES, TiDBType

from ..golang.floats import format_float32, format_float64, to_float32
from .avro_schema import NAMESPACE

TIMESTAMP_RECORD = f"{NAMESPACE}.Timestamp"
UNSIGNED_BIGINT_RECORD = f"{NAMESPACE}.UnsignedBigint"

_TEXT_TO_BLOB = {"tinytext": "tinyblob", "text": "blob", "mediumtext": "mediumblob", "longtext": "longblob",
                 "char": "binary", "varchar": "varbinary"}


def has_binary_flag(t: TiDBType) -> bool:
    """TiDB sets BinaryFlag on string columns whose charset is binary (TiDB ddl processColumnFlags);
    TiCDC keys base64 / Avro bytes on that flag."""
    return t.base in BINARY_TYPES or (t.base in STRING_TYPES and t.charset == "binary")


def mysql_type(t: TiDBType) -> str:
    """TiDB types.TypeToStr(tp, charset): text types with the binary charset read as blob/binary
    (spec 004 mysqlType table); signedness is not part of the name."""
    if t.base in STRING_TYPES and t.charset == "binary":
        return _TEXT_TO_BLOB[t.base]
    return t.base


def unsigned_flag(t: TiDBType) -> bool:
    # TiDB ddl processColumnFlags: BIT always carries UnsignedFlag; YEAR gets ZerofillFlag, which implies it
    return t.unsigned or t.base in ("bit", "year")


def zerofill_flag(t: TiDBType) -> bool:
    return t.base == "year"


def enum_value(t: TiDBType, name: str) -> int:
    """TiDB's Enum.Value: the 1-based index of the member; 0 is the empty "error" member."""
    if name == "":
        return 0
    for i, member in enumerate(t.elements):
        if member == name:
            return i + 1
    folded = name.casefold()
    for i, member in enumerate(t.elements):
        if member.casefold() == folded:
            return i + 1
    raise ValueError(f"{name!r} is not a member of ENUM{t.elements}")


def set_value(t: TiDBType, names: str) -> int:
    """TiDB's Set.Value: bit i set when member i is present; members arrive joined by ","."""
    if names == "":
        return 0
    bits = 0
    for name in names.split(","):
        bits |= 1 << (enum_value(t, name) - 1)
    return bits


def as_int64(v: int) -> int:
    """Go's int64(uint64): values of 2**63 and above wrap to negative (two's complement)."""
    return v - 2**64 if v >= 2**63 else v


def json_value(t: TiDBType, v: Any, location: str) -> Any:
    return json_renderer(t, location)(v)


def json_renderer(t: TiDBType, location: str) -> Callable[[Any], Any]:
    """`json_value` of one column with the type switch settled once: message.py makes one per
    column of a table version, not per value. NULL is None."""
    base = t.base
    if base == "timestamp":
        # a Go map[string]interface{}: encoding/json writes its keys sorted
        return lambda v: None if v is None else {"location": location, "value": v}
    if base == "enum":
        return lambda v: None if v is None else str(enum_value(t, v))
    if base == "set":
        return lambda v: None if v is None else str(set_value(t, v))
    if has_binary_flag(t):
        return lambda v: None if v is None else base64.b64encode(v).decode("ascii")
    if base in INTEGER_TYPES or base in ("year", "bit"):
        return lambda v: None if v is None else str(int(v))
    if base == "float":
        return lambda v: None if v is None else format_float32(v)
    if base == "double":
        return lambda v: None if v is None else format_float64(v)
    # strings, DECIMAL, DATE, DATETIME, TIME, JSON: TiDB's own text (canonical form is the same print)
    return lambda v: None if v is None else str(v)


def avro_value(t: TiDBType, v: Any, location: str, bit_as_long: bool = False) -> tuple[str, Any]:
    """(union branch, value) for the DML data/old map, in fastavro's tuple notation."""
    return avro_renderer(t, location, bit_as_long)(v)


_AVRO_NULL = ("null", None)


def avro_branch(t: TiDBType, location: str, bit_as_long: bool = False) -> tuple[str, Callable[[Any], Any]]:
    """(union branch, conversion of a non-NULL model value) of one column: the branch of every
    value but NULL is fixed by the column type, so the Avro DML writer (avro_dml.py) can write
    its index once per table version."""
    base = t.base
    if base == "timestamp":
        return TIMESTAMP_RECORD, lambda v: {"location": location, "value": v}
    if base == "bigint" and t.unsigned:
        # TiCDC sends every BIGINT UNSIGNED as UnsignedBigint{value: int64(u64)}, a wrapped long
        return UNSIGNED_BIGINT_RECORD, lambda v: {"value": as_int64(int(v))}
    if base in INTEGER_TYPES or base == "year":
        return "long", int
    if base == "enum":
        return "long", lambda v: enum_value(t, v)
    if base == "set":
        # TiCDC casts the uint64 bitmask to int64
        return "long", lambda v: as_int64(set_value(t, v))
    if base == "bit":
        # new TiCDC: strconv.FormatUint; classic tiflow hands the uint64 to Avro as a long
        if bit_as_long:
            return "long", lambda v: as_int64(int(v))
        return "string", lambda v: str(int(v))
    if has_binary_flag(t):
        return "bytes", bytes
    if base == "float":
        return "float", to_float32
    if base == "double":
        return "double", float
    return "string", str


def avro_renderer(t: TiDBType, location: str, bit_as_long: bool = False) -> Callable[[Any], tuple[str, Any]]:
    """`avro_value` of one column with the type switch settled once, as `json_renderer`."""
    branch, convert = avro_branch(t, location, bit_as_long)
    return lambda v: _AVRO_NULL if v is None else (branch, convert(v))
