"""Open Protocol lint rules beyond a column's value (spec 002): DDL type codes, flag bits, delete
events trimmed to the handle key, and one row event per row and transaction.

- DDL Type Code: a DDL event's "t" is TiDB's action type of its statement (TiCDC writes
  model.ActionType as is, TiCDC pkg/sink/codec/open/codec.go). For the codes whose statement has
  one leading form, the query must have it; codes past the spec's table (36) are TiDB's own and
  not judged.
- Bit flags: "f" is an OR of the eight flags the spec lists, so no bit above 0x80 is set
  (OPEN-FLAG-7); a primary-key column is not nullable, and a handle-key column is a primary-key or
  unique-index column (TiDB keys its handle on the primary key or a NOT NULL unique index), so
  HandleKeyFlag comes with PrimaryKeyFlag or UniqueKeyFlag (OPEN-FLAG-4).
- A delete event "only contains primary key columns or unique index columns" (spec 002, Log 9)
  when TiCDC trims deletes to the handle key (delete-only-output-handle-key-columns; TiCDC
  pkg/sink/codec/open/codec.go): each of its columns has HandleKeyFlag, PrimaryKeyFlag or
  UniqueKeyFlag.
- "Multiple changes to the same row in a transaction are only sent in one Row Changed Event":
  two first-sent row events of one row at one commit ts break it, except TiCDC's split of a
  key-changing update into a delete then an insert. A repeat of an event already seen at that
  commit ts is a replay, which starts the transaction's events again.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ...events import DecodedRow
from ...rules import checks_rules
from ..common.lint import Problem
from .values import HANDLE_KEY_FLAG

# spec 002, Bit flags of columns
GENERATED_FLAG, PRIMARY_KEY_FLAG, UNIQUE_KEY_FLAG, NULLABLE_FLAG, ALL_FLAGS = 0x04, 0x08, 0x10, 0x40, 0xFF
_KEY_FLAGS = HANDLE_KEY_FLAG | PRIMARY_KEY_FLAG | UNIQUE_KEY_FLAG

_ALTER = r"ALTER\s+TABLE\b"
# spec 002, DDL Type Code -> the statement's leading form (TiDB's DDL statements of that action).
_STATEMENTS: dict[int, str] = {
    1: r"CREATE\s+(DATABASE|SCHEMA)\b", 2: r"DROP\s+(DATABASE|SCHEMA)\b", 3: r"CREATE\s+TABLE\b",
    4: r"DROP\s+TABLE\b", 5: rf"{_ALTER}.*\bADD\b", 6: rf"{_ALTER}.*\bDROP\b",
    7: rf"(CREATE\s+(UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX\b|{_ALTER}.*\bADD\b)",
    8: rf"(DROP\s+INDEX\b|{_ALTER}.*\bDROP\b)", 9: rf"{_ALTER}.*\bADD\b", 10: rf"{_ALTER}.*\bDROP\b",
    11: r"TRUNCATE\b", 12: rf"{_ALTER}.*\b(MODIFY|CHANGE|ALTER)\b", 13: _ALTER,
    14: rf"(RENAME\s+TABLE\b|{_ALTER}.*\bRENAME\b)", 15: _ALTER, 16: _ALTER, 17: _ALTER, 18: _ALTER,
    19: _ALTER, 20: _ALTER, 21: r"CREATE\b.*\bVIEW\b", 22: _ALTER, 23: _ALTER, 24: r"DROP\s+VIEW\b",
    25: r"(RECOVER|FLASHBACK)\s+TABLE\b", 26: r"ALTER\s+(DATABASE|SCHEMA)\b", 27: r"LOCK\s+TABLES?\b",
    28: r"UNLOCK\s+TABLES?\b", 29: r"ADMIN\s+REPAIR\s+TABLE\b", 30: _ALTER, 32: _ALTER, 33: _ALTER,
    34: r"CREATE\s+SEQUENCE\b", 35: r"ALTER\s+SEQUENCE\b", 36: r"DROP\s+SEQUENCE\b",
}
_PATTERNS = {code: re.compile(p, re.IGNORECASE | re.DOTALL) for code, p in _STATEMENTS.items()}
_COMMENTS = re.compile(r"^\s*(/\*.*?\*/\s*)*", re.DOTALL)


def ddl_type_rule(code: int) -> str:
    """The rule whose part of spec 002's table lists `code`."""
    return ("OPEN-DDLTYPE-1" if code <= 4 else "OPEN-DDLTYPE-2" if code <= 12
            else "OPEN-DDLTYPE-3" if code <= 24 else "OPEN-DDLTYPE-4")


