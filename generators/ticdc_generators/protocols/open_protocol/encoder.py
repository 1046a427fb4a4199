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
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from ...model import TableSchema
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from .columns import EncodeError, TableLayout, table_layout
from .message import PROFILES, RowOptions, ddl_key, ddl_value, resolved_key, row_key, row_value

PROTOCOL_VERSION = 1
_VERSION_HEAD = struct.pack(">Q", PROTOCOL_VERSION)
_EMPTY_VALUE_FRAME = struct.pack(">Q", 0)

# TiCDC pkg/sink/codec/common/message.go: MaxRecordOverhead, sarama's worst-case record
# overhead (5 varint32 + 1 varint64 + 1 byte), counted into every size check.
MAX_RECORD_OVERHEAD = 5 * 5 + 10 + 1

LARGE_MESSAGE_OPTIONS = ("none", "handle-key-only")


class MessageTooLargeError(EncodeError):
    """TiCDC's ErrMessageTooLarge: one row event does not fit in max-message-bytes."""


@dataclass(frozen=True)
class OpenProtocolOptions:
    """The sink options Open Protocol's encoder reads, under TiCDC's names.

    `large_message_handle_option` is TiCDC's `[sink.kafka-config.large-message-handle]
    large-message-handle-option`; "claim-check" needs external storage and is not offered.
    """

    max_batch_size: int = 16
    max_message_bytes: int = 10 * 1024 * 1024
    output_old_value: bool = True
    delete_only_output_handle_key_columns: bool = False
    only_output_updated_columns: bool = False
    large_message_handle_option: str = "none"
    version_profile: str = "ticdc"

    def __post_init__(self) -> None:
        if self.max_batch_size <= 0:
            raise ValueError(f"invalid max-batch-size {self.max_batch_size}")
        if self.max_message_bytes <= 0:
            raise ValueError(f"invalid max-message-bytes {self.max_message_bytes}")
        if self.large_message_handle_option not in LARGE_MESSAGE_OPTIONS:
            raise ValueError(f"unsupported large-message-handle-option {self.large_message_handle_option!r}; "
                             f"expected one of {', '.join(LARGE_MESSAGE_OPTIONS)}")
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
            # Not a SinkConfig field (yet): honoured when a config carries it.
            large_message_handle_option=getattr(config, "large_message_handle_option", "none"),
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

    def __init__(self, options: OpenProtocolOptions, topic: str, partition: int) -> None:
        self.options = options
        self.topic = topic
        self.partition = partition
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
            return self.flush() + [single_event_message(ddl_key(ddl, profile), ddl_value(ddl, profile), ddl.commit_ts)]
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

    def _encode_row(self, event: RowEvent, only_handle_key: bool) -> tuple[bytes, bytes, int]:
        change = event.change
        layout = self._layout(change.table)
        key = row_key(change, event.commit_ts, layout, self._row_options, only_handle_key)
        value = row_value(change, layout, self._row_options, only_handle_key)
        # TiCDC codec.go: the size of a one-event message, version head and both length
        # prefixes included.
        return key, value, len(key) + len(value) + MAX_RECORD_OVERHEAD + 16 + 8

    def _append_row(self, event: RowEvent) -> list[Message]:
        limit = self.options.max_message_bytes
        key, value, length = self._encode_row(event, only_handle_key=False)
        if length > limit and self.options.large_message_handle_option == "handle-key-only":
            key, value, length = self._encode_row(event, only_handle_key=True)
        if length > limit:
            table = event.change.table.qualified_name
            raise MessageTooLargeError(f"row event of {table} needs {length} bytes, over max-message-bytes {limit}")
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


def new_encoder(config: SinkConfig, topic: str, partition: int) -> OpenProtocolEncoder:
    return OpenProtocolEncoder(OpenProtocolOptions.from_sink_config(config), topic, partition)
