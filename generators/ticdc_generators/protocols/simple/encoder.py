"""The Simple protocol's per-partition encoder: one Kafka message per event, never batched.

TiCDC pkg/sink/codec/simple/encoder.go: every row, DDL, checkpoint (WATERMARK) and bootstrap
event becomes exactly one message, the value optionally compressed
(`large-message-handle-compression`), with no key of its own. What reaches Kafka as the key
follows from the producer that sends it: row and bootstrap messages go through the asynchronous
producer, which wraps the nil key in sarama.StringEncoder and so writes an empty key; DDL and
checkpoint messages go through the synchronous producer (sarama.ByteEncoder(nil)), a null key
(TiCDC pkg/sink/kafka/sarama_async_producer.go, sarama_sync_producer.go).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import cramjam

from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from ...tso import physical_ms
from ..golang.json_text import ENCODING_JSON, dumps
from .avro_schema import encode_avro
from . import messages as m

# TiCDC pkg/sink/codec/common/message.go MaxRecordOverhead: 5*MaxVarintLen32 + MaxVarintLen64 + 1
MAX_RECORD_OVERHEAD = 5 * 5 + 10 + 1
COMPRESSIONS = ("none", "snappy", "lz4")
ROW_KEY = b""
CONTROL_KEY = None


class MessageTooLargeError(ValueError):
    """TiCDC's ErrMessageTooLarge: the changefeed stops instead of sending the message."""


@dataclass(frozen=True)
class SimpleEncoderConfig:
    encoding_format: str = "json"
    time_zone: str = "UTC"
    tiflow: bool = False
    max_message_bytes: int = 10 * 1024 * 1024
    # TiCDC's `large-message-handle-compression` (none | snappy | lz4), applied to every value
    compression: str = "none"

    def __post_init__(self) -> None:
        if self.encoding_format not in ("json", "avro"):
            raise ValueError(f"simple: unknown encoding-format {self.encoding_format!r}")
        if self.compression not in COMPRESSIONS:
            raise ValueError(f"simple: unknown large-message-handle-compression {self.compression!r}")

    @classmethod
    def from_sink(cls, config: SinkConfig) -> "SimpleEncoderConfig":
        return cls(
            encoding_format=config.encoding_format,
            time_zone=config.time_zone,
            tiflow=config.version_profile == "tiflow",
            max_message_bytes=config.max_message_bytes,
            # not a SinkConfig field (yet); read it when a config carries it
            compression=getattr(config, "large_message_handle_compression", "none"),
        )

    @property
    def style(self) -> m.Style:
        return m.Style(time_zone=self.time_zone, tiflow=self.tiflow)


def compress(codec: str, value: bytes) -> bytes:
    """TiCDC pkg/compression Encode: snappy block format, or an LZ4 frame."""
    if codec == "snappy":
        return bytes(cramjam.snappy.compress_raw(value))
    if codec == "lz4":
        return bytes(cramjam.lz4.compress(value))
    return value


class SimpleEncoder:
    """Encodes the event sequence of one topic-partition."""

    def __init__(self, config: SimpleEncoderConfig, topic: str, partition: int) -> None:
        self.config = config
        self.topic = topic
        self.partition = partition
        self._style = config.style
        # the latest TSO this partition has seen; a BOOTSTRAP has none of its own
        self._last_ts = 0

    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            return [self._row(event)]
        if isinstance(event, DDLEvent):
            return [self._ddl(event)]
        if isinstance(event, WatermarkEvent):
            return [self._watermark(event)]
        if isinstance(event, BootstrapEvent):
            return [self._bootstrap(event)]
        raise TypeError(f"simple: cannot encode {type(event).__name__}")

    def flush(self) -> list[Message]:
        return []  # nothing is ever held back

    # --- events -----------------------------------------------------------------------------
    def _row(self, event: RowEvent) -> Message:
        ts = event.commit_ts
        build_ts = physical_ms(ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_dml(event.change, ts, build_ts, self._style)
        else:
            body = m.json_dml(event.change, ts, build_ts, self._style)
        return self._message(ROW_KEY, body, ts, checked=f"{event.change.table.qualified_name} row")

    def _ddl(self, event: DDLEvent) -> Message:
        ddl = event.ddl
        build_ts = physical_ms(ddl.commit_ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_ddl(ddl, build_ts, self._style)
        else:
            body = m.json_ddl(ddl, build_ts, self._style)
        return self._message(CONTROL_KEY, body, ddl.commit_ts, checked=f"DDL {ddl.query!r}")

    def _watermark(self, event: WatermarkEvent) -> Message:
        build_ts = physical_ms(event.ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_watermark(event.ts, build_ts)
        else:
            body = m.json_watermark(event.ts, build_ts)
        # checkpoint messages are never size-checked (encoder.go EncodeCheckpointEvent)
        return self._message(CONTROL_KEY, body, event.ts, checked=None)

    def _bootstrap(self, event: BootstrapEvent) -> Message:
        # built "now": the newest TSO seen here, and never before the schema it describes
        ts = max(self._last_ts, event.table.schema_version)
        build_ts = physical_ms(ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_bootstrap(event.table, build_ts, self._style)
        else:
            body = m.json_bootstrap(event.table, build_ts, self._style)
        return self._message(ROW_KEY, body, ts, checked=f"{event.table.qualified_name} bootstrap")

    # --- bytes ------------------------------------------------------------------------------
    def _message(self, key: Optional[bytes], body: Any, ts: int, checked: Optional[str]) -> Message:
        raw = encode_avro(body) if self.config.encoding_format == "avro" else dumps(body, ENCODING_JSON)
        value = compress(self.config.compression, raw)
        if checked is not None:
            length = len(key or b"") + len(value) + MAX_RECORD_OVERHEAD
            if length > self.config.max_message_bytes:
                raise MessageTooLargeError(
                    f"simple: {checked} is {length} bytes, over max-message-bytes "
                    f"{self.config.max_message_bytes} ({self.topic}/{self.partition})")
        self._last_ts = max(self._last_ts, ts)
        return Message(key=key, value=value, ts=ts)


def new_encoder(config: SinkConfig, topic: str, partition: int) -> SimpleEncoder:
    return SimpleEncoder(SimpleEncoderConfig.from_sink(config), topic, partition)
