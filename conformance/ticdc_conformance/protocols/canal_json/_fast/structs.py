"""The msgspec side of the fast path (_fast/decoder.py): a DML message parsed in C into typed Structs.

The reference path parses with orjson, and the fast path may only accept what orjson reads alike.
Where msgspec reads a field it is as strict as orjson: it rejects text that is not UTF-8, lone
surrogate escapes, NaN, leading zeros, control characters and every other syntax fault, and a key
given twice keeps its last value and its first place in an object, as in orjson. The types below
close the gaps that remain:
- integers: msgspec reads any size exactly where orjson turns one beyond 64 bits into a float
  (which the reference path rejects), so every integer is bounded, within the int64 bounds msgspec
  can check; a number beyond the double range (1e400) is a float, which no field here takes;
- skipped fields and `msgspec.Raw` are only scanned for their extent (a string that is not UTF-8
  or a number orjson reads as infinity passes there), so the decoder that accepts a message skips
  nothing (forbid_unknown_fields) and keeps nothing raw: each part is read in full, a given key
  every time it occurs;
- the row after is read into a dict, which keeps the row's own column order and collapses a
  repeated column as orjson's do; a Struct would put its fields in declaration order. Its keys are
  Literal, so that msgspec rejects any column outside the description.
"""
from __future__ import annotations

import re
from typing import Annotated, Iterable, Literal, Optional, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ticdc_conformance.protocols.common.wire import Malformed

# Every failure of a msgspec decode: syntax and type faults, text that is not UTF-8 (msgspec raises
# UnicodeDecodeError for it), and nesting deeper than the interpreter's recursion limit.
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

# msgspec renames a Struct field only to a name it can match without unescaping it: none with a
# quote, a backslash or a control character. MySQL allows every character but NUL in a quoted
# column name, so a table may have such a column; its messages are the reference path's.
_UNNAMABLE = re.compile(r'["\\\x00-\x1f]')

_Int64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
# TiCDC's commitTs is a uint64; the TSOs beyond the int64 bound msgspec can check (a physical clock
# past the year 2262) are left to the reference path.
_CommitTs = Annotated[int, Meta(ge=0, le=2**63 - 1)]


class Extension(Struct, forbid_unknown_fields=True, gc=False):
    """`_tidb` of a DML message that carries its whole row. A large-message placeholder
    (onlyHandleKey, claimCheckLocation) or a row key adds fields, and those messages are the
    reference path's."""

    commitTs: _CommitTs


class Description(Struct, gc=False):
    """The part of a DML message that picks its table's plan (plans.py). The other fields are
    skipped unread: the plan's own decoder reads the whole message again before it is accepted."""

    pkNames: Optional[list[str]]
    mysqlType: dict[str, str]


descriptions = msgspec.json.Decoder(Description)


def message_decoder(columns: dict[str, tuple[str, tuple[int, ...]]], pk: Optional[tuple[str, ...]],
                    enable_tidb_extension: bool) -> msgspec.json.Decoder:
    """The decoder of a DML message of one table description: `columns` maps each column name to
    its mysqlType text and the sqlType codes it may have; `pk` is pkNames.

    The description must be exactly this one, which Literal types check in C: pkNames and every
    mysqlType text as given, every sqlType code one of the column's. `data` and `old` hold one row,
    as TiCDC sends them (canal_json_encoder.go, fillColumns). Struct fields are positional
    names renamed to the columns, which may be any text msgspec can match (raises Malformed for a
    column whose name it cannot: _UNNAMABLE). The Struct decoders accept the fields in
    any order, and the Message's fields follow TiCDC's (pkg/sink/codec/canal/canal_json_encoder.go,
    newJSONMessageForDML) only for the reader's sake."""
    unnamable = next((name for name in columns if _UNNAMABLE.search(name)), None)
    if unnamable is not None:
        raise Malformed(f"plan: msgspec cannot name a field {unnamable!r}")
    fields = {field: name for name, field in field_names(columns).items()}
    texts, codes = zip(*columns.values()) if columns else ((), ())
    # A row object: each column's value is text or null (spec 003; values.py reads the text). The
    # row after keeps its own column order; the row before (`old`) takes the order of the row after
    # (rows.py), so it is a Struct, and a column it leaves out (only-output-updated-columns) is UNSET.
    row = dict[Literal[tuple(columns)], Optional[str]]
    change = msgspec.defstruct("Change", [(f, Union[Optional[str], UnsetType], UNSET) for f in fields],
                               rename=fields, forbid_unknown_fields=True, gc=False)
    mysql_type = msgspec.defstruct("MySQLType", [(f, Literal[t]) for f, t in zip(fields, texts)], rename=fields,
                                   forbid_unknown_fields=True, gc=False)
    sql_type = msgspec.defstruct("SQLType", [(f, Literal[c]) for f, c in zip(fields, codes)], rename=fields,
                                 forbid_unknown_fields=True, gc=False)
    pk_type = None if pk is None else tuple[tuple(Literal[name] for name in pk)]
    extension = [("tidb", Extension)] if enable_tidb_extension else []
    message = msgspec.defstruct("Message", [
        ("id", _Int64), ("database", str), ("table", str), ("pkNames", pk_type), ("isDdl", Literal[False]),
        ("type", Literal["INSERT", "UPDATE", "DELETE"]), ("es", _Int64), ("ts", _Int64), ("sql", str),
        ("sqlType", sql_type), ("mysqlType", mysql_type), ("old", Optional[tuple[change]]), ("data", tuple[row]),
        *extension], rename={"tidb": "_tidb"}, forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(message)


def field_names(columns: Iterable[str]) -> dict[str, str]:
    """{column: the name of its field in the message's SQLType, MySQLType and Change Structs}, which
    list the columns in the order given."""
    return {name: f"c{i}" for i, name in enumerate(columns)}
