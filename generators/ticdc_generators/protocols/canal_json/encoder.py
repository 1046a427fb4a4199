"""The Canal-JSON PartitionEncoder: one Kafka message per event, nothing held back.

TiCDC pkg/sink/codec/canal/canal_json_encoder.go: every row event becomes its own message with
a null key (common.NewMsg(nil, value)); a DDL is one message; a checkpoint becomes a
TIDB_WATERMARK message only with enable-tidb-extension, and nothing otherwise.

Large messages (AppendRowChangedEvent there; tiflow canal_json_row_event_encoder.go is the same):
every value — DML, DDL, TIDB_WATERMARK — is compressed with large-message-handle-compression.
A row message is measured (null key + compressed value + 36) against max-message-bytes; over
it, option none fails the changefeed; handle-key-only re-encodes the row with its handle-key
columns only and `"_tidb":{"commitTs":…,"onlyHandleKey":true}`; claim-check stores the whole
compressed message (key null) and sends the handle-key columns with
`"_tidb":{"commitTs":…,"claimCheckLocation":"<uri>/<file>"}`. A re-encoded message still over
the limit fails the changefeed. DDL and TIDB_WATERMARK messages are not measured.
"""
from __future__ import annotations

from typing import Optional

from ticdc_contract.model import Op

from ...sink.claim_check import ClaimCheckStorage
from ...sink.config import SinkConfig
from ...sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, SinkEvent, WatermarkEvent
from ..large_message import MessageTooLargeError, compress, record_size, require_storage
from .message import CanalJSONOptions, ddl_value, dml_value, watermark_value
from .rowcode import DMLWriter

__all__ = ["CanalJSONEncoder", "MessageTooLargeError", "new_encoder"]


class CanalJSONEncoder:
    def __init__(self, config: SinkConfig, topic: str, partition: int,
                 storage: Optional[ClaimCheckStorage] = None) -> None:
        self.topic = topic
        self.partition = partition
        self.options = CanalJSONOptions.from_sink_config(config)
        require_storage(self.options.large_message_handle_option, storage, "canal-json")
        self.storage = storage
        opts = self.options
        # The fast path writes whole rows; only-output-updated-columns (also under
        # content-compatible) and handle-key-only deletes go the reference way.
        self._fast = None if opts.only_output_updated_columns else \
            DMLWriter(opts.enable_tidb_extension, opts.content_compatible, opts.tiflow)
        self._fast_deletes = not opts.delete_only_handle_key_columns

    def encode(self, event: SinkEvent) -> list[Message]:
        if isinstance(event, RowEvent):
            return [self._row_message(event)]
        if isinstance(event, DDLEvent):
            return [Message(key=None, value=self._compress(ddl_value(event.ddl, self.options)),
                            ts=event.ddl.commit_ts)]
        if isinstance(event, WatermarkEvent):
            if not self.options.enable_tidb_extension:
                return []
            return [Message(key=None, value=self._compress(watermark_value(event.ts)), ts=event.ts)]
        if isinstance(event, BootstrapEvent):
            raise TypeError("canal-json has no bootstrap messages; the simulator must not schedule them")
        raise TypeError(f"not a sink event: {event!r}")

    def flush(self) -> list[Message]:
        # Nothing is batched, so nothing is ever pending.
        return []

    def _compress(self, value: bytes) -> bytes:
        return compress(self.options.large_message_handle_compression, value)

    def _too_large(self, event: RowEvent, length: int, detail: str) -> MessageTooLargeError:
        return MessageTooLargeError(table=event.change.table.qualified_name, length=length,
                                    limit=self.options.max_message_bytes, commit_ts=event.commit_ts,
                                    topic=self.topic, partition=self.partition, detail=detail)

    def _row_message(self, event: RowEvent) -> Message:
        limit = self.options.max_message_bytes
        option = self.options.large_message_handle_option
        value = None
        if self._fast is not None and (self._fast_deletes or event.change.op is not Op.DELETE):
            value = self._fast.value(event.change, event.commit_ts, event.selected)
        if value is None:
            value = dml_value(event.change, event.commit_ts, self.options, selected=event.selected)
        value = self._compress(value)
        length = record_size(None, value)
        if length <= limit:
            return Message(key=None, value=value, ts=event.commit_ts)
        if option == "none":
            raise self._too_large(event, length, "canal-json row")
        location = ""
        if option == "claim-check":
            location = self.storage.put(None, value, topic=self.topic, partition=self.partition,
                                        commit_ts=event.commit_ts)
        value = self._compress(dml_value(event.change, event.commit_ts, self.options, too_large=True,
                                         claim_check_location=location, selected=event.selected))
        length = record_size(None, value)
        if length > limit:
            raise self._too_large(event, length, f"canal-json {option} message")
        return Message(key=None, value=value, ts=event.commit_ts)


def new_encoder(config: SinkConfig, topic: str, partition: int,
                storage: Optional[ClaimCheckStorage] = None) -> CanalJSONEncoder:
    return CanalJSONEncoder(config, topic, partition, storage)
