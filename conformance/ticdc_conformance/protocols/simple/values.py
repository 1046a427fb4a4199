"""Column values: the JSON or Avro wire value of one column -> its canonical JSON value.

The wire form per mysqlType is spec 004's "mysqlType 参考表格"; what TiCDC actually writes is
TiCDC pkg/sink/codec/simple/message.go: encodeValue (JSON: every value a string, TIMESTAMP an object,
binary base64) and encodeValue4Avro (typed union branches). The canonical form is docs/architecture.md.
"""
from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any, Callable

from ticdc_conformance.protocols.common.floats import float32_as_read
from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.common.wire import is_json_int as _is_int

from .message import ColumnInfo
from .temporal import render_timestamp

# TiCDC prints integers with strconv (message.go encodeValue): digits after an optional minus sign; a
# 64-bit value needs at most 20 digits and the sign, so longer text is not an integer of any column.
INT_RE = re.compile(r"-?[0-9]+\Z", re.ASCII)
INT_CHARS = 21
FLOAT_RE = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z", re.ASCII)
DECIMAL_RE = re.compile(r"-?[0-9]+(\.[0-9]+)?\Z", re.ASCII)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z", re.ASCII)
_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?\Z", re.ASCII)
_TIME_RE = re.compile(r"-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?\Z", re.ASCII)
TEMPORAL_RE = {"date": _DATE_RE, "datetime": _DATETIME_RE, "time": _TIME_RE}

_TIMESTAMP_RECORD = "com.pingcap.simple.avro.Timestamp"
_UNSIGNED_BIGINT_RECORD = "com.pingcap.simple.avro.UnsignedBigint"
_U64_MASK = 2**64 - 1


def float32_shortest(x: float) -> float:
    """The float32 nearest x, as the float64 of its shortest round-tripping decimal.

    TiCDC prints FLOAT with strconv.FormatFloat(v, 'f', -1, 32) (message.go encodeValue): the shortest
    digits that read back as the same float32. Avro's `float` branch carries the float32 itself; both
    end up as the same number here.
    """
    f = float32_as_read(x)
    if not math.isfinite(f):
        raise Malformed(f"FLOAT value {x!r} is outside the float32 range")
    return f


def _mismatch(raw: Any, expected: str) -> Malformed:
    shown = repr(raw) if len(repr(raw)) <= 80 else repr(raw)[:77] + "..."
    return Malformed(f"expected {expected}, got {shown}")


def _check_int(col: ColumnInfo, v: int) -> int:
    lo, hi = col.int_range
    if not lo <= v <= hi:
        raise _mismatch(v, f"an integer in [{lo}, {hi}]")
    return v


def _enum_name(col: ColumnInfo, v: int) -> str:
    # MySQL's enum value is the 1-based element index; 0 is the "" error value.
    if v == 0:
        return ""
    if not 1 <= v <= len(col.elements):
        raise _mismatch(v, f"an enum index in [0, {len(col.elements)}]")
    return col.elements[v - 1]


def _set_names(col: ColumnInfo, v: int) -> str:
    # MySQL's set value is a bitmask over the elements; TiDB prints members in element order.
    if v < 0 or v >> len(col.elements):
        raise _mismatch(v, f"a set bitmask over {len(col.elements)} elements")
    return ",".join(e for i, e in enumerate(col.elements) if v >> i & 1)


def _bit(col: ColumnInfo, v: int) -> int:
    width = col.length if 0 < col.length <= 64 else 64
    if not 0 <= v < 1 << width:
        raise _mismatch(v, f"a BIT({width}) value")
    return v


def _year(col: ColumnInfo, v: int) -> int:
    # TiDB's YEAR holds 0 or 1901..2155.
    if v != 0 and not 1901 <= v <= 2155:
        raise _mismatch(v, "a YEAR in 0 or [1901, 2155]")
    return v


def _int_text(col: ColumnInfo, raw: Any) -> int:
    if not isinstance(raw, str) or len(raw) > INT_CHARS or not INT_RE.match(raw):
        raise _mismatch(raw, "a decimal integer string")
    return int(raw)


def _timestamp(col: ColumnInfo, location: Any, value: Any, target_tz: str) -> str:
    if not isinstance(location, str) or not isinstance(value, str):
        raise _mismatch((location, value), "a TIMESTAMP with string location and value")
    return render_timestamp(value, location, target_tz)


def _finite_double(col: ColumnInfo, v: float) -> float:
    if not math.isfinite(v):
        raise _mismatch(v, "a finite DOUBLE")
    return v


def _in_column(read: Callable[[ColumnInfo, Any, str], Any]) -> Callable[[ColumnInfo, Any, str], Any]:
    """Name the column in every value error, so a reason says which value of the row is wrong."""
    def wrapped(col: ColumnInfo, raw: Any, target_tz: str) -> Any:
        try:
            return read(col, raw, target_tz)
        except Malformed as e:
            raise Malformed(f"column {col.name!r} ({col.mysql_type}): {e.reason}") from None
    wrapped.__doc__ = read.__doc__
    return wrapped


