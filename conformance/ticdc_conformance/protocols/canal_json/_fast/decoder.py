"""The decoder's fast path: the DML messages of the shape TiCDC sends nearly always, parsed in C by
msgspec into the types of their table's plan (plans.py, structs.py) instead of into plain JSON values
that the table's description is then re-read from every time, and turned into their event by the
plan's event reader, written out for the table's columns (rowcode.py).

It checks everything the reference path (decoder.py, rows.py) checks, in its own order, and only
ever accepts: whatever it cannot vouch for -- any fault, a message msgspec might read otherwise
than orjson (structs.py), a large-message placeholder, a DELETE whose `old` repeats `data`, more than
one row (TiCDC sends one: canal_json_encoder.go, fillColumns), the first message of a table
description (plans.PlanCache), DDL and watermark messages -- makes it decline (return None), and
the reference path decodes the message or names what is wrong with it. So every event it returns
is the one the reference path returns, and every error is still the reference path's.
"""
from __future__ import annotations

from typing import Optional

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.canal_json._fast.plans import PlanCache, TablePlan
from ticdc_conformance.protocols.canal_json._fast.rowcode import Decline, EventReaderFactory, event_reader
from ticdc_conformance.protocols.canal_json._fast.structs import DECODE_ERRORS, descriptions
from ticdc_conformance.protocols.common.wire import Malformed

# Everything a plan's event reader raises for a message it cannot vouch for (rowcode.py).
_DECLINED = (*DECODE_ERRORS, Malformed, Decline, UnicodeEncodeError)


class FastDML:
    def __init__(self, enable_tidb_extension: bool, reader: EventReaderFactory = event_reader) -> None:
        """`reader` builds a plan's event reader: the generated one, or the closures measured beside it."""
        self._plans = PlanCache(enable_tidb_extension, reader=reader)
        self._last: Optional[TablePlan] = None  # the plan of the last message

    def decode(self, value: bytes) -> Optional[list[DecodedRow]]:
        """The event of the DML message `value` (JSON text), or None to leave it to the reference path."""
        plan = self._last  # consecutive messages mostly share their table's description
        try:
            try:
                if plan is None:
                    raise LookupError("no plan yet")
                msg = plan.decoder.decode(value)
            except (*DECODE_ERRORS, LookupError):
                # Another table description, or a message this plan's decoder rejects: find its plan.
                plan = self._plans.plan(descriptions.decode(value))
                if plan is None:
                    return None
                self._last = plan
                msg = plan.decoder.decode(value)
            return plan.event(msg)
        except _DECLINED:
            return None
