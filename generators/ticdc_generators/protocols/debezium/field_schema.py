"""Per-column Kafka Connect field schemas (codec.go writeDebeziumFieldSchema).

Field order inside each object is TiCDC's (tidb_type first when enabled, then type, optional,
name/version/parameters, field, default), since consumers comparing bytes see it.
"""
from __future__ import annotations

from typing import Any, Optional

from ..golang.json_text import B64
from .columns import ColumnView
from .temporal import (
    MIN_TIMESTAMP,
    TemporalError,
    date_days,
    datetime_epoch,
    format_zoned,
    is_go_valid,
    parse_datetime,
    time_to_micros,
)
from .values import bit_bytes


def tidb_type(col: ColumnView) -> str:
    """helper.go getTiDBType: TiDB's type name, " unsigned" appended except where TiDB's own
    flag is meaningless for the name (YEAR, BIT, CHAR/VARCHAR, DECIMAL)."""
    if col.code in ("year", "bit", "varchar", "string", "newdecimal"):
        return col.type_str
    return col.type_str + (" unsigned" if col.unsigned else "")


def escape_enum_option(option: str) -> str:
    """common.EscapeEnumAndSetOptions, applied to ENUM (not SET) elements in `allowed`."""
    return option.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def _parse_float(text: Any) -> Optional[float]:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def field_schema(col: ColumnView, tidb_extension: bool) -> dict:
    out: dict = {}
    if tidb_extension:
        out["tidb_type"] = tidb_type(col)
    code = col.code
    d = col.default
    optional = not col.not_null

    def base(kind: str, name: Optional[str] = None, version: bool = False) -> None:
        out["type"] = kind
        out["optional"] = optional
        if name is not None:
            out["name"] = name
        if version:
            out["version"] = 1

    if code == "bit":
        n = col.flen
        v = 0
        if d is not None:
            raw = d if isinstance(d, bytes) else str(d).encode("utf-8")
            # parseBit + strconv.ParseUint(_, 2, 64): an empty or over-wide default aborts the
            # whole field object (the Go closure returns early).
            if not raw or int.from_bytes(raw, "big") >= 2**64:
                return out
            v = int.from_bytes(raw, "big")
        if n == 1:
            base("boolean")
            out["field"] = col.name
            if d is not None:
                out["default"] = v != 0
        else:
            base("bytes", "io.debezium.data.Bits", True)
            out["parameters"] = {"length": str(n)}
            out["field"] = col.name
            if d is not None:
                out["default"] = B64(bit_bytes(n, v))
        return out

    if code in ("string", "varchar", "tinyblob", "blob", "mediumblob", "longblob"):
        base("string")
        out["field"] = col.name
        if d is not None:
            out["default"] = d
        return out

    if code == "enum":
        base("string", "io.debezium.data.Enum", True)
        out["parameters"] = {"allowed": ",".join(escape_enum_option(e) for e in col.elems)}
        out["field"] = col.name
        if d is not None:
            out["default"] = d
        return out

    if code == "set":
        base("string", "io.debezium.data.EnumSet", True)
        out["parameters"] = {"allowed": ",".join(col.elems)}
        out["field"] = col.name
        if d is not None:
            out["default"] = d
        return out

    if code == "date":
        base("int32", "io.debezium.time.Date", True)
        out["field"] = col.name
        if isinstance(d, str):
            try:
                days = date_days(d)
            except TemporalError:
                days = None
            if days is not None:
                out["default"] = days
            elif col.not_null:
                out["default"] = 0
        return out

    if code == "datetime":
        base("int64", "io.debezium.time.Timestamp" if col.decimal <= 3 else "io.debezium.time.MicroTimestamp", True)
        out["field"] = col.name
        if isinstance(d, str):
            if d == "CURRENT_TIMESTAMP":
                out["default"] = 0
                return out
            try:
                epoch = datetime_epoch(d, col.decimal)
            except TemporalError:
                out["default"] = 0
                return out
            if epoch is not None:
                out["default"] = epoch
            elif col.not_null:
                out["default"] = 0
        return out

    if code == "timestamp":
        base("string", "io.debezium.time.ZonedTimestamp", True)
        out["field"] = col.name
        if isinstance(d, str):
            if d == "CURRENT_TIMESTAMP":
                if col.not_null:
                    out["default"] = "1970-01-01T00:00:00Z"
                return out
            try:
                c = parse_datetime(d)
            except TemporalError:
                out["default"] = 0
                return out
            if c.as_tuple() < MIN_TIMESTAMP:
                if col.not_null:
                    out["default"] = "1970-01-01T00:00:00Z"
                return out
            if not is_go_valid(c):
                out["default"] = 0
                return out
            # The stored default is already UTC, and here (unlike for row values) TiCDC reads
            # it as UTC.
            out["default"] = format_zoned(c, col.decimal)
        return out

    if code == "duration":
        base("int64", "io.debezium.time.MicroTime", True)
        out["field"] = col.name
        if isinstance(d, str):
            try:
                out["default"] = time_to_micros(d)
            except TemporalError:
                pass
        return out

    if code == "json":
        base("string", "io.debezium.data.Json", True)
        out["field"] = col.name
        if d is not None:
            out["default"] = d
        return out

    if code in ("tiny", "short", "int24", "long", "longlong", "float", "double", "newdecimal"):
        kind = {
            "tiny": "int16",
            "short": "int32" if col.unsigned else "int16",
            "int24": "int32",
            "long": "int64" if col.unsigned else "int32",
            "longlong": "int64",
            "float": "double" if col.decimal != -1 else "float",
            "double": "double",
            "newdecimal": "double",
        }[code]
        base(kind)
        out["field"] = col.name
        if isinstance(d, str):
            f = _parse_float(d)
            if f is not None:
                out["default"] = f
        return out

    if code == "year":
        base("int32", "io.debezium.time.Year", True)
        out["field"] = col.name
        if isinstance(d, str):
            f = _parse_float(d)
            if f is not None:
                # "DEFAULT 1" means 2001 and "DEFAULT 99" 1999, as for two-digit years.
                if f < 70:
                    f += 2000
                elif f < 100:
                    f += 1900
                out["default"] = f
        return out

    return out
