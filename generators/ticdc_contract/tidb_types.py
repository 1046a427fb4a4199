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
    def has_charset(self) -> bool:
        """A type whose values have a character set and collation of their own (strings, ENUM, SET)."""
        return self.is_text or self.base in ("enum", "set")

    @property
    def is_blob_family(self) -> bool:
        return self.base in ("tinyblob", "blob", "mediumblob", "longblob",
                             "tinytext", "text", "mediumtext", "longtext")

    @property
    def fsp(self) -> int:
        return (self.decimal or 0) if self.base in ("datetime", "timestamp", "time") else 0

    @property
    def scale(self) -> int:
        return (self.decimal if self.decimal is not None else 0) if self.base == "decimal" else 0

    @property
    def int_range(self) -> tuple[int, int]:
        return _INT_RANGES[(self.base, self.unsigned)]

    # --- TiDB's column-info view ---------------------------------------------------
    @property
    def effective_charset(self) -> str:
        """The declared charset, else the declared collation's, else utf8mb4 (binary for non-strings)."""
        return _charset_for(self)

    @property
    def effective_collate(self) -> str:
        """The declared collation, else the charset's default (TiDB: a CHARACTER SET alone takes it)."""
        return type_collation(self).name

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

    # --- catalogue shorthands -------------------------------------------------------
    @classmethod
    def bool_(cls) -> "TiDBType":
        """BOOL / BOOLEAN: TiDB stores it as TINYINT(1)."""
        return cls("tinyint", flen=1)

    @property
    def is_bool(self) -> bool:
        return self.base == "tinyint" and self.flen == 1 and not self.unsigned

    def sql(self) -> str:
        """The type as it appears in a CREATE TABLE statement."""
        b = self.base.upper()
        if self.base in ("enum", "set"):
            inner = ",".join("'" + e.replace("\\", "\\\\").replace("'", "''") + "'" for e in self.elements)
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
        if (self.charset is not None or self.collate is not None) and self.has_charset:
            # A statement that left these out would give the column utf8mb4 and its collation, and
            # a consumer reading the DDL's query would then disagree with the column info.
            out += f" CHARACTER SET {self.effective_charset} COLLATE {self.effective_collate}"
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


# --- character sets and collations ---------------------------------------------------------------
@dataclass(frozen=True)
class Charset:
    name: str
    maxlen: int  # bytes per character at most
    default_collation: str
    codec: Optional[str]  # Python codec whose repertoire the charset admits; None = raw bytes


@dataclass(frozen=True)
class Collation:
    name: str
    charset: str
    id: int  # MySQL/TiDB collation ID
    case_insensitive: bool
    pad_space: bool  # trailing spaces ignored in comparisons (and so in unique keys)


CHARSETS: dict[str, Charset] = {c.name: c for c in (
    Charset("utf8mb4", 4, "utf8mb4_bin", "utf-8"),
    Charset("utf8", 3, "utf8_bin", "utf-8"),  # utf8mb3: the Basic Multilingual Plane only
    Charset("latin1", 1, "latin1_bin", "latin-1"),
    Charset("ascii", 1, "ascii_bin", "ascii"),
    Charset("gbk", 2, "gbk_bin", "gbk"),
    Charset("binary", 1, "binary", None),
)}

COLLATIONS: dict[str, Collation] = {c.name: c for c in (
    Collation("utf8mb4_bin", "utf8mb4", 46, False, True),
    Collation("utf8mb4_general_ci", "utf8mb4", 45, True, True),
    Collation("utf8mb4_unicode_ci", "utf8mb4", 224, True, True),
    Collation("utf8mb4_0900_ai_ci", "utf8mb4", 255, True, False),
    Collation("utf8mb4_0900_bin", "utf8mb4", 309, False, False),
    Collation("utf8_bin", "utf8", 83, False, True),
    Collation("utf8_general_ci", "utf8", 33, True, True),
    Collation("utf8_unicode_ci", "utf8", 192, True, True),
    Collation("latin1_bin", "latin1", 47, False, True),
    Collation("ascii_bin", "ascii", 65, False, True),
    Collation("gbk_bin", "gbk", 87, False, True),
    Collation("gbk_chinese_ci", "gbk", 28, True, True),
    Collation("binary", "binary", 63, False, False),
)}

_CHARSET_ALIASES = {"utf8mb3": "utf8"}


def charset_info(name: str) -> Charset:
    key = _CHARSET_ALIASES.get(name.lower(), name.lower())
    try:
        return CHARSETS[key]
    except KeyError:
        raise ValueError(f"unknown or unsupported charset {name!r}") from None


def collation_info(name: str) -> Collation:
    key = name.lower().replace("utf8mb3_", "utf8_")
    try:
        return COLLATIONS[key]
    except KeyError:
        raise ValueError(f"unknown or unsupported collation {name!r}") from None


def type_charset(t: TiDBType) -> Charset:
    """The character set a column's values are held in (binary for every non-string type)."""
    return charset_info(t.effective_charset)


def _charset_for(t: TiDBType) -> str:
    if not t.has_charset:
        return "binary"
    if t.charset is not None:
        return charset_info(t.charset).name
    if t.collate is not None:
        return collation_info(t.collate).charset
    return "utf8mb4"


def type_collation(t: TiDBType) -> Collation:
    """The collation in force: the declared one, else the declared charset's default."""
    if t.has_charset:
        if t.collate is not None:
            return collation_info(t.collate)
        return collation_info(charset_info(_charset_for(t)).default_collation)
    return COLLATIONS["binary"]
