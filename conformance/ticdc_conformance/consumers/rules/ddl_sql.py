"""Reading the parts of a DDL statement that decide what it does to rows.

Every protocol carries a DDL's query text (Open Protocol `q`, Canal-JSON `sql`, Debezium `ddl`,
Simple `sql`), and for Open Protocol and Canal-JSON it is the only description of the change:
which table was renamed to what, which partition was dropped and which values it held, what value
an added column gives the rows that exist already. This module tokenizes MySQL/TiDB DDL and reads
those parts; `ddl_semantics` turns them into effects on tables. It reads no more than it needs:
index, comment and option clauses are skipped as a whole.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

from ticdc_conformance.consumers.rules.sql_types import parse_sql_type
from ticdc_contract.tidb_types import TiDBType

_TOKEN = re.compile(
    r"""(?P<skip>\s+|/\*.*?\*/|(?:--[ \t]|\#)[^\n]*)
    |`(?P<ident>(?:[^`]|``)*)`
    |[xX]'(?P<hexstr>[0-9a-fA-F]*)'|0x(?P<hexnum>[0-9a-fA-F]+)
    |[bB]'(?P<bitstr>[01]*)'|0b(?P<bitnum>[01]+)
    |(?P<quote>['"])(?P<text>(?:\\.|''|""|(?!(?P=quote)).)*)(?P=quote)
    |(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<word>[A-Za-z_$\u0080-\U0010ffff][A-Za-z0-9_$\u0080-\U0010ffff]*)
    |(?P<punct>.)""",
    re.S | re.X,
)
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


class DDLSyntaxError(ValueError):
    """A DDL statement this reader cannot follow."""


@dataclass(frozen=True)
class Tok:
    kind: str  # ident | str | bytes | bits | num | word | punct
    value: Any  # identifier name, unescaped string, bytes, int, raw number text, upper-cased word, char
    start: int
    end: int

    def is_kw(self, *words: str) -> bool:
        return self.kind == "word" and self.value in words

    def is_punct(self, ch: str) -> bool:
        return self.kind == "punct" and self.value == ch


# A backslash escape, or the enclosing quote doubled (MySQL string literals).
_UNESCAPE = {q: re.compile(r"\\(.)|" + q + q, re.S) for q in ("'", '"')}


def _unescape(body: str, quote: str) -> str:
    return _UNESCAPE[quote].sub(lambda m: quote if m.group(1) is None else _ESCAPES.get(m.group(1), m.group(1)), body)


def tokenize(sql: str) -> list[Tok]:
    toks: list[Tok] = []
    for m in _TOKEN.finditer(sql):
        g = m.lastgroup
        if m.group("skip") is not None:
            continue
        s, e = m.start(), m.end()
        if m.group("ident") is not None:
            toks.append(Tok("ident", m.group("ident").replace("``", "`"), s, e))
        elif m.group("hexstr") is not None or m.group("hexnum") is not None:
            toks.append(Tok("bytes", bytes.fromhex(m.group("hexstr") or m.group("hexnum")), s, e))
        elif m.group("bitstr") is not None or m.group("bitnum") is not None:
            toks.append(Tok("bits", int(m.group("bitstr") or m.group("bitnum") or "0", 2), s, e))
        elif m.group("quote") is not None:
            toks.append(Tok("str", _unescape(m.group("text"), m.group("quote")), s, e))
        elif g == "num":
            toks.append(Tok("num", m.group("num"), s, e))
        elif g == "word":
            toks.append(Tok("word", m.group("word").upper(), s, e))
        else:
            toks.append(Tok("punct", m.group("punct"), s, e))
    return toks


