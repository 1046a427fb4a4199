"""What a perfect Open Protocol consumer can know of a ground-truth value (spec 002, Column type code).

`project_value` maps a canonical JSON value (ticdc_contract.canonical.value_to_json) to exactly
what OpenProtocolDecoder outputs for it; `describe_fidelity` says why per TiDB type.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Mapping, Optional

from ticdc_conformance.protocols.common.enum_set import enum_index, set_bitmask
from ticdc_conformance.protocols.common.floats import float32_as_read
from ticdc_contract.tidb_types import TiDBType

_EXACT_WHY = {
    "integer": "spec 002 type codes 1/2/3/8/9: the integer is a JSON number, exact up to 2**64-1",
    "double": "spec 002 type code 5: a float64 written in Go's shortest round-trip form",
    "decimal": "spec 002 type code 246: TiDB's decimal string, scale digits kept",
    "text": "spec 002 type codes 15/254 (UTF-8 string) and 249-252 (base64 of the UTF-8 bytes)",
    "binary": "spec 002 type codes 15/254 with BinaryFlag (Go-escaped bytes) and 249-252 (base64)",
    "temporal": "spec 002 type codes 7/10/11/12: TiDB's printed time, fsp digits kept "
                "(TIMESTAMP in the changefeed's time-zone)",
    "year": "spec 002 type code 13: the year as a JSON number",
    "bit": "spec 002 type code 16: the bit value as an unsigned JSON number",
    "json": "spec 002 type code 245: TiDB's printed JSON document as a string",
}


def describe_fidelity(t: TiDBType, options: Mapping[str, Any]) -> tuple[str, str]:
    if t.base == "float":
        return ("lossy", "spec 002 type code 4: TiCDC writes the float32 in its shortest float32 digits, "
                         "which a reader takes as a double")
    if t.base == "enum":
        return ("lossy", "spec 002 type code 247: the 1-based member index, not the member name")
    if t.base == "set":
        return ("lossy", "spec 002 type code 248: the member bitmask, not the member names")
    return ("exact", _EXACT_WHY[_family(t)])


def project_value(t: TiDBType, value: Any, options: Mapping[str, Any]) -> Any:
    if value is None:
        return None
    project = value_projector(t, options)
    return value if project is None else project(value)


def value_projector(t: TiDBType, options: Mapping[str, Any]) -> Optional[Callable[[Any], Any]]:
    """`project_value` of type `t` for a non-NULL value; None where the value is read back as it is."""
    if t.base == "float":
        return float32_as_read
    if t.base == "enum":
        return partial(enum_index, t)
    if t.base == "set":
        return partial(set_bitmask, t)
    return None


def carried_number(t: TiDBType, options: Mapping[str, Any]) -> Optional[str]:
    """The JSON number a consumer reads for `t`: the integer types, YEAR, BIT and ENUM/SET (index,
    bitmask) as integers, FLOAT/DOUBLE as float64 (spec 002, Column type code)."""
    if t.is_integer or t.base in ("year", "bit", "enum", "set"):
        return "integer"
    if t.base in ("float", "double"):
        return "float"
    return None


def accepted_forms(t: TiDBType, options: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The upstream-value forms a consumer may write beside the carried one (checks/value_forms.py)."""
    if t.base in ("enum", "set"):
        return (("members", f"spec 002 type code {247 if t.base == 'enum' else 248} carries the "
                            f"{'index' if t.base == 'enum' else 'bitmask'}; the member names are in the "
                            "column's DDL (a DDL event's query) and in a declared table schema"),)
    return ()


def _family(t: TiDBType) -> str:
    if t.is_integer:
        return "integer"
    if t.base == "double":
        return "double"
    if t.base == "decimal":
        return "decimal"
    if t.is_text:
        return "text"
    if t.is_binary:
        return "binary"
    if t.base in ("date", "datetime", "timestamp", "time"):
        return "temporal"
    return t.base  # year, bit, json


# The catalogue rule that says how a row event travels, and which says how a type's value does
# (spec 002, "Column type code"): named by findings of the cross-encoding differential check.
ROW_RULE = "OPEN-EVENTS-1"
_TYPE_RULES = {
    "tinyint": "OPEN-TYPECODE-1", "smallint": "OPEN-TYPECODE-1", "int": "OPEN-TYPECODE-1",
    "float": "OPEN-TYPECODE-2", "double": "OPEN-TYPECODE-2", "timestamp": "OPEN-TYPECODE-4",
    "bigint": "OPEN-TYPECODE-5", "mediumint": "OPEN-TYPECODE-5",
    "date": "OPEN-TYPECODE-6", "time": "OPEN-TYPECODE-6", "datetime": "OPEN-TYPECODE-6", "year": "OPEN-TYPECODE-6",
    "varchar": "OPEN-TYPECODE-7", "varbinary": "OPEN-TYPECODE-7", "bit": "OPEN-TYPECODE-8",
    "json": "OPEN-TYPECODE-9", "decimal": "OPEN-TYPECODE-9", "enum": "OPEN-TYPECODE-10", "set": "OPEN-TYPECODE-10",
    "char": "OPEN-TYPECODE-12", "binary": "OPEN-TYPECODE-12",
}


def type_rule(t: TiDBType) -> str:
    return _TYPE_RULES.get(t.base, "OPEN-TYPECODE-11")  # the TEXT and BLOB sizes


def lower_value(t: TiDBType, value: Any, options: Mapping[str, Any]) -> Any:
    """`value` at this protocol's fidelity, from any fidelity at least as coarse elsewhere and at
    least as fine here: idempotent, and a member index or bitmask another encoding gave stays."""
    if value is None or (t.base in ("enum", "set") and isinstance(value, int)):
        return value
    return project_value(t, value, options)
