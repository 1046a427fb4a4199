"""DDL messages: SchemaChangeKey / SchemaChangeValue (spec 000, "DDL event").

Shapes and field order follow TiCDC pkg/sink/codec/debezium/codec.go EncodeDDLEvent; the column
metadata in tableChanges follows helper.go (getExpressionAndName, getCharset, getLen, getScale,
parseColumns) and common/java.go (MySQLType2JdbcType).
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_contract.model import DDL, TableSchema
from ticdc_contract.tso import physical_ms

from .columns import DEFAULT_FLEN, ColumnView, table_view
from .ddl_query import ColumnDef, column_defs
from .message import EnvelopeOptions, dumps, source_payload, source_schema

# TiDB ActionType codes by the kind of change TiCDC reports; anything else is not encoded
# (ErrDDLUnsupportType is logged and the DDL skipped).
_CREATE = {1, 3, 21, 60}  # create schema/table/view, create tables
_ALTER = {5, 6, 7, 12, 13, 14, 15, 17, 18, 19, 20, 22, 23, 26, 32, 33, 41, 42, 47, 61, 64, 71, 72}
_DROP = {2, 4, 8, 11, 24}  # drop schema/table/index/view, truncate table
_DROP_TABLE, _TRUNCATE_TABLE, _RENAME_TABLE, _EXCHANGE_PARTITION = 4, 11, 14, 42

# java.sql.Types codes TiCDC maps TiDB type codes to.
_JDBC = {
    "tiny": 5, "short": 5, "long": 4, "int24": 4, "year": 4, "float": 6, "double": 8,
    "newdecimal": 3, "timestamp": 2014, "datetime": 93, "longlong": -5, "date": 91,
    "duration": 92, "enum": 1, "set": 1, "bit": -7, "json": 1111,
}


def change_type(ddl_type: int) -> Optional[str]:
    if ddl_type in _CREATE:
        return "CREATE"
    if ddl_type in _ALTER:
        return "ALTER"
    if ddl_type in _DROP:
        return "DROP"
    return None


def jdbc_type(col: ColumnView) -> int:
    code = col.code
    if code in ("tinyblob", "blob", "mediumblob", "longblob"):
        return 2004 if col.binary else 12  # BLOB / VARCHAR
    if code == "varchar":
        return -3 if col.binary else 12  # VARBINARY / VARCHAR
    if code == "string":
        return -2 if col.binary else 1  # BINARY / CHAR
    return _JDBC.get(code, 12)


def _suffix(col: ColumnView, decimal: int) -> str:
    # Only DOUBLE(M,D) gets a suffix: every other type with one returns before it is built.
    if col.code == "double" and decimal not in (-1, 0):
        return f"({col.flen},{decimal})"
    return ""


def expression_and_name(col: ColumnView) -> tuple[str, str]:
    """helper.go getExpressionAndName: (typeExpression, typeName)."""
    prefix = col.type_str.upper()
    if col.code in ("year", "bit", "varchar", "string", "newdecimal"):
        return prefix, prefix
    suf = " UNSIGNED" if col.unsigned else ""
    return prefix + _suffix(col, col.decimal) + suf, prefix + suf


def _charset(col: ColumnView) -> Optional[str]:
    if col.charset == "binary":
        return None
    if col.code in ("timestamp", "duration", "newdecimal", "string", "varchar", "tinyblob",
                    "blob", "mediumblob", "longblob", "enum", "set"):
        return col.charset
    return None


def _length(col: ColumnView, decimal: int, flen: int) -> Optional[int]:
    """helper.go getLen: a length only where it differs from TiDB's default, -1 → null."""
    code = col.code
    default = DEFAULT_FLEN.get(code, -1)
    out = -1
    if code in ("timestamp", "duration", "datetime"):
        out = decimal
    elif code in ("bit", "varchar", "string", "longlong", "float", "double"):
        out = flen if flen != default else -1
    elif code in ("tiny", "short", "int24", "long"):
        if col.unsigned:
            default -= 1
        out = flen if flen != default else -1
    elif code in ("year", "newdecimal"):
        out = flen
    elif code == "set":
        out = 2 * len(col.elems) - 1
    elif code == "enum":
        out = 1
    return None if out == -1 else out


def _scale(col: ColumnView) -> Optional[float]:
    if col.code in ("newdecimal", "float", "double") and col.decimal != -1:
        return float(col.decimal)
    return None


def _default_expression(col: ColumnView, override: Optional[str]) -> Any:
    v = override if override is not None else col.default
    if v is None:
        return None
    text = v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) and col.code != "bit" else v
    if isinstance(text, str) and text.upper() == "CURRENT_TIMESTAMP":
        return "1970-01-01 00:00:00"
    if text == "<nil>":
        return None
    if col.code == "bit" and override is None:
        # parseBit: the first byte padded to flen%8 bits, every further byte to 8 bits.
        raw = v if isinstance(v, bytes) else str(v).encode("utf-8")
        if not raw:
            return ""
        first = format(raw[0], "b").zfill(col.flen % 8) if col.flen % 8 else format(raw[0], "b")
        return first + "".join(format(b, "08b") for b in raw[1:])
    return v


