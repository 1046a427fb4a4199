"""The row events of one table schema version, written out as straight-line Python (see plans.py).

Finishing a row Struct through generic steps (a getter for the checked values, msgspec.to_builtins
for the dict, a loop over the integer columns, another over the converted ones) spends most of a
row's time in that loop machinery. The same steps written out column by column -- one local per
value, an integer read by one call, the dict built in one display, an UPDATE's unchanged old values
taken from the new image -- cut the decoder's work per benchmark message by about a quarter
(`ticdc-conformance bench decode`: 0.40x the bare parse before, 0.54-0.58x after). So each plan's
event function is generated from its columns. Only identifiers made here, the op names of
_TEMPLATE_STRINGS, integer range literals and the column names as repr() literals (codegen.literal:
repr of a str always reads back as that str, whatever quotes, backslashes or keywords it holds)
enter the source; the plan's objects are bound by name in its namespace, and
protocols/common/codegen.py compiles it after checking exactly that.

For the columns id (BIGINT), amount (DECIMAL) and payload (VARBINARY) the function is:

    def event(msg):
        op = msg.type
        new = msg.data
        old = msg.old
        if new is None:
            if old is None or op != "DELETE":
                return None
            ...                                   # `old` read as `new` is below, into s0, s1, s2
        r0 = new.c0
        r1 = new.c1
        r2 = new.c2
        shape = dumps((r0, r1)).translate(DIGITS_AS_ZERO)
        if shape not in SHAPES and not admit(SHAPES, shape, (r0, r1), CHECKS):
            return None
        v0 = r0 if r0 is None else INT0(r0)
        v2 = r2 if r2 is None else to_builtins(r2)
        after = {'id': v0, 'amount': r1, 'payload': v2}
        if old is None:
            if op != "INSERT":
                return None
            event = new_row(DecodedRow)
            event.schema = SCHEMA
            ...                                   # every field of DecodedRow
            return event
        if op != "UPDATE":
            return None
        s0 = old.c0
        if s0 is not None:
            if s0 == r0:
                s0 = v0
            else:
                shape = s0.encode().translate(DIGITS_AS_ZERO)
                if shape not in SHAPES0 and not admit_value(SHAPES0, shape, s0, CHECK0):
                    return None
                s0 = INT0(s0)
        s1 = old.c1
        if s1 is not None and s1 != r1:
            ...                                   # the shape check of s1 alone
        s2 = old.c2
        if s2 is not None:
            if s2 == r2:
                s2 = v2
            else:
                s2 = to_builtins(s2)
        ...                                       # the event, with before {'id': s0, ...}

A value the update left unchanged was checked and converted in the new image; the others are
checked alone. None means the message is left to the reference path; a converter may raise
(msgspec's ValidationError, a reference converter's Malformed) for the same purpose.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any, Callable, Optional

import msgspec
import orjson

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.codegen import compile_function, literal
from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO
from ticdc_conformance.protocols.simple._fast.shapes import Check, admit, admit_value
from ticdc_conformance.protocols.simple._fast.structs import field_name

# A union member's `event` method, or a plan's event function over `RowParts`: the row event of a
# message whose row images msgspec read, or None to leave the message to the reference path.
EventFunction = Callable[[Any], Optional[DecodedRow]]
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
# The strings the source of an event function holds besides its column names (codegen.compile_function).
_TEMPLATE_STRINGS = ("DELETE", "INSERT", "UPDATE", "delete", "insert", "update")


class RowParts:
    """What an event function reads from a message read in two steps (_fast/decoder.py): the fields it reads
    from a union member, under the same names."""

    __slots__ = ("type", "commitTs", "data", "old")

    def __init__(self, type: str, commitTs: int, data: Any, old: Any) -> None:
        self.type, self.commitTs, self.data, self.old = type, commitTs, data, old


class ColumnCode:
    """How the event function finishes one column's value after msgspec read it."""

    __slots__ = ("name", "check", "int_range", "int_reader", "binary", "double", "finish", "shapes")

    def __init__(self, name: str, check: Optional[Check], int_range: Optional[tuple[int, int]] = None,
                 binary: bool = False, double: bool = False, finish: Optional[Callable[[Any], Any]] = None) -> None:
        self.name = name
        self.check = check  # a text-form kind's check: the value is in the row's shape (shapes.py)
        self.int_range = int_range  # an integer column: int() and this range
        self.int_reader = None if int_range is None else _int_reader(*int_range)
        self.binary = binary  # bytes msgspec decoded from base64, printed again in canonical base64
        self.double = double  # a DOUBLE: float() and finite
        self.finish = finish  # a reference converter (rows.json_converter) for the rarer kinds
        # The shapes of this column's values seen valid on their own: an UPDATE's old value that
        # differs from the new one is checked alone (the others were checked in the new image).
        self.shapes: dict[bytes, None] = {}

    @property
    def converted(self) -> bool:
        return self.int_range is not None or self.binary or self.double or self.finish is not None


