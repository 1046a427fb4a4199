"""Column values as TiCDC's Debezium codec writes them (codec.go writeDebeziumFieldValue).

Two TiCDC behaviours shape this module beyond the plain type mapping of spec 000 ("Data type
mapping"):
- a NULL is replaced by the column's DEFAULT when the column has one (both classic and new
  TiCDC do it); the default goes through TiDB's datum conversions, so some types come out
  oddly (TIME becomes 0 in new TiCDC, a TIMESTAMP default is shifted by the time zone), and a
  DATE default makes new TiCDC fail outright (it reads a string datum as a time);
- BIGINT UNSIGNED is written as an int64, so values from 2**63 wrap to negatives and the
  maximum becomes -1.
"""
from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from typing import Any, Callable

import orjson

from ...errors import ChangefeedFailure
from ..golang.floats import json_float64
from ..golang.json_text import B64, F32, memoized
from .columns import INT_CODES, STRING_CODES, ColumnView
from .temporal import (
    MIN_TIMESTAMP,
    TemporalError,
    date_days,
    datetime_epoch,
    parse_datetime,
    time_to_micros,
    zoned_timestamp,
)

_UINT64_MAX = 2**64 - 1
_INT_MAX = {
    ("tiny", False): 2**7 - 1, ("tiny", True): 2**8 - 1,
    ("short", False): 2**15 - 1, ("short", True): 2**16 - 1,
    ("int24", False): 2**23 - 1, ("int24", True): 2**24 - 1,
    ("long", False): 2**31 - 1, ("long", True): 2**32 - 1,
    ("longlong", False): 2**63 - 1, ("longlong", True): 2**64 - 1,
}
_INT_MIN = {"tiny": -(2**7), "short": -(2**15), "int24": -(2**23), "long": -(2**31), "longlong": -(2**63)}


class EncodeFailure(ValueError, ChangefeedFailure):
    """A row TiCDC cannot encode: the changefeed stops with ErrDebeziumEncodeFailed or a panic."""


@dataclass(frozen=True)
class ValueOptions:
    time_zone: str
    # "ticdc" (new TiCDC) or "tiflow" (classic): they differ on NULL-with-default for DATE/TIME.
    profile: str = "ticdc"


