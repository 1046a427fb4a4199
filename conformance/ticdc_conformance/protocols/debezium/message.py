"""A Debezium message as read: its key and value documents, and the Kafka Connect schema that rides
along it, one field descriptor per column.

Spec 000 (Debezium), DML "Value format": `schema.fields` holds a `before` and an `after` struct
whose `fields` describe each column (`field`, `type`, `optional`, and for Debezium's semantic
types a `name`, `version` and `parameters`); with enable-tidb-extension each column also
carries `tidb_type` ("schema.fields[1].fields[n].tidb_type").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ticdc_conformance.protocols.common.wire import Malformed

_BITS_LENGTH = re.compile(r"[0-9]{1,2}")

# Kafka Connect's JSON converter spells FLOAT32/FLOAT64 as "float"/"double" (the real Debezium
# output in the reference testdata does); these are the primitive types a column can have.
PRIMITIVE_TYPES = ("int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes")

# Debezium's semantic types, with the primitive each one rides on (Debezium's MySQL data type
# mapping, which spec 000 says TiCDC follows; TiCDC codec.go writeDebeziumFieldSchema).
SEMANTIC_TYPES = {
    "io.debezium.time.Date": "int32",
    "io.debezium.time.Timestamp": "int64",
    "io.debezium.time.MicroTimestamp": "int64",
    "io.debezium.time.MicroTime": "int64",
    "io.debezium.time.ZonedTimestamp": "string",
    "io.debezium.time.Year": "int32",
    "io.debezium.data.Bits": "bytes",
    "io.debezium.data.Enum": "string",
    "io.debezium.data.EnumSet": "string",
    "io.debezium.data.Json": "string",
}


@dataclass
class DebeziumMessage:
    """The JSON documents of one record as the decoder parsed them (wire.document), each
    {"schema", "payload"}; None where the record has none or it did not parse."""

    value: Optional[dict[str, Any]] = None
    key: Optional[dict[str, Any]] = None


@dataclass(frozen=True)
class FieldSpec:
    """One column's descriptor."""

    column: str
    type: str
    semantic: Optional[str] = None  # the Debezium `name`, when it is one of SEMANTIC_TYPES
    optional: bool = True
    bits: Optional[int] = None  # io.debezium.data.Bits parameters.length
    tidb_type: Optional[str] = None  # lower-cased, e.g. "bigint unsigned", "varbinary"


def parse_field(obj: Any, where: str, want_tidb_type: bool) -> FieldSpec:
    if not isinstance(obj, dict):
        raise Malformed(f"{where}: a field descriptor must be an object")
    column = obj.get("field")
    if not isinstance(column, str):
        raise Malformed(f"{where}: field descriptor without a string 'field'")
    where = f"{where}.{column}"
    ftype = obj.get("type")
    if ftype not in PRIMITIVE_TYPES:
        raise Malformed(f"{where}: unsupported column type {ftype!r}")
    optional = obj.get("optional", False)
    if not isinstance(optional, bool):
        raise Malformed(f"{where}: 'optional' must be a boolean")
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise Malformed(f"{where}: 'name' must be a string")
    # Names Debezium does not define for MySQL columns are ignored: the value is then taken
    # by its primitive type, as a generic Kafka Connect consumer would.
    semantic = name if name in SEMANTIC_TYPES else None
    if semantic is not None and SEMANTIC_TYPES[semantic] != ftype:
        raise Malformed(f"{where}: {semantic} must have type {SEMANTIC_TYPES[semantic]}, not {ftype}")
    bits = None
    if semantic == "io.debezium.data.Bits":
        params = obj.get("parameters")
        length = params.get("length") if isinstance(params, dict) else None
        if length is not None:
            # ASCII digits only: str.isdigit() and int() also take "²" or "٣", and int() refuses
            # a text of more than 4300 digits with a ValueError.
            if not isinstance(length, str) or not _BITS_LENGTH.fullmatch(length) or not 1 <= int(length) <= 64:
                raise Malformed(f"{where}: Bits parameters.length must be \"1\"..\"64\", got {length!r}")
            bits = int(length)
    tidb_type = obj.get("tidb_type")
    if tidb_type is None:
        if want_tidb_type:
            # TiCDC codec.go writes tidb_type first in every column descriptor when the
            # extension is on.
            raise Malformed(f"{where}: 'tidb_type' missing although enable-tidb-extension is on")
    elif not isinstance(tidb_type, str):
        raise Malformed(f"{where}: 'tidb_type' must be a string")
    else:
        tidb_type = tidb_type.strip().lower()
    return FieldSpec(column, ftype, semantic, optional, bits, tidb_type if want_tidb_type else None)


def parse_struct_fields(struct: Any, where: str, want_tidb_type: bool) -> tuple[FieldSpec, ...]:
    """The column descriptors of a `before`/`after` (or key) struct schema."""
    if not isinstance(struct, dict):
        raise Malformed(f"{where}: schema must be an object")
    if struct.get("type") != "struct":
        raise Malformed(f"{where}: schema type must be 'struct'")
    fields = struct.get("fields")
    if not isinstance(fields, list):
        raise Malformed(f"{where}: schema 'fields' must be an array")
    specs = tuple(parse_field(f, where, want_tidb_type) for f in fields)
    names = [s.column for s in specs]
    if len(set(names)) != len(names):
        raise Malformed(f"{where}: duplicate column in schema")
    return specs


def envelope_field(schema: dict, name: str) -> Optional[dict]:
    """The envelope schema's descriptor of payload field `name` (e.g. "before"), if declared."""
    fields = schema.get("fields")
    if not isinstance(fields, list):
        raise Malformed("schema 'fields' must be an array")
    for f in fields:
        if isinstance(f, dict) and f.get("field") == name:
            return f
    return None
