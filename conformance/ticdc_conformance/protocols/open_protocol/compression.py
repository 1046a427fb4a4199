"""Value-frame decompression for `large-message-handle-compression` (none | snappy | lz4).

TiCDC compresses each event value before framing it (TiCDC pkg/sink/codec/open/codec.go,
encodeRowChangedEvent / encodeDDLEvent via common.Compress); snappy is the block format and lz4 the
frame format (TiCDC pkg/compression/compress.go). Both decoders here are bounded by the largest
output the codec can produce from the given input, so a hostile size header cannot make them
allocate more.
"""
from __future__ import annotations

import cramjam
import lz4.frame

from .malformed import Malformed

CODECS = ("none", "snappy", "lz4")
# A snappy copy element of 3 bytes emits at most 64 bytes; nothing expands faster.
_SNAPPY_MAX_RATIO = 22
# An lz4 sequence can repeat a match of up to ~255 bytes per input byte.
_LZ4_MAX_RATIO = 256
_SLACK = 1024


def decompress(codec: str, data: bytes) -> bytes:
    if codec == "none":
        return data
    if codec == "snappy":
        return _snappy(data)
    if codec == "lz4":
        return _lz4(data)
    raise ValueError(f"unknown large-message-handle-compression {codec!r}; expected one of {', '.join(CODECS)}")


def _snappy(data: bytes) -> bytes:
    claimed = _uvarint(data)
    if claimed > _SNAPPY_MAX_RATIO * len(data) + _SLACK:
        raise Malformed(f"snappy block claims {claimed} bytes, more than {len(data)} compressed bytes can hold")
    try:
        return bytes(cramjam.snappy.decompress_raw(data))
    except cramjam.DecompressionError as e:
        raise Malformed(f"bad snappy block ({e})") from None


def _lz4(data: bytes) -> bytes:
    limit = _LZ4_MAX_RATIO * len(data) + _SLACK
    decompressor = lz4.frame.LZ4FrameDecompressor()
    try:
        out = decompressor.decompress(data, max_length=limit)
    except RuntimeError as e:  # python-lz4 reports corrupt frames as RuntimeError
        raise Malformed(f"bad lz4 frame ({e})") from None
    if not decompressor.eof:
        raise Malformed("lz4 frame is truncated or expands beyond what its size allows")
    if decompressor.unused_data:
        raise Malformed(f"{len(decompressor.unused_data)} byte(s) after the lz4 frame")
    return out


def _uvarint(data: bytes) -> int:
    """The snappy block's preamble: the uncompressed length as a little-endian base-128 varint."""
    value = 0
    for i, byte in enumerate(data[:5]):
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value
    raise Malformed("snappy block has no valid length preamble")
