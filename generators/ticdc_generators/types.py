"""The TiDB type catalogue: what a column's type is, independent of any protocol.

A `TiDBType` carries exactly what TiDB's column info carries (base type, flen, decimal/fsp,
unsigned, charset/collation, enum/set elements). Encoders derive their protocol's view from it;
nothing protocol-specific lives here.
"""
from __future__ import annotations

import re as _re
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


# =====================================================================================
# Catalogue knowledge: TiDB's limits, character sets and collations, SQL type spellings,
# and the full type matrix the value domains (`ticdc_generators.values`) are held against.
# =====================================================================================
MAX_FSP = 6
DECIMAL_MAX_PRECISION = 65
DECIMAL_MAX_SCALE = 30
BIT_MAX_WIDTH = 64
CHAR_MAX_LENGTH = 255  # CHAR(n) and BINARY(n)
ENUM_MAX_MEMBERS = 65535
SET_MAX_MEMBERS = 64
MEMBER_MAX_CHARS = 255
ROW_MAX_BYTES = 65535  # a VARCHAR/VARBINARY declaration's byte capacity may not exceed it
# TiDB's default txn-entry-size-limit: no single row (KV entry) may exceed it, whatever the type allows.
TXN_ENTRY_SIZE_LIMIT = 6 * 1024 * 1024
# Byte capacity of the TEXT/BLOB types (length prefix 1/2/3/4 bytes).
BLOB_BYTE_LIMITS = dict(_BLOB_FLEN)
INT_RANGES = dict(_INT_RANGES)


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


def check_type(t: TiDBType) -> None:
    """Raises ValueError when TiDB would refuse the declaration (or silently turn it into another)."""
    b = t.base
    if t.unsigned and not (t.is_integer or b in ("float", "double", "decimal")):
        raise ValueError(f"{b.upper()} cannot be UNSIGNED")
    if b == "decimal":
        m, d = t.effective_flen, t.scale
        if not 1 <= m <= DECIMAL_MAX_PRECISION:
            raise ValueError(f"DECIMAL precision {m} outside 1..{DECIMAL_MAX_PRECISION}")
        if not 0 <= d <= DECIMAL_MAX_SCALE or d > m:
            raise ValueError(f"DECIMAL scale {d} outside 0..min({m}, {DECIMAL_MAX_SCALE})")
    if b in ("float", "double") and t.decimal is not None and t.decimal >= 0:
        if t.flen is None or not 0 < t.flen <= 255 or t.decimal > min(t.flen, DECIMAL_MAX_SCALE):
            raise ValueError(f"bad {b.upper()}(M,D) declaration ({t.flen},{t.decimal})")
    if b in ("datetime", "timestamp", "time") and not 0 <= (t.decimal or 0) <= MAX_FSP:
        raise ValueError(f"fsp {t.decimal} outside 0..{MAX_FSP}")
    if b == "bit" and not 1 <= t.effective_flen <= BIT_MAX_WIDTH:
        raise ValueError(f"BIT({t.effective_flen}) outside 1..{BIT_MAX_WIDTH}")
    if b in ("char", "binary") and not 0 <= t.effective_flen <= CHAR_MAX_LENGTH:
        raise ValueError(f"{b.upper()}({t.effective_flen}) longer than {CHAR_MAX_LENGTH}")
    if b in ("varchar", "varbinary"):
        if t.flen is None:
            raise ValueError(f"{b.upper()} needs a length")
        per_char = charset_info(_charset_for(t)).maxlen if b == "varchar" else 1
        if t.flen < 0 or t.flen * per_char > ROW_MAX_BYTES:
            raise ValueError(f"{b.upper()}({t.flen}) exceeds {ROW_MAX_BYTES} bytes")
    if t.has_charset:
        cs = _charset_for(t)
        if cs == "binary":
            raise ValueError(f"{b.upper()} with charset binary is a binary string type; declare it as one")
        if t.collate is not None and collation_info(t.collate).charset != cs:
            raise ValueError(f"collation {t.collate} does not belong to charset {cs}")
    elif t.charset not in (None, "binary") or t.collate not in (None, "binary"):
        raise ValueError(f"{b.upper()} takes no charset or collation")
    if b in ("enum", "set"):
        n = len(t.elements)
        limit = ENUM_MAX_MEMBERS if b == "enum" else SET_MAX_MEMBERS
        if not 1 <= n <= limit:
            raise ValueError(f"{b.upper()} needs 1..{limit} members, got {n}")
        ci = type_collation(t).case_insensitive
        seen: set[str] = set()
        for e in t.elements:
            if len(e) > MEMBER_MAX_CHARS:
                raise ValueError(f"{b.upper()} member longer than {MEMBER_MAX_CHARS} characters")
            if e != e.rstrip(" "):
                raise ValueError(f"{b.upper()} member {e!r}: TiDB strips trailing spaces from members")
            if b == "set" and "," in e:
                raise ValueError(f"SET member {e!r} contains ','")
            key = e.casefold() if ci else e
            if key in seen:
                raise ValueError(f"duplicate {b.upper()} member {e!r}")
            seen.add(key)
            cs = charset_info(_charset_for(t))
            try:
                e.encode(cs.codec)
            except UnicodeEncodeError:
                raise ValueError(f"{b.upper()} member {e!r} not representable in {cs.name}") from None


