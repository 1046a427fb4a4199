"""Column objects of a Row Changed Event -> canonical JSON values (docs/architecture.md).

A column is `{"t": <type code>, "h": <where handle>, "f": <flags>, "v": <value>}` (spec 002, Row
Changed Event). The type code and the binary flag together decide how "v" is read (spec 002,
Column type code and Bit flags of columns). Every value is checked against what its type code
allows, so an encoder writing the wrong JSON type for a column is caught rather than passed on.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

import orjson

from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO, Malformed, bounded_put
from ticdc_conformance.protocols.common.wire import is_json_int as _is_int

from .goquote import go_unquote, unquote_valid

# spec 002, Column type code (TiDB's mysql.Type* byte values).
TINYINT, SMALLINT, INT, FLOAT, DOUBLE, NULL, TIMESTAMP, BIGINT, MEDIUMINT = 1, 2, 3, 4, 5, 6, 7, 8, 9
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT = 10, 11, 12, 13, 14, 15, 16
JSON, DECIMAL, ENUM, SET = 245, 246, 247, 248
TINYBLOB, MEDIUMBLOB, LONGBLOB, BLOB, VAR_STRING, STRING, GEOMETRY = 249, 250, 251, 252, 253, 254, 255

# spec 002, Bit flags of columns.
BINARY_FLAG = 0x01
HANDLE_KEY_FLAG = 0x02
UNIQUE_KEY_FLAG = 0x10
MULTIPLE_KEY_FLAG = 0x20
NULLABLE_FLAG = 0x40
UNSIGNED_FLAG = 0x80

_U64_MAX = 2**64 - 1
# Integer widths per type code; a column's flags say which half of the range applies.
_INT_BITS = {TINYINT: 8, SMALLINT: 16, MEDIUMINT: 24, INT: 32, BIGINT: 64}
# The other integer-valued type codes and their largest value. ENUM carries the 1-based member
# index (at most 65535 members), SET the member bitmask (at most 64 members): TiCDC codec.go
# writes GetEnum(idx).Value for both.
_UNSIGNED_LIMITS = {YEAR: 2155, BIT: _U64_MAX, ENUM: 65535, SET: _U64_MAX}

# TiDB's printed forms (types.Time.String / Duration.String / MyDecimal.String). [0-9] rather
# than \d, which would also match non-ASCII digits.
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?")
_TIME = re.compile(r"-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?")
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")

# Whether a text matches one of those patterns depends only on its shape (common.wire.DIGITS_AS_ZERO).


@dataclass(frozen=True)
class ColumnValue:
    value: Any  # canonical JSON value
    is_handle: bool  # "h": true, or the HandleKeyFlag bit
    flag: int = 0  # "f" (0 when absent: spec 002's first version had no flags)
    has_flag: bool = False


def decode_columns(section: Any) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    """One of "u"/"p"/"d": column name -> canonical value (message order), and the keys the section
    describes, best first (`key_candidates`).

    A column whose type code, flags and "h" were seen before is read through the `_ColumnSpec`
    they made; any column the spec does not vouch for, a first sight or anything odd, goes
    through `decode_column`, which decides and words every rejection."""
    if not isinstance(section, dict):
        raise Malformed(f"expected an object of columns, got {type(section).__name__}")
    values: dict[str, Any] = {}
    roles: list[tuple[str, tuple[bool, int, bool]]] = []
    specs = _SPECS
    for name, obj in section.items():
        try:
            passes, lo, hi, read, role = specs[_spec_key(obj)]
            raw = obj["v"]
            kind = type(raw)
            if kind is passes:  # a text column's string: nothing to check
                values[name] = raw
            elif kind is int and lo <= raw <= hi:  # an integer in its type's range
                values[name] = raw
            else:
                values[name] = None if raw is None else read(raw)
        except Exception:  # noqa: BLE001 - decode_column settles it, rejecting or accepting
            (_, _, _, _, role), values[name] = _first_sight(name, obj)
        if role is not None:
            roles.append((name, role))
    return values, keys_of(tuple(roles)) if roles else []


def key_candidates(columns: dict[str, ColumnValue]) -> list[tuple[str, ...]]:
    """The keys the flags of the carried columns describe, best first (see protocols/common/keys.py).

    1. the handle key ("h" or HandleKeyFlag). Flags mark only carried columns, so a handle key a
       column selector cut in part cannot be told from a whole one; TiCDC refuses a selection
       that keeps neither a whole primary key nor a whole unique key, not one that splits the
       primary key while keeping a unique key, and such a stream is not identified rightly here;
    2. each NOT NULL single-column unique key (UniqueKeyFlag without MultipleKeyFlag or
       NullableFlag): TiCDC's decoder makes one unique index of each such column
       (TiCDC pkg/sink/codec/open/decoder.go newTiIndices);
    3. every unique-flagged column together, when all are NOT NULL: TiCDC flags every column of a
       unique index (open/message.go), so this is a superset of each NOT NULL unique key carried
       whole, and a superset of a key is a key.
    """
    handles = [n for n, c in columns.items() if c.is_handle]
    out: list[tuple[str, ...]] = []
    if handles:
        out.append(tuple(handles))
    flagged = {n: c for n, c in columns.items() if c.has_flag and c.flag & UNIQUE_KEY_FLAG}
    out += [(n,) for n, c in flagged.items() if not c.flag & (MULTIPLE_KEY_FLAG | NULLABLE_FLAG)]
    if flagged and not any(c.flag & NULLABLE_FLAG for c in flagged.values()):
        out.append(tuple(flagged))
    return out


def decode_column(obj: Any) -> ColumnValue:
    if not isinstance(obj, dict):
        raise Malformed(f"column is a JSON {type(obj).__name__}, not an object")
    code = obj.get("t")
    if not _is_int(code):
        raise Malformed(f'missing or non-integer type code "t": {code!r}')
    reader = _READERS.get(code)
    if reader is None:
        raise Malformed(f"unknown column type code {code}")
    # "f" came after the first protocol version (spec 002's own examples lack it); TiCDC's decoder
    # takes a missing one as 0 (TiCDC pkg/sink/codec/open/message.go, column.Flag).
    flag = obj.get("f", 0)
    has_flag = "f" in obj
    if not _is_int(flag) or not 0 <= flag <= _U64_MAX:
        raise Malformed(f'flags "f" is {flag!r}, not an unsigned integer')
    handle = obj.get("h", False)
    if not isinstance(handle, bool):
        raise Malformed(f'where-handle "h" is {handle!r}, not a boolean')
    if "v" not in obj:
        raise Malformed('missing value "v"')
    raw = obj["v"]
    if raw is None:
        value = None
    else:
        try:
            value = reader(raw, code, flag, has_flag)
        except Malformed as e:
            raise e.within(f"type {code}") from None
    return ColumnValue(value, handle or bool(flag & HANDLE_KEY_FLAG), flag, has_flag)


# --- per-column specs: what a (type code, flags, "h") triple allows, worked out once ---------

# "f" absent is not "f": null (which decode_column rejects), so absence gets its own marker.
_NO_FLAG = object()
# Flags are free-form 64-bit numbers, so the specs a stream names are bounded only by this.
_CACHE_MAX = 1024


class _ColumnSpec(NamedTuple):
    """What a column of one (type code, flags, "h") allows; a named tuple so that the column
    loop unpacks it in one step."""

    passes: type | None  # a raw "v" of exactly this type is the value as it is (text columns)
    lo: int  # an int raw "v" in [lo, hi] is the value as it is (integer-valued columns; else lo > hi)
    hi: int
    read: Callable[[Any], Any]  # any other non-null raw "v" -> canonical value; raises if doubtful
    role: tuple[bool, int, bool] | None  # (is_handle, flag, has_flag) if the column names a key


_SPECS: dict[tuple[Any, Any, Any], _ColumnSpec] = {}
# The keys a section describes depend only on the names and roles of its key columns, the same
# for every row of a table, so they are worked out once per such tuple (bounded like _SPECS).
_KEYS: dict[tuple, list[tuple[str, ...]]] = {}


def _spec_key(obj: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The triple that picks a column's spec. Each part is type-checked first: 1, 1.0 and true
    are equal dict keys, and only the first is a type code."""
    code, flag, handle = obj["t"], obj.get("f", _NO_FLAG), obj.get("h", False)
    if type(code) is not int or (type(flag) is not int and flag is not _NO_FLAG) or (
            handle is not True and handle is not False):
        raise LookupError("not a cacheable column")
    return code, flag, handle


