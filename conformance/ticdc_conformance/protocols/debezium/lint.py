"""Debezium's lint rules, judged on the key and value documents the decoder parsed (message.py).

DML messages are checked field by field (spec 000, "Data type mapping"). With the TiDB extension
every column's field schema names its TiDB type (`tidb_type`), so the Kafka Connect type and
Debezium semantic type can be held against the mapping TiCDC follows (Debezium's MySQL mapping with
TiCDC's differences: DECIMAL as float64, DBZ-TYPEMAP-4; string-like types, binary or not, as strings,
DBZ-TYPEMAP-3); TiCDC pkg/sink/codec/debezium/codec.go writeDebeziumFieldSchema is the table below.
Without the extension only the values are checked: each payload value must have the JSON form its
field schema declares (the decoder's value reader, run again on a record the decoder rejected so the
finding names the type-mapping rule). What each message says about itself beyond that: lint_shape.py.
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_contract.record import KafkaRecord

from ...rules import checks_rules
from ..common.interface import Read
from ..common.lint import LintContext, Problem, rejected, rejection
from ..common.wire import Malformed
from .decoder import DebeziumDecoder
from .lint_shape import check_message
from .message import SEMANTIC_TYPES, DebeziumMessage, envelope_field, parse_struct_fields
from .options import parse_options
from .values import BINARY_TIDB_TYPES, decode_typed

_ROW_OPS = ("c", "r", "u", "d")
_STRINGS = ("char", "varchar", "binary", "varbinary", "tinytext", "text", "mediumtext", "longtext",
            "tinyblob", "blob", "mediumblob", "longblob")
_D = "io.debezium"
# tidb_type without " unsigned" -> {unsigned: allowed (Connect type, semantic name)}
_Allowed = frozenset[tuple[str, Optional[str]]]


def _same(*pairs: tuple[str, Optional[str]]) -> dict[bool, _Allowed]:
    return {False: frozenset(pairs), True: frozenset(pairs)}


_MAPPING: dict[str, dict[bool, _Allowed]] = {
    **{name: _same(("string", None)) for name in _STRINGS},
    "bit": _same(("boolean", None), ("bytes", f"{_D}.data.Bits")),  # BIT(1) boolean, wider BIT bytes
    "enum": _same(("string", f"{_D}.data.Enum")),
    "set": _same(("string", f"{_D}.data.EnumSet")),
    "date": _same(("int32", f"{_D}.time.Date")),
    "datetime": _same(("int64", f"{_D}.time.Timestamp"), ("int64", f"{_D}.time.MicroTimestamp")),
    "timestamp": _same(("string", f"{_D}.time.ZonedTimestamp")),
    "time": _same(("int64", f"{_D}.time.MicroTime")),
    "json": _same(("string", f"{_D}.data.Json")),
    "year": _same(("int32", f"{_D}.time.Year")),
    "tinyint": _same(("int16", None)),
    "smallint": {False: frozenset({("int16", None)}), True: frozenset({("int32", None)})},
    "mediumint": _same(("int32", None)),
    "int": {False: frozenset({("int32", None)}), True: frozenset({("int64", None)})},
    "bigint": _same(("int64", None)),
    "float": _same(("float", None), ("double", None)),  # double when the column has a decimal length
    "double": _same(("double", None)),
    "decimal": _same(("double", None)),
}
# DBZ-TYPEMAP-14 is spec 001's statement of DBZ-TYPEMAP-4; DBZ-TYPEMAP-8: FLOAT's Connect type is
# judged without its reported length (float or double), which TiCDC gets wrong (tidb#57060).
FIELD_RULES = ("DBZ-TYPEMAP-1", "DBZ-TYPEMAP-3", "DBZ-TYPEMAP-4", "DBZ-TYPEMAP-14", "DBZ-TYPEMAP-8")
_MAX_VERDICTS = 4096  # distinct field schemas remembered; a hostile stream cannot grow it further


def _rule(tidb_type: Optional[str]) -> str:
    base = (tidb_type or "").split(" ")[0]
    if base == "decimal":
        return "DBZ-TYPEMAP-4"
    if base in _STRINGS:
        return "DBZ-TYPEMAP-3"
    return "DBZ-TYPEMAP-1"


def decode_rule(value: Optional[dict]) -> str:
    """The message kind's rule for an undecodable record: DDL, WATERMARK or (otherwise) DML."""
    payload = value.get("payload") if value is not None else None
    if isinstance(payload, dict) and payload.get("op") == "m":
        return "DBZ-MESSAGE-3"
    if isinstance(payload, dict) and "ddl" in payload and "op" not in payload:
        return "DBZ-MESSAGE-1"
    return "DBZ-MESSAGE-2"


