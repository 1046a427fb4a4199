"""Simple protocol message bodies (spec 004, "Message format"), as JSON objects and Avro records.

JSON field order is the field order of TiCDC's `message` struct (pkg/sink/codec/simple/message.go),
with its `omitempty` rules: version, database, table, tableID, type, sql, commitTs, buildTs,
schemaVersion, claimCheckLocation, handleKeyOnly, checksum, data, old, tableSchema, preTableSchema.
`commitTs` and `buildTs` are always present (BOOTSTRAP's commitTs is 0); the others only when set.
Avro records follow pkg/sink/codec/simple/avro.go, one Message record wrapping the payload branch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ticdc_contract.checksum import RowChecksum, change_checksum
from ticdc_contract.model import DDL, Op, Row, RowChange, TableSchema

from ..golang.json_text import ENCODING_JSON, dumps, encoding_json_piece
from .avro_schema import NAMESPACE
from .ddl import ddl_type, table_schemas
from .table_schema import avro_table_schema, json_table_schema
from .values import avro_renderer, json_renderer

VERSION = 1  # spec 004: "The version number of the protocol, which is currently 1"
_DML_TYPE = {Op.INSERT: "INSERT", Op.UPDATE: "UPDATE", Op.DELETE: "DELETE"}


@dataclass(frozen=True)
class Style:
    """What differs between the TiCDC generations and the sink options, for message bodies."""

    time_zone: str = "UTC"
    tiflow: bool = False
    # [integrity] integrity-check-level = "correctness": DML messages carry the row checksum
    row_checksum: bool = False


def row_checksum(change: RowChange, style: Style) -> Optional[RowChecksum]:
    """The checksum a DML message carries: TiCDC message.go newDMLMessage and avro.go attach the
    whole row's checksum whenever the integrity check is on, handle-key-only messages included
    (column selectors are refused together with it). Classic tiflow orders the columns by ID."""
    if not style.row_checksum:
        return None
    return change_checksum(change, style.time_zone, by_column_id=style.tiflow)


# --- JSON -------------------------------------------------------------------------------------
def _sent_columns(table: TableSchema, only_handle_key: bool, selected: Optional[frozenset[str]] = None):
    """The columns a DML message carries: all, or (a too-large message, TiCDC formatColumns and
    collectColumns with onlyHandleKey) the handle-key columns only; under sink.column-selectors
    only `selected` ones either way (table schemas stay whole)."""
    columns = table.columns if selected is None else tuple(c for c in table.columns if c.name in selected)
    if not only_handle_key:
        return columns
    keys = set(table.handle_key)
    return tuple(c for c in columns if c.name in keys)


# Table versions whose row columns are kept (_row_columns), by identity and the message form.
_ROW_COLUMNS: dict[tuple, tuple[TableSchema, tuple[tuple[str, Callable[[Any], Any]], ...]]] = {}
_ROW_COLUMNS_KEPT = 4096


def _row_columns(table: TableSchema, style: Style, avro: bool, only_handle_key: bool,
                 selected: Optional[frozenset[str]]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """(name, value renderer) of the columns a DML row map carries, worked out once per table
    version and message form: JSON's in name order (a Go map[string]interface{}: encoding/json
    writes its keys in byte order, and UTF-8 order is code point order), Avro's in table order (Avro maps have no
    order; TiCDC writes Go's random map order, table order keeps output stable)."""
    # Style's own hash is a Python function over its fields, once per row image: the key holds
    # the two fields the renderers depend on instead.
    cache_key = (id(table), style.time_zone, style.tiflow, avro, only_handle_key, selected)
    entry = _ROW_COLUMNS.get(cache_key)
    if entry is None or entry[0] is not table:
        columns = _sent_columns(table, only_handle_key, selected)
        if avro:
            named = tuple((c.name, avro_renderer(c.type, style.time_zone, bit_as_long=style.tiflow)) for c in columns)
        else:
            named = tuple(sorted(((c.name, json_renderer(c.type, style.time_zone)) for c in columns),
                                 key=lambda pair: pair[0]))
        if len(_ROW_COLUMNS) >= _ROW_COLUMNS_KEPT:
            _ROW_COLUMNS.clear()
        entry = _ROW_COLUMNS[cache_key] = (table, named)
    return entry[1]


def _json_row(table: TableSchema, row: Row, style: Style, only_handle_key: bool = False,
              selected: Optional[frozenset[str]] = None) -> dict[str, Any]:
    get = row.get
    return {name: render(get(name)) for name, render in _row_columns(table, style, False, only_handle_key, selected)}