def _first_sight(name: str, obj: Any) -> tuple[_ColumnSpec, Any]:
    """A column read the careful way, and the spec its type code, flags and "h" make for the
    columns that follow (remembered only once decode_column has accepted them)."""
    try:
        col = decode_column(obj)
    except Malformed as e:
        raise e.within(f"column {name!r}") from None
    key = _spec_key(obj)
    spec = _SPECS.get(key)
    if spec is None:
        spec = _new_spec(key[0], col)
        bounded_put(_SPECS, key, spec, _CACHE_MAX)
    return spec, col.value


def _new_spec(code: int, col: ColumnValue) -> _ColumnSpec:
    """The checks of `_READERS[code]`, with the choices that depend on the code and flags made
    once. The spec may refuse more than decode_column (which then decides) but never accepts what
    that rejects, nor reads a value differently."""
    flag, has_flag = col.flag, col.has_flag
    names_key = col.is_handle or (has_flag and bool(flag & UNIQUE_KEY_FLAG))
    role = (col.is_handle, flag, has_flag) if names_key else None
    reader = _READERS[code]
    passes, lo, hi = None, 1, 0
    if reader is _integer:
        lo, hi = _int_range(code, flag, has_flag)
    elif code in _UNSIGNED_LIMITS:
        lo, hi = 0, _UNSIGNED_LIMITS[code]
    elif reader is _string and not flag & BINARY_FLAG:
        passes = str
    if reader is _string and flag & BINARY_FLAG:
        read = _binary_string
    elif reader in _PATTERNS:
        shapes = remembered_shapes(code)
        assert shapes is not None  # a column read by a pattern has its shapes

        def read(raw: Any) -> Any:  # a printed date, time or decimal
            if type(raw) is str:
                shape = raw.encode("utf-8", "surrogatepass").translate(DIGITS_AS_ZERO)
                if shape in shapes:
                    return raw
                reader(raw, code, flag, has_flag)  # raises unless it matches
                bounded_put(shapes, shape, True, _CACHE_MAX)
                return raw
            return reader(raw, code, flag, has_flag)
    else:
        def read(raw: Any) -> Any:
            return reader(raw, code, flag, has_flag)
    return _ColumnSpec(passes, lo, hi, read, role)


