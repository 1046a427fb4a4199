"""Reading the rows of a DML message with a few C calls instead of one reader call per value.

Nearly every value TiDB prints is plain text (values.plain_form): an integer, a DECIMAL or a
temporal value in its usual form. A row whose plain columns all hold such text is checked by one
regex over those texts joined with NUL (which no plain text holds, so each text must match its own
column's part), and only the integers are then read. Any other row -- a NULL among those columns,
a text outside the plain form -- goes through the columns' own readers (values.py), which accept
it or name the fault. Either way the values are those the readers give.

An update's row before repeats most texts of the row after (TiCDC sends every column in `old`
unless only-output-updated-columns): those read as in the row after, so only the others are read.
"""
from __future__ import annotations

import re
from operator import itemgetter
from typing import Any, Callable

from msgspec import UNSET, Struct
from msgspec.structs import astuple

from ..common import Malformed
from .mysql_type import MySQLType
from .values import plain_form, value_reader

Row = dict[str, Any]


class RowReader:
    """How to read the rows of one table description. The rows are the message decoder's own
    (wire.py): `data` rows are dicts read in place, `old` rows Structs."""

    __slots__ = ("_width", "_names", "_texts", "_reader_at", "_readers", "_unset_row",
                 "_plain_texts", "_match", "_ints", "_others")

    def __init__(self, types: dict[str, MySQLType]) -> None:
        self._width = len(types)
        self._names = tuple(types)  # the order of the fields of an `old` row's Struct
        self._texts = _getter(self._names)
        # A text column keeps its string and gets no reader (None).
        self._reader_at = tuple(value_reader(name, t) for name, t in types.items())
        self._readers = tuple((name, read) for name, read in zip(self._names, self._reader_at) if read is not None)
        self._unset_row = (UNSET,) * self._width
        plain = {name: form for name, _ in self._readers if (form := plain_form(types[name])) is not None}
        self._plain_texts = _getter(tuple(plain))
        self._match = re.compile("\x00".join(form.pattern for form in plain.values())).fullmatch
        self._ints = tuple((name, *form.bounds) for name, form in plain.items() if form.bounds is not None)
        self._others = tuple((name, read) for name, read in self._readers if name not in plain)

    def whole(self, row: Row) -> Row:
        """A `data` row -> {column: canonical value} in the row's order, as rows.py's _decode_row.
        The decoder admits only the description's columns, so a row of as many holds all of them."""
        if len(row) != self._width:
            raise Malformed("a row lacks columns of mysqlType")
        texts = self._plain_texts(row)
        if None in texts or self._match("\x00".join(texts)) is None:  # a NULL, or a text not plain
            return self._each(row)
        for name, low, high in self._ints:
            value = int(row[name])
            if not low <= value <= high:
                raise Malformed(f"column {name!r}: {value} outside [{low}, {high}]")
            row[name] = value
        for name, read in self._others:
            text = row[name]
            if text is not None:
                row[name] = read(text)
        return row

    def update(self, row: Row, old: Struct) -> tuple[Row, Row]:
        """An update's rows after and before, from its `data` row and its `old` row. rows.py
        overlays `old`'s columns on the row after, so a dict merge keeps the row's column order and
        takes old's values."""
        if len(row) != self._width:
            raise Malformed("a row lacks columns of mysqlType")
        was = astuple(old)
        # Without only-output-updated-columns `old` holds every column, most with the text of the
        # row after; with it, the changed columns alone, the others UNSET.
        now = self._unset_row if UNSET in was else self._texts(row)
        changed = {}
        for name, read, text, text_now in zip(self._names, self._reader_at, was, now):
            if text != text_now:
                changed[name] = text if text is None or read is None else read(text)
        after = self.whole(row)
        return after, after | changed

    def _each(self, row: Row) -> Row:
        """A row read value by value, by the columns' own readers."""
        for name, read in self._readers:
            text = row[name]
            if text is not None:
                row[name] = read(text)
        return row


def _getter(names: tuple[str, ...]) -> Callable[[Row], tuple]:
    """The tuple of a row's texts of `names`; itemgetter gives a bare value for a single name."""
    if len(names) < 2:
        return lambda row: tuple(row[name] for name in names)
    return itemgetter(*names)
