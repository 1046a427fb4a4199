"""How the fast path (fast.py) reads the row images of one table schema version, built once per version.

msgspec reads an image into the version's row Struct (structs.py), checking in C that every column
is there, that no other is, and that each value has its JSON type. What C cannot do is finished here,
per kind, giving what the reference path's converters (rows.py, values.from_json) give:
- integers, DOUBLE, DECIMAL, DATE, DATETIME, TIME travel as text of a fixed form, checked for a
  whole row at once by its shape (shapes.py); integers and DOUBLEs are then read as numbers;
- binary values are base64 text, decoded by msgspec and printed again in canonical base64 by
  msgspec.to_builtins, which also turns the Struct into the row dict under the columns' names;
- FLOAT, TIMESTAMP, YEAR, ENUM, SET and BIT go through the reference path's own converters;
- text and JSON are the strings themselves.
Anything these steps refuse raises Declined (or Malformed, from a reference converter).
"""
from __future__ import annotations

import math
from operator import attrgetter
from typing import Any, Callable, Optional

import msgspec
import orjson
from msgspec import Struct

from .rows import RowReader, json_converter
from .shapes import DIGITS_AS_ZERO, admit, text_check
from .structs import field_name, message_struct, row_struct
from .table import ColumnInfo

_MAX_LITERAL = 2**63 - 1  # msgspec's Literal integers are int64s
# Bound once: image() runs for every row image, and a module attribute lookup costs about as much
# as the call of some of these.
_dumps = orjson.dumps
_to_builtins = msgspec.to_builtins


class Declined(Exception):
    """The fast path leaves this message to the reference path."""


def _tuple_getter(names: list[str]) -> Callable[[Struct], tuple]:
    if len(names) == 1:
        name = names[0]
        return lambda row: (getattr(row, name),)
    return attrgetter(*names)


class RowPlan:
    __slots__ = ("schema", "table", "column_names", "carried", "key_columns", "decoder", "message", "_checked",
                 "_checks", "_shapes", "_integers", "_finishers")

    def __init__(self, reader: RowReader, time_zone: str, carried: Optional[frozenset[str]] = None) -> None:
        """The plan of rows that carry every column, or only the `carried` ones (TiCDC leaves virtual
        generated columns out, and a column selector the columns it drops)."""
        table = reader.table
        columns = tuple(c for c in table.columns if carried is None or c.name in carried)
        self.schema, self.table = table.schema, table.table
        self.column_names = reader.column_names  # the table's, whichever columns its rows carry
        self.carried = tuple(c.name for c in columns)
        # A row the fast path reads carries exactly these columns, in both images, so its key is the
        # one the reference path finds in such images.
        carried_images = dict.fromkeys(self.carried)
        self.key_columns = reader.key_columns(carried_images, carried_images)
        row = row_struct(columns)
        self.decoder = msgspec.json.Decoder(row)
        # The one-step read's union member; a version past msgspec's Literal range takes two steps.
        self.message = (message_struct(table.schema, table.table, table.version, row)
                        if table.version <= _MAX_LITERAL else None)
        checked = [(field_name(i), c) for i, c in enumerate(columns) if text_check(c.kind) is not None]
        self._checked = _tuple_getter([f for f, _ in checked]) if checked else None
        self._checks = tuple(text_check(c.kind) for _, c in checked)
        self._shapes: dict[bytes, None] = {}
        self._integers = tuple((c.name, *c.int_range) for c in columns if c.kind == "integer")
        self._finishers = tuple((c.name, f) for c in columns if (f := _finisher(c, time_zone)) is not None)

    def image(self, row: Struct) -> dict[str, Any]:
        """The canonical row image of a row Struct."""
        checked = self._checked
        if checked is not None:
            values = checked(row)
            shape = _dumps(values).translate(DIGITS_AS_ZERO)
            if shape not in self._shapes and not admit(self._shapes, shape, values, self._checks):
                raise Declined()
        out = _to_builtins(row)
        # Integer text of a checked shape is digits after an optional minus: int() reads it as
        # values.from_json does, and the column's range is what that checks next.
        for name, lo, hi in self._integers:
            value = out[name]
            if value is not None:
                value = int(value)
                if not lo <= value <= hi:
                    raise Declined()
                out[name] = value
        for name, finish in self._finishers:
            value = out[name]
            if value is not None:
                out[name] = finish(value)
        return out


def _finite_double(text: str) -> float:
    # rows._json_double: a DOUBLE's text of a checked shape, as a finite float. (msgspec's lax float
    # is not used: it reads "-0" as 0.0, where float() gives -0.0.)
    value = float(text)
    if not math.isfinite(value):
        raise Declined()
    return value


def _finisher(col: ColumnInfo, time_zone: str) -> Optional[Callable[[Any], Any]]:
    """What a column's non-NULL value needs after the shape check and to_builtins, beyond integers."""
    kind = col.kind
    if kind == "double":
        return _finite_double
    if kind in ("text", "json", "integer", "binary") or text_check(kind) is not None:
        return None
    # FLOAT, TIMESTAMP, YEAR, ENUM, SET, BIT: the reference path's converter (rows.py), which raises
    # Malformed for what it refuses.
    return json_converter(col, time_zone)
