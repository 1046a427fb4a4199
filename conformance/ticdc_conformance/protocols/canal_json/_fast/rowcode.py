"""The events of one table description's DML messages, read by straight-line Python written out
once per plan (plans.py) from the description's columns.

A loop over the columns (getters, readers and flags zipped per value, a pass to check, another to
convert) spends much of a message's Python time in the loop itself. Written out column by column,
with each integer's range and each binary column's base64 inline and the whole message (row
images, sqlType promotions, event) in one function, the decoder went from 0.47-0.50x to about
0.6x the messages/s of a bare orjson.loads on the benchmark's messages (`ticdc-conformance bench
decode`), and with the remembered shapes below to about 0.65x.

How a row is read (the readers of values.py decide, this only arranges their work):
- the plain texts (values.plain_form: integers, DECIMAL and temporal values as TiDB prints them)
  of a `data` row are joined with NUL, which no plain text holds, and checked by one regex whose
  parts are the columns' patterns, so each text must match its own column's part. A NULL enters
  the join as a lone surrogate, which no decoded JSON string holds (msgspec and orjson both reject
  one, structs.py) and which each part also takes. The patterns treat every digit alike, so the
  shape of the joined texts (digits read as 0) decides as well as the texts do: the shapes that
  matched once are remembered, and most rows cost a bytes.translate and a set lookup instead of
  the regex. The integers among them are then read with int() and their range checked;
- binary columns are turned into base64 in place, other columns that need it (floats, JSON, named
  ENUM/SET members) go through their readers, text columns are kept;
- an update's `old` row repeats most texts of the row after (TiCDC sends every column unless
  only-output-updated-columns, when the others are UNSET): those take the value of the row
  after, and only the others are checked (by their shape, as above) and read, column by column.
Whatever a row holds outside these forms raises Decline, Malformed (a reader's verdict) or
UnicodeEncodeError (a binary text above U+00FF); the fast path (_fast/decoder.py) then declines the
message and the reference path decodes it or names its fault.

For the columns id (bigint), name (varchar), amount (decimal) and payload (varbinary) of a table
whose pkNames is ["id"], with the TiDB extension, the reader is:

    def event(msg):
        row = msg.data[0]
        if len(row) != 4:
            raise Decline
        t0 = row[N0]
        t2 = row[N2]
        t3 = row[N3]
        texts = JOIN((NULL if t0 is None else t0, NULL if t2 is None else t2,))
        if texts.encode('utf-8', 'surrogatepass').translate(ZERO) not in SHAPES and not PLAIN(texts):
            raise Decline
        x0 = t0 if t0 is None else int(t0)
        if x0 is not None and not -9223372036854775808 <= x0 <= 9223372036854775807:
            raise Decline
        row[N0] = x0
        if t3 is not None:
            row[N3] = B64(t3.encode('latin-1'), newline=False).decode('ascii')
        kind = msg.type
        old = msg.old
        if old is None:
            if kind == 'DELETE':
                return [DecodedRow(msg.database, msg.table, 'delete', msg.tidb.commitTs, None, row, KEY)]
            return [DecodedRow(msg.database, msg.table, 'insert' if kind == 'INSERT' else 'update',
                               msg.tidb.commitTs, row, None, KEY)]
        if kind != 'UPDATE':
            raise Decline
        o0, o1, o2, o3, = ASTUPLE(old[0])
        before = row.copy()
        if o0 != t0 and o0 is not UNSET:
            if o0 is not None:
                if o0.encode('utf-8', 'surrogatepass').translate(ZERO) not in SHAPES0 and not PLAIN0(o0):
                    raise Decline
                o0 = int(o0)
                if not -9223372036854775808 <= o0 <= 9223372036854775807:
                    raise Decline
            before[N0] = o0
        if o1 is not UNSET:
            before[N1] = o1
        ...  # amount: its shape checked; payload: base64, as in the row after
        return [DecodedRow(msg.database, msg.table, 'update', msg.tidb.commitTs, row, before, KEY)]

An unsigned integer column adds the check of its sqlType code against its value (_promotions).
Only identifiers made here, integer literals the plan computed (codegen.literal) and the fixed
strings of _TEMPLATE_STRINGS enter the source; column names, patterns and readers are bound by
name (N0, PLAIN0, READ0...) in its namespace, and protocols/common/codegen.py compiles it after
checking exactly that, so no column name is ever read as code.
"""
from __future__ import annotations

import re
from binascii import b2a_base64
from typing import Any, Callable, Iterator, Optional

from msgspec import UNSET
from msgspec.structs import astuple

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.canal_json.java_type import PROMOTIONS, SQL_TYPE_CODES
from ticdc_conformance.protocols.canal_json.mysql_type import MySQLType
from ticdc_conformance.protocols.canal_json.values import plain_form, value_reader
from ticdc_conformance.protocols.common.codegen import compile_function, literal
from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO

