"""The canonical value form shared by the ground truth and every consumer's output.

Python form (inside the model) and JSON form (in truth files, consumer output, golden files):

| TiDB type                          | Python            | JSON                               |
|------------------------------------|-------------------|------------------------------------|
| integer types, YEAR, BIT           | int (exact)       | number (exact, up to 2**64-1)      |
| FLOAT, DOUBLE                      | float             | number                             |
| DECIMAL                            | str, TiDB's print | string, e.g. "12.500000"           |
| CHAR/VARCHAR/TEXT, ENUM, SET, JSON | str               | string                             |
| BINARY/VARBINARY/BLOB              | bytes             | string, base64                     |
| DATE/DATETIME/TIMESTAMP/TIME       | str, TiDB's print | string, e.g. "2023-11-30 12:34:56.120" |
| NULL                               | None              | null                               |

TIMESTAMP is printed in the upstream time zone; DATETIME/TIMESTAMP/TIME carry exactly fsp digits.
"""
from __future__ import annotations

import base64
import math
import struct
from typing import Any

import orjson

from ticdc_contract.model import Row, TableSchema
from ticdc_contract.tidb_types import TiDBType


def value_to_json(t: TiDBType, v: Any) -> Any:
    if v is None:
        return None
    if t.is_binary:
        return base64.b64encode(v).decode("ascii")
    return v


def value_from_json(t: TiDBType, j: Any) -> Any:
    if j is None:
        return None
    if t.is_binary:
        return base64.b64decode(j)
    return j


def row_to_json(table: TableSchema, row: Row) -> dict[str, Any]:
    """A row as an ordered JSON object, columns in table order."""
    names, binary = _layout(table)
    out = {name: row.get(name) for name in names}
    for name in binary:
        v = out[name]
        if v is not None:
            out[name] = base64.b64encode(v).decode("ascii")
    return out


# Table versions whose layout is kept, by identity (the version is kept too, so its id is not reused).
_LAYOUTS: dict[int, tuple[TableSchema, tuple[str, ...], tuple[str, ...]]] = {}
_LAYOUTS_KEPT = 4096


def _layout(table: TableSchema) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The column names of a table version and those of its binary columns: every row of a
    version is converted alike, so this is worked out once per version, not per value."""
    entry = _LAYOUTS.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            _LAYOUTS.clear()
        entry = _LAYOUTS[id(table)] = (table, tuple(c.name for c in table.columns),
                                       tuple(c.name for c in table.columns if c.type.is_binary))
    return entry[1], entry[2]


def dumps_line(obj: Any) -> bytes:
    """One NDJSON line. Keys keep insertion order, so output is byte-stable for a given input."""
    return orjson.dumps(obj) + b"\n"


def key_order_token(values: tuple | list) -> str:
    """A string whose binary (UTF-8) order is the order of canonical JSON key tuples.

    Numbers sort before strings and numerically among themselves (exact for integers up to
    2**64-1); strings sort by code point. Truth files and every consumer sort rows with it, so
    outputs are byte-stable and comparable line by line.
    """
    parts = []
    for v in values:
        if v is None:
            parts.append("0")
        elif isinstance(v, bool):
            parts.append(f"1{int(v):0>22}")
        elif isinstance(v, int):
            # Offset so negative numbers sort first, then fixed width; 10**22 > 2**64 + 2**63.
            parts.append(f"1{v + 10**21:0>22}")
        elif isinstance(v, float):
            parts.append(f"2{_float_token(v)}")
        else:
            parts.append("3" + str(v))
    return "\x00".join(parts)


def _float_token(v: float) -> str:
    bits = struct.unpack(">Q", struct.pack(">d", v))[0]
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return f"{bits:016x}"


def to_float32(x: float) -> float:
    """Go's float32(x) as a Python float: the nearest float32 (ties to even), ±Inf beyond its range.
    TiDB keeps a FLOAT column as a float32."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # struct refuses what rounds past the largest float32; Go gives an infinity
        return math.copysign(math.inf, x)
