"""A Debezium DDL event's column metadata held against the statement it reports (spec 000, "Data type
mapping", the differences from Debezium's own connector).

For each column the DDL statement defines (lint/ddl_columns.py, handed down as the LintContext's
`stated_columns`: SQL is read above the protocol layer), `tableChanges[].table.columns[]` must say
what TiDB recorded from that definition, as TiCDC writes it (TiCDC pkg/sink/codec/debezium/codec.go
EncodeDDLEvent, helper.go getCharset and parseColumns):
- DBZ-TYPEMAP-9 `charsetName`: null for every type but the character types, ENUM and SET; for those
  the charset the definition states, else its COLLATE's charset (utf8_unicode_ci gives utf8: TiCDC
  does not rewrite it to utf8mb4 as Debezium does), else a CREATE TABLE's table charset. A column
  stating none in a statement that states no table charset takes the database's, which the statement
  does not hold: not judged.
- DBZ-TYPEMAP-10 `enumValues`: each ENUM/SET member quoted as '<member>', the member as TiDB stores
  it, a backslash in the literal having escaped the next character: ('c,\\'d', 'g,''h') gives
  'c,'d' and 'g,'h'.
- DBZ-TYPEMAP-11 `defaultValueExpression` of DATE, DATETIME, TIMESTAMP and TIME columns. DATETIME,
  TIMESTAMP and TIME take the statement's DEFAULT literal as written (parseColumns re-reads it; NOW()
  and its synonyms become "1970-01-01 00:00:00", NULL null); a DATE keeps the date TiDB stores, so
  '1000-00-00 01:00:00.000' becomes "1000-00-00" (the spec's example, which TiCDC's own integration
  test tests/integration_tests/debezium02/sql/default_value_all_zero_time.sql makes on a DATE
  column). No DEFAULT gives null. A default the statement does not hold as a literal (an expression,
  a negative number, CURRENT_DATE) is not judged.
Columns the statement does not define (an ADD INDEX's table, say) come from TiDB's column info alone
and are not judged here. The checks run on every Debezium DDL message.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ...rules import checks_rules
from ..common.lint import Problem, StatedColumnsReader

# A column definition as lint/ddl_columns.py states it (StatedColumn: name, type, charset,
# collate_charset, unknown_charset, elements, default, has_default) and the DEFAULT literal it holds
# (consumers/rules/ddl_sql.py Tok: kind, value, is_kw).
StatedColumn = Any
Tok = Any

_CHARACTER = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set")
_TEMPORAL = ("date", "datetime", "timestamp", "time")
# extractValue renders these function defaults by their name, and codec.go writes the name
# CURRENT_TIMESTAMP as Debezium's epoch (the TiDB parser names NOW() and its synonyms so).
_NOW = ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP")
_EPOCH = "1970-01-01 00:00:00"
_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T].*)?", re.S)
_UNJUDGED = object()


def expected_charset(col: StatedColumn, table_charset: Optional[str]) -> Any:
    """charsetName TiCDC writes for the definition, or _UNJUDGED."""
    if col.type is None or col.unknown_charset:
        return _UNJUDGED
    if col.type.base not in _CHARACTER:
        return None  # getCharset: binary types, numbers, temporal types, JSON
    derived = col.charset or col.collate_charset or table_charset
    return _UNJUDGED if derived is None else derived


def expected_enum_values(col: StatedColumn) -> Any:
    if col.elements is None:
        return _UNJUDGED
    return [f"'{e}'" for e in col.elements]


def expected_default(col: StatedColumn) -> Any:
    base = col.type.base if col.type is not None else None
    if base not in _TEMPORAL:
        return _UNJUDGED
    if not col.has_default:
        return None
    return _temporal_default(base, col.default)


def _temporal_default(base: str, lit: Optional[Tok]) -> Any:
    if lit is None:
        return _UNJUDGED
    if lit.is_kw("NULL"):
        return None
    if lit.kind == "now":
        return _EPOCH if base != "date" and lit.value in _NOW else _UNJUDGED
    if base == "date":
        m = _DATE.fullmatch(lit.value) if lit.kind == "str" else None
        if m is None:
            return _UNJUDGED
        y, mo, d = m.groups()
        return f"{y}-{int(mo):02d}-{int(d):02d}"
    if lit.kind == "str":
        return lit.value
    if lit.kind == "num" and lit.value.isdigit():
        return str(int(lit.value))  # a ValueExpr's int64, printed with %v
    return _UNJUDGED


_CHECKS = (
    ("charsetName", "DBZ-TYPEMAP-9", expected_charset),
    ("enumValues", "DBZ-TYPEMAP-10", lambda col, _: expected_enum_values(col)),
    ("defaultValueExpression", "DBZ-TYPEMAP-11", lambda col, _: expected_default(col)),
)


def _why(field: str, col: StatedColumn, got: Any) -> str:
    if field == "charsetName" and col.charset is None and col.collate_charset == "utf8" and got == "utf8mb4":
        return ("; the column states COLLATE of utf8 and no charset: Debezium reports utf8mb4 there, "
                "TiCDC the charset TiDB derives")
    if field == "enumValues":
        return "; TiDB stores each member unescaped (a backslash escapes the next character)"
    if field == "defaultValueExpression":
        return ("; TiCDC writes the statement's DEFAULT literal for DATETIME/TIMESTAMP/TIME and the date TiDB "
                "stores for DATE")
    return ""


@checks_rules("DBZ-TYPEMAP-9", "DBZ-TYPEMAP-10", "DBZ-TYPEMAP-11", name="lint.debezium.ddl-columns",
              description="a DDL's tableChanges columns carry the charsetName, enumValues and temporal "
                          "defaultValueExpression TiDB records from the statement's column definitions "
                          "(collation-derived charset, backslash-unescaped members, DATE default cut to "
                          "its date); columns the statement does not define are not judged")
def check_ddl_columns(payload: dict, stated_columns: StatedColumnsReader, problems: list[Problem]) -> None:
    query = payload.get("ddl")
    changes = payload.get("tableChanges")
    if not isinstance(query, str) or not isinstance(changes, list):
        return
    stated = None
    for i, change in enumerate(changes):
        table = change.get("table") if isinstance(change, dict) else None
        columns = table.get("columns") if isinstance(table, dict) else None
        for j, column in enumerate(columns if isinstance(columns, list) else ()):
            if not isinstance(column, dict) or not isinstance(column.get("name"), str):
                continue
            stated = stated if stated is not None else stated_columns(query)
            col = stated.columns.get(column["name"])
            if col is None:
                continue
            for field, rule, expect in _CHECKS:
                want = expect(col, stated.table_charset)
                if want is _UNJUDGED or field not in column or column[field] == want:
                    continue  # a missing field is DBZ-DDL-4's finding
                problems.append(Problem(rule, f"tableChanges[{i}].table.columns[{j}] ({col.name}): {field} is "
                                              f"{column[field]!r}; the statement's definition gives {want!r}"
                                              f"{_why(field, col, column[field])}"))
