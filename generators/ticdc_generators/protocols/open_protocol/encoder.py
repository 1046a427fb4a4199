"""Open Protocol's Kafka messages for one topic-partition: batch framing and batching.

spec 002 (Open Protocol), Message format: a key is the 8-byte big-endian protocol version (1)
followed by [8-byte big-endian length][event key JSON] per event; a value is
[8-byte big-endian length][event value JSON] per event.

Batching follows TiCDC pkg/sink/codec/open/encoder.go (pushMessage): row events append to the
open message until it holds `max-batch-size` events or the next event would take it past
`max-message-bytes` (TiCDC's batched-bytes limit is the producer's max-message-bytes,
pkg/sink/kafka/options.go). A DDL or resolved event is always a message of its own (encoder.go,
EncodeDDLEvent / EncodeCheckpointEvent), and the open batch goes out before it so the partition
keeps its event order.

Large messages (TiCDC pkg/sink/codec/open/encoder.go AppendRowChangedEvent and codec.go
encodeRowChangedEvent; tiflow pkg/sink/codec/open/open_protocol_encoder.go likewise):
- every row and DDL value JSON is compressed with large-message-handle-compression before it
  is framed; keys and the resolved event's empty value never are;
- a row is measured as a one-event message (key + compressed value + 8 + 16 + 36); over
  max-message-bytes it fails the changefeed (option none), is re-encoded with its handle-key
  columns only and "ohk": true in the key (handle-key-only), or (claim-check) its one-event
  message is stored whole, framing included, and the Kafka message carries the handle-key
  columns and the file's location in the key's "ccl". New TiCDC writes that key with
  "ohk":true,"ohk":false,"ccl":… (two "ohk" members: the handle-key flag, then the claim-check
  writer's false); tiflow marshals a struct with omitempty, so only "ccl" follows "t". A
  re-encoded message still over the limit fails the changefeed.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from ticdc_contract.model import TableSchema

from ...sink.claim_check import ClaimCheckStorage
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from ..large_message import COMPRESSIONS, MAX_RECORD_OVERHEAD, MessageTooLargeError, compress, require_storage
from .message import PROFILES, RowOptions, ddl_key, ddl_value, resolved_key, row_key, row_value
from .values import TableLayout, table_layout

PROTOCOL_VERSION = 1
_VERSION_HEAD = struct.pack(">Q", PROTOCOL_VERSION)
_EMPTY_VALUE_FRAME = struct.pack(">Q", 0)
# TiCDC codec.go: a one-event message adds the 8-byte version head and two 8-byte length
# prefixes to the event's key and value.
_SINGLE_EVENT_FRAMING = 8 + 16

LARGE_MESSAGE_OPTIONS = ("none", "handle-key-only", "claim-check")


@dataclass(frozen=True)
class OpenProtocolOptions:
    """The sink options Open Protocol's encoder reads, under TiCDC's names."""

    max_batch_size: int = 16
    max_message_bytes: int = 10 * 1024 * 1024
    output_old_value: bool = True
    delete_only_output_handle_key_columns: bool = False
    only_output_updated_columns: bool = False
    large_message_handle_option: str = "none"
    large_message_handle_compression: str = "none"
    version_profile: str = "ticdc"

    def __post_init__(self) -> None:
        if self.max_batch_size <= 0:
            raise ValueError(f"invalid max-batch-size {self.max_batch_size}")
        if self.max_message_bytes <= 0:
            raise ValueError(f"invalid max-message-bytes {self.max_message_bytes}")
        if self.large_message_handle_option not in LARGE_MESSAGE_OPTIONS:
            raise ValueError(f"unsupported large-message-handle-option {self.large_message_handle_option!r}; "
                             f"expected one of {', '.join(LARGE_MESSAGE_OPTIONS)}")
        if self.large_message_handle_compression not in COMPRESSIONS:
            raise ValueError(f"large message handle compression is not supported, got "
                             f"{self.large_message_handle_compression}")
        if self.version_profile not in PROFILES:
            raise ValueError(f"unknown version profile {self.version_profile!r}")

    @classmethod
    def from_sink_config(cls, config: SinkConfig) -> "OpenProtocolOptions":
        return cls(
            max_batch_size=config.max_batch_size,
            max_message_bytes=config.max_message_bytes,
            output_old_value=config.output_old_value,
            delete_only_output_handle_key_columns=config.delete_only_output_handle_key_columns,
            only_output_updated_columns=config.only_output_updated_columns,
            large_message_handle_option=config.large_message_handle_option,
            large_message_handle_compression=config.large_message_handle_compression,
            version_profile=config.version_profile,
        )

    @property
    def row_options(self) -> RowOptions:
        return RowOptions(
            profile=self.version_profile,
            output_old_value=self.output_old_value,
            delete_only_output_handle_key_columns=self.delete_only_output_handle_key_columns,
            only_output_updated_columns=self.only_output_updated_columns,
        )


def single_event_message(key_json: bytes, value_json: Optional[bytes], ts: int) -> Message:
    """A message holding one event; a resolved event's value frame is an empty one."""
    key = _VERSION_HEAD + struct.pack(">Q", len(key_json)) + key_json
    value = _EMPTY_VALUE_FRAME if value_json is None else struct.pack(">Q", len(value_json)) + value_json
    return Message(key=key, value=value, ts=ts)