def _int_reader(lo: int, hi: int) -> Optional[Callable[[str], int]]:
    """What reads an integer column's text of a checked shape (digits after an optional minus) and
    checks its range, or None where the range is past msgspec's int64 bounds (BIGINT UNSIGNED).

    It reads JSON, so it refuses a shape-checked text the reference path reads -- leading zeros,
    "-00" -- and then the message is the reference path's; the rest it reads as int() does, exactly
    (msgspec reads integers past 64 bits exactly too), and refuses a value outside the range. It
    also takes whitespace around the number, which the shape check has already ruled out. A call
    costs a third of int() and a range check written out."""
    if lo < _I64_MIN or hi > _I64_MAX:
        return None
    return msgspec.json.Decoder(Annotated[int, msgspec.Meta(ge=lo, le=hi)]).decode


def event_function(schema: str, table: str, columns: tuple[ColumnCode, ...], shapes: dict[bytes, None],
                   key: tuple[str, ...], names: tuple[str, ...]) -> EventFunction:
    """The event function of rows whose Structs hold `columns` in fields c0, c1...; `shapes` is the
    plan's cache of row shapes seen valid."""
    env: dict[str, Any] = {
        "DecodedRow": DecodedRow, "SCHEMA": schema, "TABLE": table, "KEY": key, "NAMES": names,
        "CHECKS": tuple(c.check for c in columns if c.check is not None), "SHAPES": shapes, "admit": admit,
        "admit_value": admit_value, "dumps": orjson.dumps, "DIGITS_AS_ZERO": DIGITS_AS_ZERO,
        "to_builtins": msgspec.to_builtins, "isfinite": math.isfinite, "float": float, "int": int,
        "new_row": DecodedRow.__new__,
    }
    for i, column in enumerate(columns):
        env[f"FINISH{i}"], env[f"CHECK{i}"], env[f"SHAPES{i}"] = column.finish, column.check, column.shapes
        env[f"INT{i}"] = column.int_reader
    lines = [
        "def event(msg):",
        "    op = msg.type",
        "    new = msg.data",
        "    old = msg.old",
        "    if new is None:",
        '        if old is None or op != "DELETE":',
        "            return None",
        *_indent(_read("old", "s", columns)),
        *_indent(_finish("s", "s", columns)),
        *_indent(_construct("delete", "None", _image("s", columns))),
        *_read("new", "r", columns),
        *_finish("r", "v", columns),
        f"    after = {_image('r', columns, converted='v')}",
        "    if old is None:",
        '        if op != "INSERT":',
        "            return None",
        *_indent(_construct("insert", "after", "None")),
        '    if op != "UPDATE":',
        "        return None",
        *_old_values(columns),
        *_construct("update", "after", _image("s", columns)),
    ]
    # The file name tells the tables apart in a profile; it is a name, never source.
    return compile_function("\n".join(lines), "event", env, f"<simple json row events of {schema}.{table}>",
                            (*_TEMPLATE_STRINGS, *(c.name for c in columns)))


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _read(image: str, prefix: str, columns: tuple[ColumnCode, ...]) -> list[str]:
    """Lines reading an image's values into prefix0, prefix1... and checking the checked ones' shape."""
    lines = [f"    {prefix}{i} = {image}.{field_name(i)}" for i in range(len(columns))]
    checked = [f"{prefix}{i}" for i, column in enumerate(columns) if column.check is not None]
    if checked:
        values = "(" + ", ".join(checked) + ("," if len(checked) == 1 else "") + ")"
        lines += [f"    shape = dumps({values}).translate(DIGITS_AS_ZERO)",
                  f"    if shape not in SHAPES and not admit(SHAPES, shape, {values}, CHECKS):",
                  "        return None"]
    return lines


