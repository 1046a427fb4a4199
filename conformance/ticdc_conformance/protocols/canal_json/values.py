"""One Canal-JSON column value (a JSON string or null) -> its canonical JSON value.

Every value travels as text (spec 003: "data ... records the name of each column and its data value";
TiCDC pkg/sink/codec/canal/helper.go formatColumnValue prints each datum to a string). How to read the
text depends on the column's mysqlType:
- integers, YEAR and BIT are decimal integers (BIT as its unsigned value), read exactly up to 2**64-1;
- FLOAT/DOUBLE are Go's shortest 'f' rendering of the float32/float64, read as a number;
- DECIMAL, temporal types, JSON and text columns are TiDB's own print, kept as the string;
- binary columns (binary, varbinary, *blob) carry one character per byte, the ISO-8859-1 code point
  of that byte (spec 003, "Binary and Blob types"), turned back into bytes and then base64;
- ENUM is the 1-based member index and SET the member bitmask (helper.go prints Enum.Value and
  Set.Value); the names are recovered only when content-compatible spells out the members.
Text that cannot be a value of the column's type is a malformed record.
"""
from __future__ import annotations

import base64
import re
from typing import Any, Callable

import orjson

from ticdc_generators.types import INTEGER_TYPES, TiDBType

from ..common import Malformed
from .mysql_type import MySQLType

_SIGNED = re.compile(r"-?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")
# Go's strconv.FormatFloat(f, 'f', -1, n) never writes an exponent; other Canal producers may.
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.([0-9]+))?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.([0-9]{1,6}))?")
# TiDB's TIME range is -838:59:59 .. 838:59:59, so the hour takes two or three digits.
_TIME = re.compile(r"-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(?:\.([0-9]{1,6}))?")
_YEAR = re.compile(r"[0-9]{1,4}")
_UINT64_MAX = 2**64 - 1
# Longest text of an in-range 64-bit integer: 20 digits plus a sign.
_MAX_INT_TEXT = 21
# DECIMAL holds at most 65 digits; with a sign, a point and a leading "0." that prints in 68 characters.
_MAX_DECIMAL_TEXT = 68
_INT_RANGES = {(base, unsigned): TiDBType(base, unsigned=unsigned).int_range
               for base in INTEGER_TYPES for unsigned in (False, True)}


def decode_value(name: str, mtype: MySQLType, raw: Any) -> Any:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise Malformed(f"column {name!r}: value must be a JSON string or null, got {type(raw).__name__}")
    reader = _READERS.get(mtype.base)
    if reader is None:
        reader = _binary if mtype.is_binary else _text
    return reader(name, mtype, raw)


def _mismatch(name: str, mtype: MySQLType, raw: str, why: str = "") -> Malformed:
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    return Malformed(f"column {name!r}: {shown!r} is not a {mtype.base} value{': ' + why if why else ''}")


def _unsigned_text(name: str, mtype: MySQLType, raw: str, limit: int = _UINT64_MAX) -> int:
    if len(raw) > _MAX_INT_TEXT or not _UNSIGNED.fullmatch(raw):
        raise _mismatch(name, mtype, raw)
    value = int(raw)
    if value > limit:
        raise _mismatch(name, mtype, raw, f"above {limit}")
    return value


def _integer(name: str, mtype: MySQLType, raw: str) -> int:
    if len(raw) > _MAX_INT_TEXT or not _SIGNED.fullmatch(raw):
        raise _mismatch(name, mtype, raw)
    value = int(raw)
    low, high = _INT_RANGES[(mtype.base, mtype.unsigned)]
    if not low <= value <= high:
        raise _mismatch(name, mtype, raw, f"outside [{low}, {high}]")
    return value


def _float(name: str, mtype: MySQLType, raw: str) -> float:
    if len(raw) > 400 or not _FLOAT.fullmatch(raw):
        raise _mismatch(name, mtype, raw)
    value = float(raw)
    if value in (float("inf"), float("-inf")):
        raise _mismatch(name, mtype, raw, "not finite")
    return value


def _decimal(name: str, mtype: MySQLType, raw: str) -> str:
    m = _DECIMAL.fullmatch(raw) if len(raw) <= _MAX_DECIMAL_TEXT else None
    if m is None:
        raise _mismatch(name, mtype, raw)
    scale = mtype.decimal_scale
    # TiDB prints a DECIMAL with exactly the column's scale, so a full mysqlType pins the digit count.
    if scale is not None and len(m.group(1) or "") != scale:
        raise _mismatch(name, mtype, raw, f"the column's scale is {scale}")
    return raw


def _temporal(pattern: re.Pattern) -> Callable[[str, MySQLType, str], str]:
    def read(name: str, mtype: MySQLType, raw: str) -> str:
        m = pattern.fullmatch(raw)
        if m is None:
            raise _mismatch(name, mtype, raw)
        fsp = mtype.fsp
        if fsp is not None and m.groups() and len(m.group(1) or "") != fsp:
            raise _mismatch(name, mtype, raw, f"the column's fsp is {fsp}")
        return raw
    return read


def _year(name: str, mtype: MySQLType, raw: str) -> int:
    if not _YEAR.fullmatch(raw) or int(raw) > 2155:
        raise _mismatch(name, mtype, raw)
    return int(raw)


def _bit(name: str, mtype: MySQLType, raw: str) -> int:
    width = mtype.bit_width
    if width is not None and not 1 <= width <= 64:
        raise Malformed(f"column {name!r}: BIT width {width} outside TiDB's 1..64")
    return _unsigned_text(name, mtype, raw, _UINT64_MAX if width is None else 2**width - 1)


def _enum(name: str, mtype: MySQLType, raw: str) -> Any:
    if mtype.elements is None:
        return _unsigned_text(name, mtype, raw)
    index = _unsigned_text(name, mtype, raw, len(mtype.elements))
    # Index 0 is the empty "error" member MySQL stores for an invalid value in non-strict mode.
    return "" if index == 0 else mtype.elements[index - 1]


def _set(name: str, mtype: MySQLType, raw: str) -> Any:
    if mtype.elements is None:
        return _unsigned_text(name, mtype, raw)
    mask = _unsigned_text(name, mtype, raw, 2 ** len(mtype.elements) - 1)
    return ",".join(e for i, e in enumerate(mtype.elements) if mask >> i & 1)


def _json(name: str, mtype: MySQLType, raw: str) -> str:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _mismatch(name, mtype, raw) from None
    return raw


def _text(name: str, mtype: MySQLType, raw: str) -> str:
    return raw


def _binary(name: str, mtype: MySQLType, raw: str) -> str:
    try:
        data = raw.encode("latin-1")
    except UnicodeEncodeError as e:
        raise _mismatch(name, mtype, raw, f"character U+{ord(raw[e.start]):04X} is not a byte (above 255)") from None
    return base64.b64encode(data).decode("ascii")


_READERS: dict[str, Callable[[str, MySQLType, str], Any]] = {
    **{base: _integer for base in INTEGER_TYPES},
    "float": _float, "double": _float, "decimal": _decimal,
    "date": _temporal(_DATE), "datetime": _temporal(_DATETIME), "timestamp": _temporal(_DATETIME),
    "time": _temporal(_TIME),
    "year": _year, "bit": _bit, "enum": _enum, "set": _set, "json": _json,
}
