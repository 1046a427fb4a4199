"""Open Protocol frames decoded by msgspec straight into typed structs, for the fast path (_fast/decoder.py).

msgspec checks in C what the reference path (decoder.py, values.py) checks in Python, field by
field: the event key's fields and their types, and for each column of a row its type code, flags,
"h" and the JSON type and range of its value. A table's columns are learnt from the first row
seen of it (`skeleton`); `table_types` then builds the structs its rows decode into.

The types are never looser than the reference reads: whatever msgspec accepts here the reference
accepts and reads the same way, so a frame that fails to decode only sends its message the
reference way. Where msgspec and orjson may read a valid-looking document differently the types
keep away from the difference: numbers beyond 64 bits (msgspec keeps an int, orjson makes a float)
meet int64 bounds or the reference's own range check, and a float column takes msgspec's float,
which rounds as orjson does (tests/conformance/protocols/test_open_protocol_msgspec.py pins each such case).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Optional, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ticdc_conformance.protocols.open_protocol.message import KIND_RESOLVED, KIND_ROW
from ticdc_conformance.protocols.open_protocol.values import HANDLE_KEY_FLAG, column_spec, remembered_shapes, value_type

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
# An integer field orjson reads as an int (it makes a float of one beyond 64 bits); kept to int64,
# the range msgspec bounds, so values in (2**63, 2**64) merely go the reference way.
_Int64 = Annotated[int, Meta(ge=_I64_MIN, le=_I64_MAX)]


class EventKey(Struct, forbid_unknown_fields=True, gc=False):
    """An event key as the fast path takes it (spec 002, Event format; the optional fields of
    TiCDC pkg/sink/codec/open/message.go, messageKey). "ccl" (a claim-check location) is no field,
    so such a key fails to decode, and "ohk" is read only to send its event the reference way."""

    ts: Annotated[int, Meta(ge=0, le=_I64_MAX)]
    t: Literal[KIND_ROW, KIND_RESOLVED]  # a DDL event goes the reference way
    scm: str = ""
    tbl: str = ""
    rid: Union[_Int64, UnsetType] = UNSET
    ptn: Union[_Int64, UnsetType] = UNSET
    ohk: bool = False


decode_key: Callable[[bytes], EventKey] = msgspec.json.Decoder(EventKey).decode


# --- learning a table's columns ------------------------------------------------------------------

class _ColumnShape(Struct, forbid_unknown_fields=True, gc=False):
    t: int
    v: msgspec.Raw  # the value plays no part in the columns' description: left unparsed
    f: Union[int, UnsetType] = UNSET
    h: bool = False


class _ValueShape(Struct, forbid_unknown_fields=True, gc=False):
    u: Union[dict[str, _ColumnShape], UnsetType] = UNSET
    p: Union[dict[str, _ColumnShape], UnsetType] = UNSET
    d: Union[dict[str, _ColumnShape], UnsetType] = UNSET


_decode_shape = msgspec.json.Decoder(_ValueShape).decode

# A row's columns in message order: (name, type code, flags or None when "f" is absent, "h").
Skeleton = tuple[tuple[str, int, Optional[int], bool], ...]


def skeleton(frame: bytes) -> Optional[Skeleton]:
    """The columns of a row value frame, when all its images ("u", "p", "d") carry the same ones
    and each has a type the fast path reads; None otherwise. ValueError if it is no such value."""
    value = _decode_shape(frame)
    shapes = {tuple((name, c.t, None if c.f is UNSET else c.f, c.h) for name, c in image.items())
              for image in (value.u, value.p, value.d) if image is not UNSET}
    if len(shapes) != 1:
        return None  # no image, or images of different columns (only-output-updated-columns...)
    (columns,) = shapes
    for _, code, flag, _ in columns:
        try:
            value_type(code)
        except KeyError:  # GEOMETRY or an unknown code: the reference path words the rejection
            return None
        # Literal values stop at int64; the reference takes flags up to 2**64 - 1.
        if flag is not None and not 0 <= flag <= _I64_MAX:
            return None
    return columns if columns else None


# --- the structs a table's rows decode into ---------------------------------------------------

@dataclass(frozen=True)
class ColumnRead:
    """How one column's value is taken from its struct once msgspec has decoded it."""

    field: str  # the struct attribute holding the value, named after the type code ("v8")
    flag: Any  # the "f" to check by name (an int, or UNSET for none); None when the struct pins it
    handle: Optional[bool]  # the "h" to check by name; None when it cannot change the column's role
    # Reads a non-null value further, raising when in doubt: one msgspec's types leave unfinished,
    # to check (a printed date...) or convert (binary text -> base64). None when the value is final.
    finish: Optional[Callable[[Any], Any]]
    # For a printed date, time or decimal, the shapes known to match (values.remembered_shapes):
    # a value of such a shape is final without calling `finish`.
    shapes: Optional[dict[bytes, bool]] = None