def json_dml(change: RowChange, commit_ts: int, build_ts: int, style: Style, only_handle_key: bool = False,
             claim_check_location: str = "", selected: Optional[frozenset[str]] = None) -> dict[str, Any]:
    """A DML message; `only_handle_key` and `claim_check_location` make the form TiCDC sends for
    a row over max-message-bytes (marshaller.go MarshalRowChangedEvent(event, true, location))."""
    t = change.table
    msg: dict[str, Any] = {"version": VERSION, "database": t.schema, "table": t.table}
    if t.table_id:
        msg["tableID"] = t.table_id
    msg["type"] = _DML_TYPE[change.op]
    msg["commitTs"] = commit_ts
    msg["buildTs"] = build_ts
    if t.schema_version:
        msg["schemaVersion"] = t.schema_version
    # `claimCheckLocation` and `handleKeyOnly` are omitempty fields of the message struct
    if claim_check_location:
        msg["claimCheckLocation"] = claim_check_location
    if only_handle_key:
        msg["handleKeyOnly"] = True
    checksum = row_checksum(change, style)
    if checksum is not None:  # the Go struct's field order: version, corrupted, current, previous
        msg["checksum"] = {"version": checksum.version, "corrupted": checksum.corrupted,
                           "current": checksum.current, "previous": checksum.previous}
    # spec 004 DML: INSERT has only `data`, DELETE only `old`, UPDATE both
    if change.op in (Op.INSERT, Op.UPDATE):
        data = _json_row(t, change.after, style, only_handle_key, selected)
        if data:
            msg["data"] = data
    if change.op in (Op.UPDATE, Op.DELETE):
        old = _json_row(t, change.before, style, only_handle_key, selected)
        if old:
            msg["old"] = old
    return msg


# (table version, DML type) -> (the version, the bytes of a DML message up to its commitTs value,
# those after its buildTs value up to its rows), by identity.
_DML_FRAMES: dict[tuple[int, Op], tuple[TableSchema, bytes, bytes]] = {}
_DML_FRAMES_KEPT = 4096


def _dml_frame(t: TableSchema, op: Op) -> tuple[TableSchema, bytes, bytes]:
    key = (id(t), op)
    entry = _DML_FRAMES.get(key)
    if entry is None or entry[0] is not t:
        head = [b'{"version":%d,"database":' % VERSION, dumps(t.schema, ENCODING_JSON), b',"table":',
                dumps(t.table, ENCODING_JSON)]
        if t.table_id:
            head.append(b',"tableID":%d' % t.table_id)
        head.append(b',"type":"%s","commitTs":' % _DML_TYPE[op].encode("ascii"))
        tail = b',"schemaVersion":%d' % t.schema_version if t.schema_version else b""
        if len(_DML_FRAMES) >= _DML_FRAMES_KEPT:
            _DML_FRAMES.clear()
        entry = _DML_FRAMES[key] = (t, b"".join(head), tail)
    return entry


def json_dml_bytes(change: RowChange, commit_ts: int, build_ts: int, style: Style,
                   selected: Optional[frozenset[str]] = None) -> Optional[bytes]:
    """`dumps(json_dml(change, commit_ts, build_ts, style, selected=selected), ENCODING_JSON)` for
    a message of whole rows without a checksum, joined from the table version's fixed bytes
    (written once by the Go writer) and the rows written by orjson; None when orjson would write
    a row otherwise (json_text.encoding_json_piece) or the message carries a checksum: the caller
    takes json_dml (tests/generators/protocols/test_fast_paths.py)."""
    if style.row_checksum:
        return None
    t = change.table
    _, head, tail = _dml_frame(t, change.op)
    parts = [head, b"%d" % commit_ts, b',"buildTs":', b"%d" % build_ts, tail]
    # spec 004 DML: INSERT has only `data`, DELETE only `old`, UPDATE both; an empty map is left out
    if change.op is Op.INSERT:
        images: tuple[tuple[Row, bytes], ...] = ((change.after, b',"data":'),)
    elif change.op is Op.DELETE:
        images = ((change.before, b',"old":'),)
    else:
        images = ((change.after, b',"data":'), (change.before, b',"old":'))
    for image, member in images:
        row = _json_row(t, image, style, False, selected)
        if row:
            piece = encoding_json_piece(row)
            if piece is None:
                return None
            parts.append(member)
            parts.append(piece)
    parts.append(b"}")
    return b"".join(parts)


