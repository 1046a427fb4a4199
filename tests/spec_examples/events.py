"""Builds the project's upstream model (tables, row changes, DDL) and sink events from an
example file's plain data.

Row images are whole rows in the canonical JSON form (generators/ticdc_contract/canonical.py):
binary columns as base64, DECIMAL and temporal values as TiDB prints them. Column types are SQL
text, read by `parse_sql_type` the way TiDB reads a column definition.
"""
from __future__ import annotations

from typing import Any

from ticdc_conformance.consumers.rules.sql_types import parse_sql_type
from ticdc_contract.canonical import value_from_json
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent, SinkEvent, WatermarkEvent


class ExampleDataError(ValueError):
    """An example file that does not describe a buildable event."""


# The keys each object may carry; anything else is a typo that would silently change the event.
_TABLE_KEYS = {"schema", "table", "table_id", "schema_version", "pk_is_handle", "charset", "collate", "columns",
               "indexes", "source_sql"}
_COLUMN_KEYS = {"name", "type", "nullable", "auto_increment", "comment"}
_INDEX_KEYS = {"name", "columns", "primary", "unique"}
_EVENT_KEYS = {
    "row": {"kind", "table", "op", "before", "after", "commit_ts", "start_ts"},
    "ddl": {"kind", "commit_ts", "type", "query", "schema", "table", "table_before", "table_after"},
    "watermark": {"kind", "ts"},
    "bootstrap": {"kind", "table"},
}


def _check_keys(obj: dict, allowed: set, what: str) -> None:
    unknown = set(obj) - allowed
    if unknown:
        raise ExampleDataError(f"{what}: unknown keys {sorted(unknown)}")


def build_table(spec: dict) -> TableSchema:
    _check_keys(spec, _TABLE_KEYS, f"table {spec.get('table')!r}")
    for c in spec["columns"]:
        _check_keys(c, _COLUMN_KEYS, f"column {c.get('name')!r} of {spec['table']}")
    for ix in spec.get("indexes", ()):
        _check_keys(ix, _INDEX_KEYS, f"index {ix.get('name')!r} of {spec['table']}")
    columns = tuple(
        Column(
            name=c["name"],
            type=parse_sql_type(c["type"]),
            nullable=c.get("nullable", True),
            auto_increment=c.get("auto_increment", False),
            comment=c.get("comment", ""),
            column_id=i + 1,
        )
        for i, c in enumerate(spec["columns"])
    )
    indexes = tuple(
        Index(ix["name"], tuple(ix["columns"]), primary=ix.get("primary", False), unique=ix.get("unique", False))
        for ix in spec.get("indexes", ())
    )
    names = {c.name for c in columns}
    for ix in indexes:
        missing = [c for c in ix.columns if c not in names]
        if missing:
            raise ExampleDataError(f"index {ix.name} of {spec['table']} names unknown columns {missing}")
    return TableSchema(
        schema=spec["schema"],
        table=spec["table"],
        table_id=spec["table_id"],
        columns=columns,
        indexes=indexes,
        schema_version=spec["schema_version"],
        charset=spec.get("charset", "utf8mb4"),
        collate=spec.get("collate", "utf8mb4_bin"),
        pk_is_handle=spec.get("pk_is_handle", False),
    )


def _row(table: TableSchema, image: Any) -> Any:
    if image is None:
        return None
    if set(image) != set(table.column_names):
        raise ExampleDataError(f"row image of {table.qualified_name} has columns {sorted(image)}, "
                               f"the table {sorted(table.column_names)}: a row image is a whole row")
    return {c.name: value_from_json(c.type, image[c.name]) for c in table.columns}


def _table(tables: dict[str, TableSchema], ref: Any) -> Any:
    if ref is None:
        return None
    try:
        return tables[ref]
    except KeyError:
        raise ExampleDataError(f"event names table {ref!r}, not one of {sorted(tables)}") from None


def build_event(spec: dict, tables: dict[str, TableSchema]) -> SinkEvent:
    kind = spec["kind"]
    if kind not in _EVENT_KEYS:
        raise ExampleDataError(f"unknown event kind {kind!r}")
    _check_keys(spec, _EVENT_KEYS[kind], f"{kind} event")
    if kind == "row":
        table = _table(tables, spec["table"])
        change = RowChange(table, Op(spec["op"]), _row(table, spec.get("before")), _row(table, spec.get("after")))
        return RowEvent(change, commit_ts=spec["commit_ts"], start_ts=spec.get("start_ts", 0))
    if kind == "ddl":
        return DDLEvent(DDL(
            commit_ts=spec["commit_ts"],
            ddl_type=DDLType[spec["type"]],
            query=spec["query"],
            schema=spec["schema"],
            table=spec["table"],
            table_after=_table(tables, spec.get("table_after")),
            table_before=_table(tables, spec.get("table_before")),
        ))
    if kind == "watermark":
        return WatermarkEvent(spec["ts"])
    return BootstrapEvent(_table(tables, spec["table"]))


def build_events(example: dict) -> list[SinkEvent]:
    tables = {name: build_table(t) for name, t in example.get("tables", {}).items()}
    return [build_event(e, tables) for e in example["events"]]
