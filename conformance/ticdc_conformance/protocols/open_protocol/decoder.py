"""The reference Open Protocol decoder: one Kafka record -> the events it carries (spec 002).

Large messages (TiCDC pkg/sink/codec/open/decoder.go, decodeDMLMessage): a row event whose key has a
claim-check location "ccl" is read back from claim-check storage, whose file holds the whole
one-event message as a ClaimCheckMessage {key, value} (the version head and length frames
included; the value compressed like any other); that takes precedence over "ohk". A row event
whose key says "ohk": true carries its handle-key columns only and is completed through the
upstream snapshot.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ticdc_conformance.protocols.common.claim_check import claim_check_message
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.large_message import LargeMessages
from ticdc_conformance.protocols.common.wire import Malformed, json_object
from ticdc_conformance.protocols.open_protocol._fast.decoder import FastPath
from ticdc_contract.record import KafkaRecord

from ...events import DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ..common.interface import Read, failed_read
from .message import KIND_DDL, KIND_RESOLVED, KIND_ROW, Event, Message, RawEvent
from .options import OpenProtocolOptions
from .values import decode_columns
from .wire import read_events


class OpenProtocolDecoder:
    """Decodes the records of one topic-partition. Open Protocol messages are self-contained,
    so the decoder holds no state between records."""

    def __init__(self, options: OpenProtocolOptions, large: Optional[LargeMessages] = None) -> None:
        self.options = options
        self.large = large or LargeMessages()
        # The fast path reads uncompressed values only: compressed ones are TiCDC's large
        # messages, rare enough to go the reference way.
        self._fast = (FastPath(options.output_old_value)
                      if options.fast_path and options.large_message_handle_compression == "none" else None)

    @property
    def held_count(self) -> int:
        return 0  # every message carries what its rows need: nothing is ever held

    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        if self._fast is not None:
            events = self._fast.decode(record.key, record.value)
            if events is not None:
                return events
        read = self.read(record)
        if read.error is not None:
            raise read.error
        return read.events

    def read(self, record: KafkaRecord) -> Read:
        """The record's events and its message (message.Message; None when the framing is broken).
        A fault in one event fails the whole record, as decode() does: no events then."""
        message: Optional[Message] = None
        try:
            message = [self._parsed(raw) for raw in read_events(record.key, record.value)]
            return Read([self._event(i, event) for i, event in enumerate(message)], message)
        except Exception as e:  # noqa: BLE001 - failed_read labels what is no Malformed
            return failed_read(record, e, message, unexpected="unreadable message")

    def _parsed(self, raw: RawEvent) -> Event:
        """`raw` with its value frame's JSON object, for a row or DDL event that has a value frame."""
        if raw.value is None or raw.key["t"] == KIND_RESOLVED:
            return Event(raw, None)
        what = "DDL" if raw.key["t"] == KIND_DDL else "row"
        codec = self.options.large_message_handle_compression
        try:
            data = raw.value if codec == "none" else decompress(codec, raw.value)
            return Event(raw, json_object(data, f"{what} value"))
        except Exception as e:  # noqa: BLE001 - raised again when the event is decoded, in event order
            return Event(raw, None, e)

    def _event(self, index: int, event: Event) -> DecodedEvent:
        kind = event.frame.key["t"]
        try:
            if kind == KIND_ROW:  # the common case first
                return self._row(event)
            if kind == KIND_RESOLVED:
                return self._resolved(event.frame)
            if kind == KIND_DDL:
                return self._ddl(event)
        except Malformed as e:
            raise e.within(f"event {index}") from None
        raise Malformed(f"event {index}: unknown event type {kind}")

    # --- event kinds ------------------------------------------------------------------

    def _resolved(self, raw: RawEvent) -> DecodedWatermark:
        # spec 002, Resolved Event: "Value: None".
        if raw.value:
            raise Malformed(f"resolved event carries a {len(raw.value)}-byte value; its value must be empty")
        return DecodedWatermark(ts=raw.ts)

    def _ddl(self, event: Event) -> DecodedDDL:
        # spec 002, DDL Event: the schema and table "might be an empty string", and TiCDC's older
        # key type omits empty ones (tiflow pkg/sink/codec/internal/message_key.go, omitempty).
        value = self._value_object(event, "DDL")
        query, ddl_type = value.get("q"), value.get("t")
        if not isinstance(query, str):
            raise Malformed(f'DDL value "q" is {query!r}, not a string')
        if not isinstance(ddl_type, int) or isinstance(ddl_type, bool) or ddl_type < 0:
            raise Malformed(f'DDL value "t" is {ddl_type!r}, not a DDL type code')
        raw = event.frame
        return DecodedDDL(commit_ts=raw.ts, schema=raw.key.get("scm", ""), table=raw.key.get("tbl", ""),
                          query=query, ddl_type=str(ddl_type))

    def _row(self, event: Event) -> DecodedRow:
        location = event.frame.key.get("ccl")
        if location:
            return self._claim_checked(event.frame, location)
        row = self._plain_row(event)
        if event.frame.key.get("ohk"):
            return self.large.complete(row)
        return row

    def _claim_checked(self, raw: RawEvent, location: str) -> DecodedRow:
        key, value = claim_check_message(self.large.read(location))
        if key is None or value is None:
            raise Malformed("claim-check file: the ClaimCheckMessage lacks its key or its value")
        try:
            events = read_events(key, value)
        except Malformed as e:
            raise e.within("claim-check file") from None
        if len(events) != 1 or events[0].kind != KIND_ROW:
            raise Malformed(f"claim-check file holds {len(events)} event(s) of type(s) "
                            f"{[e.kind for e in events]}, not the one row event TiCDC stores")
        stored = events[0]
        if stored.key.get("ccl") or stored.key.get("ohk"):
            raise Malformed("claim-check file holds another large-message placeholder, not the full row")
        for name in ("ts", "scm", "tbl"):
            if stored.key.get(name) != raw.key.get(name):
                raise Malformed(f'claim-check file holds a row whose key "{name}" is {stored.key.get(name)!r}, '
                                f"the message names {raw.key.get(name)!r}")
        try:
            return self._plain_row(self._parsed(stored))
        except Malformed as e:
            raise e.within("claim-check file") from None

    def _plain_row(self, event: Event) -> DecodedRow:
        raw = event.frame
        schema, table = raw.key.get("scm"), raw.key.get("tbl")
        if not schema or not table:
            raise Malformed('row event key lacks the schema "scm" or table "tbl"')
        value = self._value_object(event, "row")
        has_u, has_p, has_d = "u" in value, "p" in value, "d" in value
        if has_d:
            if has_u or has_p:
                raise Malformed('row value mixes "d" with "u"/"p"')
            before, keys = _section(value, "d")
            return DecodedRow(schema, table, "delete", raw.ts, None, before, carried_key(keys, before))
        if not has_u:
            raise Malformed('row value has none of "u", "d"')
        after, keys = _section(value, "u")
        if has_p:
            old, _ = _section(value, "p", may_be_empty=True)
            before = _merge_old(old, after)
            return DecodedRow(schema, table, "update", raw.ts, after, before, carried_key(keys, after, before))
        if self.options.output_old_value:
            return DecodedRow(schema, table, "insert", raw.ts, after, None, carried_key(keys, after))
        # spec 002, Row Changed Event: "p" is "output only when the old value feature is enabled",
        # so without it an update is indistinguishable from an insert; "update" tells the
        # consumer to upsert.
        return DecodedRow(schema, table, "update", raw.ts, after, None, carried_key(keys, after))

    @staticmethod
    def _value_object(event: Event, what: str) -> dict[str, Any]:
        if event.value_error is not None:
            raise event.value_error
        if event.value is None:
            raise Malformed(f"{what} event has no value frame")
        return event.value


def _section(value: dict[str, Any], name: str,
             may_be_empty: bool = False) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    try:
        columns, keys = decode_columns(value[name])
    except Malformed as e:
        raise e.within(f'"{name}"') from None
    # TiCDC refuses to encode a row without columns (codec.go, writeColumnFieldValues); only the
    # old image under only-output-updated-columns may be empty (writeUpdatedColumnFieldValues).
    if not columns and not may_be_empty:
        raise Malformed(f'"{name}" has no columns')
    return columns, keys


def _merge_old(old: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The full old image. Under only-output-updated-columns "p" holds just the changed columns;
    an absent one kept its value, which is why TiCDC's own decoder fills it from "u"
    (TiCDC pkg/sink/codec/open/decoder.go, assembleDMLEvent)."""
    if len(old) == len(after) and list(old) == list(after):
        return old  # the whole old image, in the same column order: nothing to fill
    merged = {name: old[name] if name in old else v for name, v in after.items()}
    for name, v in old.items():
        merged.setdefault(name, v)
    return merged


def new_decoder(options: Optional[Mapping[str, Any]] = None) -> OpenProtocolDecoder:
    options = options or {}
    return OpenProtocolDecoder(OpenProtocolOptions.from_options(options), LargeMessages.from_options(options))
