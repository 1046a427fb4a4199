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

Each type's reading is a factory taking the column (name and mysqlType) and returning the reader of
its text: a decoder that sees the same table many times builds the readers once per table version
(_fast/plans.py) instead of dispatching on the type for every value.
"""
from __future__ import annotations

import re
from binascii import b2a_base64
from dataclasses import dataclass
from typing import Any, Callable, Optional

import orjson

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_contract.tidb_types import INTEGER_TYPES, TiDBType

from .mysql_type import MySQLType

_INTEGER = re.compile(r"-?[0-9]+")  # ASCII digits only: int() would also read other scripts' digits
# Go's strconv.FormatFloat(f, 'f', -1, n) never writes an exponent; other Canal producers may.
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.([0-9]+))?")
_DATE_TEXT = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_DATETIME_TEXT = _DATE_TEXT + " [0-9]{2}:[0-9]{2}:[0-9]{2}"
# TiDB's TIME range is -838:59:59 .. 838:59:59, so the hour takes two or three digits.
_TIME_TEXT = "-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}"
_MAX_FSP = 6
_FRACTION = rf"(?:\.([0-9]{{1,{_MAX_FSP}}}))?"
_DATE = re.compile(_DATE_TEXT)
_DATETIME = re.compile(_DATETIME_TEXT + _FRACTION)
_TIME = re.compile(_TIME_TEXT + _FRACTION)
_YEAR = re.compile(r"[0-9]{1,4}")
_UINT64_MAX = 2**64 - 1
# Longest text of an in-range 64-bit integer: 20 digits plus a sign.
_MAX_INT_TEXT = 21
# DECIMAL holds at most 65 digits; with a sign, a point and a leading "0." that prints in 68 characters.
_MAX_DECIMAL_TEXT = 68
_INT_RANGES = {(base, unsigned): TiDBType(base, unsigned=unsigned).int_range
               for base in INTEGER_TYPES for unsigned in (False, True)}


Reader = Callable[[str], Any]


def decode_value(name: str, mtype: MySQLType, raw: Any) -> Any:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise Malformed(f"column {name!r}: value must be a JSON string or null, got {type(raw).__name__}")
    read = value_reader(name, mtype)
    return raw if read is None else read(raw)


def value_reader(name: str, mtype: MySQLType) -> Optional[Reader]:
    """The reader of a non-null text value of column `name`; None when the text is the value itself.

    A reader returns the canonical value or raises Malformed naming the column."""
    factory = _READERS.get(mtype.base)
    if factory is None:
        return _binary(name, mtype) if mtype.is_binary else None
    return factory(name, mtype)


def _mismatch(name: str, mtype: MySQLType, raw: str, why: str = "") -> Malformed:
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    return Malformed(f"column {name!r}: {shown!r} is not a {mtype.base} value{': ' + why if why else ''}")


def _unsigned_text(name: str, mtype: MySQLType, limit: int = _UINT64_MAX) -> Reader:
    def read(raw: str) -> int:
        # `[0-9]+`: str.isdigit alone also takes other scripts' digits, which int() would read.
        if len(raw) > _MAX_INT_TEXT or not raw.isascii() or not raw.isdigit():
            raise _mismatch(name, mtype, raw)
        value = int(raw)
        if value > limit:
            raise _mismatch(name, mtype, raw, f"above {limit}")
        return value
    return read


def _integer(name: str, mtype: MySQLType) -> Reader:
    low, high = _INT_RANGES[(mtype.base, mtype.unsigned)]

    def read(raw: str) -> int:
        if len(raw) > _MAX_INT_TEXT or _INTEGER.fullmatch(raw) is None:
            raise _mismatch(name, mtype, raw)
        value = int(raw)
        if not low <= value <= high:
            raise _mismatch(name, mtype, raw, f"outside [{low}, {high}]")
        return value
    return read


def _float(name: str, mtype: MySQLType) -> Reader:
    def read(raw: str) -> float:
        if len(raw) > 400 or not _FLOAT.fullmatch(raw):
            raise _mismatch(name, mtype, raw)
        value = float(raw)
        if value in (float("inf"), float("-inf")):
            raise _mismatch(name, mtype, raw, "not finite")
        return value
    return read


def _decimal(name: str, mtype: MySQLType) -> Reader:
    # TiDB prints a DECIMAL with exactly the column's scale, so a full mysqlType pins the digit count.
    return _printed(name, mtype, _DECIMAL, mtype.decimal_scale, "scale", _MAX_DECIMAL_TEXT)


def _temporal(pattern: re.Pattern) -> Callable[[str, MySQLType], Reader]:
    def factory(name: str, mtype: MySQLType) -> Reader:
        return _printed(name, mtype, pattern, mtype.fsp if pattern.groups else None, "fsp")
    return factory


def _printed(name: str, mtype: MySQLType, pattern: re.Pattern, digits: Optional[int], what: str,
             max_len: Optional[int] = None) -> Reader:
    """TiDB's own print, kept as the string: it must match `pattern`, whose group 1 holds the fraction
    digits, exactly `digits` of them when the mysqlType says (the column's `what`)."""
    match = pattern.fullmatch

    def read(raw: str) -> str:
        m = match(raw) if max_len is None or len(raw) <= max_len else None
        if m is None:
            raise _mismatch(name, mtype, raw)
        if digits is not None and len(m.group(1) or "") != digits:
            raise _mismatch(name, mtype, raw, f"the column's {what} is {digits}")
        return raw
    return read


def _year(name: str, mtype: MySQLType) -> Reader:
    def read(raw: str) -> int:
        if not _YEAR.fullmatch(raw) or int(raw) > 2155:
            raise _mismatch(name, mtype, raw)
        return int(raw)
    return read


def _bit(name: str, mtype: MySQLType) -> Reader:
    width = mtype.bit_width
    if width is not None and not 1 <= width <= 64:
        return _always(f"column {name!r}: BIT width {width} outside TiDB's 1..64")
    return _unsigned_text(name, mtype, _UINT64_MAX if width is None else 2**width - 1)


def _always(reason: str) -> Reader:
    """A column no text can fill: its mysqlType is readable but outside what TiDB allows."""
    def read(raw: str) -> Any:
        raise Malformed(reason)
    return read


def _enum(name: str, mtype: MySQLType) -> Reader:
    elements = mtype.elements
    if elements is None:
        return _unsigned_text(name, mtype)
    index_of = _unsigned_text(name, mtype, len(elements))

    def read(raw: str) -> str:
        index = index_of(raw)
        # Index 0 is the empty "error" member MySQL stores for an invalid value in non-strict mode.
        return "" if index == 0 else elements[index - 1]
    return read


def _set(name: str, mtype: MySQLType) -> Reader:
    elements = mtype.elements
    if elements is None:
        return _unsigned_text(name, mtype)
    mask_of = _unsigned_text(name, mtype, 2 ** len(elements) - 1)

    def read(raw: str) -> str:
        mask = mask_of(raw)
        return ",".join(e for i, e in enumerate(elements) if mask >> i & 1)
    return read


def _json(name: str, mtype: MySQLType) -> Reader:
    def read(raw: str) -> str:
        try:
            orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise _mismatch(name, mtype, raw) from None
        return raw
    return read


def _binary(name: str, mtype: MySQLType) -> Reader:
    def read(raw: str) -> str:
        try:
            data = raw.encode("latin-1")
        except UnicodeEncodeError as e:
            raise _mismatch(name, mtype, raw,
                            f"character U+{ord(raw[e.start]):04X} is not a byte (above 255)") from None
        # base64.b64encode is this call plus a Python-level wrapper.
        return b2a_base64(data, newline=False).decode("ascii")
    return read


_READERS: dict[str, Callable[[str, MySQLType], Reader]] = {
    **{base: _integer for base in INTEGER_TYPES},
    "float": _float, "double": _float, "decimal": _decimal,
    "date": _temporal(_DATE), "datetime": _temporal(_DATETIME), "timestamp": _temporal(_DATETIME),
    "time": _temporal(_TIME),
    "year": _year, "bit": _bit, "enum": _enum, "set": _set, "json": _json,
}


@dataclass(frozen=True)
class Plain:
    """The plain text of a column's values, as TiDB prints nearly every one: `pattern` (a regex
    with no group that matches no NUL) takes only texts the column's reader accepts, and the reader
    gives such a text back as it is -- or, where `bounds` are set, reads it as int(text), which it
    rejects outside those bounds. A pattern names digits only as the class [0-9], so it takes a
    text exactly when it takes the text's shape (every ASCII digit read as 0, DIGITS_AS_ZERO)."""

    pattern: str
    bounds: Optional[tuple[int, int]] = None


# A row's plain texts have few combinations of shapes (common.wire.DIGITS_AS_ZERO); _fast/rowcode.py
# remembers those that match.
_PLAIN_UNSIGNED = "[0-9]{1,20}"  # at most 20 digits: within the readers' _MAX_INT_TEXT


def plain_form(mtype: MySQLType) -> Optional[Plain]:
    """The plain text of a column of `mtype`, None where its reader does more than check the text
    or read an integer (floats, JSON, binary, named ENUM/SET members) or accepts no text at all."""
    base = mtype.base
    if base in INTEGER_TYPES:
        low, high = _INT_RANGES[(base, mtype.unsigned)]
        return Plain("-?[0-9]{1,20}" if low < 0 else _PLAIN_UNSIGNED, (low, high))
    if base == "year":
        return Plain(_YEAR.pattern, (0, 2155))
    if base == "bit":
        width = mtype.bit_width
        if width is not None and not 1 <= width <= 64:
            return None
        return Plain(_PLAIN_UNSIGNED, (0, _UINT64_MAX if width is None else 2**width - 1))
    if base in ("enum", "set"):
        return None if mtype.elements is not None else Plain(_PLAIN_UNSIGNED, (0, _UINT64_MAX))
    if base == "decimal":
        # The lookahead bounds the length to the end of the text or to the NUL that ends it in a row.
        fraction = _exact_fraction(mtype.decimal_scale, r"(?:\.[0-9]+)?")
        return Plain(rf"(?=[^\x00]{{1,{_MAX_DECIMAL_TEXT}}}(?:\x00|\Z))-?[0-9]+{fraction}")
    if base == "date":
        return Plain(_DATE_TEXT)
    if base in ("datetime", "timestamp", "time"):
        fsp = mtype.fsp
        if fsp is not None and fsp > _MAX_FSP:
            return None
        fraction = _exact_fraction(fsp, rf"(?:\.[0-9]{{1,{_MAX_FSP}}})?")
        return Plain((_TIME_TEXT if base == "time" else _DATETIME_TEXT) + fraction)
    return None


def _exact_fraction(digits: Optional[int], unknown: str) -> str:
    """The fraction part of a plain text that has `digits` fraction digits (none when 0), or any
    fraction the type allows (`unknown`) when the mysqlType does not say."""
    if digits is None:
        return unknown
    return rf"\.[0-9]{{{digits}}}" if digits else ""