def _column_entry(col: ColumnView, pos: int, qdef: Optional[ColumnDef]) -> dict:
    decimal, flen = col.decimal, col.flen
    default_override = None
    if qdef is not None and qdef.type_name in ("DATETIME", "TIME", "TIMESTAMP", "YEAR"):
        # parseType: the statement's fsp (or YEAR width) and DEFAULT literal replace TiDB's.
        written = qdef.length if qdef.length is not None else -1
        if qdef.type_name == "YEAR":
            flen = written
        else:
            decimal = written
        default_override = qdef.default
    expression, name = expression_and_name(col)
    return {
        "name": col.name,
        "jdbcType": jdbc_type(col),
        "nativeType": None,
        # Columns written in the statement lose their comment (the visitor blanks it).
        "comment": (col.comment or None) if qdef is None else None,
        "defaultValueExpression": _default_expression(col, default_override),
        "enumValues": [f"'{e}'" for e in col.elems] if col.elems else None,
        "typeName": name,
        "typeExpression": expression,
        "charsetName": _charset(col),
        "length": _length(col, decimal, flen),
        "scale": _scale(col),
        "position": pos,
        "optional": not col.not_null,
        "autoIncremented": col.auto_increment,
        "generated": col.auto_increment,
    }


def _table_change(ddl: DDL, kind: str, db: str, table: str, info: TableSchema, tz: str) -> dict:
    entry: dict[str, Any] = {"type": kind}
    if ddl.ddl_type == _RENAME_TABLE and ddl.table_before is not None:
        old = ddl.table_before
        entry["id"] = f'"{old.schema}"."{old.table}","{db}"."{table}"'
    elif ddl.ddl_type == _EXCHANGE_PARTITION and ddl.table_before is not None:
        entry["id"] = f'"{ddl.table_before.schema}"."{ddl.table_before.table}"'
    else:
        entry["id"] = f'"{db}"."{table}"'
    if ddl.ddl_type == _DROP_TABLE:
        entry["table"] = None
        return entry
    view = table_view(info, tz)
    defs = column_defs(ddl.query)
    entry["table"] = {
        "defaultCharsetName": info.charset,
        "primaryKeyColumnNames": list(view.primary_key_names),
        "columns": [_column_entry(c, i + 1, defs.get(c.name)) for i, c in enumerate(view.columns)],
        "comment": None,
    }
    return entry


def _value_schema(opts: EnvelopeOptions) -> dict:
    def f(field: str, optional: bool, kind: str, **more: Any) -> dict:
        return {"field": field, "optional": optional, "type": kind, **more}

    string_items = {"type": "string", "optional": False}
    column_fields = [
        f("name", False, "string"), f("jdbcType", False, "int32"), f("nativeType", True, "int32"),
        f("typeName", False, "string"), f("typeExpression", True, "string"),
        f("charsetName", True, "string"), f("length", True, "int32"), f("scale", True, "int32"),
        f("position", False, "int32"), f("optional", True, "boolean"),
        f("autoIncremented", True, "boolean"), f("generated", True, "boolean"),
        f("comment", True, "string"), f("defaultValueExpression", True, "string"),
        f("enumValues", True, "array", items=string_items),
    ]
    table_fields = [
        f("defaultCharsetName", True, "string"),
        f("primaryKeyColumnNames", True, "array", items=string_items),
        f("columns", False, "array", items={
            "name": "io.debezium.connector.schema.Column", "optional": False, "type": "struct",
            "version": 1, "fields": column_fields}),
        f("comment", True, "string"),
    ]
    change_fields = [
        f("type", False, "string"), f("id", False, "string"),
        f("table", True, "struct", name="io.debezium.connector.schema.Table", version=1, fields=table_fields),
    ]
    return {
        "optional": False,
        "type": "struct",
        "version": 1,
        "name": "io.debezium.connector.mysql.SchemaChangeValue",
        "fields": [
            source_schema(opts, False),
            f("ts_ms", False, "int64"),
            f("databaseName", True, "string"),
            f("schemaName", True, "string"),
            f("ddl", True, "string"),
            f("tableChanges", False, "array", items={
                "name": "io.debezium.connector.schema.Change", "optional": False, "type": "struct",
                "version": 1, "fields": change_fields}),
        ],
    }


def encode_ddl(ddl: DDL, opts: EnvelopeOptions) -> Optional[tuple[bytes, bytes]]:
    """(key, value) of a DDL message, or None for DDL types TiCDC does not send."""
    kind = change_type(int(ddl.ddl_type))
    if kind is None:
        return None
    db, table = ddl.schema, ddl.table
    if ddl.ddl_type == _RENAME_TABLE and ddl.table_after is not None:
        # The DDL event is about the table's new name (GetTargetSchemaName/GetTargetTableName).
        db, table = ddl.table_after.schema, ddl.table_after.table
    key: dict[str, Any] = {"payload": {"databaseName": db}}
    if not opts.disable_schema:
        key["schema"] = {
            "type": "struct",
            "name": "io.debezium.connector.mysql.SchemaChangeKey",
            "optional": False,
            "version": 1,
            "fields": [{"field": "databaseName", "optional": False, "type": "string"}],
        }
    changes = []
    if table and ddl.ddl_type != _TRUNCATE_TABLE:
        info = ddl.table_after if ddl.table_after is not None else ddl.table_before
        if info is None and ddl.ddl_type != _DROP_TABLE:
            raise ValueError(f"DDL {ddl.query!r} on {db}.{table} carries no table schema")
        changes.append(_table_change(ddl, kind, db, table, info, opts.values.time_zone))
    value: dict[str, Any] = {"payload": {
        "source": source_payload(opts, db, table, ddl.commit_ts),
        "ts_ms": physical_ms(ddl.commit_ts),
        "databaseName": db,
        "schemaName": None,
        "ddl": ddl.query,
        "tableChanges": changes,
    }}
    if not opts.disable_schema:
        value["schema"] = _value_schema(opts)
    return dumps(key), dumps(value)