def _finish(raw: str, out: str, columns: tuple[ColumnCode, ...]) -> list[str]:
    """Lines turning the raw values raw0, raw1... of the converted columns into out0, out1..."""
    lines = []
    for i, column in enumerate(columns):
        if not column.converted:
            continue
        value = f"{raw}{i}"
        call = _call(value, i, column)
        if call is not None:
            lines.append(f"    {out}{i} = {value} if {value} is None else {call}")
            continue
        if out != raw:
            lines.append(f"    {out}{i} = {value}")
        lines.append(f"    if {out}{i} is not None:")
        lines += [f"        {line}" for line in _convert(f"{out}{i}", i, column)]
    return lines


def _old_values(columns: tuple[ColumnCode, ...]) -> list[str]:
    """Lines reading an UPDATE's old image into s0, s1...: a value equal to the new image's raw one
    (r0, r1...) is its converted value (v0, v1...), the others are checked and converted alone."""
    lines = []
    for i, column in enumerate(columns):
        value = f"s{i}"
        lines.append(f"    {value} = old.{field_name(i)}")
        if column.converted:
            lines += [f"    if {value} is not None:", f"        if {value} == r{i}:", f"            {value} = v{i}",
                      "        else:"]
            lines += [f"            {line}" for line in _shape_check(value, i, column) + _convert(value, i, column)]
        elif column.check is not None:
            lines.append(f"    if {value} is not None and {value} != r{i}:")
            lines += [f"        {line}" for line in _shape_check(value, i, column)]
    return lines


def _shape_check(value: str, i: int, column: ColumnCode) -> list[str]:
    """The lines checking one text-form value by its shape, unindented (none for other kinds). A lone
    surrogate, which no valid value holds, raises UnicodeEncodeError and declines the message."""
    if column.check is None:
        return []
    return [f"shape = {value}.encode().translate(DIGITS_AS_ZERO)",
            f"if shape not in SHAPES{i} and not admit_value(SHAPES{i}, shape, {value}, CHECK{i}):", "    return None"]


def _call(value: str, i: int, column: ColumnCode) -> Optional[str]:
    """The one call converting a non-NULL value, or None where the conversion takes statements."""
    if column.int_range is not None:
        # A checked shape's integer text is digits after an optional minus, read as values.from_json
        # reads it (int(), then the column's range) -- by msgspec where the range fits its bounds.
        return None if column.int_reader is None else f"INT{i}({value})"
    if column.binary:
        return f"to_builtins({value})"
    if column.finish is not None:
        return f"FINISH{i}({value})"
    return None


def _convert(value: str, i: int, column: ColumnCode) -> list[str]:
    """The lines converting a non-NULL value in place, unindented."""
    call = _call(value, i, column)
    if call is not None:
        return [f"{value} = {call}"]
    if column.int_range is not None:
        lo, hi = column.int_range
        return [f"{value} = int({value})", f"if not {literal(lo)} <= {value} <= {literal(hi)}:", "    return None"]
    # rows._json_double: a DOUBLE's text of a checked shape as a finite float (msgspec's lax float is
    # not used: it reads "-0" as 0.0, where float() gives -0.0).
    return [f"{value} = float({value})", f"if not isfinite({value}):", "    return None"]


def _construct(op: str, after: str, before: str) -> list[str]:
    """Lines returning the event. DecodedRow's __init__ is a Python function, and calling it costs
    about as much as reading a small row image: the event's slots are set here directly, from the
    dataclass's own field list, so that a field this function does not know fails the plan's
    construction (KeyError) rather than leaving a slot unset."""
    values = {"schema": "SCHEMA", "table": "TABLE", "op": literal(op), "commit_ts": "msg.commitTs", "after": after,
              "before": before, "key_columns": "KEY", "columns": "NAMES"}
    lines = ["    event = new_row(DecodedRow)"]
    lines += [f"    event.{f.name} = {values[f.name]}" for f in dataclasses.fields(DecodedRow)]
    return lines + ["    return event"]


def _image(prefix: str, columns: tuple[ColumnCode, ...], converted: Optional[str] = None) -> str:
    """The dict display of a row image: a converted column's value under `converted` when given."""
    items = []
    for i, column in enumerate(columns):
        value = f"{converted}{i}" if converted is not None and column.converted else f"{prefix}{i}"
        items.append(f"{literal(column.name)}: {value}")
    return "{" + ", ".join(items) + "}"