def column_spec(code: int, flag: int, has_flag: bool, handle: bool) -> _ColumnSpec:
    """The spec of a column whose type code, flags and "h" `decode_column` accepts (`code` must
    have a reader: see `value_type`)."""
    return _new_spec(code, ColumnValue(None, handle or bool(flag & HANDLE_KEY_FLAG), flag, has_flag))


def remembered_shapes(code: int) -> Optional[dict[bytes, bool]]:
    """For a printed date, time or decimal column, the shapes (see DIGITS_AS_ZERO) found to match
    its pattern so far, which its spec's `read` keeps up to date; None for other columns."""
    pattern = _PATTERNS.get(_READERS[code])
    return None if pattern is None else _MATCHING_SHAPES.setdefault(pattern, {})


def value_type(code: int) -> type:
    """The type a non-null value of a column of this type code reads to: int, float or str, or
    NoneType for NULL-typed columns, which carry null only. KeyError for a code without a reader."""
    reader = _READERS[code]
    if reader is _integer or code in _UNSIGNED_LIMITS:
        return int
    if reader is _float:
        return float
    return type(None) if reader is _null else str


def keys_of(roles: tuple[tuple[str, tuple[bool, int, bool]], ...]) -> list[tuple[str, ...]]:
    """The key candidates of a section whose key-naming columns are `roles`, (name, `_ColumnSpec.role`)
    in message order."""
    keys = _KEYS.get(roles)
    if keys is None:
        keys = key_candidates({name: ColumnValue(None, *role) for name, role in roles})
        bounded_put(_KEYS, roles, keys, _CACHE_MAX)
    return list(keys)  # a copy: callers own what they get


def _binary_string(raw: Any) -> str:
    """A binary CHAR/VARCHAR value read as `_string` reads it, the common escape bodies in C."""
    if type(raw) is not str:
        raise ValueError("not a string")
    data = unquote_valid(raw)
    if data is None:  # a body the C codecs are not trusted with: Go's rules one escape at a time
        return _string(raw, VARCHAR, BINARY_FLAG, True)
    return binascii.b2a_base64(data, newline=False).decode("ascii")


# --- readers: (raw "v", type code, flags, whether "f" was present) -> canonical value ---------

def _integer(raw: Any, code: int, flag: int, has_flag: bool) -> int:
    if not _is_int(raw):
        raise Malformed(f"integer column value {raw!r} is not a JSON integer")
    lo, hi = _int_range(code, flag, has_flag)
    if not lo <= raw <= hi:
        raise Malformed(f"{raw} is outside [{lo}, {hi}]")
    return raw


def _int_range(code: int, flag: int, has_flag: bool) -> tuple[int, int]:
    bits = _INT_BITS[code]
    signed_range = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    unsigned_range = (0, 2**bits - 1)
    if not has_flag:
        # Without flags signedness is unknown; only the union of both ranges is certain.
        return signed_range[0], unsigned_range[1]
    return unsigned_range if flag & UNSIGNED_FLAG else signed_range


