"""How the fast path (_fast/decoder.py) reads the row images of one table schema version, built once per version.

msgspec reads an image into the version's row Struct (structs.py), checking in C that every column
is there, that no other is, and that each value has its JSON type. What C cannot do is finished by
the version's event function (rowcode.py), per kind, giving what the reference path's converters
(rows.py, values.from_json) give:
- integers, DOUBLE, DECIMAL, DATE, DATETIME, TIME travel as text of a fixed form, checked for a
  whole row at once by its shape (shapes.py); integers and DOUBLEs are then read as numbers;
- binary values are base64 text, decoded by msgspec and printed again in canonical base64 by
  msgspec.to_builtins;
- FLOAT, TIMESTAMP, YEAR, ENUM, SET and BIT go through the reference path's own converters;
- text and JSON are the strings themselves.
Anything these steps refuse gives None (or raises Malformed, from a reference converter).
"""
from __future__ import annotations

from typing import Optional

import msgspec

from ticdc_conformance.protocols.simple._fast.rowcode import ColumnCode, event_function
from ticdc_conformance.protocols.simple._fast.shapes import text_check
from ticdc_conformance.protocols.simple._fast.structs import message_struct, row_struct
from ticdc_conformance.protocols.simple.message import ColumnInfo
from ticdc_conformance.protocols.simple.rows import RowReader, json_converter

_MAX_LITERAL = 2**63 - 1  # msgspec's Literal integers are int64s


class RowPlan:
    __slots__ = ("schema", "table", "column_names", "carried", "key_columns", "decoder", "message", "event",
                 "columns", "_shapes")

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
        self._shapes: dict[bytes, None] = {}
        self.columns = tuple(_code(c, time_zone) for c in columns)
        self.event = event_function(table.schema, table.table, self.columns, self._shapes, self.key_columns,
                                    self.column_names)
        # The one-step read's union member; a version past msgspec's Literal range takes two steps.
        self.message = (message_struct(table.schema, table.table, table.version, row, self.event)
                        if table.version <= _MAX_LITERAL else None)


def _code(col: ColumnInfo, time_zone: str) -> ColumnCode:
    """What a column's non-NULL value needs after msgspec read it."""
    kind = col.kind
    check = text_check(kind)
    if kind == "integer":
        return ColumnCode(col.name, check, int_range=col.int_range)
    if kind == "double":
        return ColumnCode(col.name, check, double=True)
    if kind == "binary":
        return ColumnCode(col.name, check, binary=True)
    if kind in ("text", "json") or check is not None:
        return ColumnCode(col.name, check)
    # FLOAT, TIMESTAMP, YEAR, ENUM, SET, BIT: the reference path's converter (rows.py), which raises
    # Malformed for what it refuses.
    return ColumnCode(col.name, check, finish=json_converter(col, time_zone))
