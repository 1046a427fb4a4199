"""The Debezium PartitionEncoder: one Kafka message per event, nothing held back.

TiCDC's Debezium BatchEncoder (pkg/sink/codec/debezium/encoder.go) builds one message per row
change (key = handle-key columns, value = envelope), one per DDL, and one per checkpoint
(WATERMARK, only with enable-tidb-extension). No batching frame, no headers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...model import TableSchema
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from .columns import table_view
from .ddl import encode_ddl
from .envelope import EnvelopeOptions, RowEnvelope, watermark_key, watermark_value
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
        # Per table version: schemas are fixed for a version, so they are serialized once.
        self._envelopes: dict[TableSchema, RowEnvelope] = {}
        self._last: Optional[tuple[TableSchema, RowEnvelope]] = None

    def _envelope(self, table: TableSchema) -> RowEnvelope:
        if self._last is not None and self._last[0] is table:
            return self._last[1]
        env = self._envelopes.get(table)
        if env is None:
            env = RowEnvelope(table_view(table, self.options.time_zone), self._opts)
            self._envelopes[table] = env
        self._last = (table, env)
        return env

    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            env = self._envelope(event.change.table)
            return [Message(
                key=env.key(event.change),
                value=env.value(event.change, event.commit_ts, event.start_ts),
                ts=event.commit_ts,
            )]
        if isinstance(event, DDLEvent):
            encoded = encode_ddl(event.ddl, self._opts)
            if encoded is None:
                return []
            return [Message(key=encoded[0], value=encoded[1], ts=event.ddl.commit_ts)]
        if isinstance(event, WatermarkEvent):
            if not self.options.enable_tidb_extension:
                return []
            return [Message(key=watermark_key(self._opts), value=watermark_value(self._opts, event.ts),
                            ts=event.ts)]
        if isinstance(event, BootstrapEvent):
            # Bootstrap messages belong to the Simple protocol; Debezium has none.
            return []
        raise TypeError(f"unknown sink event {type(event).__name__}")

    def flush(self) -> list[Message]:
        return []


def new_encoder(config: SinkConfig, topic: str, partition: int) -> DebeziumEncoder:
    return DebeziumEncoder(DebeziumOptions.from_sink_config(config), topic, partition)
