"""The column definitions written in a DDL statement, as TiCDC's parseColumns sees them.

TiCDC pkg/sink/codec/debezium/helper.go re-parses the DDL query and, for each column definition
it contains: blanks the column comment, and for DATETIME/TIME/TIMESTAMP/YEAR columns takes the
fsp (or YEAR's width) and the DEFAULT literal from the statement text instead of from TiDB's
column info. So a DDL's tableChanges depends on how the statement was spelled ("DATETIME" gives
an unspecified fsp, "DATETIME(0)" gives 0). This scanner covers the statements that carry
column definitions: CREATE TABLE and ALTER TABLE ADD/MODIFY/CHANGE COLUMN.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..golang.floats import format_float_g

_TOKEN = re.compile(
    r"""\s+|/\*.*?\*/|(?:--\s|\#)[^\n]*
    |(?P<bq>`(?:[^`]|``)*`)
    |(?P<sq>'(?:[^'\\]|\\.|'')*')
    |(?P<dq>"(?:[^"\\]|\\.|"")*")
    |(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    |(?P<word>[A-Za-z_0-9$\u0080-\uffff]+)
    |(?P<punct>.)""",
    re.S | re.X,
)
_SQL_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_NOW = ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP")
_NOT_COLUMN = ("PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL")


@dataclass(frozen=True)
class Tok:
    kind: str  # ident | str | num | word | punct
    text: str  # identifier name / unescaped string / raw text

    def kw(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type_name: str  # upper-case type keyword as written
    length: Optional[int]  # first (n) argument, None when not written (the parser's -1)
    # The DEFAULT as TiCDC's extractValue renders it: "<nil>" for NULL, the function name for
    # CURRENT_TIMESTAMP and friends, fmt "%v" of a literal; None when there is no DEFAULT or it
    # is an expression extractValue does not read (e.g. a negative number).
    default: Optional[str]


def _unquote_sql_string(raw: str) -> str:
    body = raw[1:-1]
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_SQL_ESCAPES.get(nxt, nxt))
            i += 2
        elif ch == raw[0] and i + 1 < len(body) and body[i + 1] == raw[0]:
            out.append(ch)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize(sql: str) -> list[Tok]:
    toks = []
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind is None:
            continue
        text = m.group(kind)
        if kind == "bq":
            toks.append(Tok("ident", text[1:-1].replace("``", "`")))
        elif kind in ("sq", "dq"):
            toks.append(Tok("str", _unquote_sql_string(text)))
        else:
            toks.append(Tok(kind, text))
    return toks


def _split_top(toks: list[Tok]) -> list[list[Tok]]:
    """Split on commas outside parentheses."""
    parts, cur, depth = [], [], 0
    for t in toks:
        if t.kind == "punct" and t.text == "(":
            depth += 1
        elif t.kind == "punct" and t.text == ")":
            depth -= 1
        if depth == 0 and t.kind == "punct" and t.text == ",":
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def _paren_body(toks: list[Tok], start: int) -> tuple[list[Tok], int]:
    """Tokens inside the parentheses opening at toks[start]; the index after the closing one."""
    depth = 0
    for i in range(start, len(toks)):
        t = toks[i]
        if t.kind == "punct" and t.text == "(":
            depth += 1
        elif t.kind == "punct" and t.text == ")":
            depth -= 1
            if depth == 0:
                return toks[start + 1:i], i + 1
    return toks[start + 1:], len(toks)


def _name(t: Tok) -> Optional[str]:
    return t.text if t.kind in ("ident", "word") else None


def _literal_default(toks: list[Tok], i: int) -> Optional[str]:
    if i >= len(toks):
        return None
    t = toks[i]
    if t.kind == "str":
        return t.text
    if t.kind == "num":
        if re.fullmatch(r"\d+", t.text):
            return str(int(t.text))
        if re.search(r"[eE]", t.text):
            # A float literal: extractValue prints the float64 with Go's %v.
            return format_float_g(float(t.text))
        return t.text  # a decimal literal keeps its digits
    if t.kw("NULL"):
        return "<nil>"
    if t.kw("TRUE"):
        return "1"
    if t.kw("FALSE"):
        return "0"
    if t.kind == "word" and t.text.upper() in _NOW:
        return "CURRENT_TIMESTAMP"
    return None


