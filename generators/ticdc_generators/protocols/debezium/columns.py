"""The facts about a column that TiCDC's Debezium codec reads from TiDB's column info.

TiCDC works from TiDB's `ColumnInfo`/`FieldType` (type code, flag bits, flen, decimal, charset,
elements, DefaultValue), not from SQL text. This module derives that view from the model's
`Column`/`TiDBType` once per table version, so the value and schema writers can follow the Go
code branch for branch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from ticdc_contract.model import Column, TableSchema
from ticdc_contract.tidb_types import type_collation

from ..golang.floats import format_float32, format_float64
from .temporal import timestamp_default_in_utc

# TiDB's type code for each base type (mysql.Type*), named after the Go constants.
_CODE = {
    "tinyint": "tiny", "smallint": "short", "mediumint": "int24", "int": "long", "bigint": "longlong",
    "float": "float", "double": "double", "decimal": "newdecimal",
    "char": "string", "binary": "string", "varchar": "varchar", "varbinary": "varchar",
    "tinytext": "tinyblob", "tinyblob": "tinyblob", "text": "blob", "blob": "blob",
    "mediumtext": "mediumblob", "mediumblob": "mediumblob", "longtext": "longblob", "longblob": "longblob",
    "date": "date", "datetime": "datetime", "timestamp": "timestamp", "time": "duration",
    "year": "year", "enum": "enum", "set": "set", "bit": "bit", "json": "json",
}

# mysql.GetDefaultFieldLengthAndDecimal: the flen TiDB records when a DDL gives none.
DEFAULT_FLEN = {
    "bit": 1, "tiny": 4, "short": 6, "int24": 9, "long": 11, "longlong": 20, "double": 22,
    "float": 12, "newdecimal": 10, "duration": 10, "date": 10, "timestamp": 19, "datetime": 19,
    "year": 4, "string": 1, "varchar": 5, "tinyblob": 255, "blob": 65535,
    "mediumblob": 16777215, "longblob": 4294967295, "json": 4294967295, "set": -1, "enum": -1,
}

INT_CODES = ("tiny", "short", "int24", "long", "longlong")
STRING_CODES = ("string", "varchar", "tinyblob", "blob", "mediumblob", "longblob")
TEMPORAL_WITH_FSP = ("datetime", "timestamp", "duration")

# DefaultValue as TiDB stores it: nil, a string, or raw bytes (BINARY/BLOB/BIT defaults are Go
# strings of arbitrary bytes).
DefaultValue = Optional[Union[str, bytes]]


@dataclass(frozen=True)
class ColumnView:
    name: str
    base: str
    code: str
    not_null: bool
    unsigned: bool
    binary: bool  # mysql.BinaryFlag: set for columns of the binary charset
    charset: str
    flen: int
    decimal: int  # -1 = unspecified (FLOAT/DOUBLE without (M,D))
    elems: tuple[str, ...]
    collate: str
    default: DefaultValue
    comment: str
    auto_increment: bool

    @property
    def type_str(self) -> str:
        """types.TypeToStr(code, charset): TiDB's own name, "blob"/"binary" for binary charsets."""
        return self.base


def _tidb_default(col: Column, tz: str) -> DefaultValue:
    """ColumnInfo.GetDefaultValue() for the model's canonical DEFAULT."""
    if not col.has_default or col.default is None:
        return None
    t = col.type
    v: Any = col.default
    if t.base in ("datetime", "timestamp") and isinstance(v, str) and _is_current_timestamp(v):
        return "CURRENT_TIMESTAMP"
    if t.base == "bit":
        # TiDB keeps BIT defaults as the big-endian bytes of the value, at least one byte
        # (types.NewBinaryLiteralFromUint(v, -1)), in ColumnInfo.DefaultValueBit.
        n = int(v)
        return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
    if t.is_binary:
        return bytes(v)
    if t.base == "float":
        return format_float32(float(v))
    if t.base == "double":
        return format_float64(float(v))
    if t.base == "timestamp":
        # TiDB stores a TIMESTAMP default converted from the session time zone to UTC.
        return timestamp_default_in_utc(str(v), tz)
    if t.is_integer or t.base == "year":
        return str(int(v))
    return str(v)


