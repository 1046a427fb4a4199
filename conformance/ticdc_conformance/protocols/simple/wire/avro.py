"""Simple Avro messages: one plain Avro datum of the union schema message.json, no registry framing.

The datum is the `com.pingcap.simple.avro.Message` branch (union index 11, first byte 0x16), whose
`payload` is a Watermark, Bootstrap, DDL or DML record (TiCDC pkg/sink/codec/simple/avro.go,
new*MessageMap). The schema is TiCDC's message.json as the contract vendors it
(ticdc_contract.avro_schema), not the encoder's.
"""
from __future__ import annotations

import io
import struct

from fastavro import parse_schema, schemaless_reader
from fastavro.schema import expand_schema

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_contract.avro_schema import MESSAGE_SCHEMA, MESSAGE_UNION_INDEX

from ..message import DDL_TYPES, DML_OPS, BootstrapMessage, DDLMessage, DMLMessage, Message, WatermarkMessage
from .fields import checksum_from_wire, get_bool, get_dict, get_int, get_str, row_maps
from .table import table_from_wire

_NS = "com.pingcap.simple.avro."
# Message.type must name the payload's record (avro.go builds both from the same message kind).
_PAYLOAD_OF = {"WATERMARK": _NS + "Watermark", "BOOTSTRAP": _NS + "Bootstrap", "DDL": _NS + "DDL", "DML": _NS + "DML"}
_MAX_LONG = 2**63 - 1

# fastavro re-parses a schema that is a union (a list: it cannot carry fastavro's "parsed" mark) on
# every schemaless_reader call, about a quarter of a datum's read. A datum of the Message branch --
# every datum TiCDC writes -- starts with that branch's index, one zigzag varint byte; after it the
# Message record is read with its own schema, parsed once (expanded: it names types that other
# branches define). Any other first byte goes through the whole union as before.
assert MESSAGE_UNION_INDEX < 64, "the Message branch's index is no longer a one-byte varint"
_MESSAGE_TAG = bytes([MESSAGE_UNION_INDEX << 1])
_MESSAGE_BRANCH = parse_schema(expand_schema(MESSAGE_SCHEMA)[MESSAGE_UNION_INDEX])

# Everything fastavro raises for a datum that does not fit the schema: truncation, a union or enum index
# out of range, bad UTF-8, a bad varint.
_READ_ERRORS = (EOFError, IndexError, KeyError, ValueError, TypeError, UnicodeDecodeError, OverflowError,
                MemoryError, RecursionError, struct.error)


class _BoundedReader(io.BytesIO):
    """A record's bytes that refuse any read longer than what is left.

    fastavro reads a string or bytes field with one `read(length)` of the length prefix; refusing
    lengths past the end keeps a hostile prefix from ever asking for more than the record holds.
    """

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            raise EOFError("unbounded or negative read length")
        if size > len(self.getbuffer()) - self.tell():
            raise EOFError(f"length {size} runs past the end of the record")
        return super().read(size)


def _unwrap(value: object, name: str, where: str) -> dict:
    """A record read from a union: fastavro gives (record name, fields) with return_record_name."""
    if not (isinstance(value, tuple) and len(value) == 2 and value[0] == name and isinstance(value[1], dict)):
        raise Malformed(f"{where}: expected a {name} record")
    return value[1]


def _bounded_datum(fo: _BoundedReader) -> object:
    try:
        return schemaless_reader(fo, MESSAGE_SCHEMA, None, return_record_name=True)
    except _READ_ERRORS as e:
        raise Malformed(f"not a Simple Avro datum: {type(e).__name__}: {e}") from None


def _read(value: bytes) -> tuple[str, dict]:
    # A plain BytesIO first: the bounded reader's Python-level read() runs for every varint byte and
    # costs more than the datum's decoding. fastavro checks each length-prefixed read itself, so a datum
    # it reads whole from the plain buffer is one the bounded reader reads the same; for any other, the
    # bounded reader reads it again and says where it breaks.
    fo: io.BytesIO = io.BytesIO(value)
    datum: object
    try:
        if value[:1] == _MESSAGE_TAG:
            fo.seek(1)
            datum = (_NS + "Message", schemaless_reader(fo, _MESSAGE_BRANCH, None, return_record_name=True))
        else:
            datum = schemaless_reader(fo, MESSAGE_SCHEMA, None, return_record_name=True)
    except _READ_ERRORS:
        fo = _BoundedReader(value)
        datum = _bounded_datum(fo)
    if fo.tell() != len(value):
        raise Malformed(f"{len(value) - fo.tell()} trailing bytes after the Avro datum")
    message = _unwrap(datum, _NS + "Message", "Avro datum")
    mtype = message.get("type")
    payload = message.get("payload")
    if not isinstance(mtype, str) or mtype not in _PAYLOAD_OF:  # the schema's enum makes it a str
        raise Malformed(f"unknown message type {mtype!r}")
    expected = _PAYLOAD_OF[mtype]
    return mtype, _unwrap(payload, expected, f"{mtype} message payload")


def _schema(raw: object, where: str):
    return None if raw is None else table_from_wire(_unwrap(raw, _NS + "TableSchema", where), "database", where)


def parse_avro(value: bytes) -> Message:
    mtype, p = _read(value)
    where = f"{mtype} message"
    version = get_int(p, "version", where)
    if version != 1:
        raise Malformed(f"unsupported Simple protocol version {version} (spec 004: currently 1)")
    build_ts = get_int(p, "buildTs", where)
    if mtype == "BOOTSTRAP":
        # The Bootstrap record holds its TableSchema directly, not through a null union.
        return BootstrapMessage(table_from_wire(get_dict(p, "tableSchema", where), "database", f"{where} tableSchema"),
                                build_ts)
    # Avro longs are signed; a TSO never reaches 2^63, so a negative one is corrupt.
    commit_ts = get_int(p, "commitTs", where, lo=0, hi=_MAX_LONG)
    if mtype == "WATERMARK":
        return WatermarkMessage(commit_ts, build_ts)
    ddl_or_dml = get_str(p, "type", where)
    if mtype == "DDL":
        if ddl_or_dml not in DDL_TYPES:
            raise Malformed(f"unknown DDL type {ddl_or_dml!r}")
        return DDLMessage(ddl_or_dml, get_str(p, "sql", where), commit_ts,
                          _schema(p.get("tableSchema"), f"{where} tableSchema"),
                          _schema(p.get("preTableSchema"), f"{where} preTableSchema"), build_ts)
    op = DML_OPS.get(ddl_or_dml)
    if op is None:
        raise Malformed(f"unknown DML type {ddl_or_dml!r}")
    schema = get_str(p, "database", where)
    table = get_str(p, "table", where)
    schema_version = get_int(p, "schemaVersion", where, lo=0, hi=_MAX_LONG)
    handle_key_only = bool(get_bool(p, "handleKeyOnly", where, optional=True))
    location = get_str(p, "claimCheckLocation", where, optional=True) or None
    raw_checksum = p.get("checksum")
    checksum = checksum_from_wire(None if raw_checksum is None else _unwrap(raw_checksum, _NS + "Checksum", where),
                                  where)
    data = get_dict(p, "data", where, optional=True)
    old = get_dict(p, "old", where, optional=True)
    row_maps(op, data, old)
    return DMLMessage(op, schema, table, commit_ts, schema_version, data, old, handle_key_only, location,
                      checksum, build_ts)