@dataclass(frozen=True)
class TableTypes:
    """What a plan is built from: the decoder of its value frames and how each column is read."""

    decode: Callable[[bytes], Any]  # value frame -> struct with "u", "p", "d": name -> column struct
    columns: tuple[ColumnRead, ...]  # in skeleton order


def table_types(columns: Skeleton) -> TableTypes:
    """The structs for rows of these columns: one per type code (a tagged union on "t" when there
    are several codes), as strict as the columns of that code allow together.

    Each struct names its value field after its code ("v8" for BIGINT, read from "v"), so that
    reading a column's value from a struct of another code raises AttributeError: the type code
    of every column is checked in the attribute access that reads its value."""
    by_code: dict[int, list[tuple[str, Optional[int], bool]]] = {}
    for name, code, flag, handle in columns:
        by_code.setdefault(code, []).append((name, flag, handle))
    tagged = len(by_code) > 1
    reads: dict[str, ColumnRead] = {}
    structs: list[type] = []
    for code, cols in by_code.items():
        specs = [column_spec(code, flag or 0, flag is not None, handle) for _, flag, handle in cols]
        value, bounds = _value_annotation(code, specs)
        field = f"v{code}"
        fields: list[Any] = [(field, Optional[value])]
        flags = {flag for _, flag, _ in cols}
        if len(flags) == 1:  # pinned in C: the same "f" for every column of the code, or none
            (flag,) = flags
            if flag is not None:
                fields.append(("f", Literal[flag]))
        else:
            fields.append(("f", Union[int, UnsetType], UNSET))
        # "h" decides only whether a column is a handle, which the HandleKeyFlag bit says too. TiCDC
        # writes "h" (true) for handle columns only, which have the bit (TiCDC open/codec.go,
        # writeColumnFieldValue): a code whose columns are all plain has no "h" field, so any "h"
        # fails the decoding; otherwise "h" is read and checked by name for a column without the bit.
        h_matters = {name for name, flag, _ in cols if flag is None or not flag & HANDLE_KEY_FLAG}
        plain = all(not handle for _, _, handle in cols) and len(h_matters) == len(cols)
        if not plain:
            fields.append(("h", bool, False))
        if not tagged:
            fields.insert(0, ("t", Literal[code]))
        options: dict[str, Any] = {"tag_field": "t", "tag": code} if tagged else {}
        structs.append(msgspec.defstruct(f"Column{code}", fields, rename={field: "v"},
                                         forbid_unknown_fields=True, gc=False, **options))
        for (name, flag, handle), spec in zip(cols, specs):
            reads[name] = ColumnRead(
                field=field,
                flag=None if len(flags) == 1 else (UNSET if flag is None else flag),
                handle=handle if name in h_matters and not plain else None,
                finish=spec.read if _unfinished(code, spec, bounds) else None,
                shapes=remembered_shapes(code),
            )
    column = Union[tuple(structs)] if tagged else structs[0]
    image = Union[dict[str, column], UnsetType]  # type: ignore[valid-type]
    value_struct = msgspec.defstruct("Value", [("u", image, UNSET), ("p", image, UNSET), ("d", image, UNSET)],
                                     forbid_unknown_fields=True, gc=False)
    return TableTypes(msgspec.json.Decoder(value_struct).decode, tuple(reads[name] for name, *_ in columns))


def _value_annotation(code: int, specs: list) -> tuple[Any, Optional[tuple[int, int]]]:
    """The type of "v" shared by the columns of one code, and for integer columns its bounds."""
    kind = value_type(code)
    if kind is not int:
        return (None if kind is type(None) else kind), None
    lo, hi = min(s.lo for s in specs), max(s.hi for s in specs)
    # msgspec bounds stop at int64: an unsigned 64-bit column checks its upper bound in its reader.
    bound = Meta(ge=lo, le=hi) if hi <= _I64_MAX else Meta(ge=lo)
    return Annotated[int, bound], (lo, hi)


def _unfinished(code: int, spec: Any, bounds: Optional[tuple[int, int]]) -> bool:
    """Whether a column's value needs its reader after msgspec: an integer whose range is narrower
    than its struct's (or past int64), or text that is not taken as it is."""
    if bounds is not None:
        return (spec.lo, spec.hi) != bounds or bounds[1] > _I64_MAX
    return value_type(code) is str and spec.passes is not str
