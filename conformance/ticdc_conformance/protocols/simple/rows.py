"""Row images read through one cached table schema version, with converters built once per column.

DML messages carry no types (spec 004, "Message consumption scenarios"), so every value is read through
the column description of its table's cached schema. Dispatching on the column's kind for every value of
every row is most of a DML's decoding cost; a RowReader makes that choice once per (schema, table,
version) and keeps one converter per column.

A converter takes the values TiCDC writes in their common shape (a plain integer, a text, canonical
base64, a well-formed DECIMAL or temporal string) by itself and hands every other value to
values.from_json / values.from_avro, so what a value decodes to, and the reason a bad one is rejected
with, stay those of the general readers.
"""
from __future__ import annotations

import binascii
import math
from typing import Any, Callable, Optional

from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed, is_canonical_base64

from .message import ColumnInfo, TableInfo
from .values import DECIMAL_RE, FLOAT_RE, INT_CHARS, TEMPORAL_RE, from_avro, from_json

Converter = Callable[[Any], Any]  # a non-NULL wire value -> its canonical value


def _json_int(col: ColumnInfo, slow: Converter) -> Converter:
    lo, hi = col.int_range

    def read(raw: Any) -> Any:
        # ASCII digits after an optional minus sign are what values.from_json reads; isdigit() alone
        # also takes other scripts' digits, hence isascii().
        if raw.__class__ is str and len(raw) <= INT_CHARS and raw.isascii() and (
                raw.isdigit() or raw[:1] == "-" and raw[1:].isdigit()):
            v = int(raw)
            if lo <= v <= hi:
                return v
        return slow(raw)
    return read


def _json_double(col: ColumnInfo, slow: Converter) -> Converter:
    match = FLOAT_RE.match

    def read(raw: Any) -> Any:
        if raw.__class__ is str and match(raw):
            v = float(raw)
            if math.isfinite(v):
                return v
        return slow(raw)
    return read


def _json_binary(col: ColumnInfo, slow: Converter) -> Converter:
    def read(raw: Any) -> Any:
        # Canonical base64 is its own canonical form; other text takes the general reader.
        return raw if raw.__class__ is str and is_canonical_base64(raw) else slow(raw)
    return read


def _avro_int(col: ColumnInfo, slow: Converter) -> Converter:
    lo, hi = col.int_range

    def read(raw: Any) -> Any:
        return raw if raw.__class__ is int and lo <= raw <= hi else slow(raw)
    return read


def _avro_double(col: ColumnInfo, slow: Converter) -> Converter:
    def read(raw: Any) -> Any:
        return raw if raw.__class__ is float and math.isfinite(raw) else slow(raw)
    return read


def _avro_binary(col: ColumnInfo, slow: Converter) -> Converter:
    def read(raw: Any) -> Any:
        return binascii.b2a_base64(raw, newline=False).decode("ascii") if raw.__class__ is bytes else slow(raw)
    return read


def _text(slow: Converter) -> Converter:
    def read(raw: Any) -> Any:
        return raw if raw.__class__ is str else slow(raw)
    return read


def _shaped_text(col: ColumnInfo, slow: Converter) -> Converter:
    """DECIMAL and DATE/DATETIME/TIME strings are their own canonical form once well formed; the
    other kinds (FLOAT, TIMESTAMP, YEAR, ENUM, SET, BIT) are rare enough for the general reader."""
    pattern = DECIMAL_RE if col.kind == "decimal" else TEMPORAL_RE.get(col.kind)
    if pattern is None:
        return slow
    match = pattern.match

    def read(raw: Any) -> Any:
        return raw if raw.__class__ is str and match(raw) else slow(raw)
    return read


Builder = Callable[[ColumnInfo, Converter], Converter]


def _converter(col: ColumnInfo, slow: Converter, integer: Optional[Builder], double: Builder,
               binary: Builder) -> Converter:
    kind = col.kind
    if kind == "integer" and integer is not None:
        return integer(col, slow)
    if kind == "double":
        return double(col, slow)
    if kind == "binary":
        return binary(col, slow)
    if kind in ("text", "json"):
        return _text(slow)
    return _shaped_text(col, slow)


def json_converter(col: ColumnInfo, target_tz: str) -> Converter:
    return _converter(col, lambda raw: from_json(col, raw, target_tz), _json_int, _json_double, _json_binary)


def avro_converter(col: ColumnInfo, target_tz: str) -> Converter:
    # BIGINT UNSIGNED travels in its own record branch, which the general reader unwraps.
    integer = None if col.mysql_type == "bigint" and col.unsigned else _avro_int
    return _converter(col, lambda raw: from_avro(col, raw, target_tz), integer, _avro_double, _avro_binary)


class RowReader:
    """One table schema version's row images: column check, value conversion, carried key."""

    def __init__(self, table: TableInfo, converter: Callable[[ColumnInfo, str], Converter], target_tz: str) -> None:
        self.table = table
        self.column_names = table.column_names
        self._known = frozenset(self.column_names)
        self._converters = tuple((c.name, converter(c, target_tz)) for c in table.columns)
        self._by_name = dict(self._converters)
        self._first_key = table.keys[0] if table.keys else ()
        self._first_key_set = frozenset(self._first_key)

    def values(self, wire: Optional[dict]) -> Optional[dict[str, Any]]:
        if wire is None:
            return None
        if not self._known.issuperset(wire):
            table = self.table
            for name in wire:
                if name not in self._known:
                    raise Malformed(f"column {name!r} is not in {table.schema}.{table.table} version {table.version}")
        # Columns missing from the message (handle-key-only or claim-check messages, virtual columns)
        # are left out rather than invented.
        # NULL is NULL in every column of both encodings (values.from_json / from_avro return it first).
        if len(wire) == len(self._converters):
            return {name: None if (raw := wire[name]) is None else read(raw) for name, read in self._converters}
        return {name: None if (raw := wire[name]) is None else read(raw)
                for name, read in self._converters if name in wire}

    def readable_values(self, wire: Optional[dict]) -> Optional[dict[str, Any]]:
        """The values of `wire` that read, in its order, leaving out columns the schema lacks and
        values that do not read (the row a DML still stands for when `values` rejects it)."""
        if wire is None:
            return None
        out: dict[str, Any] = {}
        for name, raw in wire.items():
            read = self._by_name.get(name)
            if read is None:
                continue
            try:
                out[name] = None if raw is None else read(raw)
            except Malformed:
                continue
        return out

    def key_columns(self, data: Optional[dict], old: Optional[dict]) -> tuple[str, ...]:
        """keys.carried_key over the table's key candidates; the primary key, when both images carry it
        whole, is the answer without looking further."""
        first = self._first_key_set
        if first and (data is None or data.keys() >= first) and (old is None or old.keys() >= first):
            return self._first_key
        return carried_key(self.table.keys, data, old)

