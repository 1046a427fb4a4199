"""The Simple protocol's per-partition encoder: one Kafka message per event, never batched.

TiCDC pkg/sink/codec/simple/encoder.go: every row, DDL, checkpoint (WATERMARK) and bootstrap
event becomes exactly one message, the value optionally compressed
(`large-message-handle-compression`), with no key of its own. What reaches Kafka as the key
follows from the producer that sends it: row and bootstrap messages go through the asynchronous
producer, which wraps the nil key in sarama.StringEncoder and so writes an empty key; DDL and
checkpoint messages go through the synchronous producer (sarama.ByteEncoder(nil)), a null key
(TiCDC pkg/sink/kafka/sarama_async_producer.go, sarama_sync_producer.go).

Large messages (encoder.go AppendRowChangedEvent; tiflow's simple/encoder.go is the same): a
row, DDL or bootstrap message is measured (value + 36) against max-message-bytes. A row over it
fails the changefeed under option none; otherwise, under claim-check, its whole compressed value
is stored first (the message has no key), then both options re-encode the row with its
handle-key columns only and `handleKeyOnly: true`, claim-check adding `claimCheckLocation`. A
re-encoded row still over the limit, or a DDL or bootstrap over it, fails the changefeed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ticdc_contract.tso import physical_ms

from ...sink.claim_check import ClaimCheckStorage
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from ..golang.json_text import ENCODING_JSON, dumps, encoding_json_by_orjson
from ..large_message import COMPRESSIONS, MessageTooLargeError, compress, record_size, require_storage
from . import message as m
from .avro_dml import dml_bytes, encode_dml
from .avro_schema import encode_avro

ROW_KEY = b""
CONTROL_KEY = None
LARGE_MESSAGE_OPTIONS = ("none", "handle-key-only", "claim-check")

__all__ = ["MessageTooLargeError", "SimpleEncoder", "SimpleEncoderConfig", "compress", "new_encoder"]


@dataclass(frozen=True)
class SimpleEncoderConfig:
    encoding_format: str = "json"
    time_zone: str = "UTC"
    tiflow: bool = False
    max_message_bytes: int = 10 * 1024 * 1024
    # TiCDC's `large-message-handle-compression` (none | snappy | lz4), applied to every value
    compression: str = "none"
    # TiCDC's `large-message-handle-option`
    large_message_handle_option: str = "none"
    # `[integrity] integrity-check-level = "correctness"`: DML messages carry row checksums
    row_checksum: bool = False

    def __post_init__(self) -> None:
        if self.encoding_format not in ("json", "avro"):
            raise ValueError(f"simple: unknown encoding-format {self.encoding_format!r}")
        if self.compression not in COMPRESSIONS:
            raise ValueError(f"simple: unknown large-message-handle-compression {self.compression!r}")
        if self.large_message_handle_option not in LARGE_MESSAGE_OPTIONS:
            raise ValueError(f"simple: unknown large-message-handle-option {self.large_message_handle_option!r}")

    @classmethod
    def from_sink(cls, config: SinkConfig) -> "SimpleEncoderConfig":
        return cls(
            encoding_format=config.encoding_format,
            time_zone=config.time_zone,
            tiflow=config.version_profile == "tiflow",
            max_message_bytes=config.max_message_bytes,
            compression=config.large_message_handle_compression,
            large_message_handle_option=config.large_message_handle_option,
            row_checksum=config.integrity_check_level == "correctness",
        )

    @property
    def style(self) -> m.Style:
        return m.Style(time_zone=self.time_zone, tiflow=self.tiflow, row_checksum=self.row_checksum)


class SimpleEncoder:
    """Encodes the event sequence of one topic-partition."""

    def __init__(self, config: SimpleEncoderConfig, topic: str, partition: int,
                 storage: Optional[ClaimCheckStorage] = None) -> None:
        require_storage(config.large_message_handle_option, storage, "simple")
        self.config = config
        self.topic = topic
        self.partition = partition
        self.storage = storage
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
        option = self.config.large_message_handle_option
        value = self._row_value(event)
        length = record_size(ROW_KEY, value)
        if length > self.config.max_message_bytes:
            if option == "none":
                raise self._too_large(event.change.table.qualified_name, length, ts, "simple row")
            location = ""
            if option == "claim-check":
                # the stored message is the row message as it would have gone out: no key
                location = self.storage.put(None, value, topic=self.topic, partition=self.partition, commit_ts=ts)
            value = self._row_value(event, only_handle_key=True, claim_check_location=location)
            length = record_size(ROW_KEY, value)
            if length > self.config.max_message_bytes:
                raise self._too_large(event.change.table.qualified_name, length, ts, f"simple {option} message")
        self._last_ts = max(self._last_ts, ts)
        return Message(key=ROW_KEY, value=value, ts=ts)

    def _row_value(self, event: RowEvent, only_handle_key: bool = False, claim_check_location: str = "") -> bytes:
        ts = event.commit_ts
        build_ts = physical_ms(ts)
        if self.config.encoding_format == "avro":
            if not only_handle_key and not claim_check_location:
                raw = dml_bytes(event.change, ts, build_ts, self._style, event.selected)
                if raw is not None:
                    return compress(self.config.compression, raw)
            body: Any = m.avro_dml(event.change, ts, build_ts, self._style, only_handle_key, claim_check_location,
                                   event.selected)
            raw = encode_dml(body)
            if raw is not None:
                return compress(self.config.compression, raw)
        else:
            if not only_handle_key and not claim_check_location:
                raw = m.json_dml_bytes(event.change, ts, build_ts, self._style, event.selected)
                if raw is not None:
                    return compress(self.config.compression, raw)
            body = m.json_dml(event.change, ts, build_ts, self._style, only_handle_key, claim_check_location,
                              event.selected)
            # A DML body holds no floats (json_value writes every value as text), so orjson may write it.
            raw = encoding_json_by_orjson(body)
            if raw is not None:
                return compress(self.config.compression, raw)
        return self._value(body)

    def _ddl(self, event: DDLEvent) -> Message:
        ddl = event.ddl
        build_ts = physical_ms(ddl.commit_ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_ddl(ddl, build_ts, self._style)
        else:
            body = m.json_ddl(ddl, build_ts, self._style)
        table = f"{ddl.schema}.{ddl.table}" if ddl.table else ddl.schema
        return self._message(CONTROL_KEY, body, ddl.commit_ts, measured=(table, f"simple DDL {ddl.query!r}"))

    def _watermark(self, event: WatermarkEvent) -> Message:
        build_ts = physical_ms(event.ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_watermark(event.ts, build_ts)
        else:
            body = m.json_watermark(event.ts, build_ts)
        # checkpoint messages are never size-checked (encoder.go EncodeCheckpointEvent)
        return self._message(CONTROL_KEY, body, event.ts, measured=None)

    def _bootstrap(self, event: BootstrapEvent) -> Message:
        # built "now": the newest TSO seen here, and never before the schema it describes
        ts = max(self._last_ts, event.table.schema_version)
        build_ts = physical_ms(ts)
        if self.config.encoding_format == "avro":
            body: Any = m.avro_bootstrap(event.table, build_ts, self._style)
        else:
            body = m.json_bootstrap(event.table, build_ts, self._style)
        # send-all-bootstrap-at-start ones go through the synchronous (DDL) producer: a null key
        key = CONTROL_KEY if event.at_start else ROW_KEY
        return self._message(key, body, ts, measured=(event.table.qualified_name, "simple bootstrap message"))

    # --- bytes ------------------------------------------------------------------------------
    def _value(self, body: Any) -> bytes:
        raw = encode_avro(body) if self.config.encoding_format == "avro" else dumps(body, ENCODING_JSON)
        return compress(self.config.compression, raw)

    def _too_large(self, table: str, length: int, ts: int, detail: str) -> MessageTooLargeError:
        return MessageTooLargeError(table=table, length=length, limit=self.config.max_message_bytes,
                                    commit_ts=ts, topic=self.topic, partition=self.partition, detail=detail)

    def _message(self, key: Optional[bytes], body: Any, ts: int, measured: Optional[tuple[str, str]]) -> Message:
        """A DDL, bootstrap or watermark message; `measured` = (table, what) for the ones TiCDC
        holds against max-message-bytes (DDL and bootstrap, never checkpoints)."""
        value = self._value(body)
        if measured is not None:
            length = record_size(key, value)
            if length > self.config.max_message_bytes:
                raise self._too_large(measured[0], length, ts, measured[1])
        self._last_ts = max(self._last_ts, ts)
        return Message(key=key, value=value, ts=ts)


def new_encoder(config: SinkConfig, topic: str, partition: int,
                storage: Optional[ClaimCheckStorage] = None) -> SimpleEncoder:
    return SimpleEncoder(SimpleEncoderConfig.from_sink(config), topic, partition, storage)
