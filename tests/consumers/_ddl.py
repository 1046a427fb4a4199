"""Column types as a consumer learns them from the DDL in the stream: the CREATE TABLE, ALTER TABLE
(ADD / MODIFY / CHANGE / DROP COLUMN), RENAME TABLE and DROP TABLE statements a Canal-JSON,
Debezium or Open Protocol DDL message carries as text (docs/consumer-protocol.md: applied.ndjson
keeps each `query` exactly as the message carried it).

Written from MySQL's grammar the way a consumer outside the suite would, not from the suite's own
DDL reader: what the consumers here need of a column is its type name, its fsp and its ENUM/SET
members; anything else in a statement is skipped.
"""
from __future__ import annotations

import bisect
import copy
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_WORD = re.compile(r"[A-Za-z0-9_$]+")


@dataclass(frozen=True)
class ColumnType:
    name: str  # upper case: DATETIME, ENUM, FLOAT, ...
    args: tuple[str, ...] = ()  # what the parentheses held, quoted members unescaped
    unsigned: bool = False

    @property
    def fsp(self) -> int:
        """The declared fractional-seconds precision of a temporal column (0 when none)."""
        return int(self.args[0]) if self.args else 0


@dataclass
class Tables:
    """Column types per (schema, table), as the DDL so far left them."""
    columns: dict[tuple[str, str], dict[str, ColumnType]] = field(default_factory=dict)

    def column(self, schema: str, table: str, column: str) -> Optional[ColumnType]:
        return self.columns.get((schema, table), {}).get(column)

    def apply(self, query: str, schema: str) -> None:
        """Applies one DDL statement; `schema` is the schema the message names (for unqualified names)."""
        tokens = _Tokens(query)
        head = tokens.words(2)
        if head[:1] == ["CREATE"] and "TABLE" in tokens.words(6):
            tokens.skip_to_word("TABLE")
            tokens.skip_words("IF", "NOT", "EXISTS")
            name = tokens.table_name(schema)
            if tokens.peek() == "(":
                self.columns[name] = {c: t for c, t in _column_definitions(tokens.group())}
        elif head == ["ALTER", "TABLE"]:
            tokens.pos_after_words(2)
            name = tokens.table_name(schema)
            for spec in tokens.split_top_level():
                self._alter(name, spec)
        elif head == ["RENAME", "TABLE"]:
            for old, new in rename_pairs(query, schema):
                self.columns[new] = self.columns.pop(old, {})
        elif head == ["DROP", "TABLE"]:
            tokens.pos_after_words(2)
            tokens.skip_words("IF", "EXISTS")
            while not tokens.at_end():
                self.columns.pop(tokens.table_name(schema), None)
                if tokens.peek() == ",":
                    tokens.next()
        elif head == ["DROP", "DATABASE"] or head == ["DROP", "SCHEMA"]:
            tokens.pos_after_words(2)
            tokens.skip_words("IF", "EXISTS")
            gone = tokens.identifier()
            self.columns = {k: v for k, v in self.columns.items() if k[0] != gone}

    def _alter(self, name: tuple[str, str], spec: "_Tokens") -> None:
        table = self.columns.setdefault(name, {})
        words = spec.words(2)
        if not words:
            return
        verb = words[0]
        if verb == "RENAME" and words[1:] in (["TO"], ["AS"]):
            spec.pos_after_words(2)
            self.columns[spec.table_name(name[0])] = self.columns.pop(name)
            return
        if verb not in ("ADD", "MODIFY", "CHANGE", "DROP"):
            return
        spec.next()
        spec.skip_words("COLUMN")
        if verb == "DROP":
            if spec.peek_word() not in _NOT_COLUMNS:
                table.pop(spec.identifier(), None)
            return
        if verb == "ADD" and spec.peek() == "(":
            table.update(dict(_column_definitions(spec.group())))
            return
        if verb == "ADD" and spec.peek_word() in _NOT_COLUMNS:
            return
        old = spec.identifier() if verb == "CHANGE" else None
        new = spec.identifier()
        column_type = _column_type(spec)
        if old is not None:
            table.pop(old, None)
        table[new] = column_type


def rename_pairs(query: str, schema: str) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """(old, new) (schema, table) names of a RENAME TABLE statement; [] for any other statement."""
    tokens = _Tokens(query)
    if tokens.words(2) != ["RENAME", "TABLE"]:
        return []
    tokens.pos_after_words(2)
    pairs = []
    while not tokens.at_end():
        old = tokens.table_name(schema)
        tokens.skip_words("TO")
        pairs.append((old, tokens.table_name(schema)))
        if tokens.peek() == ",":
            tokens.next()
    return pairs


class History:
    """The column types at every commit ts: the DDL entries of an applied log, in order."""

    def __init__(self) -> None:
        self.tables = Tables()
        self._ts: list[int] = []
        self._snapshots: list[Tables] = []

    def apply(self, commit_ts: Optional[int], query: str, schema: str) -> None:
        self.tables.apply(query, schema)
        if commit_ts is not None:
            self._ts.append(commit_ts)
            self._snapshots.append(copy.deepcopy(self.tables))

    def at(self, ts: int) -> Tables:
        """The types after every DDL with commit ts <= ts."""
        i = bisect.bisect_right(self._ts, ts)
        return self._snapshots[i - 1] if i else Tables()


