"""Simple JSON messages (spec 004, "Message format"; field names per TiCDC pkg/sink/codec/simple/message.go)."""
from __future__ import annotations

from ticdc_conformance.protocols.common.wire import Malformed, json_object

from ..message import DDL_TYPES, DML_OPS, BootstrapMessage, DDLMessage, DMLMessage, Message, WatermarkMessage
from .fields import MAX_U64, checksum_from_wire, get_bool, get_dict, get_int, get_str, row_maps
from .table import table_from_wire


def parse_json(value: bytes) -> Message:
    obj = json_object(value, "message")
    version = get_int(obj, "version", "message")
    if version != 1:
        raise Malformed(f"unsupported Simple protocol version {version} (spec 004: currently 1)")
    mtype = get_str(obj, "type", "message")
    where = f"{mtype} message"
    commit_ts = get_int(obj, "commitTs", where, lo=0, hi=MAX_U64)
    build_ts = get_int(obj, "buildTs", where)
    if mtype == "WATERMARK":
        return WatermarkMessage(commit_ts, build_ts)
    if mtype == "BOOTSTRAP":
        return BootstrapMessage(table_from_wire(get_dict(obj, "tableSchema", where), "schema", f"{where} tableSchema"),
                                build_ts, commit_ts)
    if mtype in DDL_TYPES:
        sql = get_str(obj, "sql", where)
        schemas = []
        for key in ("tableSchema", "preTableSchema"):
            raw = get_dict(obj, key, where, optional=True)
            schemas.append(None if raw is None else table_from_wire(raw, "schema", f"{where} {key}"))
        return DDLMessage(mtype, sql, commit_ts, schemas[0], schemas[1], build_ts)
    op = DML_OPS.get(mtype)
    if op is None:
        raise Malformed(f"unknown message type {mtype!r}")
    schema = get_str(obj, "database", where)
    table = get_str(obj, "table", where)
    get_int(obj, "tableID", where, optional=True)
    # `schemaVersion` is omitempty in TiCDC's message struct, so absence means version 0.
    schema_version = get_int(obj, "schemaVersion", where, optional=True, lo=0, hi=MAX_U64) or 0
    handle_key_only = bool(get_bool(obj, "handleKeyOnly", where, optional=True))
    location = get_str(obj, "claimCheckLocation", where, optional=True) or None
    checksum = checksum_from_wire(get_dict(obj, "checksum", where, optional=True), where)
    data = get_dict(obj, "data", where, optional=True)
    old = get_dict(obj, "old", where, optional=True)
    row_maps(op, data, old)
    return DMLMessage(op, schema, table, commit_ts, schema_version, data, old, handle_key_only, location,
                      checksum, build_ts)
