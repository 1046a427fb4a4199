"""The Open Protocol decoder's fast path: a whole message of row and resolved events read through
per-table msgspec structs (structs.py), with Python finishing only what C cannot.

It only ever accepts. Whatever it cannot vouch for cheaply (a DDL event, a large-message
placeholder, a value that fails its table's types, anything malformed) makes `FastPath.decode`
return None, and the reference path (decoder.py) decodes the message or names its fault, so the
events and the errors are the reference path's own (tests/conformance/protocols/test_open_protocol_msgspec.py
compares the two on generated and damaged messages).
"""
from __future__ import annotations

from typing import Optional

from ticdc_conformance.events import DecodedEvent, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed, bounded_put
from ticdc_conformance.protocols.open_protocol._fast.rowcode import Decline, RowReader, row_reader
from ticdc_conformance.protocols.open_protocol._fast.structs import (
    EventKey,
    Skeleton,
    decode_key,
    skeleton,
    table_types,
)
from ticdc_conformance.protocols.open_protocol.values import column_spec, keys_of
from ticdc_conformance.protocols.open_protocol.wire import KIND_RESOLVED, PROTOCOL_VERSION, split_frames

_VERSION_HEAD = PROTOCOL_VERSION.to_bytes(8, "big")
# Tables and table shapes come from the stream, so both caches are bounded (see bounded_put).
_TABLES_MAX = 1024
_PLANS_MAX = 256


# What reading a message raises when it is not one the fast path vouches for: msgspec's errors
# (DecodeError is a ValueError; RecursionError for a document nested too deep), a finisher's or a
# bad frame's Malformed, a row reader's AttributeError (a column of another type code than its
# plan's: see structs.table_types) or Decline.
_DECLINED = (ValueError, RecursionError, Malformed, AttributeError, Decline)


class Plan:
    """How the rows of one skeleton are read: msgspec's decoding into the skeleton's structs,
    then a reader written for them (rowcode.py) that checks what the structs cannot (each image's
    column names and their order, flags a struct leaves open) and finishes the values."""

    def __init__(self, columns: Skeleton) -> None:
        types = table_types(columns)
        names = [name for name, *_ in columns]
        # Every image of such a row carries all these columns, so the carried key is fixed.
        roles = ((name, column_spec(code, flag or 0, flag is not None, handle).role)
                 for name, code, flag, handle in columns)
        key = carried_key(keys_of(tuple((name, role) for name, role in roles if role is not None)), names)
        self.columns = columns
        self.row: RowReader = row_reader(names, types.columns, types.decode, key)


# Plans by skeleton, shared by every decoder: a plan depends on nothing else.
_PLANS: dict[Skeleton, Plan] = {}


def _plan(columns: Skeleton) -> Plan:
    plan = _PLANS.get(columns)
    if plan is None:
        plan = Plan(columns)
        bounded_put(_PLANS, columns, plan, _PLANS_MAX)
    return plan


class FastPath:
    """The fast path of one decoder: the plan each table's rows were last read with."""

    def __init__(self, output_old_value: bool) -> None:
        # spec 002, Row Changed Event: without the old value feature an update is indistinguishable
        # from an insert, and decoder._plain_row makes both "update"
        self._insert_op = "insert" if output_old_value else "update"
        self._tables: dict[tuple[str, str], Plan] = {}

    def decode(self, key: Optional[bytes], value: Optional[bytes]) -> Optional[list[DecodedEvent]]:
        """The events of a message, or None for one left to the reference path."""
        if key is None or not key.startswith(_VERSION_HEAD):
            return None
        try:
            keys = split_frames(key, "key", start=len(_VERSION_HEAD))
            bodies: list[Optional[bytes]] = split_frames(value or b"", "value")
            if len(bodies) > len(keys):
                return None
            bodies += [None] * (len(keys) - len(bodies))  # trailing resolved events may have none
            tables, insert_op = self._tables, self._insert_op
            events: list[DecodedEvent] = []
            for frame, body in zip(keys, bodies):
                event_key = decode_key(frame)
                if event_key.t == KIND_RESOLVED:
                    if body:  # spec 002, Resolved Event: "Value: None"
                        return None
                    events.append(DecodedWatermark(ts=event_key.ts))
                    continue
                if body is None or not event_key.scm or not event_key.tbl or event_key.ohk:
                    return None
                plan = tables.get((event_key.scm, event_key.tbl))
                if plan is None:
                    events.append(self._learn(event_key, body, None))
                    continue
                try:
                    events.append(plan.row(event_key, body, insert_op))
                except _DECLINED:  # perhaps the table changed: learn its columns again
                    events.append(self._learn(event_key, body, plan))
            return events
        except _DECLINED:
            return None

    def _learn(self, key: EventKey, frame: bytes, stale: Optional[Plan]) -> DecodedRow:
        """The row read through the plan for the columns `frame` has, when that is a plan other
        than `stale` (which failed to read it)."""
        columns = skeleton(frame)
        if columns is None or (stale is not None and columns == stale.columns):
            raise Decline("a row the fast path cannot read")
        plan = _plan(columns)
        bounded_put(self._tables, (key.scm, key.tbl), plan, _TABLES_MAX)
        return plan.row(key, frame, self._insert_op)
