"""The Avro schema of the Simple protocol, built from spec 004 (Simple Protocol, Avro) field tables.

Spec 004 defines every Avro message as the `com.pingcap.simple.avro.Message` record inside one
union of named records; TiCDC pkg/sink/codec/simple/message.json is the same union and its
marshaller writes each datum with the union index of the Message branch first and no schema
registry framing (TiCDC pkg/sink/codec/simple/marshaller.go: goavro BinaryFromNative of a
{"com.pingcap.simple.avro.Message": ...} union datum).
The decoders read with TiCDC's message.json as the contract vendors it (ticdc_contract.avro_schema),
never with this builder; tests/contract/test_avro_schema.py holds the two to one schema.
"""
from __future__ import annotations

import io
from typing import Any

import fastavro

NAMESPACE = "com.pingcap.simple.avro"


def _ref(name: str) -> str:
    return f"{NAMESPACE}.{name}"


def _optional(name: str, avro_type: Any) -> dict:
    # what JSON leaves out (omitempty) is a ["null", T] union defaulting to null in the Avro schema
    return {"name": name, "type": ["null", avro_type], "default": None}


def _field(name: str, avro_type: Any) -> dict:
    return {"name": name, "type": avro_type}


def _record(name: str, doc: str, fields: list[dict]) -> dict:
    return {"namespace": NAMESPACE, "name": name, "type": "record", "doc": doc, "fields": fields}


def value_union() -> list:
    # spec 004 "mysqlType 参考表格": each mysqlType maps to one of these Avro branches
    return ["null", "long", "float", "double", "string", "bytes", _ref("Timestamp"), _ref("UnsignedBigint")]


def _row_map(name: str) -> dict:
    return _optional(name, {"type": "map", "values": value_union()})


def build_schema() -> list[dict]:
    """The union of all Simple protocol records, in the order spec 004 declares them."""
    data_type = _record("DataType", "each column's mysql type information", [
        _field("mysqlType", "string"),
        _field("charset", "string"),
        _field("collate", "string"),
        _field("length", "long"),
        _optional("decimal", "int"),
        _optional("elements", {"type": "array", "items": "string"}),
        _optional("unsigned", "boolean"),
        _optional("zerofill", "boolean"),
    ])
    column_schema = _record("ColumnSchema", "each column's schema information", [
        _field("name", "string"),
        _field("dataType", _ref("DataType")),
        _field("nullable", "boolean"),
        # a column default is always present in the record, possibly null, so it has no Avro default
        _field("default", ["null", "string"]),
    ])
    index_schema = _record("IndexSchema", "each index's schema information", [
        _field("name", "string"),
        _field("unique", "boolean"),
        _field("primary", "boolean"),
        _field("nullable", "boolean"),
        _field("columns", {"type": "array", "items": "string"}),
    ])
    table_schema = _record("TableSchema", "table schema information", [
        _field("database", "string"),
        _field("table", "string"),
        _field("tableID", "long"),
        _field("version", "long"),
        _field("columns", {"type": "array", "items": _ref("ColumnSchema")}),
        _field("indexes", {"type": "array", "items": _ref("IndexSchema")}),
    ])
    checksum = _record("Checksum", "event's e2e checksum information", [
        _field("version", "int"),
        _field("corrupted", "boolean"),
        _field("current", "long"),
        _field("previous", "long"),
    ])
    watermark = _record("Watermark", "the message format of the watermark event", [
        _field("version", "int"),
        _field("commitTs", "long"),
        _field("buildTs", "long"),
    ])
    bootstrap = _record("Bootstrap", "the message format of the bootstrap event", [
        _field("version", "int"),
        _field("buildTs", "long"),
        _field("tableSchema", _ref("TableSchema")),
    ])
    ddl = _record("DDL", "the message format of the DDL event", [
        _field("version", "int"),
        _field("type", {"type": "enum", "name": "DDLType", "symbols": list(DDL_TYPE_SYMBOLS)}),
        _field("sql", "string"),
        _field("commitTs", "long"),
        _field("buildTs", "long"),
        _optional("tableSchema", _ref("TableSchema")),
        _optional("preTableSchema", _ref("TableSchema")),
    ])
    timestamp = _record("Timestamp", "the timestamp value format", [
        _field("location", "string"),
        _field("value", "string"),
    ])
    unsigned_bigint = _record("UnsignedBigint", "unsigned bigint value format", [
        _field("value", "long"),
    ])
    dml = _record("DML", "the message format of the DML event", [
        _field("version", "int"),
        _field("database", "string"),
        _field("table", "string"),
        _field("tableID", "long"),
        _field("type", {"type": "enum", "name": "DMLType", "symbols": list(DML_TYPE_SYMBOLS)}),
        _field("commitTs", "long"),
        _field("buildTs", "long"),
        _field("schemaVersion", "long"),
        _optional("claimCheckLocation", "string"),
        _optional("handleKeyOnly", "boolean"),
        _optional("checksum", _ref("Checksum")),
        _row_map("data"),
        _row_map("old"),
    ])
    message = _record("Message", "the wrapper for all kind of messages", [
        _field("type", {"type": "enum", "name": "MessageType", "symbols": list(MESSAGE_TYPE_SYMBOLS)}),
        _field("payload", [_ref(n) for n in PAYLOAD_BRANCHES]),
    ])
    return [data_type, column_schema, index_schema, table_schema, checksum, watermark, bootstrap,
            ddl, timestamp, unsigned_bigint, dml, message]


DDL_TYPE_SYMBOLS = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")
DML_TYPE_SYMBOLS = ("INSERT", "UPDATE", "DELETE")
MESSAGE_TYPE_SYMBOLS = ("WATERMARK", "BOOTSTRAP", "DDL", "DML")
# The Message.payload branches, in the order of MessageType's symbols.
PAYLOAD_BRANCHES = ("Watermark", "Bootstrap", "DDL", "DML")

MESSAGE_SCHEMA = fastavro.parse_schema(build_schema())
# Index of the Message record in the top-level union: the first byte(s) of every datum.
MESSAGE_UNION_INDEX = len(MESSAGE_SCHEMA) - 1


# schemaless_writer parses the schema into a fresh table of named types on every call, which costs
# more than writing a DML datum; its compiled writer's `write_data` is given the table made once.
_NAMED_SCHEMAS: dict = {}
_PARSED = fastavro.parse_schema(MESSAGE_SCHEMA, _NAMED_SCHEMAS)
_WRITE_OPTIONS = {"strict": False, "strict_allow_default": False, "disable_tuple_notation": False}
try:
    from fastavro._write import write_data as _write_data  # the compiled writer schemaless_writer calls
except ImportError:  # a fastavro without its compiled modules
    _write_data = None


def encode_avro(obj: dict) -> bytes:
    """One Simple protocol Avro datum: the Message branch of the union, no registry framing.

    `obj` is a Message record; union branches are given as (name, value) tuples where the
    value alone is ambiguous (a row value map), as fastavro's tuple notation allows.
    """
    if _write_data is not None:
        out = bytearray()
        _write_data(out, (_ref("Message"), obj), _PARSED, _NAMED_SCHEMAS, "", _WRITE_OPTIONS)
        return bytes(out)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, MESSAGE_SCHEMA, (_ref("Message"), obj))
    return buf.getvalue()


def decode_avro(data: bytes) -> dict:
    """Reads one datum back with the same schema (for symmetry and tests)."""
    return fastavro.schemaless_reader(io.BytesIO(data), MESSAGE_SCHEMA, MESSAGE_SCHEMA)
