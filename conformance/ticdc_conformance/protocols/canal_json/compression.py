"""Undo large-message-handle-compression, which compresses each whole Canal-JSON value.

TiCDC pkg/sink/codec/canal/canal_json_encoder.go compresses every value with the codec of
large-message-handle-compression, and pkg/compression/compress.go uses Snappy's block format and
LZ4's frame format. A hostile record must not make us allocate what it claims: the Snappy length
header is checked against the most a block of this size can expand to, and LZ4 output is drained in
bounded steps up to a fixed ceiling.
"""
from __future__ import annotations

import cramjam
import lz4.frame

from .malformed import Malformed

# A Snappy copy element of 3 bytes yields at most 64 bytes, the format's best expansion ratio.
_SNAPPY_MAX_RATIO = 22
_LZ4_STEP = 1 << 20
# Far above any max-message-bytes a Kafka topic accepts, so only a decompression bomb reaches it.
_MAX_DECOMPRESSED = 256 << 20


def decompress(codec: str, payload: bytes) -> bytes:
    if codec == "none":
        return payload
    if codec == "snappy":
        return _snappy(payload)
    if codec == "lz4":
        return _lz4(payload)
    raise Malformed(f"unknown compression {codec!r}")


def _snappy_claimed_length(payload: bytes) -> int:
    value, shift = 0, 0
    for b in payload[:5]:
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value
        shift += 7
    raise Malformed("snappy: unterminated length header")


def _snappy(payload: bytes) -> bytes:
    claimed = _snappy_claimed_length(payload)
    if claimed > _SNAPPY_MAX_RATIO * len(payload) + 32:
        raise Malformed(f"snappy: claims {claimed} bytes from a {len(payload)}-byte block")
    try:
        return bytes(cramjam.snappy.decompress_raw(payload))
    except cramjam.DecompressionError as e:
        raise Malformed(f"snappy: {e}") from None


def _lz4(payload: bytes) -> bytes:
    decompressor = lz4.frame.LZ4FrameDecompressor()
    out = bytearray()
    try:
        out += decompressor.decompress(payload, max_length=_LZ4_STEP)
        while not decompressor.eof and not decompressor.needs_input:
            if len(out) > _MAX_DECOMPRESSED:
                raise Malformed(f"lz4: expands beyond {_MAX_DECOMPRESSED} bytes")
            out += decompressor.decompress(b"", max_length=_LZ4_STEP)
    except RuntimeError as e:
        raise Malformed(f"lz4: {e}") from None
    if not decompressor.eof:
        raise Malformed("lz4: truncated frame")
    if decompressor.unused_data:
        raise Malformed("lz4: bytes after the end of the frame")
    return bytes(out)