EventReader = Callable[[Any], list[DecodedRow]]  # a message Struct (structs.py) -> its event
# (column types, their sqlType fields, carried key, enable-tidb-extension) -> the plan's reader
EventReaderFactory = Callable[[dict[str, MySQLType], dict[str, str], tuple[str, ...], bool], EventReader]

# Stands for a NULL among the joined plain texts: a lone surrogate is in no decoded JSON string.
_NULL = "\ud800"
# The row shapes a plan remembers (the benchmark's tables have about a hundred).
_SHAPES = 1024
# The only strings the source of an event reader holds (codegen.compile_function checks it).
_TEMPLATE_STRINGS = ("DELETE", "INSERT", "UPDATE", "delete", "insert", "update",
                     "utf-8", "surrogatepass", "latin-1", "ascii")


class Decline(Exception):
    """A message the generated reader leaves to the reference path."""


class _Column:
    """How the generated code reads one column: `kind` is "int" (a plain integer text, `bounds`),
    "printed" (a plain text kept as it is), "binary" (base64 inline), "read" (its reader) or
    "text" (kept, no reader)."""

    __slots__ = ("kind", "pattern", "bounds", "read")

    def __init__(self, name: str, mtype: MySQLType) -> None:
        self.read = value_reader(name, mtype)
        form = plain_form(mtype) if self.read is not None else None
        self.pattern = None if form is None else form.pattern
        self.bounds: Optional[tuple[int, int]] = None if form is None else form.bounds
        if form is not None:
            self.kind = "printed" if form.bounds is None else "int"
        elif self.read is None:
            self.kind = "text"
        else:
            # values._binary, written out: a binary column's reader is that one (values.value_reader).
            self.kind = "binary" if mtype.is_binary else "read"


def event_reader(types: dict[str, MySQLType], fields: dict[str, str], key: tuple[str, ...],
                 enable_tidb_extension: bool) -> EventReader:
    """The reader of the messages of the description `types` (column -> its parsed mysqlType, in
    the order of `fields`, the names of the columns' fields in the message's sqlType Struct);
    `key` is the events' carried key."""
    columns = [_Column(name, t) for name, t in types.items()]
    env = _namespace(list(types), columns, key)
    source = event_source(columns, _promotions(types, fields), enable_tidb_extension)
    return compile_function(source, "event", env, f"<canal-json event reader, {len(columns)} columns>",
                            _TEMPLATE_STRINGS)


def _namespace(names: list[str], columns: list[_Column], key: tuple[str, ...]) -> dict[str, Any]:
    """What the generated source names: the column names, patterns, readers and the key, bound as
    values, never written into the source."""
    plain = [c.pattern for c in columns if c.pattern is not None]
    shapes: set[bytes] = set()
    env: dict[str, Any] = {"Decline": Decline, "DecodedRow": DecodedRow, "KEY": key, "UNSET": UNSET,
                           "ASTUPLE": astuple, "B64": b2a_base64, "NULL": _NULL, "JOIN": "\x00".join,
                           "SHAPES": shapes, "ZERO": DIGITS_AS_ZERO, "PLAIN": _plain_texts(plain, shapes),
                           "len": len, "int": int}
    for i, (name, column) in enumerate(zip(names, columns)):
        env[f"N{i}"], env[f"READ{i}"] = name, column.read
        if column.pattern is not None:
            env[f"SHAPES{i}"] = column_shapes = set()
            env[f"PLAIN{i}"] = _plain_texts([column.pattern], column_shapes)
    return env


def event_source(columns: list[_Column], promotions: list[str], enable_tidb_extension: bool) -> str:
    """The source of the reader of `columns` (see the module's docstring)."""
    ts = "msg.tidb.commitTs" if enable_tidb_extension else "None"
    plain = [i for i, c in enumerate(columns) if c.pattern is not None]
    lines = ["def event(msg):",
             "    row = msg.data[0]",
             # The decoder admits only the description's columns, so a row of as many holds them all.
             f"    if len(row) != {literal(len(columns))}:",
             "        raise Decline",
             *(f"    t{i} = row[N{i}]" for i, c in enumerate(columns) if c.kind != "text")]
    if plain:
        texts = ", ".join(f"NULL if t{i} is None else t{i}" for i in plain)
        lines += [f"    texts = JOIN(({texts},))",
                  f"    if {_unknown_shape('texts', '')}:",
                  "        raise Decline"]
    for i, column in enumerate(columns):
        lines += _read_new(i, column)
    lines += promotions
    lines += ["    kind = msg.type",
              "    old = msg.old",
              "    if old is None:",
              "        if kind == 'DELETE':",
              f"            return [DecodedRow(msg.database, msg.table, 'delete', {ts}, None, row, KEY)]",
              "        return [DecodedRow(msg.database, msg.table, 'insert' if kind == 'INSERT' else 'update',",
              f"                           {ts}, row, None, KEY)]",
              # A DELETE whose old repeats data (before v5.4.0) is the reference path's to check.
              "    if kind != 'UPDATE':",
              "        raise Decline",
              f"    {''.join(f'o{i}, ' for i in range(len(columns)))}= ASTUPLE(old[0])",
              "    before = row.copy()"]
    for i, column in enumerate(columns):
        lines += _read_old(i, column)
    lines.append(f"    return [DecodedRow(msg.database, msg.table, 'update', {ts}, row, before, KEY)]")
    return "\n".join(lines) + "\n"