def bit_bytes(n: int, v: int) -> bytes:
    """helper.go getBitFromUint64: little-endian, sized to hold n bits (Debezium's Bits)."""
    return (v & _UINT64_MAX).to_bytes(8, "little")[: (n + 7) // 8]


def _int(col: ColumnView, v: int) -> int:
    if col.unsigned:
        hi = _INT_MAX[(col.code, True)]
        if (col.code == "longlong" and v == _UINT64_MAX) or v > hi:
            return -1
        v &= _UINT64_MAX
        return v - 2**64 if v >= 2**63 else v
    if v < _INT_MIN[col.code] or v > _INT_MAX[(col.code, False)]:
        return -1
    return v


def _bit(col: ColumnView, v: int) -> Any:
    # Debezium: BIT(1) is a BOOLEAN, BIT(n>1) BYTES in little-endian order.
    if col.flen == 1:
        return v != 0
    return B64(bit_bytes(col.flen, v))


def render(col: ColumnView, value: Any, opts: ValueOptions) -> Any:
    """The JSON value for one column of one row (None = JSON null)."""
    if value is None:
        if col.default is None:
            return None
        return _render_default(col, opts)
    code = col.code
    if code == "bit":
        return _bit(col, int(value))
    if code in STRING_CODES:
        if col.binary:
            return B64(bytes(value))
        return str(value)
    if code in ("enum", "set", "json"):
        return str(value)
    if code == "newdecimal":
        return float(value)
    if code == "date":
        days = date_days(value)
        if days is None:
            return 0 if col.not_null else None
        return days
    if code == "datetime":
        epoch = datetime_epoch(value, col.decimal)
        if epoch is None:
            return 0 if col.not_null else None
        return epoch
    if code == "timestamp":
        try:
            return zoned_timestamp(value, col.decimal, opts.time_zone)
        except TemporalError as e:
            raise EncodeFailure(f"column {col.name}: {e}") from e
    if code == "duration":
        return time_to_micros(value)
    if code in INT_CODES:
        return _int(col, int(value))
    if code == "double":
        return float(value)
    if code == "float":
        return F32(float(value))
    if code == "year":
        return int(value)
    raise EncodeFailure(f"column {col.name}: no Debezium rendering for {col.base}")


def _default_text(col: ColumnView) -> str:
    d = col.default
    return d.decode("utf-8", "surrogateescape") if isinstance(d, bytes) else str(d)


def _enum_name(col: ColumnView, name: str) -> str:
    # types.ParseEnumName matches under the column collation; a miss leaves a string datum whose
    # enum value is 0, which TiCDC writes as "".
    for e in col.elems:
        if _coll_eq(col, e, name):
            return e
    return ""


def _set_name(col: ColumnView, name: str) -> str:
    # types.ParseSetName then ParseSetValue: members re-ordered by element position; any unknown
    # member makes the whole value 0 (written as "").
    if name == "":
        return ""
    picked = set()
    for part in name.split(","):
        for i, e in enumerate(col.elems):
            if _coll_eq(col, e, part):
                picked.add(i)
                break
        else:
            return ""
    return ",".join(col.elems[i] for i in sorted(picked))


def _coll_eq(col: ColumnView, a: str, b: str) -> bool:
    if col.collate.endswith("_bin") or col.collate == "binary":
        return a == b
    return a.casefold() == b.casefold()


def _render_default(col: ColumnView, opts: ValueOptions) -> Any:
    """getValueFromDefault + datum.SetValue, then the same type switch as a real value."""
    code = col.code
    d = col.default
    if code == "bit":
        raw = d if isinstance(d, bytes) else str(d).encode("utf-8")
        if len(raw) > 8:
            raise EncodeFailure(f"column {col.name}: BIT default wider than 64 bits")
        return _bit(col, int.from_bytes(raw, "big"))
    if code in STRING_CODES:
        raw = d if isinstance(d, bytes) else str(d).encode("utf-8")
        return B64(raw) if col.binary else raw
    text = _default_text(col)
    if code == "enum":
        return _enum_name(col, text)
    if code == "set":
        return _set_name(col, text)
    if code == "json":
        return text
    if code == "newdecimal":
        return float(text)
    if code == "date":
        if opts.profile == "tiflow":
            days = date_days(text)
            return (0 if col.not_null else None) if days is None else days
        # New TiCDC stores the default as a string datum and then asks it for a time value
        # (datum.GetMysqlTime), which panics: no message can be produced for this row.
        raise EncodeFailure(f"column {col.name}: new TiCDC panics on a NULL DATE with a DEFAULT")
    if code == "datetime":
        if text == "CURRENT_TIMESTAMP":
            return 0
        try:
            epoch = datetime_epoch(text, col.decimal)
        except TemporalError as e:
            raise EncodeFailure(f"column {col.name}: {e}") from e
        return (0 if col.not_null else None) if epoch is None else epoch
    if code == "timestamp":
        if text == "CURRENT_TIMESTAMP":
            return "1970-01-01T00:00:00Z" if col.not_null else None
        if parse_datetime(text).as_tuple() < MIN_TIMESTAMP:
            return None
        # The default is stored in UTC but read back as a wall clock of the changefeed time
        # zone, so it comes out shifted by the zone's offset (TiCDC behaviour, kept as is).
        try:
            return zoned_timestamp(text, col.decimal, opts.time_zone)
        except TemporalError as e:
            raise EncodeFailure(f"column {col.name}: {e}") from e
    if code == "duration":
        if opts.profile == "tiflow":
            return time_to_micros(text)
        # A string datum read as a Duration yields its zero integer part: 0 µs.
        return 0
    if code in INT_CODES or code == "year":
        try:
            v = int(text)
        except ValueError:
            v = 0
        if not -(2**63) <= v < 2**63:
            # strconv.ParseInt fails, the string datum's integer part is 0.
            v = 0
        return int(v) if code == "year" else _int(col, v)
    if code == "double":
        return float(text)
    if code == "float":
        return F32(float(text))
    raise EncodeFailure(f"column {col.name}: no Debezium rendering for {col.base}")



def fast_renderer(col: ColumnView, opts: ValueOptions, leaf: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`leaf(render(col, value, opts))` for one column, the type switch settled once: what the
    fast path hands orjson (json_text.orjson_leaf). A NULL goes through `render`, which renders the
    column's DEFAULT (and fails the row as TiCDC does) on every row as before."""
    code = col.code

    def generic(value: Any) -> Any:
        return leaf(render(col, value, opts))

    if col.default is not None:
        return generic
    if code in STRING_CODES:
        if col.binary:
            # B64: a Go []byte, standard base64 with padding, which no writer escapes
            return lambda v: None if v is None else base64.b64encode(bytes(v)).decode("ascii")
        return lambda v: None if v is None else leaf(str(v))
    if code == "newdecimal" or code == "double":
        fragment = orjson.Fragment

        def float_value(v: Any) -> Any:
            if v is None:
                return None
            x = float(v)
            # orjson writes a float's shortest digits (repr's) in the 'f' form at least for
            # 1e-4 <= |x| < 1e16, as json-iterator does, but for a whole number's ".0"; every other
            # float goes in as the reference writer's bytes
            if 1e-4 <= abs(x) < 1e16 and not x.is_integer():
                return x
            return fragment(json_float64(x).encode("ascii"))

        return float_value
    if code == "datetime":
        return _datetime_renderer(col.decimal, col.not_null)
    if code in INT_CODES:
        return _int_renderer(col)
    return generic


@functools.lru_cache(maxsize=None)
def _datetime_renderer(decimal: int, not_null: bool) -> Callable[[Any], Any]:
    """A DATETIME column's epoch, shared by the columns of one fraction and nullability, kept per
    value (json_text.memoized): parsing TiDB's print is most of a DATETIME value's cost, and a row's
    later events (an UPDATE's two images, a DELETE) write the same values again."""

    def datetime_value(v: Any) -> Any:
        if v is None:
            return None
        epoch = datetime_epoch(v, decimal)
        if epoch is None:
            return 0 if not_null else None
        return epoch

    return memoized(datetime_value)


def _int_renderer(col: ColumnView) -> Callable[[Any], Any]:
    """`_int(col, int(v))` with the column's bounds looked up once: -1 outside the column's range,
    an unsigned value as the int64 of its bits (tests/generators/protocols/test_fast_paths.py)."""
    if not col.unsigned:
        lo, hi = _INT_MIN[col.code], _INT_MAX[(col.code, False)]

        def signed(v: Any) -> Any:
            if v is None:
                return None
            v = int(v)
            return v if lo <= v <= hi else -1

        return signed
    # _int also refuses BIGINT UNSIGNED's maximum
    limit = _INT_MAX[(col.code, True)] - (col.code == "longlong")

    def unsigned(v: Any) -> Any:
        if v is None:
            return None
        v = int(v)
        if v > limit:
            return -1
        v &= _UINT64_MAX
        return v - 2**64 if v >= 2**63 else v

    return unsigned
