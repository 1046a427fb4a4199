"""An Open Protocol message as read from its frames (spec 002, "Message format" and "Event format").

A record holds a batch of events; each is a key frame, parsed by wire.py, and a value frame. The
value frame of a row or DDL event is parsed once, when the record is read, and kept here with the
reason it failed, so the decoder and the lint rules read the same object and the decoder still
reports each event's fault in event order.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

# Event kinds of the key's "t" (spec 002, Event format).
KIND_ROW = 1
KIND_DDL = 2
KIND_RESOLVED = 3


class RawEvent(NamedTuple):
    """One key frame, parsed, with its still-encoded value frame (None when the message had none).
    A named tuple: a message of many events makes many of these, and a tuple is the cheapest
    immutable record to build."""

    key: dict[str, Any]
    value: Optional[bytes]

    @property
    def kind(self) -> int:
        return self.key["t"]

    @property
    def ts(self) -> int:
        return self.key["ts"]


class Event(NamedTuple):
    """One event of a message: its frames and, for a row or DDL event, the value frame's JSON object."""

    frame: RawEvent
    value: Optional[dict[str, Any]]  # None: no value frame, a Resolved event, or a value that is no JSON object
    value_error: Optional[Exception] = None  # why the value frame is no JSON object

    @property
    def key(self) -> dict[str, Any]:
        return self.frame.key

    @property
    def kind(self) -> int:
        return self.frame.key["t"]

    @property
    def ts(self) -> int:
        return self.frame.key["ts"]


Message = list[Event]  # the events of one record, in frame order
