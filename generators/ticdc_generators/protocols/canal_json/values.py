"""Per-column facts of a Canal-JSON DML message: the Java SQL type code (`sqlType`), the MySQL
type string (`mysqlType`) and the value string of `data` / `old`.

Learned from TiCDC pkg/sink/codec/canal/helper.go (mysqlType2JavaType, formatColumnValue),
pkg/sink/codec/common/helper.go (GetMySQLType) and TiDB's FieldType.CompactStr /
ColumnInfo.GetTypeDesc, which GetMySQLType calls for content-compatible output.
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_contract.enum_set import enum_index, set_bits
from ticdc_contract.tidb_types import TiDBType

from ..golang.floats import format_float32, format_float64

# java.sql.Types codes, spec 003 (Canal-JSON), "Java SQL Type Code" table.
BIT = -7
TINYINT = -6
BIGINT = -5
CHAR = 1
DECIMAL = 3
INTEGER = 4
SMALLINT = 5
REAL = 7
DOUBLE = 8
VARCHAR = 12
DATE = 91
TIME = 92
TIMESTAMP = 93
BLOB = 2004
CLOB = 2005

_BLOB_BASES = ("tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext", "longtext")

# The code a column has whatever its value; integer codes may be promoted per value below.
_JAVA_BY_BASE = {
    "tinyint": TINYINT,
    "smallint": SMALLINT,
    "mediumint": INTEGER,
    "int": INTEGER,
    "bigint": BIGINT,
    "float": REAL,
    "double": DOUBLE,
    "decimal": DECIMAL,
    "date": DATE,
    "datetime": TIMESTAMP,
    "timestamp": TIMESTAMP,
    "time": TIME,
    "year": VARCHAR,
    "enum": INTEGER,
    "set": BIT,
    "bit": BIT,
    "json": VARCHAR,
}

# Unsigned values above the signed maximum of their width get the next wider Java type
# (spec 003, "Integer types" table; TiCDC helper.go formatColumnValue). MEDIUMINT UNSIGNED
# already fits INTEGER and is never promoted.
_UNSIGNED_PROMOTION = {
    "tinyint": (2**7 - 1, SMALLINT),
    "smallint": (2**15 - 1, INTEGER),
    "int": (2**31 - 1, BIGINT),
    "bigint": (2**63 - 1, DECIMAL),
}


def is_binary(t: TiDBType) -> bool:
    """TiDB's BinaryFlag: the column stores bytes in the `binary` charset."""
    if t.is_binary:
        return True
    return t.is_text and t.effective_charset == "binary"


def java_type(t: TiDBType, value: Any) -> int:
    """The `sqlType` code of one column for the row being sent.

    A NULL never promotes: TiCDC returns the type's own code before looking at the value.
    """
    if t.base in _BLOB_BASES:
        return BLOB if is_binary(t) else CLOB
    if t.base in ("varchar", "varbinary"):
        return BLOB if is_binary(t) else VARCHAR
    if t.base in ("char", "binary"):
        return BLOB if is_binary(t) else CHAR
    code = _JAVA_BY_BASE[t.base]
    if value is not None and t.unsigned and t.base in _UNSIGNED_PROMOTION:
        limit, wider = _UNSIGNED_PROMOTION[t.base]
        if int(value) > limit:
            return wider
    return code


# --- mysqlType ------------------------------------------------------------------------------


def _type_name(t: TiDBType) -> str:
    """TiDB's types.TypeToStr: string types in the binary charset are named as binary types."""
    if t.base == "char" and is_binary(t):
        return "binary"
    if t.base == "varchar" and is_binary(t):
        return "varbinary"
    if t.base in ("tinytext", "text", "mediumtext", "longtext") and is_binary(t):
        return t.base.replace("text", "blob")
    return t.base


def _has_unsigned_suffix(t: TiDBType) -> bool:
    # BIT and YEAR carry the unsigned flag in TiDB but never show it.
    return t.unsigned and t.base not in ("bit", "year")


def _enum_element(e: str) -> str:
    """TiDB's format.OutputFormat, applied to ENUM/SET members inside the type string."""
    return e.replace("\x00", "\\0").replace("'", "''").replace("\n", "\\n").replace("\r", "\\r")


def _parameters(t: TiDBType) -> str:
    """The suffix TiDB's FieldType.CompactStr appends to the type name."""
    base = t.base
    if base in ("enum", "set"):
        return "('" + "','".join(_enum_element(e) for e in t.elements) + "')"
    if base in ("datetime", "timestamp", "time"):
        return f"({t.fsp})" if t.fsp else ""
    if base in ("float", "double"):
        # Only an explicit (M,D) is shown; FLOAT(p) keeps no scale and prints bare.
        if t.decimal is not None and t.decimal not in (0, -1):
            return f"({t.effective_flen},{t.decimal})"
        return ""
    if base == "decimal":
        return f"({t.effective_flen},{t.scale})"
    if base in ("bit", "char", "varchar", "binary", "varbinary", "year") or t.is_integer:
        # TiDB keeps integer display widths (TiDBStrictIntegerDisplayWidth is off in TiCDC's
        # build): "int(11)", "bigint(20) unsigned", "tinyint(1)".
        return f"({t.effective_flen})"
    return ""


def mysql_type(t: TiDBType, full: bool) -> str:
    """`mysqlType` of a column: the bare type name by default, the full type with parameters
    under content-compatible (spec 003, "mysqlType field"; TiCDC common.GetMySQLType)."""
    out = _type_name(t)
    if full:
        out += _parameters(t)
    if _has_unsigned_suffix(t):
        out += " unsigned"
    return out


# --- values ---------------------------------------------------------------------------------


def render_value(t: TiDBType, value: Any) -> Optional[str]:
    """The string TiCDC puts in `data`/`old` for a canonical value; None stands for JSON null."""
    if value is None:
        return None
    base = t.base
    if is_binary(t):
        # Each byte becomes the code point of the same number (ISO-8859-1), spec 003
        # "Binary and Blob types"; the JSON writer then escapes what needs escaping.
        return bytes(value).decode("latin-1")
    if t.is_integer or base in ("year", "bit"):
        return str(int(value))
    if base == "float":
        return format_float32(value)
    if base == "double":
        return format_float64(value)
    if base == "enum":
        return str(enum_index(t, value))
    if base == "set":
        return str(set_bits(t, value))
    # DECIMAL, temporal types and JSON are already TiDB's own print in the canonical form;
    # text is sent as its UTF-8 string.
    return str(value)
