"""The column definitions a DDL statement states, read the way TiDB records them.

TiCDC builds a Debezium DDL event's `tableChanges[].table.columns[]` from TiDB's column info, which
TiDB built from the statement; for the columns the statement defines it also re-parses the query
(TiCDC pkg/sink/codec/debezium/helper.go parseColumns: every ColumnDef node of the statement, matched
to a column by its exact name). So for those columns the statement alone says what charsetName,
enumValues and, for the temporal types, defaultValueExpression must be. This module reads, per
column definition of a CREATE TABLE or of an ALTER TABLE's ADD/MODIFY/CHANGE COLUMN:
- the charset stated on the column (CHARACTER SET/CHARSET, or implied by the type name, e.g. NCHAR)
  and the collation (COLLATE, before or after the other attributes);
- the ENUM/SET members as TiDB stores them: string literals unescaped, a backslash escaping the next
  character (MySQL string literal rules, TiDB's default sql_mode), trailing spaces dropped;
- the DEFAULT literal (ddl_sql.column_def);
and a CREATE TABLE's own table charset option, which columns stating none inherit.
Statements it cannot follow state no columns: the checks then judge nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ticdc_conformance.consumers.rules.ddl_sql import Cursor, DDLSyntaxError, Tok, column_def
from ticdc_contract.tidb_types import TiDBType, charset_info, collation_info

# Items of CREATE TABLE's list and ADD specifications that define no column.
_NOT_COLUMN = ("PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL",
               "CLUSTERED", "PARTITION")


@dataclass(frozen=True)
class StatedColumn:
    name: str
    type: Optional[TiDBType]  # None: a type (or type attribute) the reader does not know
    charset: Optional[str]  # the charset the definition states, canonical name; None when it states none
    collate_charset: Optional[str]  # the charset of the COLLATE it states; None when it states none
    unknown_charset: bool  # it states a charset or collation the catalogue does not know
    elements: Optional[tuple[str, ...]]  # ENUM/SET members as TiDB stores them; None for other types
    default: Optional[Tok]  # ddl_sql.column_def's DEFAULT literal
    has_default: bool


@dataclass(frozen=True)
class StatedColumns:
    columns: dict[str, StatedColumn] = field(default_factory=dict)  # by exact name, as TiCDC matches them
    table_charset: Optional[str] = None  # a CREATE TABLE's DEFAULT CHARSET / COLLATE option


def stated_columns(query: str) -> StatedColumns:
    """The column definitions of one CREATE TABLE / ALTER TABLE statement; none for anything else."""
    try:
        c = Cursor(query)
        verb = c.take_kw("CREATE", "ALTER")
        if verb == "CREATE":
            c.take_kw("TEMPORARY", "GLOBAL", "LOCAL")
            c.take_kw("TEMPORARY")
            if not c.take_kw("TABLE"):
                return StatedColumns()
            c.skip_if_exists()
            c.qualified("")
            return _create_table(c)
        if verb == "ALTER":
            c.take_kw("ONLINE", "OFFLINE")
            c.take_kw("IGNORE")
            if not c.take_kw("TABLE"):
                return StatedColumns()
            c.qualified("")
            return StatedColumns(_by_name(d for spec in c.items() for d in _alter_spec(spec)))
    except DDLSyntaxError:
        pass
    return StatedColumns()


def _by_name(defs) -> dict[str, StatedColumn]:
    return {d.name: d for d in defs}


def _create_table(c: Cursor) -> StatedColumns:
    if c.peek().is_kw("LIKE") or not c.peek().is_punct("("):
        return StatedColumns()
    s, e = c.group()
    defs = [_column(item) for item in c.sub(s, e).items() if not item.peek().is_kw(*_NOT_COLUMN)]
    return StatedColumns(_by_name(defs), _table_charset(c))


def _table_charset(c: Cursor) -> Optional[str]:
    """[DEFAULT] CHARACTER SET|CHARSET [=] cs and [DEFAULT] COLLATE [=] coll among the table options;
    a stated charset wins over the collation's (TiDB refuses a pair that disagrees)."""
    charset = collate = None
    while not c.done() and not c.peek().is_kw("PARTITION"):
        t = c.take()
        if t.is_kw("CHARACTER") and c.take_kw("SET") or t.is_kw("CHARSET"):
            c.take_punct("=")
            charset = _charset_name(_word(c))
        elif t.is_kw("COLLATE"):
            c.take_punct("=")
            collate = _collation_charset(_word(c))
    return charset or collate