def _float(raw: Any, code: int, flag: int, has_flag: bool) -> float:
    # Go writes a whole float64 without a fraction ("1"), so JSON integers are floats here too.
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise Malformed(f"float column value {raw!r} is not a JSON number")
    try:
        return float(raw)
    except OverflowError:
        raise Malformed(f"{raw} is beyond a double") from None


def _unsigned(limit: int) -> Callable[[Any, int, int, bool], int]:
    def read(raw: Any, code: int, flag: int, has_flag: bool) -> int:
        if not _is_int(raw) or not 0 <= raw <= limit:
            raise Malformed(f"value {raw!r} is not an integer in [0, {limit}]")
        return raw
    return read


def _null(raw: Any, code: int, flag: int, has_flag: bool) -> None:
    raise Malformed(f"a NULL-typed column carries {raw!r}")


def _pattern(rx: re.Pattern, what: str) -> Callable[[Any, int, int, bool], str]:
    def read(raw: Any, code: int, flag: int, has_flag: bool) -> str:
        if not isinstance(raw, str) or rx.fullmatch(raw) is None:
            raise Malformed(f"{raw!r} is not a {what}")
        return raw
    _PATTERNS[read] = rx
    return read


# Each pattern reader's regular expression, and the shapes found to match each expression.
_PATTERNS: dict[Callable[[Any, int, int, bool], str], re.Pattern] = {}
_MATCHING_SHAPES: dict[re.Pattern, dict[bytes, bool]] = {}


def _json_text(raw: Any, code: int, flag: int, has_flag: bool) -> str:
    # TiCDC writes TiDB's printed JSON document as a string (BinaryJSON.String()).
    if not isinstance(raw, str):
        raise Malformed(f"JSON column value {raw!r} is not a string")
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise Malformed(f"JSON column value is not a JSON document ({e})") from None
    return raw


def _string(raw: Any, code: int, flag: int, has_flag: bool) -> str:
    """CHAR/VARCHAR/BINARY/VARBINARY: UTF-8 text, or Go-quoted bytes when the binary flag is set."""
    if not isinstance(raw, str):
        raise Malformed(f"string column value {raw!r} is not a JSON string")
    if not flag & BINARY_FLAG:
        return raw
    try:
        data = go_unquote(raw)
    except ValueError as e:
        raise Malformed(f"bad Go escape in binary value ({e})") from None
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _blob(raw: Any, code: int, flag: int, has_flag: bool) -> str:
    """TEXT/BLOB families: always base64 in the message (spec 002, type codes 249-252)."""
    if not isinstance(raw, str):
        raise Malformed(f"blob/text column value {raw!r} is not a JSON string")
    try:
        data = base64.b64decode(raw.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as e:
        raise Malformed(f"bad base64 ({e})") from None
    if flag & BINARY_FLAG:
        # Re-encoded so the output is the canonical padded form whatever spelling arrived.
        return base64.b64encode(data).decode("ascii")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed(f"text value is not UTF-8 ({e})") from None


_READERS: dict[int, Callable[[Any, int, int, bool], Any]] = {
    **{code: _integer for code in _INT_BITS},
    FLOAT: _float,
    DOUBLE: _float,
    NULL: _null,
    TIMESTAMP: _pattern(_DATETIME, "timestamp 'YYYY-MM-DD hh:mm:ss[.ffffff]'"),
    DATETIME: _pattern(_DATETIME, "datetime 'YYYY-MM-DD hh:mm:ss[.ffffff]'"),
    DATE: _pattern(_DATE, "date 'YYYY-MM-DD'"),
    NEWDATE: _pattern(_DATE, "date 'YYYY-MM-DD'"),
    TIME: _pattern(_TIME, "time '[-]hh:mm:ss[.ffffff]'"),
    YEAR: _unsigned(_UNSIGNED_LIMITS[YEAR]),
    BIT: _unsigned(_UNSIGNED_LIMITS[BIT]),
    JSON: _json_text,
    DECIMAL: _pattern(_DECIMAL, "decimal string"),
    ENUM: _unsigned(_UNSIGNED_LIMITS[ENUM]),
    SET: _unsigned(_UNSIGNED_LIMITS[SET]),
    VARCHAR: _string,
    VAR_STRING: _string,
    STRING: _string,
    TINYBLOB: _blob,
    MEDIUMBLOB: _blob,
    LONGBLOB: _blob,
    BLOB: _blob,
    # GEOMETRY (255) is listed as "Unsupported" by spec 002 and so has no reader.
}
