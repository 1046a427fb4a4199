"""The decoder's fast path: the DML messages of the shape TiCDC sends, parsed in C by msgspec
(structs.py) into typed structs instead of by orjson into dicts that Python then walks.

With the schema, the schema halves of key and value stay unparsed and select a plan by their bytes
(plans.py); the payloads are read by the plan's decoder. Without it, one decoder reads every value.

It checks everything the reference path (decoder.py) checks and only ever accepts: whatever it
cannot vouch for -- any msgspec error, a field outside TiCDC's shapes, a schema it has no plan for,
a message that breaks an envelope rule, DDL and watermark messages -- makes it decline (return None),
and the reference path decodes the message or names what is wrong with it. So every event it returns
is the one the reference path returns, and every error is still the reference path's.
"""
from __future__ import annotations

from typing import Any, Optional

import msgspec

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed, bounded_put
from ticdc_conformance.protocols.debezium._fast.plans import MAX_PLANS, PlanCache
from ticdc_conformance.protocols.debezium._fast.structs import (
    RAW_ENVELOPE_OVERHEAD,
    RawEnvelope,
    UntypedKeyEnvelope,
    UntypedValueEnvelope,
)
from ticdc_conformance.protocols.debezium.columns import StructCache
from ticdc_conformance.protocols.debezium.options import DebeziumOptions
from ticdc_contract.record import KafkaRecord

ROW_OPS = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}
# What the fast path declines on. ValueError covers UnicodeDecodeError (invalid UTF-8) and integers
# too long for int(); RecursionError is msgspec's depth limit.
_DECLINED = (msgspec.DecodeError, ValueError, RecursionError, Malformed)

_read_raw = msgspec.json.Decoder(RawEnvelope).decode
_read_untyped_value = msgspec.json.Decoder(UntypedValueEnvelope).decode
_read_untyped_key = msgspec.json.Decoder(UntypedKeyEnvelope).decode


def _document(codec: str, data: Any) -> bytes:
    if data.__class__ is not bytes:
        raise Malformed("not bytes")  # the reference path says which type it is
    return data if codec == "none" else decompress(codec, data)


class _FastDML:
    """What both fast paths share: the envelope rules and the event."""

    def __init__(self, opts: DebeziumOptions) -> None:
        self._codec = opts.compression
        self._old_value = opts.output_old_value
        self._carried: dict[tuple, tuple[str, ...]] = {}

    def _event(self, payload: Any, before: Optional[dict], after: Optional[dict], key: tuple[str, ...],
               columns: tuple[str, ...]) -> Optional[DecodedRow]:
        """The event of a DML payload whose images are read, if it keeps the envelope rules."""
        kind = ROW_OPS[payload.op]
        if kind == "insert":
            fits = before is None and after is not None
        elif kind == "delete":
            fits = after is None and before is not None
        else:  # an update lacks its before image only without output-old-value
            fits = after is not None and (before is not None or not self._old_value)
        source = payload.source
        if not fits or not source.table:
            return None
        return DecodedRow(source.db, source.table, kind, source.commit_ts, after, before,
                          self._key_columns(key, after, before), columns)

    def _key_columns(self, key: tuple[str, ...], after: Optional[dict], before: Optional[dict]) -> tuple[str, ...]:
        """keys.carried_key of the key and the images, remembered by the column names involved: a stream
        repeats the names of a few tables, and looking them up costs less than applying the rule."""
        names = (key, None if after is None else tuple(after), None if before is None else tuple(before))
        found = self._carried.get(names)
        if found is None:
            found = carried_key([key], after, before)
            bounded_put(self._carried, names, found, MAX_PLANS)
        return found


class TypedDML(_FastDML):
    """Messages with schema."""

    def __init__(self, opts: DebeziumOptions, structs: StructCache) -> None:
        super().__init__(opts)
        self._plans = PlanCache(structs)

    def decode(self, record: KafkaRecord) -> Optional[list[DecodedRow]]:
        """The events of `record`, or None to leave it to the reference path."""
        try:
            payload_raw, schema = self._halves(record.value)
            plan = self._plans.value_plan(schema)
            if plan is None or record.key is None:
                return None
            key = self._key(record.key)
            if key is None:
                return None
            payload = plan.decoder.decode(payload_raw)
            before = None if payload.before is None else plan.before.values(payload.before, "before")
            after = None if payload.after is None else plan.after.values(payload.after, "after")
            image = plan.after if after is not None else plan.before
            event = self._event(payload, before, after, key, image.names if image is not None else ())
        except _DECLINED:
            return None
        return None if event is None else [event]

    def _halves(self, data: Any) -> tuple[msgspec.Raw, bytes]:
        doc = _document(self._codec, data)
        env = _read_raw(doc)
        if len(doc) != len(env.payload) + len(env.schema) + RAW_ENVELOPE_OVERHEAD:
            raise Malformed("not TiCDC's compact envelope")
        return env.payload, bytes(env.schema)

    def _key(self, data: Any) -> Optional[tuple[str, ...]]:
        """The key's column names, once its payload is known to fit its schema."""
        payload, schema = self._halves(data)
        plan = self._plans.key_plan(schema)
        if plan is None:
            return None
        plan.reader.finished(plan.decoder.decode(payload), "key")  # the values are checked, not used
        return plan.reader.names


class UntypedDML(_FastDML):
    """Messages without schema (debezium-disable-schema)."""

    def decode(self, record: KafkaRecord) -> Optional[list[DecodedRow]]:
        """The events of `record`, or None to leave it to the reference path."""
        try:
            payload = _read_untyped_value(_document(self._codec, record.value)).payload
            if record.key is None:
                return None
            key = tuple(_read_untyped_key(_document(self._codec, record.key)).payload)
            event = self._event(payload, payload.before, payload.after, key, ())
        except _DECLINED:
            return None
        return None if event is None else [event]
