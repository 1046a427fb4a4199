"""Runs the project's encoder of a protocol over an example's events and returns what a
consumer reads: one dict {"key": bytes|None, "value": bytes|None} per event message.

Open Protocol messages are batches (spec 002, "Message format"); they are split into their
events here, after the framing has been checked, because the spec's logs show one event each.
"""
from __future__ import annotations

import struct

from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import Message, SinkEvent

OPEN_PROTOCOL_VERSION = 1  # spec 002, "The version of the current protocol is 1."


class FramingError(AssertionError):
    """An Open Protocol message whose batch framing does not follow spec 002."""


def _frames(data: bytes, what: str) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        if i + 8 > len(data):
            raise FramingError(f"{what}: truncated length prefix at byte {i}")
        n = struct.unpack(">Q", data[i:i + 8])[0]
        if i + 8 + n > len(data):
            raise FramingError(f"{what}: frame of {n} bytes at byte {i} runs past the end ({len(data)})")
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


def open_protocol_events(msg: Message) -> list[dict]:
    """spec 002: key = 8-byte big-endian version, then [8-byte length][event key] per event;
    value = [8-byte length][event value] per event, in the same order."""
    if msg.key is None or len(msg.key) < 8:
        raise FramingError("key shorter than the 8-byte protocol version")
    version = struct.unpack(">Q", msg.key[:8])[0]
    if version != OPEN_PROTOCOL_VERSION:
        raise FramingError(f"protocol version {version}, expected {OPEN_PROTOCOL_VERSION}")
    keys = _frames(msg.key[8:], "key")
    values = _frames(msg.value or b"", "value")
    if len(keys) != len(values):
        raise FramingError(f"{len(keys)} event keys but {len(values)} event values")
    return [{"key": k, "value": v} for k, v in zip(keys, values)]


def encode(protocol: str, config: dict, events: list[SinkEvent], partition: int = 0) -> list[dict]:
    sink = SinkConfig(protocol=protocol, **config)
    encoder = encoder_module(protocol).new_encoder(sink, sink.topic, partition)
    messages: list[Message] = []
    for event in events:
        messages += encoder.encode(event)
    messages += encoder.flush()
    if protocol == "open-protocol":
        return [frame for m in messages for frame in open_protocol_events(m)]
    return [{"key": m.key, "value": m.value} for m in messages]
