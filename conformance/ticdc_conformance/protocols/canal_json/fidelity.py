"""What a perfect Canal-JSON consumer can know of a ground-truth value (spec 003).

Canal-JSON prints every value as text from TiDB's datum (TiCDC pkg/sink/codec/canal/helper.go,
formatColumnValue), so most types survive exactly. The exceptions:
- FLOAT goes through float32 and Go's shortest float32 text; read back as a number it is the double
  nearest that text, not the double the ground truth holds;
- ENUM and SET travel as the member index / bitmask; the member names are only in the mysqlType of
  content-compatible mode, so without it a consumer knows the number only.
Beyond values: without enable-tidb-extension there is no commit ts at all (spec 003, "TiDB extension
field"); see `describe_event_fidelity`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Mapping, Optional

from ticdc_conformance.protocols.common.enum_set import enum_index, set_bitmask
from ticdc_conformance.protocols.common.floats import float32_as_read
from ticdc_contract.tidb_types import TiDBType

from .options import parse_options


def project_value(t: TiDBType, value: Any, options: Mapping[str, Any] | None) -> Any:
    """The canonical JSON value this package's decoder outputs for ground-truth `value` of type `t`."""
    if value is None:
        return None
    project = value_projector(t, options)
    return value if project is None else project(value)


def value_projector(t: TiDBType, options: Mapping[str, Any] | None) -> Optional[Callable[[Any], Any]]:
    """`project_value` of type `t` for a non-NULL value; None where the value is read back as it is."""
    opts = parse_options(options)
    if t.base == "float":
        return _float_as_read
    if t.base == "enum" and not opts.content_compatible:
        return partial(enum_index, t)
    if t.base == "set" and not opts.content_compatible:
        return partial(set_bitmask, t)
    return None


def _float_as_read(value: Any) -> float:
    return float32_as_read(float(value))


def describe_fidelity(t: TiDBType, options: Mapping[str, Any] | None) -> tuple[str, str]:
    opts = parse_options(options)
    if t.base == "float":
        return ("lossy", "spec 003 sqlType REAL(7): the value is printed from float32 with the fewest digits "
                         "that identify it, so only float32 precision reaches the consumer")
    if t.base == "double":
        return ("exact", "spec 003 sqlType DOUBLE(8): the shortest decimal text that reads back to the same double")
    if t.base in ("enum", "set"):
        if opts.content_compatible:
            return ("exact", f"spec 003 content-compatible: mysqlType spells out the {t.base.upper()} members, "
                             "so the transmitted index/bitmask maps back to the member names")
        what = "1-based member index" if t.base == "enum" else "member bitmask"
        return ("lossy", f"spec 003 sqlType {'INTEGER(4)' if t.base == 'enum' else 'BIT(-7)'}: the {what} travels "
                         "and mysqlType is the bare type name, so member names need the table schema")
    if t.is_binary:
        return ("exact", "spec 003 Binary and Blob types: one ISO-8859-1 character per byte, all 256 values")
    if t.is_integer or t.base in ("year", "bit"):
        return ("exact", "spec 003 Integer types: decimal text, unsigned BIGINT up to 18446744073709551615 "
                         "(sqlType DECIMAL(3) above the signed range)")
    if t.base == "decimal":
        return ("exact", "spec 003 sqlType DECIMAL(3): TiDB's decimal text with the column's scale")
    if t.base == "timestamp":
        return ("exact", "spec 003 sqlType TIMESTAMP(93): TiDB's print in the changefeed's time zone, "
                         "taken to be the upstream time-zone")
    if t.base in ("date", "datetime", "time"):
        return ("exact", "spec 003 sqlType DATE/TIMESTAMP/TIME: TiDB's print with the column's fsp digits")
    if t.base == "json":
        return ("exact", "spec 003 sqlType VARCHAR(12): TiDB's JSON text")
    return ("exact", "spec 003 sqlType CHAR/VARCHAR/CLOB: the text itself")


def carried_number(t: TiDBType, options: Mapping[str, Any] | None) -> Optional[str]:
    """The JSON number the decoder makes of the printed value: integers, YEAR, BIT and (without
    content-compatible) the ENUM index / SET bitmask as integers, FLOAT/DOUBLE as float64."""
    if t.is_integer or t.base in ("year", "bit"):
        return "integer"
    if t.base in ("enum", "set") and not parse_options(options).content_compatible:
        return "integer"
    if t.base in ("float", "double"):
        return "float"
    return None


