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
from typing import Any

import orjson

from .model import Row, TableSchema
from .types import TiDBType


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
    return {c.name: value_to_json(c.type, row.get(c.name)) for c in table.columns}


def dumps_line(obj: Any) -> bytes:
    """One NDJSON line. Keys keep insertion order, so output is byte-stable for a given input."""
    return orjson.dumps(obj) + b"\n"


def sort_key(values: tuple) -> tuple:
    """Sort key for canonical JSON key tuples: numbers (exact) before strings."""
    out = []
    for v in values:
        if v is None:
            out.append((0, 0, ""))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append((1, v, ""))
        else:
            out.append((2, 0, str(v)))
    return tuple(out)