def _column_def(toks: list[Tok]) -> Optional[ColumnDef]:
    if len(toks) < 2:
        return None
    name = _name(toks[0])
    if name is None or toks[1].kind != "word":
        return None
    type_name = toks[1].text.upper()
    i = 2
    length = None
    if i < len(toks) and toks[i].kind == "punct" and toks[i].text == "(":
        body, i = _paren_body(toks, i)
        if body and body[0].kind == "num" and body[0].text.isdigit():
            length = int(body[0].text)
    default = None
    while i < len(toks):
        if toks[i].kw("DEFAULT"):
            default = _literal_default(toks, i + 1)
            break
        i += 1
    return ColumnDef(name, type_name, length, default)


def _create_table_defs(toks: list[Tok]) -> list[ColumnDef]:
    for i, t in enumerate(toks):
        if t.kind == "punct" and t.text == "(":
            body, _ = _paren_body(toks, i)
            defs = []
            for item in _split_top(body):
                if not item or item[0].kw(*_NOT_COLUMN):
                    continue
                d = _column_def(item)
                if d is not None:
                    defs.append(d)
            return defs
    return []


def _alter_table_defs(toks: list[Tok]) -> list[ColumnDef]:
    # ALTER TABLE <name> spec, spec, ...: the table name is one or three tokens (db . t).
    i = 2
    if i + 2 < len(toks) and toks[i + 1].kind == "punct" and toks[i + 1].text == ".":
        i += 3
    else:
        i += 1
    defs = []
    for spec in _split_top(toks[i:]):
        if not spec:
            continue
        head = spec[0]
        rest = spec[1:]
        if head.kw("ADD"):
            if rest and rest[0].kw("COLUMN"):
                rest = rest[1:]
            elif rest and rest[0].kw(*_NOT_COLUMN, "PARTITION"):
                continue
            if rest[:3] and rest[0].kw("IF"):
                rest = rest[3:]
            if rest and rest[0].kind == "punct" and rest[0].text == "(":
                body, _ = _paren_body(rest, 0)
                defs.extend(d for d in (_column_def(x) for x in _split_top(body)) if d)
                continue
            d = _column_def(rest)
        elif head.kw("MODIFY"):
            if rest and rest[0].kw("COLUMN"):
                rest = rest[1:]
            if rest[:2] and rest[0].kw("IF"):
                rest = rest[2:]
            d = _column_def(rest)
        elif head.kw("CHANGE"):
            if rest and rest[0].kw("COLUMN"):
                rest = rest[1:]
            if rest[:2] and rest[0].kw("IF"):
                rest = rest[2:]
            d = _column_def(rest[1:])
        else:
            continue
        if d is not None:
            defs.append(d)
    return defs


def column_defs(query: str) -> dict[str, ColumnDef]:
    """Column definitions of a single CREATE TABLE / ALTER TABLE statement, by exact name
    (TiCDC matches them to columns by the name as written). Anything else has none."""
    toks = tokenize(query)
    if toks and toks[-1].kind == "punct" and toks[-1].text == ";":
        toks = toks[:-1]
    if len(toks) < 3:
        return {}
    if toks[0].kw("CREATE"):
        j = 1
        while j < len(toks) and toks[j].kw("TEMPORARY", "GLOBAL", "LOCAL"):
            j += 1
        if j < len(toks) and toks[j].kw("TABLE"):
            defs = _create_table_defs(toks)
        else:
            return {}
    elif toks[0].kw("ALTER") and toks[1].kw("TABLE"):
        defs = _alter_table_defs(toks)
    else:
        return {}
    return {d.name: d for d in defs}
