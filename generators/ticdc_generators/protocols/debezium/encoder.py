"""The Debezium PartitionEncoder: one Kafka message per event, nothing held back.

TiCDC's Debezium BatchEncoder (pkg/sink/codec/debezium/encoder.go) builds one message per row
change (key = handle-key columns, value = envelope), one per DDL, and one per checkpoint
(WATERMARK, only with enable-tidb-extension). No batching frame, no headers.

Large messages: TiCDC rejects every large-message-handle-option but none for Debezium
(pkg/config/large_message.go), yet `large-message-handle-compression` applies: the encoder
compresses the key and the value of every row, DDL and checkpoint message (encoder.go
encodeKey/encodeValue, EncodeDDLEvent, EncodeCheckpointEvent; tiflow's debezium/encoder.go is
the same). The encoder never measures a message; the Kafka producer does, refusing one whose
key + value + 36 exceeds max-message-bytes (sarama's Producer.MaxMessageBytes, set from it in
pkg/sink/kafka/sarama_config.go), which fails the changefeed. A row message over the limit
raises that failure here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ticdc_contract.model import TableSchema

from ...sink.claim_check import ClaimCheckStorage
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from ..large_message import MessageTooLargeError, compress, record_size
from .columns import table_view
from .ddl import encode_ddl
from .message import EnvelopeOptions, RowEnvelope, watermark_key, watermark_value
from .values import ValueOptions


@dataclass(frozen=True)
class DebeziumOptions:
    """The codec options TiCDC's Debezium encoder reads (TiCDC pkg/sink/codec/common/config.go).

    `include_start_ts` is TiCDC's `debezium-include-start-ts` (new TiCDC only); SinkConfig has no
    field for it, so it is read from a `debezium_include_start_ts` attribute when one exists.
    `output_old_value` is `[sink.debezium] output-old-value`, taken from SinkConfig's
    `output_old_value` (default true, as in TiCDC).
    """

    cluster_id: str = "default"
    time_zone: str = "UTC"
    enable_tidb_extension: bool = False
    disable_schema: bool = False
    output_old_value: bool = True
    include_start_ts: bool = False
    profile: str = "ticdc"
    compression: str = "none"
    max_message_bytes: int = 10 * 1024 * 1024

    @classmethod
    def from_sink_config(cls, config: SinkConfig) -> "DebeziumOptions":
        return cls(
            cluster_id=config.cluster_id,
            time_zone=config.time_zone,
            enable_tidb_extension=config.enable_tidb_extension,
            disable_schema=config.debezium_disable_schema,
            output_old_value=config.output_old_value,
            include_start_ts=bool(getattr(config, "debezium_include_start_ts", False)),
            profile=config.version_profile,
            compression=config.large_message_handle_compression,
            max_message_bytes=config.max_message_bytes,
        )

    def envelope(self) -> EnvelopeOptions:
        return EnvelopeOptions(
            cluster_id=self.cluster_id,
            enable_tidb_extension=self.enable_tidb_extension,
            disable_schema=self.disable_schema,
            output_old_value=self.output_old_value,
            include_start_ts=self.include_start_ts,
            profile=self.profile,
            values=ValueOptions(time_zone=self.time_zone, profile=self.profile),
        )


class DebeziumEncoder:
    """Encodes the event sequence of one topic-partition."""

    def __init__(self, options: DebeziumOptions, topic: str = "", partition: int = 0) -> None:
        self.options = options
        self.topic = topic
        self.partition = partition
        self._opts = options.envelope()
        # Per table version and column selection: schemas are fixed for both, so they are
        # serialized once.
        # Found by the version's identity (hashing a table version hashes all its columns); the
        # version is kept beside its envelope so that its id is not reused.
        self._envelopes: dict[tuple[int, Optional[frozenset[str]]], tuple[TableSchema, RowEnvelope]] = {}

    def _envelope(self, table: TableSchema, selected: Optional[frozenset[str]] = None) -> RowEnvelope:
        entry = self._envelopes.get((id(table), selected))
        if entry is None or entry[0] is not table:
            entry = (table, RowEnvelope(table_view(table, self.options.time_zone), self._opts, selected))
            self._envelopes[(id(table), selected)] = entry
        return entry[1]

    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            env = self._envelope(event.change.table, event.selected)
            return [self._row_message(env.key(event.change),
                                      env.value(event.change, event.commit_ts, event.start_ts), event)]
        if isinstance(event, DDLEvent):
            encoded = encode_ddl(event.ddl, self._opts)
            if encoded is None:
                return []
            return [self._message(encoded[0], encoded[1], event.ddl.commit_ts)]
        if isinstance(event, WatermarkEvent):
            if not self.options.enable_tidb_extension:
                return []
            return [self._message(watermark_key(self._opts), watermark_value(self._opts, event.ts), event.ts)]
        if isinstance(event, BootstrapEvent):
            # Bootstrap messages belong to the Simple protocol; Debezium has none.
            return []
        raise TypeError(f"unknown sink event {type(event).__name__}")

    def flush(self) -> list[Message]:
        return []

    def _row_message(self, key: bytes, value: bytes, event: RowEvent) -> Message:
        message = self._message(key, value, event.commit_ts)
        length = record_size(message.key, message.value)
        if length > self.options.max_message_bytes:
            raise MessageTooLargeError(table=event.change.table.qualified_name, length=length,
                                       limit=self.options.max_message_bytes, commit_ts=event.commit_ts,
                                       topic=self.topic, partition=self.partition,
                                       detail="debezium row, refused by the Kafka producer")
        return message

    def _message(self, key: Optional[bytes], value: Optional[bytes], ts: int) -> Message:
        codec = self.options.compression
        return Message(key=None if key is None else compress(codec, key),
                       value=None if value is None else compress(codec, value), ts=ts)


def new_encoder(config: SinkConfig, topic: str, partition: int,
                storage: Optional[ClaimCheckStorage] = None) -> DebeziumEncoder:
    # TiCDC gives Debezium no claim-check storage (its config refuses the option), so `storage`
    # is accepted for the common signature and never used.
    return DebeziumEncoder(DebeziumOptions.from_sink_config(config), topic, partition)