# --- SQL spellings ----------------------------------------------------------------------------
# Multi-word names first where they share a prefix; each maps to (base, overrides).
_SQL_NAMES: dict[tuple[str, ...], tuple[str, dict]] = {
    ("TINYINT",): ("tinyint", {}), ("INT1",): ("tinyint", {}),
    ("BOOL",): ("tinyint", {"flen": 1}), ("BOOLEAN",): ("tinyint", {"flen": 1}),
    ("SMALLINT",): ("smallint", {}), ("INT2",): ("smallint", {}),
    ("MEDIUMINT",): ("mediumint", {}), ("MIDDLEINT",): ("mediumint", {}), ("INT3",): ("mediumint", {}),
    ("INT",): ("int", {}), ("INTEGER",): ("int", {}), ("INT4",): ("int", {}),
    ("BIGINT",): ("bigint", {}), ("INT8",): ("bigint", {}), ("SERIAL",): ("bigint", {"unsigned": True}),
    ("FLOAT",): ("float", {}), ("FLOAT4",): ("float", {}), ("FLOAT8",): ("double", {}),
    ("DOUBLE",): ("double", {}), ("DOUBLE", "PRECISION"): ("double", {}), ("REAL",): ("double", {}),
    ("DECIMAL",): ("decimal", {}), ("DEC",): ("decimal", {}), ("NUMERIC",): ("decimal", {}),
    ("FIXED",): ("decimal", {}),
    ("CHAR",): ("char", {}), ("CHARACTER",): ("char", {}),
    ("NCHAR",): ("char", {"charset": "utf8"}), ("NATIONAL", "CHAR"): ("char", {"charset": "utf8"}),
    ("NATIONAL", "CHARACTER"): ("char", {"charset": "utf8"}),
    ("VARCHAR",): ("varchar", {}), ("VARCHARACTER",): ("varchar", {}),
    ("CHARACTER", "VARYING"): ("varchar", {}), ("CHAR", "VARYING"): ("varchar", {}),
    ("NVARCHAR",): ("varchar", {"charset": "utf8"}), ("NATIONAL", "VARCHAR"): ("varchar", {"charset": "utf8"}),
    ("NATIONAL", "CHARACTER", "VARYING"): ("varchar", {"charset": "utf8"}),
    ("NATIONAL", "CHAR", "VARYING"): ("varchar", {"charset": "utf8"}),
    ("NCHAR", "VARCHAR"): ("varchar", {"charset": "utf8"}), ("NCHAR", "VARYING"): ("varchar", {"charset": "utf8"}),
    ("BINARY",): ("binary", {}), ("VARBINARY",): ("varbinary", {}),
    ("TINYTEXT",): ("tinytext", {}), ("TEXT",): ("text", {}), ("MEDIUMTEXT",): ("mediumtext", {}),
    ("LONGTEXT",): ("longtext", {}), ("LONG",): ("mediumtext", {}), ("LONG", "VARCHAR"): ("mediumtext", {}),
    ("TINYBLOB",): ("tinyblob", {}), ("BLOB",): ("blob", {}), ("MEDIUMBLOB",): ("mediumblob", {}),
    ("LONGBLOB",): ("longblob", {}), ("LONG", "VARBINARY"): ("mediumblob", {}),
    ("DATE",): ("date", {}), ("DATETIME",): ("datetime", {}), ("TIMESTAMP",): ("timestamp", {}),
    ("TIME",): ("time", {}), ("YEAR",): ("year", {}),
    ("ENUM",): ("enum", {}), ("SET",): ("set", {}), ("BIT",): ("bit", {}), ("JSON",): ("json", {}),
}
_SQL_NAME_MAX_WORDS = max(len(k) for k in _SQL_NAMES)
_TEXT_BY_SIZE = ("tinytext", "text", "mediumtext", "longtext")
_BLOB_BY_SIZE = ("tinyblob", "blob", "mediumblob", "longblob")
_MYSQL_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


