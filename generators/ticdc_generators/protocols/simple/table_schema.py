"""The TableSchema object of DDL and BOOTSTRAP messages (spec 004, "TableSchema definition").

JSON follows TiCDC pkg/sink/codec/simple/message.go (newTableSchema, newColumnSchema,
newIndexSchema); Avro follows pkg/sink/codec/simple/avro.go (newTableSchemaMap). The two differ
in small ways that a consumer can see, kept here on purpose:
- JSON names the database `schema`, Avro `database`;
- JSON omits zero `length`/`decimal`, empty `elements` and false `unsigned`/`zerofill`
  (`omitempty`); Avro always has `length`, sets `decimal` only for DECIMAL and TIMESTAMP and
  `unsigned`/`zerofill` only for numeric types, `elements` only for ENUM/SET;
- a BIT default is a JSON number but an Avro string (the raw bit bytes).
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Optional
from zoneinfo import ZoneInfo

from ticdc_contract.model import Column, Index, TableSchema
from ticdc_contract.tidb_types import TiDBType

from ..golang.floats import format_float32, format_float64
from .values import mysql_type, unsigned_flag, zerofill_flag

# Avro: TiCDC avro.go newTableSchemaMap sets unsigned/zerofill for these, decimal for the next set.
_AVRO_NUMERIC = ("tinyint", "smallint", "mediumint", "int", "bigint", "float", "double", "bit", "year", "decimal")
_AVRO_DECIMAL = ("decimal", "timestamp")


def ordered_columns(table: TableSchema, sort_by_id: bool) -> tuple[Column, ...]:
    """New TiCDC lists columns in table order; classic tiflow sorts them by column ID first
    (tiflow pkg/sink/codec/simple/message.go newTableSchema: sort.SliceStable by ID)."""
    if not sort_by_id:
        return table.columns
    return tuple(sorted(table.columns, key=lambda c: c.column_id))


def _tidb_decimal(t: TiDBType) -> int:
    """ColumnInfo.Decimal: DECIMAL's scale, the fsp of temporal types, 0 for other types (TiDB's
    default length/decimal table); FLOAT/DOUBLE hold -1, which both encoders leave out."""
    if t.base == "decimal":
        return t.scale
    if t.base in ("datetime", "timestamp", "time"):
        return t.fsp
    return 0


def _bit_default_bytes(v: int) -> bytes:
    """TiDB keeps a BIT default as its big-endian binary literal without leading zero bytes."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def _timestamp_default_utc(text: str, time_zone: str) -> str:
    """TiDB stores a TIMESTAMP default converted to UTC (ColumnInfo version 1); keep its digits."""
    try:
        head, _, frac = text.partition(".")
        local = dt.datetime.strptime(head, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(time_zone))
    except ValueError:
        return text  # CURRENT_TIMESTAMP and the like are kept as written
    utc = local.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{utc}.{frac}" if frac else utc


def default_text(c: Column, time_zone: str) -> Optional[str]:
    """ColumnInfo.GetDefaultValue(): TiDB keeps defaults as strings in the column's own print."""
    v = c.default
    if not c.has_default or v is None:
        return None
    t = c.type
    if isinstance(v, (bytes, bytearray)):
        # Go writes the raw bytes; invalid UTF-8 ends up as U+FFFD in JSON and Avro alike
        return bytes(v).decode("utf-8", errors="replace")
    if t.base == "bit":
        return _bit_default_bytes(int(v)).decode("utf-8", errors="replace")
    if t.base == "float":
        return format_float32(v)
    if t.base == "double":
        return format_float64(v)
    if t.base == "timestamp":
        return _timestamp_default_utc(str(v), time_zone)
    return str(v)


def json_default(c: Column, time_zone: str) -> Any:
    # TiCDC message.go newColumnSchema turns a BIT default into its integer (common.MustBinaryLiteralToInt)
    if c.type.base == "bit" and c.has_default and c.default is not None:
        return int(c.default)
    return default_text(c, time_zone)


def _json_data_type(t: TiDBType) -> dict[str, Any]:
    out: dict[str, Any] = {
        "mysqlType": mysql_type(t),
        "charset": t.effective_charset,
        "collate": t.effective_collate,
    }
    if t.effective_flen != 0:
        out["length"] = t.effective_flen
    decimal = 0 if t.base in ("float", "double") else _tidb_decimal(t)
    if decimal != 0:
        out["decimal"] = decimal
    if t.elements:
        out["elements"] = list(t.elements)
    if unsigned_flag(t):
        out["unsigned"] = True
    if zerofill_flag(t):
        out["zerofill"] = True
    return out


def _avro_data_type(t: TiDBType) -> dict[str, Any]:
    out: dict[str, Any] = {
        "mysqlType": mysql_type(t),
        "charset": t.effective_charset,
        "collate": t.effective_collate,
        "length": t.effective_flen,
        "decimal": _tidb_decimal(t) if t.base in _AVRO_DECIMAL else None,
        "elements": list(t.elements) if t.base in ("enum", "set") else None,
        "unsigned": unsigned_flag(t) if t.base in _AVRO_NUMERIC else None,
        "zerofill": zerofill_flag(t) if t.base in _AVRO_NUMERIC else None,
    }
    return out


def _index_entries(table: TableSchema) -> list[tuple[str, bool, bool, bool, list[str]]]:
    """(name, unique, primary, nullable, columns) in TiDB's index order.

    A handle primary key (clustered integer PK) has no IndexInfo in TiDB, so TiCDC appends a
    synthetic lowercase "primary" entry after the real indexes (message.go newTableSchema).
    """
    entries = []
    for ix in table.indexes:
        if ix.primary and table.pk_is_handle:
            continue
        nullable = any(table.column(c).nullable for c in ix.columns)
        entries.append((ix.name, ix.unique or ix.primary, ix.primary, nullable, list(ix.columns)))
    pk: Optional[Index] = table.primary_key
    if pk is not None and table.pk_is_handle:
        entries.append(("primary", True, True, False, list(pk.columns)))
    return entries


def json_table_schema(table: TableSchema, time_zone: str, sort_by_id: bool) -> dict[str, Any]:
    return {
        "schema": table.schema,
        "table": table.table,
        "tableID": table.table_id,
        "version": table.schema_version,
        "columns": [
            {"name": c.name, "dataType": _json_data_type(c.type), "nullable": c.nullable,
             "default": json_default(c, time_zone)}
            for c in ordered_columns(table, sort_by_id)
        ],
        "indexes": [
            {"name": n, "unique": u, "primary": p, "nullable": nl, "columns": cols}
            for n, u, p, nl, cols in _index_entries(table)
        ],
    }


def avro_table_schema(table: TableSchema, time_zone: str, sort_by_id: bool,
                      decimal_for_timestamp: bool = True) -> dict[str, Any]:
    columns = []
    for c in ordered_columns(table, sort_by_id):
        data_type = _avro_data_type(c.type)
        if c.type.base == "timestamp" and not decimal_for_timestamp:
            data_type["decimal"] = None
        columns.append({"name": c.name, "dataType": data_type, "nullable": c.nullable,
                        "default": default_text(c, time_zone)})
    return {
        "database": table.schema,
        "table": table.table,
        "tableID": table.table_id,
        "version": table.schema_version,
        "columns": columns,
        "indexes": [
            {"name": n, "unique": u, "primary": p, "nullable": nl, "columns": cols}
            for n, u, p, nl, cols in _index_entries(table)
        ],
    }
