"""The Canal-JSON PartitionEncoder: one Kafka message per event, nothing held back.

TiCDC pkg/sink/codec/canal/canal_json_encoder.go: every row event becomes its own message with
a null key (common.NewMsg(nil, value)); a DDL is one message; a checkpoint becomes a
TIDB_WATERMARK message only with enable-tidb-extension, and nothing otherwise.
"""
from __future__ import annotations

from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from .message import CanalJSONOptions, ddl_value, dml_value, watermark_value

# Kafka record overhead TiCDC adds when it measures a message against max-message-bytes
# (pkg/sink/codec/common/message.go, MaxRecordOverhead = 5*MaxVarintLen32 + MaxVarintLen64 + 1).
RECORD_OVERHEAD = 5 * 5 + 10 + 1


class MessageTooLargeError(ValueError):
    """A row message TiCDC refuses to send: with large-message handling off, the changefeed
    fails with ErrMessageTooLarge instead of producing it."""

    def __init__(self, table: str, length: int, limit: int) -> None:
        self.table = table
        self.length = length
        self.limit = limit
        super().__init__(f"canal-json message for {table} is {length} bytes, above max-message-bytes {limit}")


class CanalJSONEncoder:
    def __init__(self, config: SinkConfig, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.options = CanalJSONOptions.from_sink_config(config)

    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            return [self._row_message(event)]
        if isinstance(event, DDLEvent):
            return [Message(key=None, value=ddl_value(event.ddl, self.options), ts=event.ddl.commit_ts)]
        if isinstance(event, WatermarkEvent):
            if not self.options.enable_tidb_extension:
                return []
            return [Message(key=None, value=watermark_value(event.ts), ts=event.ts)]
        if isinstance(event, BootstrapEvent):
            raise TypeError("canal-json has no bootstrap messages; the simulator must not schedule them")
        raise TypeError(f"not a sink event: {event!r}")

    def flush(self) -> list[Message]:
        # Nothing is batched, so nothing is ever pending.
        return []

    def _row_message(self, event: RowEvent) -> Message:
        value = dml_value(event.change, event.commit_ts, self.options)
        length = len(value) + RECORD_OVERHEAD
        if length > self.options.max_message_bytes:
            raise MessageTooLargeError(event.change.table.qualified_name, length, self.options.max_message_bytes)
        return Message(key=None, value=value, ts=event.commit_ts)


def new_encoder(config: SinkConfig, topic: str, partition: int) -> CanalJSONEncoder:
    return CanalJSONEncoder(config, topic, partition)
