"""What Open Protocol says about each column: type code, flag bits, handle status, and value text.

Everything here is derived from one `TableSchema`, the way TiCDC derives it from TiDB's table
info, and is cached per schema version by the encoder (`table_layout`).
"""
from __future__ import annotations

import base64
import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from ticdc_contract.enum_set import enum_index, set_bits
from ticdc_contract.model import TableSchema
from ticdc_contract.tidb_types import TiDBType

from ...errors import ChangefeedFailure
from ..golang import json_text
from ..golang.floats import json_float32, json_float64
from .goquote import json_quoter

# spec 002 (Open Protocol), Column type code: the MySQL type byte of TiDB's field type.
TYPE_CODES = {
    "tinyint": 1, "smallint": 2, "int": 3, "float": 4, "double": 5, "timestamp": 7, "bigint": 8,
    "mediumint": 9, "date": 10, "time": 11, "datetime": 12, "year": 13, "varchar": 15,
    "varbinary": 15, "bit": 16, "json": 245, "decimal": 246, "enum": 247, "set": 248,
    "tinytext": 249, "tinyblob": 249, "mediumtext": 250, "mediumblob": 250,
    "longtext": 251, "longblob": 251, "text": 252, "blob": 252, "char": 254, "binary": 254,
}

# spec 002 (Open Protocol), Bit flags of columns.
BINARY_FLAG = 0x01
HANDLE_KEY_FLAG = 0x02
GENERATED_COLUMN_FLAG = 0x04
PRIMARY_KEY_FLAG = 0x08
UNIQUE_KEY_FLAG = 0x10
MULTIPLE_KEY_FLAG = 0x20
NULLABLE_FLAG = 0x40
UNSIGNED_FLAG = 0x80

# Types TiCDC writes with the Go-quoted form when their charset is binary.
_QUOTED_WHEN_BINARY = ("char", "varchar", "binary", "varbinary")
# Every TEXT and BLOB type is a MySQL blob type and goes out in base64 whatever its charset.
_BASE64_TYPES = ("tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob")


class EncodeError(ValueError, ChangefeedFailure):
    """An event TiCDC itself would refuse to encode (it fails the changefeed)."""


@dataclass(frozen=True)
class ColumnLayout:
    name: str
    type: TiDBType
    code: int
    flag: int
    handle: bool


@dataclass(frozen=True)
class TableLayout:
    table: TableSchema
    columns: tuple[ColumnLayout, ...]  # table order (new TiCDC's order)
    columns_by_name: tuple[ColumnLayout, ...]  # name order (classic tiflow's Go map order)
    # The JSON pieces the message writer derives from this layout, per profile and column
    # selection (message.py), so that each is built once per table version.
    texts: dict = field(default_factory=dict, compare=False, repr=False)


def handle_key_columns(table: TableSchema) -> tuple[str, ...]:
    """The columns TiCDC treats as the row's handle key.

    TiCDC pkg/common/table_info_helper.go (initIndexColumns): the primary key; otherwise, among
    the unique indexes whose columns are all NOT NULL, the one with the fewest columns, the
    earliest created winning a tie. (`TableSchema.handle_key` takes the first such index, which
    differs when a later unique index is narrower.)
    """
    pk = table.primary_key
    if pk is not None:
        return pk.columns
    best = None
    for ix in table.indexes:
        if not ix.unique or not ix.columns:
            continue
        if any(table.column(c).nullable for c in ix.columns):
            continue
        if best is None or len(ix.columns) < len(best.columns):
            best = ix
    return best.columns if best is not None else ()


