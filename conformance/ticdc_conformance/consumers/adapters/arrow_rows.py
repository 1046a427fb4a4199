"""Typed tables (Arrow, so Spark DataFrames and Parquet files alike) as final/ NDJSON in the
canonical form, for the consumer modes whose output is typed tables (docs/consumer-modes.md):
a `spark:` function's `{"schema.table": DataFrame}` and a `kafka:` consumer's `final/*.parquet`.

Values map as a consumer would naturally store them (docs/fidelity.md, "Accepted forms", lists
what the checks accept besides the canonical form): integers as numbers; DECIMAL as a number when
its scale is 0, else its decimal text with the scale kept; FLOAT as float32's shortest print
(never its float64 widening), DOUBLE as it is; booleans as JSON booleans; strings as they are;
binary as base64; DATE as YYYY-MM-DD; TIMESTAMP as `YYYY-MM-DD HH:MM:SS` with the unit's fraction
digits (a zoned one in the upstream time zone, the sink's `time-zone`); TIME as `HH:MM:SS[.f…]`;
anything else (lists, structs, maps) as its JSON text. Also the note both modes give a run that
asks for a delivery schedule, which neither applies.
"""
from __future__ import annotations

import base64
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from zoneinfo import ZoneInfo

import orjson
import pyarrow as pa

from ticdc_conformance.consumers.output import final_file_name

_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _fraction(value: dt.datetime | dt.time, digits: int) -> str:
    return f".{value.microsecond:06d}"[: digits + 1] if digits else ""


def _converter(field_type: pa.DataType, time_zone: str) -> Callable[[Any], Any]:
    """How one column's Python values (as Arrow's to_pylist gives them) become canonical JSON values."""
    t = pa.types
    if t.is_integer(field_type) or t.is_string(field_type) or t.is_large_string(field_type) \
            or t.is_boolean(field_type) or t.is_float64(field_type) or t.is_null(field_type):
        return lambda v: v
    if t.is_float32(field_type):
        import numpy as np

        return lambda v: float(str(np.float32(v)))  # the float32's own shortest print
    if t.is_decimal(field_type):
        scale = field_type.scale
        return (lambda v: integral(format(Decimal(v), "f"))) if scale <= 0 else (lambda v: format(Decimal(v), "f"))
    if t.is_binary(field_type) or t.is_large_binary(field_type) or t.is_fixed_size_binary(field_type):
        return lambda v: base64.b64encode(v).decode()
    if t.is_date(field_type):
        return lambda v: v.isoformat()
    if t.is_timestamp(field_type):
        digits = _FRACTION_DIGITS[field_type.unit]
        zone = ZoneInfo(time_zone) if field_type.tz else None
        return lambda v: (v.astimezone(zone) if zone is not None else v).strftime("%Y-%m-%d %H:%M:%S") \
            + _fraction(v, digits)
    if t.is_time(field_type):
        digits = _FRACTION_DIGITS[field_type.unit]
        return lambda v: v.strftime("%H:%M:%S") + _fraction(v, digits)
    return lambda v: orjson.dumps(v, default=str).decode()


def canonical_rows(table: pa.Table, time_zone: str = "UTC") -> Iterator[dict]:
    """The table's rows as dicts of canonical values, batch by batch."""
    converters = [_converter(f.type, time_zone) for f in table.schema]
    names = table.schema.names
    for batch in table.to_batches():
        columns = [[None if v is None else convert(v) for v in batch.column(i).to_pylist()]
                   for i, convert in enumerate(converters)]
        for values in zip(*columns):
            yield dict(zip(names, values))


def write_table(final: Path, schema: str, table: str, rows: Iterable[dict]) -> Path:
    """final/<schema>.<table>.ndjson from canonical rows."""
    final.mkdir(parents=True, exist_ok=True)
    path = final / final_file_name(schema, table)
    with open(path, "wb") as f:
        for row in rows:
            f.write(orjson.dumps(row) + b"\n")
    return path


def integral(text: str) -> int | str:
    """An integral decimal's text as a number where JSON writers hold it exactly (64 bits), else the
    text (a decimal string is an accepted DECIMAL form too)."""
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 64) else text


def split_table_name(name: str) -> tuple[str, str]:
    """`schema.table` (a table name may hold dots, a schema name not); ValueError without a dot."""
    schema, dot, table = name.partition(".")
    if not dot or not schema or not table:
        raise ValueError(f"{name!r} is no <schema>.<table> name")
    return schema, table


def schedule_note(options, how: str) -> list[str]:
    """The note of a run given a delivery schedule by a mode whose consumer reads on its own (no
    `schedules` capability): the schedule was not applied, and why."""
    if getattr(options, "schedule", None) is None:
        return []
    return [f"delivery schedule {options.schedule.spec()} not applied: {how} (docs/consumer-modes.md)"]