@_in_column
def from_json(col: ColumnInfo, raw: Any, target_tz: str) -> Any:
    """JSON wire value -> canonical value. Every non-NULL value is a string except TIMESTAMP."""
    if raw is None:
        return None
    kind = col.kind
    if kind == "timestamp":
        if not isinstance(raw, dict) or set(raw) != {"location", "value"}:
            raise _mismatch(raw, 'an object {"location", "value"}')
        return _timestamp(col, raw["location"], raw["value"], target_tz)
    if not isinstance(raw, str):
        raise _mismatch(raw, "a string")
    if kind == "integer":
        return _check_int(col, _int_text(col, raw))
    if kind in ("float", "double"):
        if not FLOAT_RE.match(raw):
            raise _mismatch(raw, "a decimal floating-point string")
        v = float(raw)
        return float32_shortest(v) if kind == "float" else _finite_double(col, v)
    if kind == "decimal":
        if not DECIMAL_RE.match(raw):
            raise _mismatch(raw, "a DECIMAL string")
        return raw
    if kind == "binary":
        try:
            data = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise _mismatch(raw, "standard base64") from None
        return base64.b64encode(data).decode("ascii")
    if kind in TEMPORAL_RE:
        if not TEMPORAL_RE[kind].match(raw):
            raise _mismatch(raw, f"a {col.mysql_type.upper()} string")
        return raw
    if kind == "year":
        return _year(col, _int_text(col, raw))
    if kind == "enum":
        return _enum_name(col, _int_text(col, raw))
    if kind == "set":
        return _set_names(col, _int_text(col, raw))
    if kind == "bit":
        return _bit(col, _int_text(col, raw))
    return raw  # text, json: the string itself


def _record(raw: Any, name: str) -> dict | None:
    """The fields of a named Avro record branch (fastavro returns (name, fields) with return_record_name)."""
    if isinstance(raw, tuple) and len(raw) == 2 and raw[0] == name and isinstance(raw[1], dict):
        return raw[1]
    return None


def _avro_long(col: ColumnInfo, raw: Any, check: Callable[[ColumnInfo, int], Any]) -> Any:
    if not _is_int(raw):
        raise _mismatch(raw, "an Avro long")
    return check(col, raw)


@_in_column
def from_avro(col: ColumnInfo, raw: Any, target_tz: str) -> Any:
    """Avro union value -> canonical value, per the "Avro Type (Java)" column of spec 004's table."""
    if raw is None:
        return None
    kind = col.kind
    if kind == "integer":
        if col.mysql_type == "bigint" and col.unsigned:
            # TiCDC encodeValue4Avro wraps BIGINT UNSIGNED in UnsignedBigint{value: int64(u)}; spec 004's
            # table also allows a plain long below 2^63 and a string above.
            rec = _record(raw, _UNSIGNED_BIGINT_RECORD)
            if rec is not None and _is_int(rec.get("value")):
                return rec["value"] & _U64_MASK
            if isinstance(raw, str):
                return _check_int(col, _int_text(col, raw))
        return _avro_long(col, raw, _check_int)
    if kind in ("float", "double"):
        if not isinstance(raw, float):
            raise _mismatch(raw, "an Avro float or double")
        return float32_shortest(raw) if kind == "float" else _finite_double(col, raw)
    if kind == "timestamp":
        rec = _record(raw, _TIMESTAMP_RECORD)
        if rec is None:
            raise _mismatch(raw, "a com.pingcap.simple.avro.Timestamp record")
        return _timestamp(col, rec.get("location"), rec.get("value"), target_tz)
    if kind == "binary":
        if not isinstance(raw, bytes):
            raise _mismatch(raw, "Avro bytes")
        return base64.b64encode(raw).decode("ascii")
    if kind == "year":
        return _avro_long(col, raw, _year)
    if kind == "enum":
        return _avro_long(col, raw, _enum_name)
    # SET bitmasks and BIT values are uint64s; classic TiCDC (tiflow message.go encodeValue4Avro) writes
    # them as int64(v), so a negative long stands for a value at or above 2^63.
    if kind == "set":
        return _avro_long(col, raw, lambda c, v: _set_names(c, v & _U64_MASK))
    if kind == "bit":
        # Spec 004 says long; new TiCDC's encodeValue4Avro writes strconv.FormatUint as a string.
        if isinstance(raw, str):
            return _bit(col, _int_text(col, raw))
        return _avro_long(col, raw, lambda c, v: _bit(c, v & _U64_MASK))
    if not isinstance(raw, str):
        raise _mismatch(raw, "an Avro string")
    if kind == "decimal" and not DECIMAL_RE.match(raw):
        raise _mismatch(raw, "a DECIMAL string")
    if kind in TEMPORAL_RE and not TEMPORAL_RE[kind].match(raw):
        raise _mismatch(raw, f"a {col.mysql_type.upper()} string")
    return raw  # decimal, text, date, datetime, time, json
