"""The decoder's fast path: the DML messages of the shape TiCDC sends nearly always, read through
the plan of their table (plans.py) instead of re-parsing the table's description every time.

It checks everything the reference path (decoder.py, rows.py) checks, in its own order, and only
ever accepts: whatever it cannot vouch for -- any fault, a large-message placeholder, a DELETE whose
`old` repeats `data`, DDL and watermark messages -- makes it decline (return None), and the
reference path decodes the message or names what is wrong with it. So every event it returns is the
one the reference path returns, and every error is still the reference path's.
"""
from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Optional

from ...events import DecodedRow
from ..common import Malformed
from .plans import Declined, PlanCache
from .rows import DML_OPS

_UINT64_MAX = 2**64 - 1
# The fields the reference path reads of every DML message; one lookup in C fetches them all, and a
# message lacking one (which then breaks the spec or needs the reference's defaults) is declined.
_FIELDS = itemgetter("isDdl", "type", "id", "es", "ts", "database", "table", "pkNames", "mysqlType", "sqlType",
                     "data", "old")
_INT_OR_NULL = frozenset({int, type(None)})
# _tidb fields of large-message placeholders and of options the fast path leaves to the reference.
_DEFERRED_EXTENSION_FIELDS = frozenset({"watermarkTs", "onlyHandleKey", "claimCheckLocation", "rowkey"})


class FastDML:
    def __init__(self, enable_tidb_extension: bool) -> None:
        self._extension = enable_tidb_extension
        self._plans = PlanCache()

    def decode(self, msg: dict) -> Optional[list[DecodedRow]]:
        """The events of DML message `msg`, or None to leave it to the reference path."""
        try:
            is_ddl, kind, id_, es, ts, database, table, pk, mysql_type, sql_type, data, old = _FIELDS(msg)
            op = DML_OPS.get(kind) if kind.__class__ is str else None
            if (op is None or is_ddl is not False or database.__class__ is not str
                    or table.__class__ is not str or data.__class__ is not list or not data
                    or not _INT_OR_NULL.issuperset((id_.__class__, es.__class__, ts.__class__))):
                return None
            commit_ts = self._commit_ts(msg)
            plan = self._plans.plan(msg, database, table, mysql_type, pk)
            rows = list(map(plan.row, data))
            if not plan.sql_types_fit(sql_type, rows[0]):
                return None
            if old is None:
                images = zip(repeat(None), rows) if op == "delete" else zip(rows, repeat(None))
            elif op == "update" and old.__class__ is list and len(old) == len(rows):
                images = zip(rows, list(map(plan.before, old, rows)))
            else:
                return None
        except (KeyError, Declined, Malformed):
            return None
        key = plan.key_columns
        return [DecodedRow(database, table, op, commit_ts, after, before, key) for after, before in images]

    def _commit_ts(self, msg: dict) -> Optional[int]:
        if not self._extension:
            return None
        ext = msg.get("_tidb")
        if ext.__class__ is not dict or not ext.keys().isdisjoint(_DEFERRED_EXTENSION_FIELDS):
            raise Declined()
        ts = ext.get("commitTs")
        if ts.__class__ is not int or not 0 <= ts <= _UINT64_MAX:
            raise Declined()
        return ts