class Cursor:
    """A position in a token list with the few moves a DDL reader needs."""

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.toks = tokenize(sql)
        self.i = 0

    def done(self) -> bool:
        return self.i >= len(self.toks) or self.peek().is_punct(";")

    def peek(self, ahead: int = 0) -> Tok:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else Tok("end", None, len(self.sql), len(self.sql))

    def take(self) -> Tok:
        t = self.peek()
        self.i += 1
        return t

    def take_kw(self, *words: str) -> Optional[str]:
        if self.peek().is_kw(*words):
            return self.take().value
        return None

    def take_punct(self, ch: str) -> bool:
        if self.peek().is_punct(ch):
            self.i += 1
            return True
        return False

    def expect_kw(self, *words: str) -> str:
        got = self.take_kw(*words)
        if got is None:
            raise DDLSyntaxError(f"expected {' or '.join(words)} at {self.where()}")
        return got

    def expect_punct(self, ch: str) -> None:
        if not self.take_punct(ch):
            raise DDLSyntaxError(f"expected {ch!r} at {self.where()}")

    def where(self) -> str:
        t = self.peek()
        return f"offset {t.start} ({self.sql[t.start:t.start + 24]!r})"

    def name(self) -> str:
        t = self.take()
        if t.kind in ("ident", "str") or t.kind == "word":
            return t.value if t.kind != "word" else self.sql[t.start:t.end]
        raise DDLSyntaxError(f"expected a name at offset {t.start}")

    def qualified(self, default_schema: str) -> tuple[str, str]:
        first = self.name()
        if self.take_punct("."):
            return first, self.name()
        return default_schema, first

    def skip_if_exists(self) -> None:
        if self.peek().is_kw("IF"):
            self.take()
            self.take_kw("NOT")
            self.expect_kw("EXISTS")

    def group(self) -> tuple[int, int]:
        """Consumes a parenthesised group; returns the token range inside it."""
        self.expect_punct("(")
        start, depth = self.i, 1
        while self.i < len(self.toks):
            t = self.take()
            if t.is_punct("("):
                depth += 1
            elif t.is_punct(")"):
                depth -= 1
                if depth == 0:
                    return start, self.i - 1
        raise DDLSyntaxError(f"unclosed '(' in {self.sql!r}")

    def sub(self, start: int, end: int) -> "Cursor":
        c = Cursor.__new__(Cursor)
        c.sql, c.toks, c.i = self.sql, self.toks[start:end], 0
        return c

    def skip_item(self) -> None:
        """Skips to the next comma outside parentheses (or the end)."""
        depth = 0
        while not self.done():
            t = self.peek()
            if depth == 0 and t.is_punct(","):
                return
            if t.is_punct("("):
                depth += 1
            elif t.is_punct(")"):
                depth -= 1
            self.i += 1

    def item(self) -> "Cursor":
        """The rest of the current comma-separated item as its own cursor; this one moves past it."""
        start = self.i
        self.skip_item()
        return self.sub(start, self.i)

    def items(self) -> list["Cursor"]:
        """The comma-separated items of the rest, each as its own cursor."""
        out = []
        while not self.done():
            start = self.i
            self.skip_item()
            out.append(self.sub(start, self.i))
            self.take_punct(",")
        return out


# --- column definitions ------------------------------------------------------------------------
# Words that end a column's type and start its attributes.
_ATTRIBUTES = ("NOT", "NULL", "DEFAULT", "AS", "GENERATED", "COMMENT", "AUTO_INCREMENT", "AUTO_RANDOM",
               "PRIMARY", "UNIQUE", "KEY", "FIRST", "AFTER", "ON", "CHECK", "REFERENCES", "STORAGE",
               "COLUMN_FORMAT", "CONSTRAINT", "SERIAL", "INVISIBLE", "VISIBLE")
_NOW = ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP", "CURRENT_DATE", "CURDATE", "UTC_TIMESTAMP")


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: Optional[TiDBType]  # None: a type this reader does not know
    nullable: bool
    default: Optional[Tok]  # the DEFAULT literal (with a leading '-' folded into a num token)
    has_default: bool
    virtual: bool  # a VIRTUAL generated column: TiCDC never sends its values
    first: bool = False
    after: Optional[str] = None


def column_def(c: Cursor) -> ColumnDef:
    """`name type [attributes] [FIRST | AFTER col]` (the cursor covers one definition)."""
    name = c.name()
    type_start = type_end = c.peek().start
    depth = 0
    while not c.done():
        t = c.peek()
        if depth == 0 and t.kind == "word" and t.value in _ATTRIBUTES:
            break
        if t.is_punct("("):
            depth += 1
        elif t.is_punct(")"):
            depth -= 1
        type_end = c.take().end
    type_text = c.sql[type_start:type_end]
    try:
        ctype: Optional[TiDBType] = parse_sql_type(type_text)
    except ValueError:
        ctype = None
    nullable, default, has_default, virtual, first, after = True, None, False, False, False, None
    while not c.done():
        t = c.take()
        if t.is_kw("NOT") and c.take_kw("NULL"):
            nullable = False
        elif t.is_kw("PRIMARY"):
            nullable = False
        elif t.is_kw("DEFAULT"):
            has_default, default = True, _default_literal(c)
        elif t.is_kw("AS") or t.is_kw("GENERATED"):
            if t.is_kw("GENERATED"):
                c.take_kw("ALWAYS")
                c.expect_kw("AS")
            c.group()
            virtual = c.take_kw("STORED", "PERSISTENT") is None
        elif t.is_kw("FIRST"):
            first = True
        elif t.is_kw("AFTER"):
            after = c.name()
        elif t.is_punct("("):
            c.i -= 1
            c.group()
    return ColumnDef(name, ctype, nullable, default, has_default, virtual, first, after)


