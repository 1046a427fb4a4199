"""What the Canal-JSON decoder learns once per table version and reuses for every later message.

Every DML message repeats its table's description in full (pkNames, mysqlType, sqlType: TiCDC
pkg/sink/codec/canal/canal_json_encoder.go writes them into each message). Parsing the mysqlType
texts and picking a reader per column for every message costs more than reading the row itself, so
a plan does it once and serves each later message whose description equals the one it was built
from (a dict comparison, done in C). A changed description (a DDL, another column selection)
builds a new plan.

A plan never reports faults itself: whatever it does not recognise as valid raises `Declined` (or
a reader's Malformed), and the caller hands the message to the reference path (rows.py), which
decodes it or reports the fault with its exact reason.
"""
from __future__ import annotations

from typing import Any, Optional

from ..keys import carried_key
from .java_type import PROMOTIONS, SQL_TYPE_CODES
from .rows import mysql_types, pk_names
from .values import Reader, value_reader

_INT_ONLY = frozenset({int})


class Declined(Exception):
    """The fast path cannot vouch for this message; the reference path decides."""


class TablePlan:
    """One table version's description, parsed: a reader per column and the sqlType codes to expect."""

    __slots__ = ("mysql_text", "pk_text", "columns", "key_columns", "readers", "fixed_codes", "promoted")

    def __init__(self, msg: dict) -> None:
        """Raises Malformed (through rows.py's own checks) when the description is not valid."""
        types = mysql_types(msg, "plan")
        pk = pk_names(msg, "plan")
        # Copies, so that no caller's later change to the message can alter what the plan matches.
        self.mysql_text = dict(msg["mysqlType"])
        self.pk_text = None if msg["pkNames"] is None else list(msg["pkNames"])
        self.columns = frozenset(types)
        self.key_columns = carried_key([pk], types)
        self.readers: dict[str, Optional[Reader]] = {name: value_reader(name, t) for name, t in types.items()}
        # java_type.py's rule, split once: most codes follow from the mysqlType alone, and an unsigned
        # integer's also from whether the first row's value passes the signed maximum.
        promoted = {name: t for name, t in types.items() if t.unsigned and t.base in PROMOTIONS}
        self.fixed_codes = frozenset((name, SQL_TYPE_CODES[t.base])
                                     for name, t in types.items() if name not in promoted)
        self.promoted = tuple((name, *PROMOTIONS[t.base], SQL_TYPE_CODES[t.base])
                              for name, t in promoted.items())

    def row(self, raw: Any, exact: bool = True) -> dict[str, Any]:
        """One row object -> {column: canonical value} in the row's order, as rows.py's _decode_row.

        `exact` rows name every column; an update's `old` may name a subset."""
        if raw.__class__ is not dict or not (raw.keys() == self.columns if exact else raw.keys() <= self.columns):
            raise Declined()
        readers = self.readers
        out = {}
        for name, value in raw.items():
            if value.__class__ is str:
                read = readers[name]
                out[name] = value if read is None else read(value)
            elif value is None:
                out[name] = None
            else:
                raise Declined()
        return out

    def before(self, raw_old: Any, after: dict[str, Any]) -> dict[str, Any]:
        """An update's row before: rows.py overlays `old`'s changed columns on the row after. `old`
        names a subset of the row's columns, so a dict merge keeps the row's column order and takes
        old's values where it has them."""
        return after | self.row(raw_old, exact=False)

    def sql_types_fit(self, codes: Any, first: dict[str, Any]) -> bool:
        """Whether `codes` (the message's sqlType) are those java_type.py gives each column with the
        values of the first row, from which TiCDC computes them."""
        # A bool or float would compare equal to an int code; the reference rejects both.
        if codes.__class__ is not dict or codes.keys() != self.columns or not _INT_ONLY.issuperset(
                map(type, codes.values())):
            return False
        if not codes.items() >= self.fixed_codes:
            return False
        for name, limit, wider, code in self.promoted:
            value = first[name]
            if codes[name] != (wider if value is not None and value > limit else code):
                return False
        return True


class PlanCache:
    """The plans of the tables seen last, at most `limit` of them, so that a stream naming ever new
    tables cannot grow it without bound; the oldest entry goes first."""

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._plans: dict[tuple[str, str], TablePlan] = {}

    def plan(self, msg: dict, database: str, table: str, mysql_type: Any, pk: Any) -> TablePlan:
        """The plan for `msg`, which names `database`.`table` and carries mysqlType `mysql_type` and
        pkNames `pk`; raises Malformed when that description is not valid."""
        key = (database, table)
        plan = self._plans.get(key)
        if plan is not None and mysql_type == plan.mysql_text and pk == plan.pk_text:
            return plan
        plan = TablePlan(msg)
        if key not in self._plans and len(self._plans) >= self._limit:
            del self._plans[next(iter(self._plans))]
        self._plans[key] = plan
        return plan

    def __len__(self) -> int:
        return len(self._plans)
