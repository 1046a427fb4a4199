"""The event reader of a table description built from per-column closures, with no generated source:
the same checks and conversions as rowcode.py's written-out reader, in loops over the columns.

It exists to measure the choice between the two (`ticdc-conformance bench decode --paths`,
docs/performance.md, "Fast path: generated code or closures"); tests hold it to the reference path
as they hold the generated reader. Where an integer's range fits msgspec's int64 bounds, a bounded
msgspec decoder reads the text and checks the range in one C call (its constraint); a text it
refuses (leading zeros) makes the fast path decline, and the reference path reads it.
"""
from __future__ import annotations

from binascii import b2a_base64
from typing import Annotated, Any, Callable, Optional

import msgspec
from msgspec import UNSET
from msgspec.structs import astuple

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.canal_json._fast.rowcode import (
    _NULL,
    Decline,
    EventReader,
    _Column,
    _plain_texts,
    _promotions_of,
)
from ticdc_conformance.protocols.canal_json.mysql_type import MySQLType
from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_JOIN = "\x00".join


def _int_reader(low: int, high: int) -> Callable[[str], int]:
    if _I64_MIN <= low and high <= _I64_MAX:
        return msgspec.json.Decoder(Annotated[int, msgspec.Meta(ge=low, le=high)]).decode

    def read(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise Decline
        return value
    return read


def _binary(text: str) -> str:
    # As values._binary reads it: a character above U+00FF raises UnicodeEncodeError here.
    return b2a_base64(text.encode("latin-1"), newline=False).decode("ascii")


def _old_reader(column: _Column) -> Optional[Callable[[str], Any]]:
    """What reads a non-null text of an update's `old` row that differs from the row after's."""
    if column.kind == "text":
        return None
    if column.kind in ("printed", "int"):
        assert column.pattern is not None  # a printed or integer column has its plain pattern
        shapes: set[bytes] = set()
        plain = _plain_texts([column.pattern], shapes)
        read_int = None if column.bounds is None else _int_reader(*column.bounds)

        def read(text: str) -> Any:
            if text.encode("utf-8", "surrogatepass").translate(DIGITS_AS_ZERO) not in shapes and not plain(text):
                raise Decline
            return text if read_int is None else read_int(text)
        return read
    return _binary if column.kind == "binary" else column.read


def _converter(column: _Column) -> Callable[[str], Any]:
    """What turns a non-null text of the row after into its value, for an int, binary or read column."""
    if column.bounds is not None:
        return _int_reader(*column.bounds)
    if column.kind == "binary":
        return _binary
    assert column.read is not None  # a "read" column has its reader
    return column.read


def event_reader(types: dict[str, MySQLType], fields: dict[str, str], key: tuple[str, ...],
                 enable_tidb_extension: bool) -> EventReader:
    """rowcode.event_reader's reader, as closures over the columns."""
    names = list(types)
    columns = [_Column(name, t) for name, t in types.items()]
    width = len(columns)
    plain_names = tuple(name for name, c in zip(names, columns) if c.pattern is not None)
    shapes: set[bytes] = set()
    plain = _plain_texts([c.pattern for c in columns if c.pattern is not None], shapes)
    # Columns whose value the row after holds converted: (name, converter of a non-null text).
    converted = tuple((name, _converter(c)) for name, c in zip(names, columns) if c.kind in ("int", "binary", "read"))
    # Unsigned integers whose sqlType code follows the value: (name, field, limit, wider code, code).
    promotions = tuple(_promotions_of(types, fields))
    old_readers = tuple(zip(names, (_old_reader(c) for c in columns)))
    zero = DIGITS_AS_ZERO

    def event(msg: Any) -> list[DecodedRow]:
        row = msg.data[0]
        if len(row) != width:
            raise Decline
        if plain_names:
            texts = _JOIN([_NULL if (t := row[name]) is None else t for name in plain_names])
            if texts.encode("utf-8", "surrogatepass").translate(zero) not in shapes and not plain(texts):
                raise Decline
        kind = msg.type
        old = msg.old
        # An update's `old` texts are compared with the row after's texts, before their conversion.
        texts_after = {} if old is None else row.copy()
        for name, convert in converted:
            text = row[name]
            if text is not None:
                row[name] = convert(text)
        if promotions:
            sql_type = msg.sqlType
            for name, field, limit, wider, code in promotions:
                value = row[name]
                if getattr(sql_type, field) != (wider if value is not None and value > limit else code):
                    raise Decline
        ts = msg.tidb.commitTs if enable_tidb_extension else None
        if old is None:
            if kind == "DELETE":
                return [DecodedRow(msg.database, msg.table, "delete", ts, None, row, key)]
            return [DecodedRow(msg.database, msg.table, "insert" if kind == "INSERT" else "update", ts, row, None, key)]
        if kind != "UPDATE":
            raise Decline
        before = row.copy()
        for (name, read), text in zip(old_readers, astuple(old[0])):
            if text is UNSET:
                continue
            if read is None or text is None:
                before[name] = text
            elif text != texts_after[name]:
                before[name] = read(text)
        return [DecodedRow(msg.database, msg.table, "update", ts, row, before, key)]
    return event