def accepted_forms(t: TiDBType, options: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """The upstream-value forms a consumer may write beside the carried one (checks/value_forms.py)."""
    if t.base in ("enum", "set") and not parse_options(options).content_compatible:
        return (("members", "spec 003 carries the index/bitmask without content-compatible; the member "
                            "names are in the column's DDL (a DDL event's sql) and in a declared table schema"),)
    return ()


def describe_event_fidelity(options: Mapping[str, Any] | None) -> dict[str, tuple[str, str]]:
    """How much of each event's metadata and row images the configuration lets through."""
    opts = parse_options(options)
    out = {}
    if opts.enable_tidb_extension:
        out["commit_ts"] = ("exact", "spec 003 TiDB extension field: _tidb.commitTs is the transaction's TSO")
    else:
        out["commit_ts"] = ("absent", "spec 003: without enable-tidb-extension there is no _tidb field, hence no "
                                      "commit ts (es is only its millisecond part) and no WATERMARK events")
    if opts.only_output_updated_columns:
        out["update.before"] = ("exact", "spec 003 Event of Update Type: old holds the changed columns only; "
                                         "the unchanged ones equal data, so the row before is data overlaid with old")
    else:
        out["update.before"] = ("exact", "spec 003 Event of Update Type: old holds every column")
    if opts.delete_only_output_handle_key_columns:
        out["delete.before"] = ("lossy", "delete-only-output-handle-key-columns: a DELETE's data holds the "
                                         "handle-key columns only")
    else:
        out["delete.before"] = ("exact", "spec 003 Changes in the Old field of the Delete events: data holds the "
                                         "deleted row")
    if opts.large_message_handle_option == "claim-check":
        out["oversized.row"] = ("exact", "large-message-handle-option=claim-check: a row above max-message-bytes "
                                         "arrives as a claim-check location; the decoder reads the full message "
                                         "back from the claim-check storage (decoder option claim-check-folder)")
    elif opts.large_message_handle_option == "handle-key-only":
        out["oversized.row"] = ("exact", "large-message-handle-option=handle-key-only: a row above "
                                         "max-message-bytes arrives with its handle-key columns only; the decoder "
                                         "completes it from the upstream snapshot at commitTs (new row) and "
                                         "commitTs - 1 (old row) through its snapshot-lookup")
    return out


# The catalogue rule that says how a row event travels, and which says how a type's value does
# (spec 003, sqlType tables): named by findings of the cross-encoding differential check.
ROW_RULE = "CANAL-DML-1"
_TYPE_RULES = {
    "float": "CANAL-SQLTYPE-2", "double": "CANAL-SQLTYPE-2", "decimal": "CANAL-SQLTYPE-2",
    "char": "CANAL-SQLTYPE-3", "varchar": "CANAL-SQLTYPE-3",
    "tinytext": "CANAL-SQLTYPE-4", "text": "CANAL-SQLTYPE-4", "mediumtext": "CANAL-SQLTYPE-4",
    "longtext": "CANAL-SQLTYPE-4", "date": "CANAL-SQLTYPE-6", "datetime": "CANAL-SQLTYPE-6",
    "timestamp": "CANAL-SQLTYPE-6", "time": "CANAL-SQLTYPE-6", "year": "CANAL-SQLTYPE-6",
    "enum": "CANAL-SQLTYPE-7", "set": "CANAL-SQLTYPE-7", "bit": "CANAL-SQLTYPE-7", "json": "CANAL-SQLTYPE-7",
    "tinyint": "CANAL-SQLTYPE-8", "smallint": "CANAL-SQLTYPE-9", "mediumint": "CANAL-SQLTYPE-10",
    "int": "CANAL-SQLTYPE-11", "bigint": "CANAL-SQLTYPE-12",
}


def type_rule(t: TiDBType) -> str:
    return "CANAL-BINARY-1" if t.is_binary else _TYPE_RULES[t.base]


def lower_value(t: TiDBType, value: Any, options: Mapping[str, Any] | None) -> Any:
    """`value` at this configuration's fidelity, from any fidelity at least as fine here:
    idempotent, and a member index or bitmask another encoding gave stays."""
    if value is None or (t.base in ("enum", "set") and isinstance(value, int)):
        return value
    return project_value(t, value, options)