def table_layout(table: TableSchema) -> TableLayout:
    """Type code, flag and handle status of every column, in table order.

    TiCDC pkg/sink/codec/open/message.go (initColumnFlags): binary when the column's charset is
    binary (all non-string types have the binary charset in TiDB); nullable when TiDB's column
    lacks NOT NULL (primary-key columns always have it); unsigned from TiDB's flag, which TiDB
    also sets on every BIT and YEAR column; then, index by index, primary or unique on every
    member column and multiple-key on every member of a multi-column index, plus TiDB's own
    multiple-key flag on the first column of a single-column non-unique index; handle on the
    handle-key columns.
    """
    pk = table.primary_key
    pk_cols = set(pk.columns) if pk is not None else set()
    handle = set(handle_key_columns(table))
    flags: dict[str, int] = {}
    for c in table.columns:
        f = 0
        if c.type.effective_charset == "binary":
            f |= BINARY_FLAG
        if c.nullable and c.name not in pk_cols:
            f |= NULLABLE_FLAG
        if c.type.unsigned or c.type.base in ("bit", "year"):
            f |= UNSIGNED_FLAG
        if c.generated is not None:
            f |= GENERATED_COLUMN_FLAG  # TiCDC open/message.go: col.IsGenerated()
        flags[c.name] = f
    for ix in table.indexes:
        for i, name in enumerate(ix.columns):
            f = flags[name]
            if ix.primary:
                f |= PRIMARY_KEY_FLAG
            elif ix.unique:
                f |= UNIQUE_KEY_FLAG
            if len(ix.columns) > 1 or (i == 0 and not ix.primary and not ix.unique):
                f |= MULTIPLE_KEY_FLAG
            flags[name] = f
    for name in handle:
        flags[name] |= HANDLE_KEY_FLAG
    cols = tuple(
        ColumnLayout(c.name, c.type, TYPE_CODES[c.type.base], flags[c.name], c.name in handle)
        for c in table.columns
    )
    # Go's encoding/json sorts map keys bytewise; code point order of str is the same order.
    return TableLayout(table, cols, tuple(sorted(cols, key=lambda c: c.name)))


def _raw_bytes(v: Any) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise EncodeError(f"expected bytes or str, got {type(v).__name__}")


def float_text(v: float, bits: int) -> str:
    """A FLOAT (bits=32, TiDB's float32) or DOUBLE value as the JSON number of its "v".

    Both profiles write a negative exponent the encoding/json way ("1e-7"), as this encoder always
    has and test_float_text pins; json-iterator's WriteFloat32/64 would keep strconv's "1e-07".
    """
    return (json_float32 if bits == 32 else json_float64)(v, short_exponent=True)


def value_renderer(col: ColumnLayout, dialect: json_text.Dialect) -> Callable[[Any], str]:
    """The function writing the JSON text of a column's "v" (TiCDC pkg/sink/codec/open/codec.go,
    writeColumnFieldValue), chosen once per column so that a row pays for no type dispatch.

    Each function writes NULL as null.
    """
    t = col.type
    base = t.base
    if t.is_integer or base in ("year", "bit"):
        # Integers go out as Go int64/uint64; BIT as the uint64 of its bits, which sidesteps
        # pingcap/tidb#10988 as TiCDC's comment says.
        return _integer_text
    if base in ("float", "double"):
        bits = 32 if base == "float" else 64
        return lambda v: "null" if v is None else float_text(float(v), bits)
    if base in _BASE64_TYPES:
        return _base64_text
    if base in _QUOTED_WHEN_BINARY:
        return _quoted_renderers(dialect)[0 if col.flag & BINARY_FLAG else 1]
    if base == "enum":
        return lambda v: "null" if v is None else str(enum_index(t, v))
    if base == "set":
        return lambda v: "null" if v is None else str(set_bits(t, v))
    return _quoted_renderers(dialect)[2]


@functools.lru_cache(maxsize=None)
def _quoted_renderers(dialect: json_text.Dialect) -> tuple[Callable[[Any], str], ...]:
    """The renderers of a dialect's quoted values (binary, text, TiDB's print), each shared by every
    column of its kind and keeping its texts per value (json_text.memoized): an UPDATE writes its
    unchanged columns twice and a row's later events write its values again, and Quote's escaping
    of a binary value costs microseconds. None is not a key (memoized looks up str and bytes only)."""
    quote = json_text.quoter(dialect)
    quote_bytes = json_quoter(dialect)
    binary = json_text.memoized(lambda v: "null" if v is None else quote_bytes(_raw_bytes(v)))
    text = json_text.memoized(lambda v: "null" if v is None else quote(
        v if isinstance(v, str) else _raw_bytes(v).decode("utf-8", "surrogateescape")))
    # DECIMAL, DATE, DATETIME, TIMESTAMP, TIME and JSON: TiDB's own printing, which is the
    # canonical form already (MyDecimal.String, Time.String, Duration.String, BinaryJSON.String).
    printed = json_text.memoized(lambda v: "null" if v is None else quote(str(v)))
    return binary, text, printed


def _integer_text(v: Any) -> str:
    return "null" if v is None else str(int(v))


def _base64_text(v: Any) -> str:
    return "null" if v is None else '"' + base64.b64encode(_raw_bytes(v)).decode("ascii") + '"'