def _is_current_timestamp(v: str) -> bool:
    head = v.strip().upper().split("(")[0]
    return head in ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP")


def column_view(col: Column, primary: tuple[str, ...], tz: str) -> ColumnView:
    t = col.type
    code = _CODE[t.base]
    if t.base in ("float", "double"):
        decimal = t.decimal if t.decimal is not None else -1
    elif t.base == "decimal":
        decimal = t.scale
    elif code in TEMPORAL_WITH_FSP:
        decimal = t.fsp
    else:
        decimal = 0
    return ColumnView(
        name=col.name,
        base=t.base,
        code=code,
        # TiDB forces NOT NULL on primary-key columns whatever the DDL says.
        not_null=(not col.nullable) or col.name in primary,
        unsigned=t.unsigned,
        binary=t.is_binary,
        # TiDB derives a column's charset from its collation when only COLLATE is stated
        # (COLLATE utf8_unicode_ci gives utf8); TiCDC writes that charset as it is (spec 000,
        # DBZ-TYPEMAP-9: unlike Debezium, which reports utf8mb4 there).
        charset=type_collation(t).charset,
        flen=t.effective_flen,
        decimal=decimal,
        elems=tuple(t.elements),
        collate=t.effective_collate,
        default=_tidb_default(col, tz),
        comment=col.comment,
        auto_increment=col.auto_increment,
    )


@dataclass(frozen=True)
class TableView:
    table: TableSchema
    columns: tuple[ColumnView, ...]
    handle_key: frozenset[str]
    primary_key_names: tuple[str, ...]

    def handle_columns(self) -> tuple[ColumnView, ...]:
        """Handle-key columns in table order (TiCDC walks the columns, not the index)."""
        return tuple(c for c in self.columns if c.name in self.handle_key)


def _ticdc_handle_key(table: TableSchema) -> tuple[str, ...]:
    """TiCDC pkg/common/table_info_helper.go initIndexColumns: the primary key, else the NOT NULL
    unique key with the fewest columns (ties: the lower index ID, i.e. the earlier index)."""
    pk = table.primary_key
    if pk is not None:
        return pk.columns
    best = None
    for ix in table.indexes:
        if not ix.unique or ix.primary:
            continue
        if not all(not table.column(c).nullable for c in ix.columns):
            continue
        if best is None or len(ix.columns) < len(best.columns):
            best = ix
    return best.columns if best is not None else ()


def table_view(table: TableSchema, tz: str) -> TableView:
    pk = table.primary_key
    primary = pk.columns if pk is not None else ()
    cols = tuple(column_view(c, primary, tz) for c in table.columns)
    return TableView(
        table=table,
        columns=cols,
        handle_key=frozenset(_ticdc_handle_key(table)),
        primary_key_names=primary,
    )


def sanitize_name(name: str) -> str:
    """common.SanitizeName: Avro-safe names; a bad first character becomes "_" (a digit is kept
    after it), any other character outside [A-Za-z0-9_] becomes "_"."""
    out = []
    for i, ch in enumerate(name):
        if i == 0 and not (ch.isascii() and (ch.isalpha() or ch == "_")):
            out.append("_" + (ch if ch.isascii() and ch.isdigit() else ""))
        elif not (ch.isascii() and (ch.isalnum() or ch == "_")):
            out.append("_")
        else:
            out.append(ch)
    return "".join(out)


def sanitize_topic_name(name: str) -> str:
    """common.SanitizeTopicName: like sanitize_name but '.' allowed and no first-character rule."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.") else "_" for ch in name)


def schema_topic_name(cluster: str, schema: str, table: str) -> str:
    """helper.go getSchemaTopicName: "{cluster}.{schema}.{table}" used in Key/Value/Envelope names."""
    return f"{sanitize_name(cluster)}.{sanitize_name(schema)}.{sanitize_topic_name(table)}"
