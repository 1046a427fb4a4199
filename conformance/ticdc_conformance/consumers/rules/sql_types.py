"""A column type as a DDL spells it, read into the contract's `TiDBType`: the consumer's own reader
of the SQL type names TiDB accepts (synonyms such as INT1/BOOL/DEC, TEXT(n)/BLOB(n) sizing, CHARSET
and COLLATE clauses, ENUM/SET member quoting), written by hand because no library reads TiDB's
column-type grammar."""
from __future__ import annotations

import re as _re

from ticdc_contract.tidb_types import (
    BINARY_TYPES,
    DECIMAL_TYPES,
    FLOAT_TYPES,
    INTEGER_TYPES,
    STRING_TYPES,
    TiDBType,
    charset_info,
    collation_info,
)
from ticdc_contract.type_catalogue import BLOB_BYTE_LIMITS

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
        base = next(f for f in family if BLOB_BYTE_LIMITS[f] >= size * per)
    if kw.get("unsigned") and base not in INTEGER_TYPES + FLOAT_TYPES + DECIMAL_TYPES:
        raise ValueError(f"{base.upper()} cannot be UNSIGNED")
    return TiDBType(base, **kw)