class DebeziumLint:
    """The rules of one topic-partition; Debezium messages are judged one by one."""

    def __init__(self, context: LintContext) -> None:
        self.decoder = DebeziumDecoder(context.options)
        self.options = parse_options(context.options)
        self.stated_columns = context.stated_columns
        # (tidb_type, type, name) -> what is wrong with that field schema, or None: a table's schema
        # repeats in every message of the table.
        self._verdicts: dict[tuple[Any, Any, Any], Optional[tuple[str, str]]] = {}

    def check(self, record: KafkaRecord, read: Read) -> list[Problem]:
        problems: list[Problem] = []
        message = read.message if isinstance(read.message, DebeziumMessage) else DebeziumMessage()
        doc = message.value
        payload, schema = (doc.get("payload"), doc.get("schema")) if doc is not None else (None, None)
        if doc is not None and isinstance(payload, dict):
            check_message(message.key, doc, self.stated_columns, problems)
        if isinstance(payload, dict) and isinstance(schema, dict) and payload.get("op") in _ROW_OPS:
            source = payload.get("source")
            names = (source.get("db"), source.get("table")) if isinstance(source, dict) else (None, None)
            for part in ("before", "after"):
                where = f"{names[0]}.{names[1]} {part}"
                self.check_mapping(schema, part, where, problems)
                if read.error is not None:
                    self.check_values(payload, schema, part, where, problems)
        if read.error is not None:
            rejected(problems, decode_rule(doc), rejection(record, read.error))
        return problems

    def finish(self) -> list[Problem]:
        return []

    @checks_rules(*FIELD_RULES, name="lint.debezium.field-types",
                  description="each column's Connect type and semantic type fit its tidb_type as TiCDC maps it")
    def check_mapping(self, schema: dict, part: str, where: str, problems: list[Problem]) -> None:
        descriptor = _descriptor(schema, part)
        fields = descriptor.get("fields") if descriptor is not None else None
        for f in fields if isinstance(fields, list) else ():
            if not isinstance(f, dict) or f.get("tidb_type") is None:
                continue
            key = (f.get("tidb_type"), f.get("type"), f.get("name"))
            if not all(v is None or isinstance(v, str) for v in key):
                continue  # the decoder rejects a field schema of that shape
            if key in self._verdicts:
                fault = self._verdicts[key]
            else:
                fault = _mapping_fault(*key)
                if len(self._verdicts) < _MAX_VERDICTS:
                    self._verdicts[key] = fault
            if fault is not None:
                problems.append(Problem(fault[0], f"{where}.{f.get('field')}: {fault[1]}"))

    @checks_rules(*FIELD_RULES, name="lint.debezium.values",
                  description="each payload value has the JSON form its field schema declares")
    def check_values(self, payload: dict, schema: dict, part: str, where: str, problems: list[Problem]) -> None:
        row = payload.get(part)
        if not isinstance(row, dict):
            return
        try:
            descriptor = _descriptor(schema, part)
            specs = parse_struct_fields(descriptor, f"schema.{part}", self.options.tidb_extension) \
                if descriptor is not None else ()
        except Malformed:
            return  # the decoder's reason says what is wrong with the schema
        for spec in specs:
            if spec.column in row:
                try:
                    decode_typed(spec, row[spec.column], self.options, where)
                except Malformed as e:
                    problems.append(Problem(_rule(spec.tidb_type), e.reason))


def _descriptor(schema: dict, part: str) -> Optional[dict]:
    try:
        descriptor = envelope_field(schema, part)
    except Malformed:
        return None
    return descriptor if isinstance(descriptor, dict) else None


def _mapping_fault(tidb_type: Any, ftype: Any, name: Any) -> Optional[tuple[str, str]]:
    """(rule, reason) when a field of `tidb_type` may not have Connect type `ftype` and name `name`."""
    if not isinstance(tidb_type, str):
        return None  # the decoder rejects a non-string tidb_type
    tidb_type = tidb_type.strip().lower()
    base, _, rest = tidb_type.partition(" ")
    allowed = _MAPPING.get(base, {}).get(rest == "unsigned")
    if allowed is None:
        return None  # a TiDB type the mapping does not name (e.g. a vector type)
    semantic = name if name in SEMANTIC_TYPES else None
    if (ftype, semantic) in allowed:
        return None
    shown = " or ".join(sorted(f"{t}{f' ({s})' if s else ''}" for t, s in allowed))
    binary = ", as base64 text" if base in BINARY_TIDB_TYPES else ""
    return _rule(tidb_type), (f"tidb_type {tidb_type!r} as {ftype}{f' ({semantic})' if semantic else ''}; "
                              f"TiCDC writes {shown}{binary}")


def new_lint(context: LintContext) -> DebeziumLint:
    return DebeziumLint(context)
