"""Column descriptors parsed once per distinct struct schema, with one value converter per column.

With the schema on, every Debezium key and value repeats its table's column descriptors (spec 000,
"Value format"), and parsing them again for each message costs more than the values they describe.
StructCache keeps each struct schema parsed, keyed by its exact JSON text (orjson.dumps of the parsed
object: equal text means an equal object with the same JSON types, hence the same descriptors). Only
structs that parsed cleanly are kept, so a malformed one fails every time with its own reason. The cache
holds at most MAX_STRUCTS entries and starts over when full, so a stream of ever-new schemas cannot
grow it without limit. (The fast path, _fast/plans.py, goes further: it keys a whole schema half by its
bytes on the wire, before parsing anything.)

A column's converter takes the values TiCDC writes in their usual shape (an integer in range, a double,
a text, canonical base64) by itself and hands any other value to values.decode_typed, so what a value
decodes to, and the reason a bad one is rejected with, stay those of the general reader.
"""
from __future__ import annotations

from typing import Any, Callable

import orjson

from ticdc_conformance.protocols.common.wire import Malformed, bounded_put, is_canonical_base64

from .message import FieldSpec, parse_struct_fields
from .options import DebeziumOptions
from .values import BINARY_TIDB_TYPES, INT_RANGES, INT_TEMPORALS, decode_typed

MAX_STRUCTS = 256
Converter = Callable[[Any, str], Any]  # (non-NULL wire value, "before"/"after"/"key") -> canonical value

# Semantic types whose value is not the wire value itself; their columns take the general reader.
CONVERTED_SEMANTICS = frozenset({
    "io.debezium.time.Date", "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp",
    "io.debezium.time.MicroTime", "io.debezium.time.ZonedTimestamp", "io.debezium.data.Json",
    "io.debezium.data.Bits"})


def _int(spec: FieldSpec, slow: Converter) -> Converter:
    lo, hi = INT_RANGES[spec.type]
    # values._decode_int: a negative int64 of a BIGINT UNSIGNED is undone from TiCDC's int64(v) wrap.
    lo = 0 if spec.type == "int64" and spec.tidb_type == "bigint unsigned" else lo

    def read(raw: Any, where: str) -> Any:
        return raw if raw.__class__ is int and lo <= raw <= hi else slow(raw, where)
    return read


def _int_temporal(spec: FieldSpec, slow: Converter) -> Converter:
    lo, hi = INT_RANGES[spec.type]
    convert = INT_TEMPORALS[spec.semantic]

    def read(raw: Any, where: str) -> Any:
        return convert(raw) if raw.__class__ is int and lo <= raw <= hi else slow(raw, where)
    return read


def _double(slow: Converter) -> Converter:
    def read(raw: Any, where: str) -> Any:
        # An integral double arrives as a JSON integer; the general reader makes it a float.
        return raw if raw.__class__ is float else slow(raw, where)
    return read


def _text(slow: Converter) -> Converter:
    def read(raw: Any, where: str) -> Any:
        return raw if raw.__class__ is str else slow(raw, where)
    return read


def _base64(slow: Converter) -> Converter:
    def read(raw: Any, where: str) -> Any:
        return raw if raw.__class__ is str and is_canonical_base64(raw) else slow(raw, where)
    return read


def converter(spec: FieldSpec, opts: DebeziumOptions) -> Converter:
    def slow(raw: Any, where: str) -> Any:
        return decode_typed(spec, raw, opts, where)
    if spec.semantic in INT_TEMPORALS:  # schema.parse_field: always on an integer type
        return _int_temporal(spec, slow)
    if spec.semantic in CONVERTED_SEMANTICS:
        return slow
    t = spec.type
    if t in INT_RANGES:
        return _int(spec, slow)
    if t in ("float", "double"):
        return _double(slow)
    if t == "bytes" or t == "string" and spec.tidb_type in BINARY_TIDB_TYPES:
        return _base64(slow)
    if t == "string":
        return _text(slow)
    return slow  # boolean


class Struct:
    """One struct schema's columns: their descriptors, names and converters."""

    def __init__(self, specs: tuple[FieldSpec, ...], opts: DebeziumOptions) -> None:
        self.specs = specs
        self.names = tuple(s.column for s in specs)
        self.known = frozenset(self.names)
        self._opts = opts
        self.converters = tuple((s.column, s.optional, converter(s, opts)) for s in specs)

    def values(self, raw: dict, where: str) -> dict[str, Any]:
        """A payload struct's values; `where` ("before", "after", "key") names it in reasons."""
        if len(raw) == len(self.converters) and self.known.issuperset(raw):
            # Every column present: the general walk below would find nothing missing or extra.
            return {name: None if (v := raw[name]) is None and optional else read(v, where)
                    for name, optional, read in self.converters}
        out: dict[str, Any] = {}
        for spec in self.specs:
            if spec.column in raw:
                out[spec.column] = decode_typed(spec, raw[spec.column], self._opts, where)
            elif not spec.optional:
                raise Malformed(f"{where}: non-optional column {spec.column!r} missing from the payload")
        extra = [name for name in raw if name not in out]
        if extra:
            raise Malformed(f"{where}: column {extra[0]!r} is not in the schema")
        return out


class StructCache:
    def __init__(self, opts: DebeziumOptions) -> None:
        self._opts = opts
        self._structs: dict[bytes, Struct] = {}

    def get(self, struct: Any, where: str) -> Struct:
        """schema.parse_struct_fields of `struct`, parsed once per distinct schema text."""
        try:
            key = orjson.dumps(struct)
        except TypeError:
            # orjson reads JSON nested deeper than it writes ("Recursion limit reached"): such a
            # struct is no schema TiCDC writes, and parsing it says what is wrong with it.
            return self._parse(struct, where)
        found = self._structs.get(key)
        if found is None:
            found = self._parse(struct, where)
            bounded_put(self._structs, key, found, MAX_STRUCTS)
        return found

    def _parse(self, struct: Any, where: str) -> Struct:
        return Struct(parse_struct_fields(struct, where, self._opts.tidb_extension), self._opts)