@checks_rules("OPEN-DDLTYPE-1", "OPEN-DDLTYPE-2", "OPEN-DDLTYPE-3", "OPEN-DDLTYPE-4",
              name="lint.open-protocol.ddl-type", description="a DDL's type code is the one of its statement")
def check_ddl_type(value: Any, where: str, problems: list[Problem]) -> None:
    if not isinstance(value, dict):
        return
    query, code = value.get("q"), value.get("t")
    if not isinstance(query, str) or not isinstance(code, int) or isinstance(code, bool):
        return  # the decoder rejects it
    if code == 0:
        problems.append(Problem("OPEN-DDLTYPE-1", f"{where}: DDL type code 0 names no statement type"))
        return
    pattern = _PATTERNS.get(code)
    if pattern is not None and not pattern.match(_COMMENTS.sub("", query, count=1)):
        problems.append(Problem(ddl_type_rule(code), f"{where}: DDL type code {code} for {query[:80]!r}, "
                                                     f"which is not a statement of that type"))


@checks_rules("OPEN-FLAG-7", "OPEN-FLAG-4", name="lint.open-protocol.flag-bits",
              description="\"f\" is an OR of the spec's flags; key flags agree with each other")
def check_flag_bits(flag: int, where: str, problems: list[Problem]) -> bool:
    """Whether the flags are possible (problems added otherwise)."""
    if flag < 0 or flag & ~ALL_FLAGS:
        problems.append(Problem("OPEN-FLAG-7", f"{where}: flags {flag} set bits outside the spec's eight flags"))
        return False
    before = len(problems)
    if flag & PRIMARY_KEY_FLAG and flag & NULLABLE_FLAG:
        problems.append(Problem("OPEN-FLAG-4", f"{where}: flags {flag} mark a primary-key column nullable"))
    # A nullable handle-key column is OPEN-FLAG-5's fault; one finding per column is enough.
    if flag & HANDLE_KEY_FLAG and not flag & (PRIMARY_KEY_FLAG | UNIQUE_KEY_FLAG | NULLABLE_FLAG):
        problems.append(Problem("OPEN-FLAG-4", f"{where}: flags {flag} mark a handle-key column that is "
                                               f"neither a primary-key nor a unique-index column"))
    return len(problems) == before


@checks_rules("OPEN-ROW-5", name="lint.open-protocol.delete-columns",
              description="a key-only delete carries primary-key or unique-index columns only")
def check_delete_columns(columns: dict, where: str, problems: list[Problem]) -> None:
    for name, obj in columns.items():
        flag = obj.get("f") if isinstance(obj, dict) else None
        if isinstance(flag, int) and not flag & _KEY_FLAGS:
            problems.append(Problem("OPEN-ROW-5", f"{where} column {name!r}: flags {flag} name no key; a key-only "
                                                  f"delete carries key columns only"))


class Transactions:
    """The row events of each table at its latest commit ts, per partition (a row's events stay in
    one partition and in commit-ts order, OPEN-DISPATCH-1 and OPEN-ORDER-1)."""

    def __init__(self) -> None:
        # (schema, table) -> (commit ts, row key -> the ops of the row at that ts, in order)
        self._tables: dict[tuple[str, str], tuple[int, dict[tuple, tuple[str, ...]]]] = {}

    @checks_rules("OPEN-ROW-4", name="lint.open-protocol.row-per-transaction",
                  description="one row event per row and transaction (a split update's delete+insert aside)")
    def check(self, row: DecodedRow, problems: list[Problem]) -> None:
        image = row.after if row.after is not None else row.before
        if row.commit_ts is None or not row.key_columns or image is None:
            return
        table = (row.schema, row.table)
        key = tuple((c, repr(image.get(c))) for c in row.key_columns)
        ts, ops = self._tables.get(table, (None, {}))
        if ts != row.commit_ts:
            if ts is not None and row.commit_ts < ts:
                return  # an older, re-sent event; the order check judges it
            ts, ops = row.commit_ts, {}
            self._tables[table] = (ts, ops)
        earlier = ops.get(key, ())
        if not earlier or earlier[0] == row.op:
            ops[key] = (row.op,)  # the row's first event, or a replay of the transaction from it
        elif earlier == ("delete",) and row.op == "insert":
            ops[key] = ("delete", "insert")  # TiCDC's split of an update that changes a key
        else:
            problems.append(Problem("OPEN-ROW-4", f"{row.schema}.{row.table} row {dict(key)}: a {row.op} after "
                                                  f"{' then '.join(earlier)} in the transaction at commit ts {ts}"))
            ops[key] = (*earlier, row.op)