def _plain_texts(patterns: list[str], shapes: set[bytes]) -> Callable[[str], bool]:
    """Whether the joined plain texts of a row match their columns' patterns; the shape of those
    that do joins `shapes`, which then decides every row of that shape (values.Plain), at most
    _SHAPES of them so that a stream of ever new shapes cannot grow it without bound."""
    match = re.compile("\x00".join(f"(?:{pattern}|{_NULL})" for pattern in patterns)).fullmatch

    def plain(texts: str) -> bool:
        if match(texts) is None:
            return False
        if len(shapes) >= _SHAPES:
            shapes.clear()
        shapes.add(texts.encode("utf-8", "surrogatepass").translate(DIGITS_AS_ZERO))
        return True
    return plain


def _read_new(i: int, column: _Column) -> list[str]:
    """The lines reading column i of the `data` row, whose plain texts are checked already."""
    if column.kind == "int":
        low, high = column.bounds
        return [f"    x{i} = t{i} if t{i} is None else int(t{i})",
                f"    if x{i} is not None and not {literal(low)} <= x{i} <= {literal(high)}:",
                "        raise Decline",
                f"    row[N{i}] = x{i}"]
    if column.kind in ("binary", "read"):
        return [f"    if t{i} is not None:", f"        row[N{i}] = {_convert(i, column, f't{i}')}"]
    return []


def _read_old(i: int, column: _Column) -> list[str]:
    """The lines putting column i of an update's `old` row into the row before, when it differs
    from the row after's text: a text it repeats has the row after's value already."""
    if column.kind == "text":
        return [f"    if o{i} is not UNSET:", f"        before[N{i}] = o{i}"]
    lines = [f"    if o{i} != t{i} and o{i} is not UNSET:"]
    if column.kind == "printed":
        lines += [f"        if o{i} is not None and {_unknown_shape(f'o{i}', str(i))}:", "            raise Decline"]
    elif column.kind == "int":
        low, high = column.bounds
        lines += [f"        if o{i} is not None:",
                  f"            if {_unknown_shape(f'o{i}', str(i))}:",
                  "                raise Decline",
                  f"            o{i} = int(o{i})",
                  f"            if not {literal(low)} <= o{i} <= {literal(high)}:",
                  "                raise Decline"]
    else:
        lines += [f"        if o{i} is not None:", f"            o{i} = {_convert(i, column, f'o{i}')}"]
    return lines + [f"        before[N{i}] = o{i}"]


def _unknown_shape(text: str, column: str) -> str:
    """The test that `text` is not a plain text (of the plain columns, or of column `column`): its
    shape is not one that matched before, and the text does not match either."""
    return (f"{text}.encode('utf-8', 'surrogatepass').translate(ZERO) not in SHAPES{column}"
            f" and not PLAIN{column}({text})")


def _convert(i: int, column: _Column, text: str) -> str:
    if column.kind == "binary":
        # As values._binary reads it: a character above U+00FF raises UnicodeEncodeError here.
        return f"B64({text}.encode('latin-1'), newline=False).decode('ascii')"
    return f"READ{i}({text})"


def _promotions_of(types: dict[str, MySQLType], fields: dict[str, str]) -> Iterator[tuple[str, str, int, int, int]]:
    """(column, its field in the sqlType Struct, limit, wider code, code) of each unsigned integer
    whose sqlType code java_type.py's rule widens when the `data` row's value passes the signed
    maximum (TiCDC computes it from the row it sends). The other codes follow from the mysqlType
    alone, which the message decoder checks (structs.py)."""
    for name, t in types.items():
        if t.unsigned and t.base in PROMOTIONS:
            limit, wider = PROMOTIONS[t.base]
            yield name, fields[name], limit, wider, SQL_TYPE_CODES[t.base]


def _promotions(types: dict[str, MySQLType], fields: dict[str, str]) -> list[str]:
    """The check of each unsigned integer's sqlType code against its value (_promotions_of)."""
    index = {name: i for i, name in enumerate(types)}
    lines = []
    for name, field, limit, wider, code in _promotions_of(types, fields):
        i = index[name]
        assert field.isidentifier() and field.startswith("c")  # structs.field_names: c0, c1...
        lines += [f"    if msg.sqlType.{field} != ({literal(wider)} if x{i} is not None and x{i} > {literal(limit)}"
                  f" else {literal(code)}):",
                  "        raise Decline"]
    return lines