def _default_literal(c: Cursor) -> Optional[Tok]:
    if c.peek().is_punct("("):
        s, e = c.group()
        inner = c.sub(s, e)
        return _default_literal(inner)
    t = c.take()
    if t.is_punct("-") or t.is_punct("+"):
        n = c.take()
        if n.kind != "num":
            return None
        return Tok("num", ("-" if t.value == "-" else "") + n.value, t.start, n.end)
    if t.kind == "word" and t.value in _NOW:
        if c.peek().is_punct("("):
            c.group()
        return Tok("now", t.value, t.start, t.end)
    if t.kind == "word" and t.value not in ("NULL", "TRUE", "FALSE"):
        return None  # an expression default: its value is not in the statement
    return t


# --- literal values in the canonical form ------------------------------------------------------
class UnknownValue(ValueError):
    """A literal whose stored value cannot be told from the statement (e.g. DEFAULT NOW())."""


def _zero(t: TiDBType) -> Any:
    """TiDB's zero value, which a NOT NULL column added without DEFAULT gives existing rows."""
    b = t.base
    if t.is_integer or b in ("year", "bit"):
        return 0
    if b in ("float", "double"):
        return 0.0
    if b == "decimal":
        return _decimal_text(Decimal(0), t.scale)
    if t.is_binary:
        return base64.b64encode(b"\0" * (t.effective_flen if b == "binary" else 0)).decode()
    if b == "enum":
        return t.elements[0] if t.elements else ""
    if b == "date":
        return "0000-00-00"
    if b in ("datetime", "timestamp"):
        return "0000-00-00 00:00:00" + ("." + "0" * t.fsp if t.fsp else "")
    if b == "time":
        return "00:00:00" + ("." + "0" * t.fsp if t.fsp else "")
    if b == "json":
        return "null"
    return ""


def _decimal_text(d: Decimal, scale: int) -> str:
    return f"{d.quantize(Decimal(1).scaleb(-scale)) if scale else d.quantize(Decimal(1)):f}"


def _temporal(t: TiDBType, text: str) -> str:
    if t.base == "date" or not t.fsp:
        head, _, frac = text.partition(".")
        if frac.strip("0"):
            raise UnknownValue(f"{text!r} has more fraction digits than {t.sql()} keeps")
        return head
    head, _, frac = text.partition(".")
    if len(frac) > t.fsp and frac[t.fsp:].strip("0"):
        raise UnknownValue(f"{text!r} has more fraction digits than {t.sql()} keeps")
    return f"{head}.{(frac + '0' * t.fsp)[:t.fsp]}"


def canonical_literal(t: Optional[TiDBType], lit: Optional[Tok], nullable: bool, has_default: bool) -> Any:
    """The canonical JSON value (docs/architecture.md "Canonical values") a column definition gives
    rows that exist when it is added: its DEFAULT, NULL, or the type's zero value."""
    if not has_default:
        if nullable:
            return None
        if t is None:
            raise UnknownValue("NOT NULL column of an unknown type without DEFAULT")
        return _zero(t)
    if lit is None or lit.kind == "now":
        raise UnknownValue("the DEFAULT is an expression whose value the statement does not hold")
    if lit.is_kw("NULL"):
        return None
    if t is None:
        raise UnknownValue("a DEFAULT for a column of an unknown type")
    raw: Any = lit.value
    if lit.is_kw("TRUE", "FALSE"):
        raw = "1" if lit.value == "TRUE" else "0"
    b = t.base
    try:
        if t.is_binary:
            data = raw if isinstance(raw, bytes) else str(raw).encode()
            if b == "binary":
                data = data.ljust(t.effective_flen, b"\0")
            return base64.b64encode(data).decode()
        if isinstance(raw, bytes):
            raw = int.from_bytes(raw, "big") if (t.is_integer or b == "bit") else raw.decode("utf-8", "replace")
        if t.is_integer or b in ("year", "bit"):
            return int(Decimal(str(raw)).to_integral_value()) if not isinstance(raw, int) else raw
        if b in ("float", "double"):
            return float(raw)
        if b == "decimal":
            return _decimal_text(Decimal(str(raw)), t.scale)
        if b in ("date", "datetime", "timestamp", "time"):
            return _temporal(t, str(raw))
    except (InvalidOperation, ValueError) as e:
        if isinstance(e, UnknownValue):
            raise
        raise UnknownValue(f"DEFAULT {raw!r} is not a {t.sql()} value") from None
    return str(raw)