class OpenProtocolEncoder:
    """The PartitionEncoder of one topic-partition."""

    def __init__(self, options: OpenProtocolOptions, topic: str, partition: int,
                 storage: Optional[ClaimCheckStorage] = None) -> None:
        require_storage(options.large_message_handle_option, storage, "open-protocol")
        self.options = options
        self.topic = topic
        self.partition = partition
        self.storage = storage
        self._row_options = options.row_options
        self._layouts: dict[tuple[int, int], TableLayout] = {}
        self._key = bytearray()
        self._value = bytearray()
        self._rows = 0
        self._ts = 0

    # --- PartitionEncoder -----------------------------------------------------------
    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            return self._append_row(event)
        if isinstance(event, DDLEvent):
            ddl = event.ddl
            profile = self.options.version_profile
            value = compress(self.options.large_message_handle_compression, ddl_value(ddl, profile))
            return self.flush() + [single_event_message(ddl_key(ddl, profile), value, ddl.commit_ts)]
        if isinstance(event, WatermarkEvent):
            return self.flush() + [single_event_message(resolved_key(event.ts), None, event.ts)]
        if isinstance(event, BootstrapEvent):
            raise TypeError("Open Protocol has no bootstrap messages")
        raise TypeError(f"not a sink event: {event!r}")

    def flush(self) -> list[Message]:
        if not self._rows:
            return []
        msg = Message(key=bytes(self._key), value=bytes(self._value), ts=self._ts)
        self._key = bytearray()
        self._value = bytearray()
        self._rows = 0
        return [msg]

    # --- rows ---------------------------------------------------------------------------
    def _layout(self, table: TableSchema) -> TableLayout:
        # Flags depend on the schema version only (TiCDC caches them per table and drops the
        # cache on DDL); the identity check guards against two tables sharing a version key.
        cache_key = (table.table_id, table.schema_version)
        layout = self._layouts.get(cache_key)
        if layout is None or (layout.table is not table and layout.table != table):
            layout = table_layout(table)
            self._layouts[cache_key] = layout
        return layout

    def _encode_row(self, event: RowEvent, only_handle_key: bool = False,
                    claim_check_location: str = "") -> tuple[bytes, bytes, int]:
        change = event.change
        layout = self._layout(change.table)
        key = row_key(change, event.commit_ts, layout, self._row_options, only_handle_key, claim_check_location)
        value = compress(self.options.large_message_handle_compression,
                         row_value(change, layout, self._row_options, only_handle_key, event.selected))
        return key, value, len(key) + len(value) + MAX_RECORD_OVERHEAD + _SINGLE_EVENT_FRAMING

    def _too_large(self, event: RowEvent, length: int, detail: str) -> MessageTooLargeError:
        return MessageTooLargeError(table=event.change.table.qualified_name, length=length,
                                    limit=self.options.max_message_bytes, commit_ts=event.commit_ts,
                                    topic=self.topic, partition=self.partition, detail=detail)

    def _fitted_row(self, event: RowEvent) -> tuple[bytes, bytes]:
        """The row's key and value JSON after large-message handling."""
        limit = self.options.max_message_bytes
        option = self.options.large_message_handle_option
        key, value, length = self._encode_row(event)
        if length <= limit:
            return key, value
        if option == "none":
            raise self._too_large(event, length, "open-protocol row")
        location = ""
        if option == "claim-check":
            whole = single_event_message(key, value, event.commit_ts)
            location = self.storage.put(whole.key, whole.value, topic=self.topic, partition=self.partition,
                                        commit_ts=event.commit_ts)
        key, value, length = self._encode_row(event, only_handle_key=True, claim_check_location=location)
        if length > limit:
            raise self._too_large(event, length, f"open-protocol {option} message")
        return key, value

    def _append_row(self, event: RowEvent) -> list[Message]:
        limit = self.options.max_message_bytes
        key, value = self._fitted_row(event)
        out: list[Message] = []
        frame_bytes = len(key) + len(value) + 16
        if self._rows and (len(self._key) + len(self._value) + MAX_RECORD_OVERHEAD + frame_bytes > limit):
            out += self.flush()
        if not self._rows:
            self._key += _VERSION_HEAD
        self._key += struct.pack(">Q", len(key)) + key
        self._value += struct.pack(">Q", len(value)) + value
        self._rows += 1
        # The batch takes the commit ts of its latest event (tiflow's encoder sets the
        # message's Ts on every append).
        self._ts = event.commit_ts
        if self._rows >= self.options.max_batch_size:
            # Full: TiCDC would start a new message for the next row anyway.
            out += self.flush()
        return out


def new_encoder(config: SinkConfig, topic: str, partition: int,
                storage: Optional[ClaimCheckStorage] = None) -> OpenProtocolEncoder:
    return OpenProtocolEncoder(OpenProtocolOptions.from_sink_config(config), topic, partition, storage)
