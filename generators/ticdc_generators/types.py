"""The TiDB type catalogue: what a column's type is, independent of any protocol.

A `TiDBType` carries exactly what TiDB's column info carries (base type, flen, decimal/fsp,
unsigned, charset/collation, enum/set elements). Encoders derive their protocol's view from it;
nothing protocol-specific lives here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

# Families group base types by how their values are represented in the canonical model.
INTEGER_TYPES = ("tinyint", "smallint", "mediumint", "int", "bigint")
FLOAT_TYPES = ("float", "double")
DECIMAL_TYPES = ("decimal",)
STRING_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
BINARY_TYPES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
TEMPORAL_TYPES = ("date", "datetime", "timestamp", "time")
OTHER_TYPES = ("year", "enum", "set", "bit", "json")
ALL_BASE_TYPES = (
    INTEGER_TYPES + FLOAT_TYPES + DECIMAL_TYPES + STRING_TYPES + BINARY_TYPES + TEMPORAL_TYPES + OTHER_TYPES
)

# TiDB's default display widths (flen) when a DDL gives none; signed/unsigned differ for integers.
_DEFAULT_INT_FLEN = {
    ("tinyint", False): 4, ("tinyint", True): 3,
    ("smallint", False): 6, ("smallint", True): 5,
    ("mediumint", False): 9, ("mediumint", True): 8,
    ("int", False): 11, ("int", True): 10,
    ("bigint", False): 20, ("bigint", True): 20,
}
_INT_RANGES = {
    ("tinyint", False): (-(2**7), 2**7 - 1), ("tinyint", True): (0, 2**8 - 1),
    ("smallint", False): (-(2**15), 2**15 - 1), ("smallint", True): (0, 2**16 - 1),
    ("mediumint", False): (-(2**23), 2**23 - 1), ("mediumint", True): (0, 2**24 - 1),
    ("int", False): (-(2**31), 2**31 - 1), ("int", True): (0, 2**32 - 1),
    ("bigint", False): (-(2**63), 2**63 - 1), ("bigint", True): (0, 2**64 - 1),
}
_BLOB_FLEN = {"tinyblob": 255, "blob": 65535, "mediumblob": 16777215, "longblob": 4294967295,
              "tinytext": 255, "text": 65535, "mediumtext": 16777215, "longtext": 4294967295}


@dataclass(frozen=True)
class TiDBType:
    """A column type as TiDB stores it in its column info."""

    base: str
    unsigned: bool = False
    flen: Optional[int] = None  # display width / char length / precision; None = TiDB's default
    decimal: Optional[int] = None  # DECIMAL scale, or fsp for DATETIME/TIMESTAMP/TIME
    charset: Optional[str] = None  # None = binary for non-string types, utf8mb4 for strings
    collate: Optional[str] = None
    elements: tuple[str, ...] = field(default=())  # ENUM / SET members

    def __post_init__(self) -> None:
        if self.base not in ALL_BASE_TYPES:
            raise ValueError(f"unknown TiDB base type {self.base!r}")

    # --- classification -------------------------------------------------------------
    @property
    def is_integer(self) -> bool:
        return self.base in INTEGER_TYPES

    @property
    def is_binary(self) -> bool:
        """True when TiDB stores the column with the binary charset (BINARY/VARBINARY/BLOB)."""
        return self.base in BINARY_TYPES

    @property
    def is_text(self) -> bool:
        return self.base in STRING_TYPES

    @property
    def is_blob_family(self) -> bool:
        return self.base in ("tinyblob", "blob", "mediumblob", "longblob",
                             "tinytext", "text", "mediumtext", "longtext")

    @property
    def fsp(self) -> int:
        return self.decimal or 0 if self.base in ("datetime", "timestamp", "time") else 0

    @property
    def scale(self) -> int:
        return (self.decimal if self.decimal is not None else 0) if self.base == "decimal" else 0

    @property
    def int_range(self) -> tuple[int, int]:
        return _INT_RANGES[(self.base, self.unsigned)]

    # --- TiDB's column-info view ---------------------------------------------------
    @property
    def effective_charset(self) -> str:
        if self.is_text or self.base in ("enum", "set"):
            return self.charset or "utf8mb4"
        if self.base == "json":
            return "binary"
        return "binary"

    @property
    def effective_collate(self) -> str:
        if self.is_text or self.base in ("enum", "set"):
            return self.collate or "utf8mb4_bin"
        return "binary"

    @property
    def effective_flen(self) -> int:
        """The flen TiDB records for the column (its default when the DDL omits one)."""
        if self.flen is not None:
            return self.flen
        if self.is_integer:
            return _DEFAULT_INT_FLEN[(self.base, self.unsigned)]
        if self.base == "decimal":
            return 10
        if self.base in _BLOB_FLEN:
            return _BLOB_FLEN[self.base]
        if self.base in ("char", "binary"):
            return 1
        if self.base == "float":
            return 12
        if self.base == "double":
            return 22
        if self.base == "date":
            return 10
        if self.base in ("datetime", "timestamp"):
            return 19 + (self.fsp + 1 if self.fsp else 0)
        if self.base == "time":
            return 10 + (self.fsp + 1 if self.fsp else 0)
        if self.base == "year":
            return 4
        if self.base == "bit":
            return 1
        if self.base == "json":
            return 4294967295
        if self.base in ("enum", "set"):
            return -1
        raise ValueError(f"no default flen for {self.base}")

    def sql(self) -> str:
        """The type as it appears in a CREATE TABLE statement."""
        b = self.base.upper()
        if self.base in ("enum", "set"):
            inner = ",".join("'" + e.replace("'", "''") + "'" for e in self.elements)
            out = f"{b}({inner})"
        elif self.base == "decimal":
            out = f"DECIMAL({self.effective_flen},{self.scale})"
        elif self.base in ("datetime", "timestamp", "time"):
            out = f"{b}({self.fsp})" if self.fsp else b
        elif self.base in ("char", "varchar", "binary", "varbinary", "bit") and self.flen is not None:
            out = f"{b}({self.flen})"
        elif self.is_integer and self.flen is not None:
            out = f"{b}({self.flen})"
        else:
            out = b
        if self.unsigned:
            out += " UNSIGNED"
        return out


# Short constructors, so scenario code reads like DDL.
def int_type(base: str = "int", unsigned: bool = False) -> TiDBType:
    return TiDBType(base, unsigned=unsigned)


def varchar(n: int) -> TiDBType:
    return TiDBType("varchar", flen=n)


def decimal(precision: int, scale: int) -> TiDBType:
    return TiDBType("decimal", flen=precision, decimal=scale)


def datetime(fsp: int = 0) -> TiDBType:
    return TiDBType("datetime", decimal=fsp)


def blob(kind: str = "blob") -> TiDBType:
    return TiDBType(kind)


def representative_types() -> list[TiDBType]:
    """One or more typical declarations per base type, for the fidelity matrix."""
    out: list[TiDBType] = []
    for base in INTEGER_TYPES:
        out += [TiDBType(base), TiDBType(base, unsigned=True)]
    out += [TiDBType("tinyint", flen=1)]  # BOOL
    out += [TiDBType("float"), TiDBType("double"), decimal(10, 0), decimal(20, 6), decimal(65, 30)]
    out += [TiDBType("char", flen=16), varchar(255)] + [TiDBType(b) for b in STRING_TYPES[2:]]
    out += [TiDBType("binary", flen=16), TiDBType("varbinary", flen=255)] + [TiDBType(b) for b in BINARY_TYPES[2:]]
    out += [TiDBType("date"), datetime(0), datetime(3), datetime(6),
            TiDBType("timestamp"), TiDBType("timestamp", decimal=6), TiDBType("time"), TiDBType("time", decimal=6)]
    out += [TiDBType("year"), TiDBType("enum", elements=("a", "b", "c")), TiDBType("set", elements=("a", "b", "c")),
            TiDBType("bit", flen=1), TiDBType("bit", flen=64), TiDBType("json")]
    return out