def json_ddl(ddl: DDL, build_ts: int, style: Style) -> dict[str, Any]:
    msg: dict[str, Any] = {"version": VERSION, "type": ddl_type(ddl.ddl_type)}
    if ddl.query:
        msg["sql"] = ddl.query
    msg["commitTs"] = ddl.commit_ts
    msg["buildTs"] = build_ts
    current, previous = table_schemas(ddl, style.tiflow)
    if current is not None:
        msg["tableSchema"] = json_table_schema(current, style.time_zone, style.tiflow)
    if previous is not None:
        msg["preTableSchema"] = json_table_schema(previous, style.time_zone, style.tiflow)
    return msg


def json_watermark(ts: int, build_ts: int) -> dict[str, Any]:
    return {"version": VERSION, "type": "WATERMARK", "commitTs": ts, "buildTs": build_ts}


def json_bootstrap(table: TableSchema, build_ts: int, style: Style) -> dict[str, Any]:
    # spec 004 BOOTSTRAP: "The commitTs of the BOOTSTRAP is 0"
    return {"version": VERSION, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": build_ts,
            "tableSchema": json_table_schema(table, style.time_zone, style.tiflow)}


# --- Avro -------------------------------------------------------------------------------------
def _message(kind: str, record: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "payload": (f"{NAMESPACE}.{record}", payload)}


def _avro_row(table: TableSchema, row: Row, style: Style, only_handle_key: bool = False,
              selected: Optional[frozenset[str]] = None) -> dict[str, Any]:
    get = row.get
    return {name: render(get(name)) for name, render in _row_columns(table, style, True, only_handle_key, selected)}


def _avro_checksum(checksum: Optional[RowChecksum]) -> Optional[tuple[str, dict[str, Any]]]:
    # avro.go writes current/previous as int64(uint32): never negative
    if checksum is None:
        return None
    return (f"{NAMESPACE}.Checksum", {"version": checksum.version, "corrupted": checksum.corrupted,
                                      "current": checksum.current, "previous": checksum.previous})


def avro_dml(change: RowChange, commit_ts: int, build_ts: int, style: Style, only_handle_key: bool = False,
             claim_check_location: str = "", selected: Optional[frozenset[str]] = None) -> dict[str, Any]:
    """As json_dml; avro.go newDMLMessageMap sets the `handleKeyOnly` and `claimCheckLocation`
    unions only for a too-large message (null otherwise)."""
    t = change.table
    payload = {
        "version": VERSION,
        "database": t.schema,
        "table": t.table,
        "tableID": t.table_id,
        "type": _DML_TYPE[change.op],
        "commitTs": commit_ts,
        "buildTs": build_ts,
        "schemaVersion": t.schema_version,
        "claimCheckLocation": claim_check_location or None,
        "handleKeyOnly": True if only_handle_key else None,
        "checksum": _avro_checksum(row_checksum(change, style)),
        "data": (_avro_row(t, change.after, style, only_handle_key, selected)
                 if change.op in (Op.INSERT, Op.UPDATE) else None),
        "old": (_avro_row(t, change.before, style, only_handle_key, selected)
                if change.op in (Op.UPDATE, Op.DELETE) else None),
    }
    return _message("DML", "DML", payload)


def _avro_schema_or_none(table: Optional[TableSchema], style: Style) -> Optional[dict[str, Any]]:
    if table is None:
        return None
    # classic tiflow's Avro DataType has no TIMESTAMP decimal (tiflow pkg/sink/codec/simple/avro.go)
    return avro_table_schema(table, style.time_zone, style.tiflow, decimal_for_timestamp=not style.tiflow)


def avro_ddl(ddl: DDL, build_ts: int, style: Style) -> dict[str, Any]:
    current, previous = table_schemas(ddl, style.tiflow)
    payload = {
        "version": VERSION,
        "type": ddl_type(ddl.ddl_type),
        "sql": ddl.query,
        "commitTs": ddl.commit_ts,
        "buildTs": build_ts,
        "tableSchema": _avro_schema_or_none(current, style),
        "preTableSchema": _avro_schema_or_none(previous, style),
    }
    return _message("DDL", "DDL", payload)


def avro_watermark(ts: int, build_ts: int) -> dict[str, Any]:
    return _message("WATERMARK", "Watermark", {"version": VERSION, "commitTs": ts, "buildTs": build_ts})


def avro_bootstrap(table: TableSchema, build_ts: int, style: Style) -> dict[str, Any]:
    # the Avro Bootstrap record has no commitTs field at all
    payload = {"version": VERSION, "buildTs": build_ts, "tableSchema": _avro_schema_or_none(table, style)}
    return _message("BOOTSTRAP", "Bootstrap", payload)