def _alter_spec(c: Cursor) -> list[StatedColumn]:
    w = c.take_kw("ADD", "MODIFY", "CHANGE")
    if w is None:
        return []
    c.take_kw("COLUMN")
    if w == "ADD":
        if c.peek().is_kw(*_NOT_COLUMN):
            return []
        if c.peek().is_punct("("):
            s, e = c.group()
            return [_column(item) for item in c.sub(s, e).items()]
    c.skip_if_exists()
    if w == "CHANGE":
        c.name()  # the old name; the definition that follows names the column
    return [_column(c.item())]


def _column(item: Cursor) -> StatedColumn:
    toks = item.toks[item.i:]
    charset, collate, unknown = _stated_charset(toks)
    col = column_def(item)
    if charset is None and not unknown and col.type is not None and col.type.charset is not None:
        charset = col.type.charset  # implied by the type's name or an ASCII attribute (NCHAR, ...)
    return StatedColumn(col.name, col.type, charset, collate, unknown, _elements(toks), col.default,
                        col.has_default)


def _stated_charset(toks: list[Tok]) -> tuple[Optional[str], Optional[str], bool]:
    """(charset, collation's charset, unknown) stated anywhere in a definition outside parentheses."""
    charset = collate = None
    unknown = False
    depth = 0
    for i, t in enumerate(toks):
        if t.is_punct("("):
            depth += 1
        elif t.is_punct(")"):
            depth -= 1
        if depth:
            continue
        if t.is_kw("CHARSET") or (t.is_kw("CHARACTER") and i + 1 < len(toks) and toks[i + 1].is_kw("SET")):
            charset = _charset_name(_tok_name(toks, i + (1 if t.is_kw("CHARSET") else 2)))
            unknown = unknown or charset is None
        elif t.is_kw("COLLATE"):
            collate = _collation_charset(_tok_name(toks, i + 1))
            unknown = unknown or collate is None
    return charset, collate, unknown


def _elements(toks: list[Tok]) -> Optional[tuple[str, ...]]:
    """ENUM/SET members when the definition's type is one and every member is a string literal.
    TiDB drops a member's trailing spaces (MySQL: "trailing spaces are automatically deleted")."""
    if len(toks) < 3 or not toks[1].is_kw("ENUM", "SET") or not toks[2].is_punct("("):
        return None
    out = []
    for t in toks[3:]:
        if t.is_punct(")"):
            return tuple(out)
        if t.kind == "str":
            out.append(t.value.rstrip(" "))
        elif not t.is_punct(","):
            return None
    return None


def _tok_name(toks: list[Tok], i: int) -> Optional[str]:
    if i < len(toks) and toks[i].is_punct("="):
        i += 1
    if i >= len(toks):
        return None
    t = toks[i]
    return str(t.value).lower() if t.kind in ("word", "ident", "str") else None


def _word(c: Cursor) -> Optional[str]:
    t = c.take()
    return str(t.value).lower() if t.kind in ("word", "ident", "str") else None


def _charset_name(name: Optional[str]) -> Optional[str]:
    try:
        return charset_info(name).name if name else None
    except ValueError:
        return None


def _collation_charset(name: Optional[str]) -> Optional[str]:
    try:
        return collation_info(name).charset if name else None
    except ValueError:
        return None
