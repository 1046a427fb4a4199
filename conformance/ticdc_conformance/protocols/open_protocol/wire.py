"""Batch framing of spec 002 (Open Protocol), "Message format".

Key:   [u64 BE protocol version = 1] then [u64 BE length][event key JSON] repeated.
Value: [u64 BE length][event value JSON] repeated, one frame per key frame.

A Resolved event's value is "None" (spec 002, Resolved Event): TiCDC writes a zero-length value
frame (TiCDC pkg/sink/codec/open/encoder.go, EncodeCheckpointEvent), while the spec's event log
and the empty batches of tiflow's Java example data (`*_2`) carry no value frame at all; both are
accepted, the missing frame only for trailing Resolved events.
"""
from __future__ import annotations

import struct
from typing import Any, Optional

from ticdc_conformance.protocols.common.wire import Malformed, json_object

PROTOCOL_VERSION = 1  # spec 002, Message format: "The version of the current protocol is 1."
_WORD = 8  # version and lengths are big-endian int64
_LENGTH = struct.Struct(">Q").unpack_from

from ticdc_conformance.protocols.open_protocol.message import KIND_DDL, KIND_RESOLVED, KIND_ROW, RawEvent

_KINDS = (KIND_ROW, KIND_DDL, KIND_RESOLVED)
_U64_MAX = 2**64 - 1


def split_frames(buf: bytes, what: str, start: int = 0) -> list[bytes]:
    """The `[u64 length][payload]` frames of `buf` from `start` on.

    A length is compared with the bytes actually left before anything is sliced, so a hostile
    prefix (say 2**63) is rejected without allocating its claimed size.
    """
    frames: list[bytes] = []
    pos, end = start, len(buf)
    while pos < end:
        if end - pos < _WORD:
            raise Malformed(f"{what} frame {len(frames)}: {end - pos} trailing byte(s), too few for a length")
        (length,) = _LENGTH(buf, pos)  # unpack_from: no slice for the length word
        pos += _WORD
        if length > end - pos:
            raise Malformed(
                f"{what} frame {len(frames)}: length {length} exceeds the {end - pos} byte(s) left")
        frames.append(bytes(buf[pos:pos + length]))
        pos += length
    return frames


def parse_key(frame: bytes) -> dict[str, Any]:
    """An event key (spec 002, Event format: "ts" and "t" always, "scm"/"tbl" for rows and DDL)."""
    obj = json_object(frame, "key")
    kind = obj.get("t")
    # `type(v) is int` rather than isinstance: JSON true/false arrive as Python bools, which are
    # ints to isinstance, and orjson makes no other int subclass.
    if type(kind) is not int or kind not in _KINDS:
        raise Malformed(f'key "t" is {kind!r}, not one of the event types 1 (row), 2 (DDL), 3 (resolved)')
    ts = obj.get("ts")
    if type(ts) is not int or not 0 <= ts <= _U64_MAX:
        raise Malformed(f'key "ts" is {ts!r}, not a TSO (unsigned 64-bit integer)')
    if len(obj) > 2:  # fields besides "t" and "ts"
        _check_optional_fields(obj)
    return obj


def _check_optional_fields(obj: dict[str, Any]) -> None:
    for name in ("scm", "tbl", "ccl"):
        if name in obj and type(obj[name]) is not str:
            raise Malformed(f'key "{name}" is {obj[name]!r}, not a string')
    # Optional fields TiCDC adds (TiCDC pkg/sink/codec/open/message.go, messageKey): row id,
    # partition table id, and the large-message markers; a wrong type means a broken encoder.
    for name in ("rid", "ptn"):
        if name in obj and type(obj[name]) is not int:
            raise Malformed(f'key "{name}" is {obj[name]!r}, not an integer')
    if "ohk" in obj and type(obj["ohk"]) is not bool:
        raise Malformed(f'key "ohk" is {obj["ohk"]!r}, not a boolean')


def read_events(key: Optional[bytes], value: Optional[bytes]) -> list[RawEvent]:
    """Split a Kafka key/value pair into its events, pairing key frame i with value frame i."""
    if key is None:
        raise Malformed("the record has no key; Open Protocol keys carry the version and event keys")
    if len(key) < _WORD:
        raise Malformed(f"key has {len(key)} byte(s), too few for the 8-byte protocol version")
    version = int.from_bytes(key[:_WORD], "big")
    if version != PROTOCOL_VERSION:
        raise Malformed(f"protocol version {version}, expected {PROTOCOL_VERSION}")
    key_frames = split_frames(key, "key", start=_WORD)
    value_frames = split_frames(value or b"", "value")
    keys = []
    for i, frame in enumerate(key_frames):
        try:
            keys.append(parse_key(frame))
        except Malformed as e:
            raise e.within(f"key frame {i}") from None
    if len(value_frames) > len(keys):
        raise Malformed(f"{len(value_frames)} value frames for {len(keys)} key frames")
    for i in range(len(value_frames), len(keys)):
        if keys[i]["t"] != KIND_RESOLVED:
            raise Malformed(
                f"{len(value_frames)} value frames for {len(keys)} key frames; key frame {i} "
                f"(event type {keys[i]['t']}) has no value")
    return [RawEvent(k, value_frames[i] if i < len(value_frames) else None) for i, k in enumerate(keys)]


