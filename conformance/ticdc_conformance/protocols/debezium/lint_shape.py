"""Debezium messages checked for what the decoder does not hold them to (spec 000, "Message format
definition"; spec 001, its Japanese edition).

- The schema names: a DML key `{cluster}.{db}.{table}.Key`, its value `{cluster}.{db}.{table}.Envelope`,
  a WATERMARK key `{cluster}.watermark.Key` with an empty payload, its value
  `{cluster}.watermark.Envelope`, a DDL key `io.debezium.connector.mysql.SchemaChangeKey` holding the
  database name only, its value `io.debezium.connector.mysql.SchemaChangeValue` (the spec's example;
  TiCDC pkg/sink/codec/debezium/codec.go EncodeKey / EncodeDDLEvent / EncodeResolvedEvent). The
  cluster is the one `payload.source.name` names, so key and value must agree on it.
- A DML key's payload holds the handle columns with their current values: the row image's values.
- A DML names its commit ts (`payload.source.commit_ts`, a uint64).
- A DDL's `tableChanges[].table` has the fields and JSON types the spec's table lists, and the columns
  its statement defines carry the charsetName, enumValues and temporal defaults TiDB recorded from
  those definitions (lint_columns.py).
- No field is of a spatial type (TiDB has none), of REAL or BOOLEAN (TiCDC writes DOUBLE and
  TINYINT), and no BLOB, TEXT, GEOMETRY or JSON column has a default value.
- A message is a DDL, DML or WATERMARK event, nothing else (from v9.0.0 all three may come).
"""
from __future__ import annotations

from typing import Any, Optional

from ...rules import checks_rules
from ..common.lint import Problem, StatedColumnsReader
from .lint_columns import check_ddl_columns

ROW_OPS = ("c", "r", "u", "d")
DDL_KEY_NAME = "io.debezium.connector.mysql.SchemaChangeKey"
DDL_VALUE_NAME = "io.debezium.connector.mysql.SchemaChangeValue"
SPATIAL = frozenset({"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                     "multipolygon", "geometrycollection"})
CONVERTED = {"real": "double", "bool": "tinyint", "boolean": "tinyint"}  # spec 000: REAL->DOUBLE, BOOLEAN->TINYINT(1)
NO_DEFAULT = frozenset({"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext",
                        "longtext", "json", *SPATIAL})
_U64_MAX = 2**64 - 1

# tableChanges[].table field -> (JSON types allowed, may be null); spec 000's table. primaryKeyColumnNames
# is an array of strings in the spec's example and in TiCDC's writer, although the table says string.
_TABLE_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "defaultCharsetName": ((str,), True), "primaryKeyColumnNames": ((list,), False), "columns": ((list,), False)}
_COLUMN_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "name": ((str,), False), "jdbcType": ((int,), False), "comment": ((str,), True),
    "defaultValueExpression": ((str,), True), "enumValues": ((list, str), True), "charsetName": ((str,), True),
    "length": ((int,), True), "scale": ((int,), True), "position": ((int,), False), "optional": ((bool,), False)}


def _name(doc: Optional[dict]) -> Any:
    schema = doc.get("schema") if isinstance(doc, dict) else None
    return schema.get("name") if isinstance(schema, dict) else None


def _kind(payload: dict) -> Optional[str]:
    op = payload.get("op")
    if op in ROW_OPS:
        return "dml"
    if op == "m":
        return "watermark"
    if op is None and "ddl" in payload:
        return "ddl"
    return None


@checks_rules("DBZ-EVENTS-1", name="lint.debezium.event-kind",
              description="a message is a DDL, DML or WATERMARK event")
def check_kind(payload: dict, problems: list[Problem]) -> Optional[str]:
    """The message's kind, or None with a problem when it is none of the three."""
    kind = _kind(payload)
    if kind is None:
        what = f"op {payload['op']!r}" if "op" in payload else "neither 'op' nor 'ddl'"
        problems.append(Problem("DBZ-EVENTS-1", f"payload with {what} is not a DDL, DML or WATERMARK event"))
    return kind


@checks_rules("DBZ-KEY-3", "DBZ-KEY-6", "DBZ-SCHEMA-3", "DBZ-SCHEMA-5", "DBZ-SCHEMA-2", "DBZ-KEY-1",
              "DBZ-WATERMARK-2", "DBZ-WATERMARK-4", name="lint.debezium.schema-names",
              description="key and value schemas carry the names spec 000 gives each message kind")