class DdlBarrier:
    """OPEN-DDL-1: a DDL event is sent once its statement executed upstream, at its commit ts, so no
    row event of its table above that commit ts comes before it on a partition (TiCDC holds a
    table's later rows back until the DDL is written). A DDL the partition carried before is a
    re-send and not judged."""

    def __init__(self) -> None:
        self._row_ts: dict[tuple[str, str], int] = {}  # table -> highest row commit ts on the partition
        self._ddls: set[tuple[int, str]] = set()  # (commit ts, query) of the DDLs seen

    def row(self, table: tuple[str, str], ts: int) -> None:
        self._row_ts[table] = max(ts, self._row_ts.get(table, 0))

    @checks_rules("OPEN-DDL-1", name="lint.open-protocol.ddl-barrier",
                  description="no row event of a table above a DDL's commit ts comes before the DDL")
    def ddl(self, table: tuple[str, str], ts: int, query: Any, where: str, problems: list[Problem]) -> None:
        identity = (ts, str(query))
        if identity in self._ddls:
            return
        self._ddls.add(identity)
        later = self._row_ts.get(table, 0)
        if table[1] and later > ts:
            problems.append(Problem("OPEN-DDL-1", f"{where}: DDL at commit ts {ts} comes after a row event of its "
                                                  f"table at commit ts {later}, which the DDL was to precede"))


_GENERATED = re.compile(r"\bAS\s*\(", re.IGNORECASE)
_COLUMN_DEF = re.compile(r"\s*(?:ADD\s+(?:COLUMN\s+)?)?`((?:[^`]|``)+)`\s+(.*)", re.IGNORECASE | re.DOTALL)
_KEY_CLAUSE = re.compile(r"\s*(PRIMARY|UNIQUE|KEY|INDEX|CONSTRAINT|FOREIGN|FULLTEXT|SPATIAL|CHECK)\b", re.IGNORECASE)


def _top_level_parts(body: str) -> list[str]:
    """`body` split at the commas outside parentheses and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'`\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return parts


def generated_columns(query: str) -> Optional[dict[str, bool]]:
    """Column -> whether it is generated, for a CREATE TABLE or an ALTER TABLE ... ADD COLUMN; None
    for a statement that does not define columns this way."""
    head = _COMMENTS.sub("", query, count=1)
    if re.match(r"CREATE\s+TABLE\b", head, re.IGNORECASE) and "(" in head:
        body = head[head.index("(") + 1:head.rindex(")")]
    elif re.match(rf"{_ALTER}.*\bADD\s+(COLUMN\s+)?`", head, re.IGNORECASE | re.DOTALL):
        add = re.search(r"\bADD\b", head, re.IGNORECASE)
        assert add is not None  # the pattern just matched holds an ADD
        body = head[add.start():]
    else:
        return None
    out: dict[str, bool] = {}
    for part in _top_level_parts(body):
        m = None if _KEY_CLAUSE.match(part) else _COLUMN_DEF.match(part)
        if m is not None:
            out[m.group(1).replace("``", "`")] = bool(_GENERATED.search(m.group(2)))
    return out


class GeneratedColumns:
    """OPEN-FLAG-3: GeneratedColumnFlag on exactly the columns the table's DDL on the partition
    defines as generated (`AS (expr)`). Only tables whose columns the partition saw defined are
    judged; a DDL that changes columns otherwise ends the judging of its table."""

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], dict[str, bool]] = {}

    def ddl(self, table: tuple[str, str], query: Any) -> None:
        defined = generated_columns(query) if isinstance(query, str) else None
        if defined is None:
            self._tables.pop(table, None)
        elif re.match(r"\s*(/\*.*?\*/\s*)*CREATE\b", query, re.IGNORECASE | re.DOTALL):
            self._tables[table] = defined
        elif table in self._tables:
            self._tables[table].update(defined)

    @checks_rules("OPEN-FLAG-3", name="lint.open-protocol.generated-flag",
                  description="GeneratedColumnFlag exactly on the columns the table's DDL defines as generated")
    def check(self, table: tuple[str, str], column: str, flag: Optional[int], where: str,
              problems: list[Problem]) -> bool:
        """Whether the flag agrees with the DDL, or cannot be judged (no flags, an unknown column)."""
        generated = self._tables.get(table, {}).get(column)
        if flag is None or generated is None or bool(flag & GENERATED_FLAG) == generated:
            return True
        problems.append(Problem("OPEN-FLAG-3", f"{where}: flags {flag} {'lack' if generated else 'have'} "
                                                   f"GeneratedColumnFlag; the table's DDL defines the column as "
                                                   f"{'' if generated else 'not '}generated"))
        return False