_NOT_COLUMNS = {"INDEX", "KEY", "UNIQUE", "PRIMARY", "CONSTRAINT", "FOREIGN", "FULLTEXT", "PARTITION",
                "CHECK", "SPATIAL"}


def _column_definitions(tokens: "_Tokens") -> Iterable[tuple[str, ColumnType]]:
    for part in tokens.split_top_level():
        if part.peek_word() in _NOT_COLUMNS or part.at_end():
            continue
        name = part.identifier()
        yield name, _column_type(part)


def _column_type(tokens: "_Tokens") -> ColumnType:
    name = tokens.next().upper()
    args: tuple[str, ...] = ()
    if tokens.peek() == "(":
        args = tuple(a.literal() for a in tokens.group().split_top_level())
    rest = tokens.words(3)
    return ColumnType(name, args, unsigned="UNSIGNED" in rest)


class _Tokens:
    """SQL tokens: identifiers (backquoted or bare), quoted strings, numbers and punctuation."""

    def __init__(self, text: str, toks: Optional[list[tuple[str, str]]] = None) -> None:
        self.toks = toks if toks is not None else list(_lex(text))
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.toks)

    def peek(self) -> Optional[str]:
        return None if self.at_end() else self.toks[self.pos][1]

    def peek_word(self) -> Optional[str]:
        if self.at_end() or self.toks[self.pos][0] != "word":
            return None
        return self.toks[self.pos][1].upper()

    def next(self) -> str:
        if self.at_end():
            raise ValueError("DDL ends early")
        self.pos += 1
        return self.toks[self.pos - 1][1]

    def words(self, n: int) -> list[str]:
        """The upper-cased bare words among the next n tokens (not consumed)."""
        return [v.upper() for k, v in self.toks[self.pos:self.pos + n] if k == "word"]

    def pos_after_words(self, n: int) -> None:
        self.pos += n

    def skip_words(self, *words: str) -> None:
        while self.peek_word() in words:
            self.pos += 1

    def skip_to_word(self, word: str) -> None:
        while self.peek_word() != word:
            self.next()
        self.pos += 1

    def identifier(self) -> str:
        kind, value = self.toks[self.pos]
        if kind not in ("word", "ident"):
            raise ValueError(f"expected a name, found {value!r}")
        self.pos += 1
        return value

    def table_name(self, schema: str) -> tuple[str, str]:
        first = self.identifier()
        if self.peek() == ".":
            self.next()
            return first, self.identifier()
        return schema, first

    def literal(self) -> str:
        return self.toks[self.pos][1] if not self.at_end() else ""

    def group(self) -> "_Tokens":
        """The tokens inside the parentheses that start here (consumed)."""
        depth, start = 0, self.pos
        while True:
            tok = self.next()
            if tok == "(" and self.toks[self.pos - 1][0] == "punct":
                depth += 1
            elif tok == ")" and self.toks[self.pos - 1][0] == "punct":
                depth -= 1
                if depth == 0:
                    return _Tokens("", self.toks[start + 1:self.pos - 1])

    def split_top_level(self) -> list["_Tokens"]:
        """The rest, split at commas outside parentheses (consumed)."""
        parts, depth, start = [], 0, self.pos
        while not self.at_end():
            kind, tok = self.toks[self.pos]
            if kind == "punct" and tok == "(":
                depth += 1
            elif kind == "punct" and tok == ")":
                depth -= 1
            elif kind == "punct" and tok == "," and depth == 0:
                parts.append(_Tokens("", self.toks[start:self.pos]))
                start = self.pos + 1
            self.pos += 1
        parts.append(_Tokens("", self.toks[start:self.pos]))
        return parts


def _lex(text: str) -> Iterable[tuple[str, str]]:
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "`":
            j, out = i + 1, []
            while True:
                if text[j] == "`" and text[j + 1:j + 2] == "`":
                    out.append("`")
                    j += 2
                elif text[j] == "`":
                    break
                else:
                    out.append(text[j])
                    j += 1
            yield "ident", "".join(out)
            i = j + 1
        elif ch in "'\"":
            j, out = i + 1, []
            while True:
                c = text[j]
                if c == "\\":
                    nxt = text[j + 1]
                    # MySQL keeps the backslash of \% and \_ (they matter to LIKE only).
                    out.append(_ESCAPES.get(nxt, nxt) if nxt not in "%_" else "\\" + nxt)
                    j += 2
                elif c == ch and text[j + 1:j + 2] == ch:
                    out.append(ch)
                    j += 2
                elif c == ch:
                    break
                else:
                    out.append(c)
                    j += 1
            yield "string", "".join(out)
            i = j + 1
        else:
            m = _WORD.match(text, i)
            if m:
                yield "word", m.group()
                i = m.end()
            else:
                yield "punct", ch
                i += 1
