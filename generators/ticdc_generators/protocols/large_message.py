"""What TiCDC's encoders share when a message meets `max-message-bytes`.

- The size: TiCDC measures a Kafka message as key + value + sarama's worst-case record overhead
  (TiCDC pkg/sink/codec/common/message.go: Message.Length and MaxRecordOverhead =
  5*MaxVarintLen32 + MaxVarintLen64 + 1 = 36); sarama's producer refuses a message by the same
  measure (ProducerMessage.ByteSize with no headers), so a protocol whose encoder does not
  measure still fails the changefeed.
- The failure: TiCDC's ErrMessageTooLarge, "message is too large. table:%s, length:%d,
  maxMessageBytes:%d" (pkg/errors/error.go); the changefeed stops instead of sending.
- The compression of `large-message-handle-compression` (TiCDC pkg/compression/compress.go):
  snappy is klauspost/compress's snappy.Encode, the snappy *block* format (a varint length, then
  the elements, no stream framing); lz4 is a pierrec/lz4/v4 Writer with its defaults: one LZ4
  *frame* of independent 4 MiB blocks, no block checksums, a content checksum, no content size.
  The frame written here has exactly those descriptor flags (so its header is byte-identical
  to TiCDC's); the compressed blocks come from the reference LZ4 and snappy compressors, which
  choose different matches than the Go ones, so compressed sizes can differ from TiCDC's by a few
  percent (docs/large-messages.md gives measured numbers). Every conforming decoder reads both.
"""
from __future__ import annotations

from typing import Optional

import cramjam
import lz4.frame

from ..errors import ChangefeedFailure

MAX_RECORD_OVERHEAD = 5 * 5 + 10 + 1
COMPRESSIONS = ("none", "snappy", "lz4")


class MessageTooLargeError(ValueError, ChangefeedFailure):
    """TiCDC's ErrMessageTooLarge: one event's message does not fit in max-message-bytes, even
    after the configured large-message handling, so TiCDC fails the changefeed."""

    def __init__(self, *, table: str, length: int, limit: int, commit_ts: int, topic: str = "",
                 partition: int = 0, detail: str = "") -> None:
        self.table = table
        self.length = length
        self.limit = limit
        self.commit_ts = commit_ts
        self.topic = topic
        self.partition = partition
        where = f" on {topic}/{partition}" if topic else ""
        note = f" ({detail})" if detail else ""
        super().__init__(f"message is too large. table:{table}, length:{length}, maxMessageBytes:{limit}; "
                         f"event committed at {commit_ts}{where}{note}")


def record_size(key: Optional[bytes], value: Optional[bytes]) -> int:
    """The size TiCDC and sarama hold against max-message-bytes."""
    return len(key or b"") + len(value or b"") + MAX_RECORD_OVERHEAD


def compress(codec: str, data: bytes) -> bytes:
    """TiCDC pkg/compression Encode for `large-message-handle-compression`."""
    if codec == "none":
        return data
    if codec == "snappy":
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == "lz4":
        # The streaming compressor keeps the 4 MiB block-size ID even for small inputs, as
        # pierrec's Writer does (the one-shot API would shrink it to the input's size).
        c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False,
                                         content_checksum=True, block_checksum=False, auto_flush=True)
        return c.begin() + c.compress(data) + c.flush()
    raise ValueError(f"large message handle compression is not supported, got {codec}")


def require_storage(option: str, storage: object, protocol: str) -> None:
    """A claim-check encoder cannot work without the run's storage; say so when it is built."""
    if option == "claim-check" and storage is None:
        raise ValueError(f"{protocol}: large-message-handle-option = claim-check needs a claim-check storage "
                         f"(pipeline.generate makes one under <run dir>/claim-check)")
