"""What a perfect Simple consumer knows of each ground-truth value (spec 004, "mysqlType 参考表格").

Simple carries every TiDB type at full precision in both encodings, with one exception: FLOAT is a
float32 (JSON prints it with strconv.FormatFloat(v, 'f', -1, 32), Avro uses `float`), so a consumer
sees the nearest float32, which it prints shortest. ENUM and SET travel as numbers and are read back
through the elements of the cached tableSchema; TIMESTAMP travels with its location and is printed in
the upstream time zone.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ticdc_contract.tidb_types import TiDBType

from .values import float32_shortest

_WHY = {
    "float": ("lossy", "spec 004 mysqlType table: float is float32/Avro float; the consumer sees the nearest float32, "
                       "printed with the shortest digits (FormatFloat 'f' -1 32)"),
    "double": ("exact", "spec 004 mysqlType table: double is float64/Avro double, printed round-trip exact"),
    "decimal": ("exact", "spec 004 mysqlType table: decimal travels as TiDB's string"),
    "bigint": ("exact", "spec 004 mysqlType table: bigint is int64/uint64; JSON prints it, Avro long "
                        "(UnsignedBigint or string above 2^63)"),
    "binary": ("exact", "spec 004 mysqlType table: []uint8/Avro bytes; JSON carries the bytes base64"),
    "text": ("exact", "spec 004 mysqlType table: []uint8/Avro string, the text itself"),
    "timestamp": ("exact", "spec 004 mysqlType table: timestamp string, sent with its location and rendered "
                           "in the upstream time-zone"),
    "temporal": ("exact", "spec 004 mysqlType table: date/datetime/time travel as TiDB's string"),
    "enum": ("exact", "spec 004 mysqlType table: enum is its uint64 index, mapped back through the tableSchema elements"),
    "set": ("exact", "spec 004 mysqlType table: set is its uint64 bitmask, mapped back through the tableSchema elements"),
    "integer": ("exact", "spec 004 mysqlType table: integer types are int64/uint64, Avro long"),
    "year": ("exact", "spec 004 mysqlType table: year is int64/Avro long"),
    "bit": ("exact", "spec 004 mysqlType table: bit is its uint64 value"),
    "json": ("exact", "spec 004 mysqlType table: json travels as TiDB's printed string"),
}


def _family(t: TiDBType) -> str:
    if t.base in ("float", "double", "decimal", "timestamp", "enum", "set", "year", "bit", "json", "bigint"):
        return t.base
    if t.is_integer:
        return "integer"
    if t.is_binary:
        return "binary"
    if t.is_text:
        return "text"
    return "temporal"


def project_value(t: TiDBType, value: Any, options: dict) -> Any:
    if value is None:
        return None
    project = value_projector(t, options)
    return value if project is None else project(value)


def value_projector(t: TiDBType, options: dict) -> Optional[Callable[[Any], Any]]:
    """`project_value` of type `t` for a non-NULL value; None where the value is read back as it is."""
    return _float32_shortest if t.base == "float" else None


def _float32_shortest(value: Any) -> Any:
    return float32_shortest(float(value))


def carried_number(t: TiDBType, options: dict) -> Optional[str]:
    """The JSON number a consumer reads for `t` (spec 004 mysqlType table): integers, YEAR and BIT
    as integers, FLOAT/DOUBLE as float64; ENUM/SET are read back as their names."""
    if t.is_integer or t.base in ("year", "bit"):
        return "integer"
    if t.base in ("float", "double"):
        return "float"
    return None


def accepted_forms(t: TiDBType, options: dict) -> tuple[tuple[str, str], ...]:
    """Simple carries every value but FLOAT at full precision, and FLOAT's float64 is the only
    faithful one: beside the carried form only the common forms (checks/value_forms.py) apply."""
    return ()


def describe_fidelity(t: TiDBType, options: dict) -> tuple[str, str]:
    """The class and its reason; `options` may carry the matrix's "version-profile" (the decoders
    read both generations, so only the wording depends on it)."""
    if t.base == "bit" and options.get("encoding-format") == "avro":
        # TiCDC pkg/sink/codec/simple/message.go writes the uint64 with strconv.FormatUint into an Avro
        # string; tiflow's encoder wrote it into an Avro long (docs/version-profiles.md).
        if options.get("version-profile") == "tiflow":
            return ("exact", "spec 004 mysqlType table: bit is its uint64 value; the classic generation writes an "
                             "Avro long (int64(v), undone for BIT(64) from the column's width)")
        return ("exact", "spec 004 mysqlType table: bit is its uint64 value, which new TiCDC writes as an Avro "
                         "string of decimal digits")
    return _WHY[_family(t)]


# The catalogue rule that says how a row event travels, and which says how a type's value does
# (spec 004, mysqlType table): named by findings of the cross-encoding differential check.
ROW_RULE = "SIMPLE-DML-2"


def type_rule(t: TiDBType) -> str:
    if t.is_integer:
        return "SIMPLE-MYSQLTYPE-3" if t.base == "bigint" and t.unsigned else "SIMPLE-MYSQLTYPE-2"
    if t.base in ("float", "double", "decimal"):
        return "SIMPLE-MYSQLTYPE-4"
    if t.is_text or t.is_binary:
        return "SIMPLE-MYSQLTYPE-5"
    if t.base in ("date", "datetime", "timestamp", "time"):
        return "SIMPLE-MYSQLTYPE-6"
    return "SIMPLE-MYSQLTYPE-7"  # year, enum, set, bit, json


def lower_value(t: TiDBType, value: Any, options: dict) -> Any:
    """`value` at Simple's fidelity, from any fidelity at least as fine: idempotent (only FLOAT
    loses anything, and a float32 stays itself)."""
    return project_value(t, value, options)