def _sql_tokens(text: str) -> list[tuple[str, object]]:
    """Words (upper-cased) and parenthesised argument lists (numbers and decoded string literals)."""
    out: list[tuple[str, object]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == "=":
            i += 1
        elif c.isalnum() or c == "_":
            m = _re.match(r"[A-Za-z0-9_]+", text[i:])
            out.append(("word", m.group(0).upper()))
            i += m.end()
        elif c == "(":
            args: list[object] = []
            i += 1
            while True:
                while i < n and text[i].isspace():
                    i += 1
                if i >= n:
                    raise ValueError(f"unclosed '(' in {text!r}")
                if text[i] in "'\"":
                    quote, i, buf = text[i], i + 1, []
                    while True:
                        if i >= n:
                            raise ValueError(f"unterminated string in {text!r}")
                        ch = text[i]
                        if ch == "\\" and i + 1 < n:
                            buf.append(_MYSQL_ESCAPES.get(text[i + 1], text[i + 1]))
                            i += 2
                        elif ch == quote and i + 1 < n and text[i + 1] == quote:
                            buf.append(quote)
                            i += 2
                        elif ch == quote:
                            i += 1
                            break
                        else:
                            buf.append(ch)
                            i += 1
                    args.append("".join(buf))
                else:
                    m = _re.match(r"\d+", text[i:])
                    if not m:
                        raise ValueError(f"unexpected {text[i]!r} in {text!r}")
                    args.append(int(m.group(0)))
                    i += m.end()
                while i < n and text[i].isspace():
                    i += 1
                if i < n and text[i] == ",":
                    i += 1
                    continue
                if i < n and text[i] == ")":
                    i += 1
                    break
                raise ValueError(f"expected ',' or ')' in {text!r}")
            out.append(("args", args))
        else:
            raise ValueError(f"unexpected {c!r} in type {text!r}")
    return out


def parse_sql_type(text: str) -> TiDBType:
    """A column type as written in DDL -> the TiDBType TiDB records for it.

    Knows MySQL's aliases (BOOL, INTEGER, REAL, DOUBLE PRECISION, NUMERIC/DEC/FIXED, FLOAT(p),
    CHARACTER VARYING, NATIONAL/NCHAR, LONG VARCHAR, SERIAL, ...), TEXT(n)/BLOB(n) sizing,
    UNSIGNED/ZEROFILL, CHARACTER SET/CHARSET/COLLATE/BINARY attributes, and ENUM/SET literals.
    """
    toks = _sql_tokens(text)
    words: list[str] = []
    for kind, val in toks:
        if kind != "word":
            break
        words.append(val)  # type: ignore[arg-type]
    name = None
    for k in range(min(len(words), _SQL_NAME_MAX_WORDS), 0, -1):
        if tuple(words[:k]) in _SQL_NAMES:
            name = tuple(words[:k])
            break
    if name is None:
        raise ValueError(f"unknown column type {text!r}")
    base, over = _SQL_NAMES[name]
    rest = toks[len(name):]
    args: list = []
    if rest and rest[0][0] == "args":
        args = list(rest[0][1])  # type: ignore[arg-type]
        rest = rest[1:]
    kw: dict = dict(over)
    if base in ("enum", "set"):
        if not args or not all(isinstance(a, str) for a in args):
            raise ValueError(f"{base.upper()} needs quoted members: {text!r}")
        kw["elements"] = tuple(a.rstrip(" ") for a in args)
    elif any(not isinstance(a, int) for a in args):
        raise ValueError(f"non-numeric type argument in {text!r}")
    elif base == "float" and name == ("FLOAT",) and len(args) == 1:
        p = args[0]
        if p > 53:
            raise ValueError(f"FLOAT({p}): precision above 53")
        base = "float" if p <= 24 else "double"
    elif base in ("float", "double", "decimal") and len(args) in (1, 2):
        kw["flen"] = args[0]
        kw["decimal"] = args[1] if len(args) == 2 else 0
    elif base in ("datetime", "timestamp", "time") and len(args) == 1:
        kw["decimal"] = args[0]
    elif base in ("text", "blob") and len(args) == 1:
        pass  # sized below, once the charset is known
    elif base == "year" and args:
        if args != [4]:
            raise ValueError("TiDB supports YEAR(4) only")
    elif len(args) == 1 and base not in ("date", "json", "tinytext", "mediumtext", "longtext",
                                         "tinyblob", "mediumblob", "longblob"):
        kw["flen"] = args[0]
    elif args:
        raise ValueError(f"unexpected arguments for {base.upper()}: {text!r}")
    binary_attr = False
    words_rest = [v for k, v in rest if k == "word"]
    if len(words_rest) != len(rest):
        raise ValueError(f"unexpected argument list in {text!r}")
    i = 0
    while i < len(words_rest):
        w = words_rest[i]
        if w == "UNSIGNED" or w == "ZEROFILL":
            kw["unsigned"] = True
        elif w == "SIGNED":
            pass
        elif w == "BINARY":
            binary_attr = True
        elif w == "ASCII":
            kw["charset"] = "latin1"
        elif w in ("CHARACTER", "CHAR") and i + 2 < len(words_rest) and words_rest[i + 1] == "SET":
            kw["charset"] = words_rest[i + 2].lower()
            i += 2
        elif w == "CHARSET" and i + 1 < len(words_rest):
            kw["charset"] = words_rest[i + 1].lower()
            i += 1
        elif w == "COLLATE" and i + 1 < len(words_rest):
            kw["collate"] = words_rest[i + 1].lower()
            i += 1
        else:
            raise ValueError(f"unsupported attribute {w!r} in {text!r}")
        i += 1
    if "charset" in kw:
        kw["charset"] = charset_info(kw["charset"]).name
    if "collate" in kw:
        kw["collate"] = collation_info(kw["collate"]).name
    stringy = base in STRING_TYPES or base in ("enum", "set")
    if not stringy and ("charset" in kw or "collate" in kw or binary_attr):
        if base in BINARY_TYPES and kw.get("charset", "binary") == "binary" and kw.get("collate", "binary") == "binary":
            kw.pop("charset", None)
            kw.pop("collate", None)
        else:
            raise ValueError(f"{base.upper()} takes no charset or collation: {text!r}")
    if stringy and kw.get("charset") == "binary":  # CHAR(n) CHARACTER SET binary is BINARY(n), ...
        kw.pop("charset")
        kw.pop("collate", None)
        base = {"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob", "text": "blob",
                "mediumtext": "mediumblob", "longtext": "longblob"}.get(base, base)
        if base in ("enum", "set"):
            raise ValueError(f"{base.upper()} cannot have charset binary")
    elif stringy and binary_attr and "collate" not in kw:
        cs = kw.get("charset", "utf8mb4")
        kw["collate"] = charset_info(cs).default_collation  # every catalogued default is the _bin one
    if base in ("text", "blob") and len(args) == 1:
        size = args[0]
        per = charset_info(kw.get("charset", "utf8mb4")).maxlen if base == "text" else 1
        family = _TEXT_BY_SIZE if base == "text" else _BLOB_BY_SIZE
        base = next(f for f in family if _BLOB_FLEN[f] >= size * per)
    if kw.get("unsigned") and base not in INTEGER_TYPES + FLOAT_TYPES + DECIMAL_TYPES:
        raise ValueError(f"{base.upper()} cannot be UNSIGNED")
    return TiDBType(base, **kw)


# --- the full matrix -----------------------------------------------------------------------
# ENUM/SET members that stress quoting, separators and encodings (no trailing spaces: TiDB strips
# them from member definitions; no ',' in SET members: TiDB forbids it).
HARD_ENUM_MEMBERS = ("", "plain", "with,comma", "it's", 'say "hi"', " leading space", "inner  space",
                     "back\\slash", "ünïcødé", "日本語", "😀 emoji", "UPPER", "upper")
HARD_SET_MEMBERS = ("plain", "it's", 'say "hi"', " leading", "x y", "ünï", "中文", "😀", "a", "A")


def all_types_matrix() -> list[TiDBType]:
    """One declaration per interesting type variant: both signs of every integer, BOOL, FLOAT/DOUBLE
    (and UNSIGNED), DECIMAL from (1,0) to (65,30), every string and binary type with lengths at the
    edges and the catalogued collations, temporal types at every fsp 0..6, YEAR, ENUM/SET with hard
    members, BIT(1)/(5)/(64) and JSON."""
    out: list[TiDBType] = []
    for base in INTEGER_TYPES:
        out += [TiDBType(base), TiDBType(base, unsigned=True)]
    out += [TiDBType.bool_()]
    out += [TiDBType("float"), TiDBType("float", unsigned=True), TiDBType("double"),
            TiDBType("double", unsigned=True)]
    for m, d in ((1, 0), (1, 1), (2, 1), (5, 2), (10, 0), (10, 4), (12, 12), (18, 9), (19, 0), (20, 0),
                 (20, 6), (27, 9), (30, 30), (38, 10), (40, 20), (65, 0), (65, 30)):
        out.append(decimal(m, d))
    out.append(TiDBType("decimal", unsigned=True, flen=10, decimal=2))
    out += [TiDBType("char", flen=n) for n in (0, 1, 16, 255)]
    out += [varchar(n) for n in (1, 16, 255, 16383)]
    for coll in ("utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8_bin", "latin1_bin", "ascii_bin", "gbk_bin"):
        cs = COLLATIONS[coll].charset
        out.append(TiDBType("varchar", flen=32, charset=cs, collate=coll))
    out.append(TiDBType("char", flen=8, charset="gbk", collate="gbk_bin"))
    out += [TiDBType(b) for b in ("tinytext", "text", "mediumtext", "longtext")]
    out += [TiDBType("binary", flen=n) for n in (1, 16, 255)]
    out += [TiDBType("varbinary", flen=n) for n in (1, 255, 1024)]
    out += [TiDBType(b) for b in ("tinyblob", "blob", "mediumblob", "longblob")]
    out.append(TiDBType("date"))
    for base in ("datetime", "timestamp", "time"):
        out += [TiDBType(base, decimal=fsp) for fsp in range(MAX_FSP + 1)]
    out.append(TiDBType("year"))
    out += [TiDBType("enum", elements=("a", "b", "c")), TiDBType("enum", elements=("only",)),
            TiDBType("enum", elements=HARD_ENUM_MEMBERS)]
    out += [TiDBType("set", elements=("a", "b", "c")), TiDBType("set", elements=HARD_SET_MEMBERS),
            TiDBType("set", elements=tuple(f"m{i}" for i in range(SET_MAX_MEMBERS)))]
    out += [TiDBType("bit", flen=n) for n in (1, 5, 8, 63, 64)]
    out.append(TiDBType("json"))
    return out
