"""Plans for the fast path (_fast/decoder.py): one per distinct schema half, keyed by its bytes on the wire.

With the schema on, every key and value repeats its table's schema (spec 000, "Value format"), and
parsing it costs several times what the payload does. The fast path leaves it unparsed (msgspec.Raw)
and looks its exact bytes up here: a plan holds what those bytes say, ready to use -- the msgspec
decoder of the payload they describe and the readers of its row images. New bytes (another table or
table version, or the same schema spelled otherwise) get a plan of their own, built from orjson's
reading of exactly those bytes with the reference path's own parsers (schema.envelope_field,
columns.StructCache), so a plan concludes only what the reference path would. Bytes the reference
path would reject as a schema get no plan: the fast path declines them. Both caches are bounded
(common.wire.bounded_put), so a stream of ever-new schemas cannot grow them.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import msgspec
import orjson

from ticdc_conformance.protocols.common.wire import Malformed, bounded_put
from ticdc_conformance.protocols.debezium._fast.structs import column_type, payload_type, row_type
from ticdc_conformance.protocols.debezium.columns import Struct, StructCache
from ticdc_conformance.protocols.debezium.message import envelope_field

MAX_PLANS = 256

_astuple = msgspec.structs.astuple


class RowReader:
    """The values of one row image read as its msgspec row struct (structs.row_type)."""

    def __init__(self, struct: Struct) -> None:
        self.names = struct.names
        self.type = row_type(struct.specs)
        # The columns whose typed value is not final yet take the reference path's converter.
        self._finish = tuple((i, read) for i, (spec, (_, _, read)) in enumerate(zip(struct.specs, struct.converters))
                             if not column_type(spec)[1])

    def values(self, row: Any, where: str) -> dict[str, Any]:
        """Column -> canonical value, in schema order."""
        return dict(zip(self.names, self.finished(row, where)))

    def finished(self, row: Any, where: str) -> Sequence[Any]:
        """The canonical values in schema order; `where` ("before", "after", "key") is passed to the
        converters, whose Malformed makes the fast path decline."""
        values = _astuple(row)
        if self._finish:
            values = list(values)
            for i, read in self._finish:
                if (v := values[i]) is not None:
                    values[i] = read(v, where)
        return values


class ValuePlan:
    """A value schema's row images (None: the schema declares no such image, or one the reference
    path rejects, so the payload must not carry it) and the decoder of its payload."""

    def __init__(self, before: Optional[RowReader], after: Optional[RowReader]) -> None:
        self.before = before
        self.after = after
        self.decoder = msgspec.json.Decoder(payload_type(None if before is None else before.type,
                                                         None if after is None else after.type))


class KeyPlan:
    def __init__(self, reader: RowReader) -> None:
        self.reader = reader
        self.decoder = msgspec.json.Decoder(reader.type)


class PlanCache:
    def __init__(self, structs: StructCache, limit: int = MAX_PLANS) -> None:
        self._structs = structs
        self._limit = limit
        self._values: dict[bytes, ValuePlan] = {}
        self._keys: dict[bytes, KeyPlan] = {}

    def __len__(self) -> int:
        return len(self._values) + len(self._keys)

    def value_plan(self, schema: bytes) -> Optional[ValuePlan]:
        plan = self._values.get(schema)
        if plan is None:
            plan = self._value_plan(schema)
            if plan is not None:
                bounded_put(self._values, schema, plan, self._limit)
        return plan

    def key_plan(self, schema: bytes) -> Optional[KeyPlan]:
        plan = self._keys.get(schema)
        if plan is None:
            doc = _object(schema)
            try:
                plan = None if doc is None else KeyPlan(RowReader(self._structs.get(doc, "key schema")))
            except Malformed:
                return None
            if plan is not None:
                bounded_put(self._keys, schema, plan, self._limit)
        return plan

    def _value_plan(self, schema: bytes) -> Optional[ValuePlan]:
        doc = _object(schema)
        if doc is None:
            return None
        try:
            before, after = envelope_field(doc, "before"), envelope_field(doc, "after")
        except Malformed:
            return None  # the reference path rejects the schema of every DML message
        before_struct, after_struct = self._struct(before), self._struct(after)
        before_reader = None if before_struct is None else RowReader(before_struct)
        if after_struct is before_struct:  # TiCDC describes both images alike: StructCache gave one Struct
            return ValuePlan(before_reader, before_reader)
        return ValuePlan(before_reader, None if after_struct is None else RowReader(after_struct))

    def _struct(self, descriptor: Optional[dict]) -> Optional[Struct]:
        if descriptor is None:
            return None
        try:
            return self._structs.get(descriptor, "schema")
        except Malformed:
            return None  # the reference path rejects an image this descriptor describes


def _object(schema: bytes) -> Optional[dict]:
    """orjson's reading of a schema half, if it is the object the reference path requires."""
    try:
        doc = orjson.loads(schema)
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None
