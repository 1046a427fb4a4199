"""The decoder's fast path: the DML messages of the shape TiCDC sends nearly always, parsed in C by
msgspec into the types of their table's plan (plans.py, wire.py) instead of into plain JSON values
that the table's description is then re-read from every time.

It checks everything the reference path (decoder.py, rows.py) checks, in its own order, and only
ever accepts: whatever it cannot vouch for -- any fault, a message msgspec might read otherwise
than orjson (wire.py), a large-message placeholder, a DELETE whose `old` repeats `data`, more than
one row (TiCDC sends one: canal_json_encoder.go, fillColumns), the first message of a table
description (plans.PlanCache), DDL and watermark messages -- makes it decline (return None), and
the reference path decodes the message or names what is wrong with it. So every event it returns
is the one the reference path returns, and every error is still the reference path's.
"""
from __future__ import annotations

from typing import Optional

from ...events import DecodedRow
from ..common import Malformed
from .plans import PlanCache, TablePlan
from .rows import DML_OPS
from .wire import DECODE_ERRORS, descriptions


class FastDML:
    def __init__(self, enable_tidb_extension: bool) -> None:
        self._extension = enable_tidb_extension
        self._plans = PlanCache(enable_tidb_extension)
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
            [row], old = msg.data, msg.old
            op = DML_OPS[msg.type]
            if old is None:
                after = first = plan.after(row)
                before = None
                if op == "delete":
                    after, before = None, after
            elif op == "update":
                after, before = plan.update(row, old[0])
                first = after
            else:
                return None
            # The promoted sqlType codes follow from the values of the row TiCDC computed them from.
            for name, code_of, limit, wider, code in plan.promoted:
                number = first[name]
                if code_of(msg.sqlType) != (wider if number is not None and number > limit else code):
                    return None
        except (*DECODE_ERRORS, Malformed):
            return None
        commit_ts = msg.tidb.commitTs if self._extension else None
        return [DecodedRow(msg.database, msg.table, op, commit_ts, after, before, plan.key_columns)]
