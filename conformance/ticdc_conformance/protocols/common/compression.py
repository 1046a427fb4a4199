"""Undo `large-message-handle-compression`, which TiCDC applies to every message value (and to
Debezium's key): TiCDC pkg/compression/compress.go uses Snappy's block format and LZ4's frame format.

A hostile record must not make us allocate what it claims: both codecs are bounded by the most
their format can produce from the input at hand, checked before decompressing (Snappy's length
header) or while decompressing in bounded steps (LZ4).
"""
from __future__ import annotations

from typing import Any, Mapping

import cramjam
import lz4.frame

from ticdc_conformance.protocols.common.wire import Malformed

CODECS = ("none", "snappy", "lz4")
# A Snappy copy element of 3 bytes yields at most 64 bytes, the format's best expansion ratio.
_SNAPPY_MAX_RATIO = 22
# An LZ4 match-length byte adds at most 255 bytes of output.
_LZ4_MAX_RATIO = 256
_SLACK = 1024  # headers and the shortest blocks
_LZ4_STEP = 1 << 20


def codec_option(options: Mapping[str, Any]) -> str:
    """The sink option `large-message-handle-compression`; TiCDC's default is none."""
    codec = options.get("large-message-handle-compression") or "none"
    if codec not in CODECS:
        raise ValueError(f"unknown large-message-handle-compression {codec!r}; expected one of {', '.join(CODECS)}")
    return codec


def decompress(codec: str, data: bytes) -> bytes:
    if codec == "none":
        return data
    if codec == "snappy":
        return _snappy(data)
    if codec == "lz4":
        return _lz4(data)
    raise ValueError(f"unknown large-message-handle-compression {codec!r}")


def _snappy_length(data: bytes) -> int:
    """The block's preamble: the uncompressed length as a little-endian base-128 varint."""
    value, shift = 0, 0
    for b in data[:5]:
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value
        shift += 7
    raise Malformed("snappy: unterminated length header")


def _snappy(data: bytes) -> bytes:
    claimed = _snappy_length(data)
    if claimed > _SNAPPY_MAX_RATIO * len(data) + _SLACK:
        raise Malformed(f"snappy: claims {claimed} bytes from a {len(data)}-byte block")
    try:
        return bytes(cramjam.snappy.decompress_raw(data))
    except cramjam.DecompressionError as e:
        raise Malformed(f"snappy: {e}") from None


def _lz4(data: bytes) -> bytes:
    limit = _LZ4_MAX_RATIO * len(data) + _SLACK
    step = min(_LZ4_STEP, limit)
    decompressor = lz4.frame.LZ4FrameDecompressor()
    try:
        out = bytearray(decompressor.decompress(data, max_length=step))
        while not decompressor.eof and not decompressor.needs_input:
            if len(out) >= limit:
                raise Malformed(f"lz4: expands beyond the {limit} bytes {len(data)} compressed bytes can hold")
            out += decompressor.decompress(b"", max_length=step)
    except RuntimeError as e:  # python-lz4 reports corrupt frames as RuntimeError
        raise Malformed(f"lz4: {e}") from None
    if not decompressor.eof:
        raise Malformed("lz4: truncated frame")
    if decompressor.unused_data:
        raise Malformed("lz4: bytes after the end of the frame")
    return bytes(out)
