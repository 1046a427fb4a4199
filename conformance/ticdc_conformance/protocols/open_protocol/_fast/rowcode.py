"""The reader of one table shape's row events, written out as straight-line Python (see _fast/decoder.py).

Read through a generic loop over the columns (getters mapped over the column structs, names
zipped with the values, a loop over the values to finish), a row spends most of its time in that
loop machinery; the same steps written out column by column run about a quarter faster on the
benchmark's rows (`ticdc-conformance bench decode`), the difference between the fast path
reaching half the speed of a bare parse of the messages or not. So each plan's reader is
generated from its `ColumnRead`s. Only identifiers made here, the handle flags True and False
(codegen.literal) and the op names of _TEMPLATE_STRINGS enter the source; column names, readers,
flags and the key are bound by name in its namespace, and protocols/common/codegen.py compiles it
after checking exactly that.

For the columns id (BIGINT, a handle), amount (DECIMAL) and payload (VARBINARY, sharing its type
code with a text column, so its flags are checked by name) the reader is:

    def row(key, frame, insert_op):
        value = decode(frame)
        new = value.u
        old = value.p
        deleted = new is UNSET
        if deleted:
            new = value.d
            if new is UNSET or old is not UNSET:
                raise Decline
        elif value.d is not UNSET:
            raise Decline
        if list(new) != NAMES:
            raise Decline
        c0, c1, c2 = new.values()
        if c2.f != F2:
            raise Decline
        r0 = c0.v8
        r1 = c1.v246
        r2 = c2.v15
        if r1 is not None and r1.encode().translate(DIGITS_AS_ZERO) not in SHAPES1:
            r1 = FINISH1(r1)
        f2 = r2 if r2 is None else FINISH2(r2)
        image = {N0: r0, N1: r1, N2: f2}
        if deleted:
            return DecodedRow(key.scm, key.tbl, "delete", key.ts, None, image, KEY)
        if old is UNSET:
            return DecodedRow(key.scm, key.tbl, insert_op, key.ts, image, None, KEY)
        ...  # `old` checked and read as `new` was, into s0, s1, s2
        if s1 is not None and s1 != r1 and s1.encode().translate(DIGITS_AS_ZERO) not in SHAPES1:
            s1 = FINISH1(s1)
        if s2 is not None:
            s2 = f2 if s2 == r2 else FINISH2(s2)
        return DecodedRow(key.scm, key.tbl, "update", key.ts, image, {N0: s0, N1: s1, N2: s2}, KEY)

A column struct of another type code than the plan's has no attribute of that name, so reading
its value raises AttributeError; a value its finisher doubts raises there.
"""
from __future__ import annotations

from typing import Any, Callable

from msgspec import UNSET

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.codegen import compile_function, literal
from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO
from ticdc_conformance.protocols.open_protocol._fast.structs import ColumnRead

RowReader = Callable[[Any, bytes, str], DecodedRow]  # (event key, value frame, insert op) -> row
# The only strings the source of a row reader holds (codegen.compile_function checks it).
_TEMPLATE_STRINGS = ("delete", "update")


class Decline(Exception):
    """A row the generated reader leaves to the reference path."""


def row_reader(names: list[str], columns: tuple[ColumnRead, ...], decode: Callable[[bytes], Any],
               key: tuple[str, ...]) -> RowReader:
    """The reader of rows whose value frames `decode` reads and whose images carry `columns`
    under `names`, in that order; `key` is the rows' carried key."""
    env: dict[str, Any] = {"decode": decode, "UNSET": UNSET, "Decline": Decline, "DecodedRow": DecodedRow,
                           "KEY": key, "NAMES": names, "DIGITS_AS_ZERO": DIGITS_AS_ZERO, "list": list}
    for i, (name, column) in enumerate(zip(names, columns)):
        env[f"N{i}"], env[f"F{i}"], env[f"FINISH{i}"], env[f"SHAPES{i}"] = (
            name, column.flag, column.finish, column.shapes)
    lines = [
        "def row(key, frame, insert_op):",
        "    value = decode(frame)",
        "    new = value.u",
        "    old = value.p",
        "    deleted = new is UNSET",
        "    if deleted:",
        "        new = value.d",
        "        if new is UNSET or old is not UNSET:",
        "            raise Decline",
        "    elif value.d is not UNSET:",
        "        raise Decline",
        *_columns("new", "r", columns),
    ]
    for i, column in enumerate(columns):
        if column.shapes is not None:  # a printed value is final as it is: checked, not converted
            lines += [f"    if r{i} is not None and {_shape(f'r{i}')} not in SHAPES{i}:",
                      f"        r{i} = FINISH{i}(r{i})"]
        elif column.finish is not None:
            lines.append(f"    f{i} = r{i} if r{i} is None else FINISH{i}(r{i})")
    new_values = [f"f{i}" if _converted(column) else f"r{i}" for i, column in enumerate(columns)]
    lines += [
        f"    image = {_image(new_values)}",
        "    if deleted:",
        '        return DecodedRow(key.scm, key.tbl, "delete", key.ts, None, image, KEY)',
        "    if old is UNSET:",
        "        return DecodedRow(key.scm, key.tbl, insert_op, key.ts, image, None, KEY)",
        *_columns("old", "s", columns),
    ]
    for i, column in enumerate(columns):  # a value the update left unchanged is finished once
        if column.shapes is not None:
            lines += [f"    if s{i} is not None and s{i} != r{i} and {_shape(f's{i}')} not in SHAPES{i}:",
                      f"        s{i} = FINISH{i}(s{i})"]
        elif column.finish is not None:
            lines += [f"    if s{i} is not None:",
                      f"        s{i} = f{i} if s{i} == r{i} else FINISH{i}(s{i})"]
    old_values = [f"s{i}" for i in range(len(columns))]
    lines.append(f'    return DecodedRow(key.scm, key.tbl, "update", key.ts, image, {_image(old_values)}, KEY)')
    return compile_function("\n".join(lines), "row", env, f"<open protocol row reader, {len(columns)} columns>",
                            _TEMPLATE_STRINGS)


def _columns(image: str, prefix: str, columns: tuple[ColumnRead, ...]) -> list[str]:
    """Lines checking one image's names and the flags its structs leave open, then reading its
    raw values into prefix0, prefix1..."""
    unpack = ", ".join(f"c{i}" for i in range(len(columns))) + ("," if len(columns) == 1 else "")
    checks = []
    for i, column in enumerate(columns):
        if column.flag is not None:
            checks.append(f"c{i}.f != F{i}")
        if column.handle is not None:
            checks.append(f"c{i}.h is not {literal(column.handle)}")
    lines = [f"    if list({image}) != NAMES:", "        raise Decline", f"    {unpack} = {image}.values()"]
    if checks:
        lines += [f"    if {' or '.join(checks)}:", "        raise Decline"]
    return lines + [f"    {prefix}{i} = c{i}.{column.field}" for i, column in enumerate(columns)]


def _converted(column: ColumnRead) -> bool:
    return column.finish is not None and column.shapes is None


def _shape(value: str) -> str:
    # As values._new_spec reads a printed value's shape; a lone surrogate, which no valid printed
    # value holds, raises UnicodeEncodeError here and sends the message the reference way.
    return f"{value}.encode().translate(DIGITS_AS_ZERO)"


def _image(values: list[str]) -> str:
    return "{" + ", ".join(f"N{i}: {value}" for i, value in enumerate(values)) + "}"
