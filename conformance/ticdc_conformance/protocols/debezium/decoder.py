"""The reference Debezium decoder: one Kafka record -> DecodedRow / DecodedDDL / DecodedWatermark.

Spec 000 (Debezium) defines three value shapes, told apart by the payload:
- DML: `op` "c"/"u"/"d" (Debezium's "r", a snapshot read, is an insert too) with `before`/`after`;
- WATERMARK: `op` "m" (only with enable-tidb-extension; TiCDC debezium/encoder.go);
- DDL: no `op`, a `ddl` statement and `tableChanges` (Debezium's SchemaChangeValue).
`payload.source.commit_ts` is TiCDC's extension field carrying the commit TSO; the key's payload
holds the handle key columns ("primary key or unique index columns"), which identify the row
when the value carries them (protocols/common/keys.py).
Every message is one JSON document per key and per value, no batching, so the decoder keeps no
state between records beyond caches of parsed schemas. DML messages of TiCDC's shapes go through
the fast path first (_fast/decoder.py), which yields the same events and declines everything else.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.debezium._fast.decoder import ROW_OPS, TypedDML, UntypedDML
from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...events import DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ..common.interface import Read, failed_read
from .columns import Struct, StructCache
from .message import DebeziumMessage, envelope_field
from .options import DebeziumOptions, parse_options
from .values import decode_untyped
from .wire import document

_U64_MAX = 2**64 - 1
# What a value without schema may be and passes through unchanged (values.decode_untyped).
_PLAIN_SCALARS = frozenset({str, int, float, type(None)})

_Envelope = tuple[dict, Optional[dict]]  # (payload, schema or None)


class DebeziumDecoder:
    def __init__(self, options: Optional[Mapping[str, Any]] = None) -> None:
        self._opts: DebeziumOptions = parse_options(options)
        self._structs = StructCache(self._opts)
        self._fast: Optional[UntypedDML | TypedDML] = None
        if self._opts.fast_path:
            self._fast = UntypedDML(self._opts) if self._opts.disable_schema else TypedDML(self._opts, self._structs)

    @property
    def held_count(self) -> int:
        return 0  # every message carries what its rows need: nothing is ever held

    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        # common.wire.decode_errors(record, unexpected="malformed message"), written out: a with-block costs
        # more than the decoding of a small row.
        try:
            if self._fast is not None:
                events = self._fast.decode(record)
                if events is not None:
                    return events
            return self._decode(record)
        except DecodeError:
            raise
        except Malformed as e:
            raise DecodeError(record.topic, record.partition, record.offset, e.reason) from None
        except Exception as e:  # noqa: BLE001 - a missing check; the label tells it from a named one
            raise DecodeError(record.topic, record.partition, record.offset,
                              f"malformed message ({type(e).__name__}: {e})") from e

    # --- envelopes ---------------------------------------------------------------------

    def read(self, record: KafkaRecord) -> Read:
        """The record's events and its key and value documents as parsed (DebeziumMessage; a part
        that did not parse is None)."""
        message = DebeziumMessage()
        try:
            return Read(self._decode(record, message), message)
        except Exception as e:  # noqa: BLE001 - failed_read labels what is no Malformed, as decode does
            return failed_read(record, e, message, unexpected="malformed message")

    def _envelope(self, doc: dict, what: str) -> _Envelope:
        payload = doc.get("payload")
        if not isinstance(payload, dict):
            raise Malformed(f"{what}: 'payload' missing or not an object")
        schema = doc.get("schema")
        # Spec 000: debezium-disable-schema drops the schema from key and value alike.
        if self._opts.disable_schema:
            if schema is not None:
                raise Malformed(f"{what}: carries a schema although debezium-disable-schema is on")
        elif not isinstance(schema, dict):
            raise Malformed(f"{what}: 'schema' missing although debezium-disable-schema is off")
        return payload, schema

    def _decode(self, record: KafkaRecord, message: Optional[DebeziumMessage] = None) -> list[DecodedEvent]:
        if record.value is None:
            raise Malformed("record has no value (TiCDC sends no Debezium tombstones)")
        compression = self._opts.compression
        value = document(record.value, "value", compression)
        # Both documents are parsed before either is judged, so `message` holds each one that
        # parses; a key that does not still fails after the value's own faults.
        key_doc: Optional[dict] = None
        key_fault: Optional[Exception] = None
        if record.key is not None:
            try:
                key_doc = document(record.key, "key", compression)
            except Exception as e:  # noqa: BLE001 - raised below, where the key is judged
                key_fault = e
        if message is not None:
            message.value, message.key = value, key_doc
        payload, schema = self._envelope(value, "value")
        if key_fault is not None:
            raise key_fault
        key = None if key_doc is None else self._envelope(key_doc, "key")
        op = payload.get("op")
        if op is None:
            if "ddl" in payload:
                return [self._ddl(payload)]
            raise Malformed("payload has neither 'op' nor 'ddl'")
        if not isinstance(op, str):
            raise Malformed(f"'op' must be a string, got {type(op).__name__}")
        if op == "m":
            return [DecodedWatermark(self._commit_ts(_source(payload), required=True))]
        if op in ROW_OPS:
            return [self._row(op, payload, schema, key)]
        raise Malformed(f"unknown op {op!r}")

    # --- pieces --------------------------------------------------------------------------

    @staticmethod
    def _commit_ts(source: dict, required: bool) -> Optional[int]:
        ts = source.get("commit_ts")
        if ts is None:
            # Real Debezium (the reference testdata) has no commit_ts; TiCDC always writes it.
            if required:
                raise Malformed("source.commit_ts missing")
            return None
        if not isinstance(ts, int) or isinstance(ts, bool) or not 0 <= ts <= _U64_MAX:
            raise Malformed(f"source.commit_ts must be a uint64, got {ts!r}")
        return ts

    def _row(self, op: str, payload: dict, schema: Optional[dict], key: Optional[_Envelope]) -> DecodedRow:
        source = _source(payload)
        db, table = _names(source, table_required=True)
        commit_ts = self._commit_ts(source, required=False)
        before_raw, after_raw = payload.get("before"), payload.get("after")
        kind = ROW_OPS[op]
        # Debezium envelope rules (spec 000, payload.before/after): inserts have no before,
        # deletes no after; TiCDC omits an update's before only without output-old-value.
        if kind == "insert" and before_raw is not None:
            raise Malformed(f"op {op!r} with a non-null 'before'")
        if kind == "delete" and after_raw is not None:
            raise Malformed("op 'd' with a non-null 'after'")
        if kind != "delete" and not isinstance(after_raw, dict):
            raise Malformed(f"op {op!r} needs an 'after' object")
        if kind == "delete" and not isinstance(before_raw, dict):
            raise Malformed("op 'd' needs a 'before' object")
        if kind == "update" and before_raw is not None and not isinstance(before_raw, dict):
            raise Malformed("'before' must be an object or null")
        if kind == "update" and before_raw is None and self._opts.output_old_value:
            raise Malformed("op 'u' without 'before' although output-old-value is on")

        before_struct = after_struct = None
        if schema is not None:
            if before_raw is not None:
                before_struct = self._row_struct(schema, "before")
            if after_raw is not None:
                after_struct = self._row_struct(schema, "after")
        before = None if before_raw is None else self._values(before_raw, before_struct, "before")
        after = None if after_raw is None else self._values(after_raw, after_struct, "after")
        struct = after_struct if after_struct is not None else before_struct
        columns = struct.names if struct is not None else ()
        # The key names the table's handle key whatever a column selector kept; the row is
        # identified by it only when the value carries it too (protocols/common/keys.py).
        key_columns = carried_key([self._key_columns(key)], after, before)
        return DecodedRow(schema=db, table=table, op=kind, commit_ts=commit_ts, after=after,
                          before=before, key_columns=key_columns, columns=columns)

    def _row_struct(self, schema: dict, part: str) -> Struct:
        descriptor = envelope_field(schema, part)
        if descriptor is None:
            raise Malformed(f"schema declares no '{part}' although the payload has one")
        return self._structs.get(descriptor, f"schema.{part}")

    @staticmethod
    def _values(raw: dict, struct: Optional[Struct], where: str) -> dict[str, Any]:
        if struct is not None:
            return struct.values(raw, where)
        if _PLAIN_SCALARS.issuperset(map(type, raw.values())):
            return dict(raw)  # what decode_untyped makes of each of these values: the value itself
        return {name: decode_untyped(v, f"{where}.{name}") for name, v in raw.items()}

    def _key_columns(self, key: Optional[_Envelope]) -> tuple[str, ...]:
        # Spec 000, DML key: "The fields in the key only include primary key or unique index
        # columns"; TiCDC codec.go EncodeKey writes the handle key columns in table order.
        if key is None:
            raise Malformed("row record without a key")
        payload, schema = key
        if schema is None:
            if not _PLAIN_SCALARS.issuperset(map(type, payload.values())):
                for name, v in payload.items():
                    decode_untyped(v, f"key.{name}")
            return tuple(payload)
        struct = self._structs.get(schema, "key schema")
        if struct.known != payload.keys():
            raise Malformed(f"key payload columns {sorted(payload)} differ from its schema {sorted(struct.names)}")
        struct.values(payload, "key")
        return struct.names

    def _ddl(self, payload: dict) -> DecodedDDL:
        source = _source(payload)
        db, table = _names(source, table_required=False)
        query = payload.get("ddl")
        if not isinstance(query, str):
            raise Malformed("'ddl' must be a string")
        database = payload.get("databaseName")
        if database is not None and not isinstance(database, str):
            raise Malformed("'databaseName' must be a string")
        changes = payload.get("tableChanges")
        if not isinstance(changes, list):
            raise Malformed("'tableChanges' must be an array")
        ddl_type = ""
        columns: tuple[str, ...] = ()
        for i, change in enumerate(changes):
            change_type, change_columns = _table_change(change, f"tableChanges[{i}]")
            if i == 0:
                ddl_type, columns = change_type, change_columns
        return DecodedDDL(commit_ts=self._commit_ts(source, required=False), schema=db or database or "",
                          table=table, query=query, ddl_type=ddl_type, columns=columns)


def _source(payload: dict) -> dict:
    source = payload.get("source")
    if not isinstance(source, dict):
        raise Malformed("payload.source missing or not an object")
    return source


def _names(source: dict, table_required: bool) -> tuple[str, str]:
    db, table = source.get("db"), source.get("table")
    if not isinstance(db, str):
        raise Malformed("source.db must be a string")
    if table is None and not table_required:
        table = ""
    if not isinstance(table, str) or (table_required and not table):
        raise Malformed("source.table must be a non-empty string")
    return db, table


def _table_change(change: Any, where: str) -> tuple[str, tuple[str, ...]]:
    """(type, column names by position) of one Debezium schema.Change."""
    if not isinstance(change, dict):
        raise Malformed(f"{where} must be an object")
    change_type = change.get("type")
    if change_type not in ("CREATE", "ALTER", "DROP"):
        raise Malformed(f"{where}.type must be CREATE, ALTER or DROP, got {change_type!r}")
    if not isinstance(change.get("id"), str):
        raise Malformed(f"{where}.id must be a string")
    table = change.get("table")
    if table is None:  # TiCDC codec.go: DROP TABLE carries no table
        return change_type, ()
    if not isinstance(table, dict) or not isinstance(table.get("columns"), list):
        raise Malformed(f"{where}.table must be an object with a 'columns' array")
    placed: dict[int, str] = {}
    for j, col in enumerate(table["columns"]):
        if not isinstance(col, dict):
            raise Malformed(f"{where}.table.columns[{j}] must be an object")
        name, pos = col.get("name"), col.get("position")
        if not isinstance(name, str) or not isinstance(pos, int) or isinstance(pos, bool):
            raise Malformed(f"{where}.table.columns[{j}] needs a string 'name' and an integer 'position'")
        if pos in placed:
            raise Malformed(f"{where}.table.columns: position {pos} used twice")
        placed[pos] = name
    return change_type, tuple(placed[p] for p in sorted(placed))
