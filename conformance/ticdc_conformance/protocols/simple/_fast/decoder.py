"""The decoder's fast path for Simple JSON: the DML messages of the shape TiCDC sends nearly always,
read by msgspec into types built once per table schema version (structs.py, plans.py) instead of
through orjson dicts and a converter call per value.

It only ever accepts: whatever it cannot vouch for makes it decline (return None) and the reference
path (wire/json.py, rows.py) decodes the message or names what is wrong with it. It declines DDL,
BOOTSTRAP and WATERMARK messages, large-message placeholders, rows with checksums, an UPDATE whose
two images carry different columns, rows of a schema version not yet known (the reference path
holds them), and any value msgspec or the plan's checks refuse. So every event it returns is the
one the reference path returns -- same values, same column order, same key -- and every error is
still the reference's.

A schema version's plan reads rows that carry all of its columns; when a row does not fit it, the
plan is rebuilt for the columns that row carries (TiCDC leaves virtual generated columns out, and a
column selector the columns it drops), so a table whose rows always lack the same columns stays on
the fast path.

Where msgspec and orjson (the reference's parser) could read the same text differently it declines:
integers past 64 bits (structs.py), a key given twice with values of different types (msgspec
checks each occurrence; both keep the last), and what msgspec refuses outright (lone surrogate
escapes, invalid UTF-8, nesting deeper than its recursion limit).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import msgspec
import orjson

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.wire import Malformed, bounded_put
from ticdc_conformance.protocols.simple._fast.plans import RowPlan
from ticdc_conformance.protocols.simple._fast.rowcode import RowParts
from ticdc_conformance.protocols.simple._fast.structs import ENVELOPE, NO_IMAGE
from ticdc_conformance.protocols.simple.rows import RowReader

# Plans kept per partition decoder; the cache starts over when full (common.wire.bounded_put).
PLANS = 128
# What a message the fast path cannot read raises: msgspec's DecodeError and ValidationError and
# UnicodeDecodeError are ValueErrors; msgspec raises RecursionError past its nesting limit; a
# reference converter raises Malformed.
FAST_DECLINES = (ValueError, RecursionError, Malformed)


class FastDML:
    """The fast path of one partition's decoder, over that decoder's schema cache."""

    def __init__(self, tables: dict[tuple[str, str, int], RowReader], time_zone: str, codec: str) -> None:
        self._tables = tables
        self._time_zone = time_zone
        self._codec = codec  # large-message-handle-compression, applied to every message value
        self._plans: dict[tuple[str, str, int], RowPlan] = {}
        # The one-step read: a union of the plans' message Structs, one per table name.
        self._union: Optional[msgspec.json.Decoder] = None
        # The union's decode while messages travel uncompressed, for SimpleDecoder.decode to call
        # itself (decode's first step written out there); None otherwise.
        self.one_step: Optional[Callable[[bytes], Any]] = None

    def decode(self, value: Optional[bytes]) -> Optional[DecodedRow]:
        """The row event of a DML message, or None to leave the message to the reference path."""
        if value is None:
            return None
        if self._codec != "none":
            try:
                value = decompress(self._codec, value)
            except FAST_DECLINES:
                return None
        if self._union is not None:
            try:
                msg = self._union.decode(value)
            except FAST_DECLINES:
                pass  # not one of the union's versions: the two-step read may know it
            else:
                try:
                    return msg.event()
                except FAST_DECLINES:
                    return None
        return self.two_step(value)

    def two_step(self, value: bytes) -> Optional[DecodedRow]:
        """decode for a (decompressed) message the union does not read."""
        try:
            msg = ENVELOPE.decode(value)
            key = (msg.database, msg.table, msg.schemaVersion or 0)
            plan = self._plans.get(key) or self._plan(key, None)
            if plan is None:
                return None
            raws = (None if msg.data in NO_IMAGE else msg.data, None if msg.old in NO_IMAGE else msg.old)
            try:
                data, old = _rows(plan, raws)
            except msgspec.ValidationError:
                # Perhaps rows that leave other columns out than the plan's: a plan for theirs.
                plan = self._plan(key, _carried(raws, plan))
                if plan is None:
                    return None
                data, old = _rows(plan, raws)
            # Spec 004, DML: INSERT has only `data`, UPDATE both, DELETE only `old` (message.row_maps);
            # the event function declines any other pairing.
            return plan.event(RowParts(msg.type, msg.commitTs, data, old))
        except FAST_DECLINES:
            return None

    def _plan(self, key: tuple[str, str, int], carried: Optional[frozenset[str]]) -> Optional[RowPlan]:
        reader = self._tables.get(key)
        if reader is None or carried is not None and not carried.issubset(reader.column_names):
            return None
        plan = RowPlan(reader, self._time_zone, carried)
        bounded_put(self._plans, key, plan, PLANS)
        self._rebuild_union()
        return plan

    def _rebuild_union(self) -> None:
        """The union of the latest plan of each table name (a union tells its members apart by
        their tag alone); a row of another version or database takes the two-step read.

        msgspec requires the tag (`table`) only of a union of two or more: a lone tagged Struct
        reads a message without it. So the union always holds `_NoTable` too, and a DML that lost
        its `table` fails here and in the two-step read, and the reference path refuses it."""
        members: dict[str, RowPlan] = {p.table: p for p in self._plans.values() if p.message is not None}
        self._union = (msgspec.json.Decoder(Union[(_NoTable, *(p.message for p in members.values()))])
                       if members else None)
        self.one_step = self._union.decode if self._union is not None and self._codec == "none" else None


def _no_table_event(msg: Any) -> None:
    raise Malformed("no table of this name")  # declined: the reference path reads or refuses it


# A union member tagged with the empty name, which no TiDB table has (see _rebuild_union).
_NoTable = msgspec.defstruct("SimpleDMLOfNoTable", [], tag_field="table", tag="", gc=False,
                             namespace={"event": _no_table_event})


def _rows(plan: RowPlan, raws: tuple[Optional[msgspec.Raw], ...]) -> tuple:
    return tuple(None if raw is None else plan.decoder.decode(raw) for raw in raws)


def _carried(raws: tuple[Optional[msgspec.Raw], ...], plan: RowPlan) -> Optional[frozenset[str]]:
    """The columns both images carry when they carry the same ones and not the plan's, else None.
    orjson only names the columns here: the new plan's row Struct reads the values."""
    names = set()
    for raw in raws:
        if raw is not None:
            image = orjson.loads(memoryview(raw))
            if not isinstance(image, dict):
                return None
            names.add(frozenset(image))
    if len(names) != 1:
        return None
    [carried] = names
    return None if carried == frozenset(plan.carried) else carried
