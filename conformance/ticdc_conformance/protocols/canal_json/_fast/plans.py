"""What the Canal-JSON decoder learns once per table version and reuses for every later message.

Every DML message repeats its table's description in full (pkNames, mysqlType, sqlType: TiCDC
pkg/sink/codec/canal/canal_json_encoder.go writes them into each message). Parsing the mysqlType
texts and picking a reader per column for every message costs more than reading the row itself, so
a plan does it once, and its message decoder (structs.py) checks in C that a message carries exactly
that description. A changed description (a DDL, another column selection) gets another plan.

A plan never reports faults itself: whatever it does not recognise as valid raises Malformed, the
fast path then declines, and the reference path (rows.py) decodes the message or reports the fault
with its exact reason.
"""
from __future__ import annotations

from typing import Optional

from ticdc_conformance.protocols.canal_json._fast.rowcode import EventReaderFactory, event_reader
from ticdc_conformance.protocols.canal_json._fast.structs import Description, field_names, message_decoder
from ticdc_conformance.protocols.canal_json.java_type import PROMOTIONS, SQL_TYPE_CODES
from ticdc_conformance.protocols.canal_json.rows import mysql_types, pk_names
from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed, bounded_put


class TablePlan:
    """One table description, parsed: its message decoder and the reader of its messages' events."""

    __slots__ = ("decoder", "event")

    def __init__(self, mysql_type: dict[str, str], pk: Optional[list[str]], enable_tidb_extension: bool,
                 reader: EventReaderFactory = event_reader) -> None:
        """Raises Malformed (through rows.py's own checks) when the description is not valid."""
        description = {"mysqlType": mysql_type, "pkNames": pk}
        types = mysql_types(description, "plan")
        if not types:
            raise Malformed("plan: no columns")  # TiCDC sends none such (canal_json_encoder.go)
        if not all(t.known for t in types.values()):
            raise Malformed("plan: a column of a type spec 003 does not list")  # the reference path carries it
        key_columns = carried_key([pk_names(description, "plan")], types)
        # java_type.py's rule, split: most codes follow from the mysqlType alone, which the decoder
        # checks; an unsigned integer's may also be the wider code, which one the event reader
        # checks against the row's value (rowcode.py).
        codes = {name: (SQL_TYPE_CODES[t.base], *(PROMOTIONS[t.base][1:] if t.unsigned and t.base in PROMOTIONS
                                                  else ()))
                 for name, t in types.items()}
        self.decoder = message_decoder({name: (mysql_type[name], codes[name]) for name in types},
                                       None if pk is None else tuple(pk), enable_tidb_extension)
        # A decoded message -> its event.
        self.event = reader(types, field_names(types), key_columns, enable_tidb_extension)


_UNSEEN = object()  # no entry in PlanCache._plans


class PlanCache:
    """The plans of the table descriptions seen last, at most `limit` of them (common.wire.bounded_put),
    so that a stream naming ever new tables cannot grow it without bound.

    A plan costs about as much to build as a few dozen messages cost the reference path, so it is
    built for a description seen before: a stream whose every message describes its table anew
    then costs what the reference path costs, no more."""

    def __init__(self, enable_tidb_extension: bool, limit: int = 256, reader: EventReaderFactory = event_reader) -> None:
        self._extension = enable_tidb_extension
        self._reader = reader
        self._limit = limit
        self._plans: dict[tuple, Optional[TablePlan]] = {}
        self._seen: dict[tuple, None] = {}

    def plan(self, description: Description) -> Optional[TablePlan]:
        """The plan of `description`; None the first time it is seen, and for a description that
        can have none (not valid, or columns msgspec cannot name: structs.py), which is remembered so
        that its every message is not built a plan for anew.

        TiCDC writes mysqlType from a Go map, in an order that changes from message to message
        (canal_json_encoder.go), so the order of its columns does not tell plans apart."""
        pk = description.pkNames
        key = (frozenset(description.mysqlType.items()), None if pk is None else tuple(pk))
        plan = self._plans.get(key, _UNSEEN)
        if plan is _UNSEEN:
            if key not in self._seen:
                bounded_put(self._seen, key, None, self._limit)
                return None
            try:
                plan = TablePlan(description.mysqlType, pk, self._extension, self._reader)
            except Malformed:
                plan = None
            bounded_put(self._plans, key, plan, self._limit)
        return plan

    def __len__(self) -> int:
        """The number of plans built."""
        return sum(plan is not None for plan in self._plans.values())