def check_names(kind: str, key: Optional[dict], value: dict, problems: list[Problem]) -> None:
    """Without schemas (debezium-disable-schema) there are no names to check."""
    source = value["payload"].get("source")
    source = source if isinstance(source, dict) else {}
    cluster, db, table = source.get("name"), source.get("db"), source.get("table")
    if kind != "ddl" and not all(isinstance(n, str) for n in (cluster, db, table)):
        return  # no names to hold the schemas to; the decoder rejects a message without its source
    if kind == "dml":
        expected = {"key": ("DBZ-KEY-3", f"{cluster}.{db}.{table}.Key"),
                    "value": ("DBZ-SCHEMA-3", f"{cluster}.{db}.{table}.Envelope")}
    elif kind == "watermark":
        expected = {"key": ("DBZ-WATERMARK-2", f"{cluster}.watermark.Key"),
                    "value": ("DBZ-WATERMARK-4", f"{cluster}.watermark.Envelope")}
    else:
        expected = {"key": ("DBZ-KEY-1", DDL_KEY_NAME), "value": ("DBZ-SCHEMA-2", DDL_VALUE_NAME)}
    for part, doc in (("key", key), ("value", value)):
        name = _name(doc)
        rule, want = expected[part]
        if isinstance(doc, dict) and isinstance(doc.get("schema"), dict) and name != want:
            problems.append(Problem(rule, f"{kind} {part} schema is named {name!r}, not {want!r}"))


@checks_rules("DBZ-KEY-1", "DBZ-WATERMARK-2", name="lint.debezium.key-payload",
              description="a DDL key holds the database name only; a WATERMARK key holds nothing")
def check_bare_key(kind: str, key: Optional[dict], value: dict, problems: list[Problem]) -> None:
    payload = key.get("payload") if isinstance(key, dict) else None
    if not isinstance(payload, dict):
        return  # the decoder's reason says what is wrong with the key
    if kind == "watermark" and payload:
        problems.append(Problem("DBZ-WATERMARK-2", f"WATERMARK key payload {sorted(payload)} is not empty"))
    if kind == "ddl":
        database = value["payload"].get("databaseName")
        if set(payload) != {"databaseName"} or payload["databaseName"] != database:
            problems.append(Problem("DBZ-KEY-1", f"DDL key payload {payload!r} is not "
                                                 f"{{'databaseName': {database!r}}}"))


@checks_rules("DBZ-KEY-5", name="lint.debezium.key-values",
              description="a DML key's columns hold the row's current values")
def check_key_values(key: Optional[dict], payload: dict, problems: list[Problem]) -> None:
    fields = key.get("payload") if isinstance(key, dict) else None
    image = payload.get("before") if payload.get("op") == "d" else payload.get("after")
    if not isinstance(fields, dict) or not isinstance(image, dict):
        return
    for column, v in fields.items():
        # A column the value lacks (a column selector dropped it) cannot be compared.
        if column in image and image[column] != v:
            problems.append(Problem("DBZ-KEY-5", f"key column {column!r} is {v!r}, the row's value "
                                                 f"{image[column]!r}"))


@checks_rules("DBZ-DML-10", name="lint.debezium.commit-ts",
              description="a DML carries its commit ts as payload.source.commit_ts, a uint64")
def check_commit_ts(payload: dict, problems: list[Problem]) -> None:
    source = payload.get("source")
    ts = source.get("commit_ts") if isinstance(source, dict) else None
    if not isinstance(ts, int) or isinstance(ts, bool) or not 0 < ts <= _U64_MAX:
        problems.append(Problem("DBZ-DML-10", f"payload.source.commit_ts is {ts!r}, not a commit TSO"))


@checks_rules("DBZ-DDL-4", name="lint.debezium.table-changes",
              description="tableChanges[].table has the fields and types spec 000 lists")
def check_table_changes(payload: dict, problems: list[Problem]) -> None:
    changes = payload.get("tableChanges")
    for i, change in enumerate(changes if isinstance(changes, list) else ()):
        table = change.get("table") if isinstance(change, dict) else None
        if not isinstance(table, dict):
            continue  # DROP TABLE carries none; other shapes the decoder rejects
        where = f"tableChanges[{i}].table"
        _fields(table, _TABLE_FIELDS, where, problems)
        pk = table.get("primaryKeyColumnNames")
        if isinstance(pk, list) and not all(isinstance(n, str) for n in pk):
            problems.append(Problem("DBZ-DDL-4", f"{where}.primaryKeyColumnNames {pk!r} holds a non-string"))
        columns = table.get("columns")
        for j, column in enumerate(columns if isinstance(columns, list) else ()):
            if isinstance(column, dict):
                _fields(column, _COLUMN_FIELDS, f"{where}.columns[{j}]", problems)


