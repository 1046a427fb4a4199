"""TiDB's type catalogue: the limits of each type, the character sets and collations TiDB knows,
the check that a declaration is one TiDB accepts, and the full type matrix (one declaration per
interesting variant) that value domains and the fidelity matrix are held against. The character
sets and collations a type carries are part of the type (`tidb_types`)."""
from __future__ import annotations

from ticdc_contract.tidb_types import (
    _BLOB_FLEN,
    _INT_RANGES,
    COLLATIONS,
    INTEGER_TYPES,
    TiDBType,
    _charset_for,
    charset_info,
    collation_info,
    decimal,
    type_collation,
    varchar,
)

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
            charset = charset_info(_charset_for(t))
            assert charset.codec is not None  # only the binary charset has none, refused above
            try:
                e.encode(charset.codec)
            except UnicodeEncodeError:
                raise ValueError(f"{b.upper()} member {e!r} not representable in {charset.name}") from None


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
