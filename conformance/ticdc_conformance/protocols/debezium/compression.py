"""Undo TiCDC's optional per-message compression of Debezium keys and values.

TiCDC pkg/sink/codec/debezium/encoder.go compresses both key and value with
large-message-handle-compression; pkg/compression/compress.go uses the Snappy block format
and the LZ4 frame format. Hostile inputs must not make us allocate what a header claims, so
Snappy's declared length is checked against the format's maximum expansion first and LZ4 is
inflated in bounded steps.
"""
from __future__ import annotations

import cramjam
import lz4.frame

from .invalid import Invalid

# A Snappy copy element of 3 bytes yields at most 64 bytes: no valid block expands more.
_SNAPPY_MAX_RATIO = 22
_LZ4_STEP = 1 << 20


def _snappy_declared_length(data: bytes) -> int:
    length, shift = 0, 0
    for byte in data[:5]:
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length
        shift += 7
    raise Invalid("snappy: bad length header")


def _snappy(data: bytes) -> bytes:
    declared = _snappy_declared_length(data)
    if declared > len(data) * _SNAPPY_MAX_RATIO:
        raise Invalid(f"snappy: declared length {declared} impossible for {len(data)} input bytes")
    try:
        return bytes(cramjam.snappy.decompress_raw(data))
    except Exception as exc:  # cramjam raises its own DecompressionError type
        raise Invalid(f"corrupt snappy data ({exc})") from None


def _lz4(data: bytes) -> bytes:
    decomp = lz4.frame.LZ4FrameDecompressor()
    out = bytearray()
    try:
        out += decomp.decompress(data, max_length=_LZ4_STEP)
        while not decomp.eof and not decomp.needs_input:
            out += decomp.decompress(b"", max_length=_LZ4_STEP)
    except RuntimeError as exc:  # the lz4 binding reports frame errors as RuntimeError
        raise Invalid(f"lz4: {exc}") from None
    if not decomp.eof:
        raise Invalid("lz4: truncated frame")
    if decomp.unused_data:
        raise Invalid("lz4: trailing bytes after the frame")
    return bytes(out)


def decompress(codec: str, data: bytes) -> bytes:
    if codec == "none":
        return data
    if codec == "snappy":
        return _snappy(data)
    if codec == "lz4":
        return _lz4(data)
    raise Invalid(f"unknown compression {codec!r}")