def _fields(obj: dict, spec: dict[str, tuple[tuple[type, ...], bool]], where: str, problems: list[Problem]) -> None:
    for field, (types, nullable) in spec.items():
        if field not in obj:
            problems.append(Problem("DBZ-DDL-4", f"{where} lacks {field!r}"))
            continue
        v = obj[field]
        if v is None and nullable:
            continue
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            problems.append(Problem("DBZ-DDL-4", f"{where}.{field} is {v!r}, not "
                                                 f"{' or '.join(t.__name__ for t in types)}"))


@checks_rules("DBZ-TYPEMAP-2", "DBZ-TYPEMAP-12", "DBZ-TYPEMAP-5", "DBZ-TYPEMAP-6", name="lint.debezium.type-limits",
              description="no spatial, REAL or BOOLEAN type, and no default on a BLOB, TEXT, GEOMETRY or JSON column")
def check_type_limits(type_name: Any, has_default: bool, where: str, problems: list[Problem]) -> None:
    """`type_name` is a field's tidb_type or a DDL column's typeName; `has_default` whether it has one."""
    if not isinstance(type_name, str):
        return
    base = type_name.strip().lower().split(" ")[0].split("(")[0]
    if base in SPATIAL:
        problems.append(Problem("DBZ-TYPEMAP-2", f"{where}: type {type_name!r} is spatial; TiDB has no spatial types"))
    elif base in CONVERTED:
        problems.append(Problem("DBZ-TYPEMAP-5", f"{where}: type {type_name!r}; TiCDC writes it as "
                                                 f"{CONVERTED[base]}"))
    if base in NO_DEFAULT and has_default:
        problems.append(Problem("DBZ-TYPEMAP-6", f"{where}: a {base} column with a default value; "
                                                 f"TiCDC gives such columns none"))


def field_types(schema: Optional[dict], part: str) -> list[tuple[Any, bool, str]]:
    """(tidb_type, has a default, field name) of each field of the envelope's `part` struct."""
    fields = schema.get("fields") if isinstance(schema, dict) else None
    descriptor = next((f for f in fields if isinstance(f, dict) and f.get("field") == part), None) \
        if isinstance(fields, list) else None
    inner = descriptor.get("fields") if isinstance(descriptor, dict) else None
    return [(f.get("tidb_type"), "default" in f, str(f.get("field"))) for f in inner or () if isinstance(f, dict)]


def ddl_column_types(payload: dict) -> list[tuple[Any, bool, str]]:
    """(typeName, has a default, column name) of each column a DDL's tableChanges describe."""
    out = []
    changes = payload.get("tableChanges")
    for change in changes if isinstance(changes, list) else ():
        table = change.get("table") if isinstance(change, dict) else None
        columns = table.get("columns") if isinstance(table, dict) else None
        for c in columns if isinstance(columns, list) else ():
            if isinstance(c, dict):
                out.append((c.get("typeName"), c.get("defaultValueExpression") is not None, str(c.get("name"))))
    return out


def check_message(key: Optional[dict], value: dict, stated_columns: Optional[StatedColumnsReader],
                  problems: list[Problem]) -> None:
    """Every check above that applies to the message's kind (the DDL column checks only given a
    reader of the statement's column definitions)."""
    payload = value["payload"]
    kind = check_kind(payload, problems)
    if kind is None:
        return
    check_names(kind, key, value, problems)
    check_bare_key(kind, key, value, problems)
    if kind == "dml":
        check_key_values(key, payload, problems)
        check_commit_ts(payload, problems)
        source = payload.get("source") if isinstance(payload.get("source"), dict) else {}
        for part in ("before", "after"):
            for type_name, default, name in field_types(value.get("schema"), part):
                check_type_limits(type_name, default, f"{source.get('db')}.{source.get('table')} {part}.{name}",
                                  problems)
    elif kind == "ddl":
        check_table_changes(payload, problems)
        if stated_columns is not None:
            check_ddl_columns(payload, stated_columns, problems)
        for type_name, default, name in ddl_column_types(payload):
            check_type_limits(type_name, default, f"DDL column {name}", problems)
