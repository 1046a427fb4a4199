"""TiDB's table-filter rules, as TiCDC reads `matcher` and `columns` lists.

Part of the contract because both sides read a changefeed's configuration through them: the
simulator routes and selects with them, the decode side learns from them which dispatcher and
which column selector covers a table. They are the changefeed's configuration language, not a
protocol's encoding, so one reading of them serves both.

Behaviour follows TiDB pkg/util/table-filter (parser.go, matchers.go, table_filter.go,
column_filter.go), which TiCDC's column selectors and dispatchers use:
- a rule is `schema.table` (tables) or `column` (columns); a leading `!` makes it exclude,
  `#` starts a comment, `@file` reads more rules from a file (one level deep);
- a pattern is a `/regexp/` (searched, not anchored), a `"quoted"` or `` `quoted` `` literal, or
  a wildcard: `*` any run, `?` one character, `[a-z]` / `[!a-z]` a class, `\\x` escapes a
  non-alphanumeric character; other characters must be letters, digits, `_`, `$` or non-ASCII;
- the LAST rule that matches a name decides (TiDB reverses the list), and a name no rule
  matches is rejected;
- tables match case-sensitively unless the filter is made case-insensitive (TiCDC does so
  unless the changefeed sets `case-sensitive = true`); columns always match case-insensitively.
Regular expressions are compiled by Python's `re`, which agrees with Go's RE2 on the syntax
filters use in practice (classes, alternation, anchors, repetition); the Perl constructs RE2
lacks (look-around, back-references, atomic and conditional groups) are refused as Go refuses them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

# TiDB parser.go: the shapes of a regexp, a quoted identifier and a wildcard class.
_REGEXP = re.compile(r"/(?:\\.|[^/])+/")
_DOUBLE_QUOTED = re.compile(r'"(?:""|[^"])+"')
_BACKQUOTED = re.compile(r"`(?:``|[^`])+`")
_RANGE = re.compile(r"\[!?(?:\\[^0-9a-zA-Z]|[^\\\]])+\]")
_CMDLINE = "<cmdline>"


class FilterRuleError(ValueError):
    """TiCDC's ErrFilterRuleInvalid: a matcher or columns rule does not parse."""


def _is_ascii_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _perl_only(pattern: str) -> Optional[str]:
    """The first construct of `pattern` that Go's regexp package rejects but Python's accepts."""
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if not in_class and i + 1 < len(pattern) and pattern[i + 1] in "123456789":
                return pattern[i:i + 2]  # a back-reference
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            # a `]` right after `[` or `[^` is a member, not the end of the class
            i += 1 if pattern[i + 1:i + 2] == "]" else 2 if pattern[i + 1:i + 3] == "^]" else 0
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?>", "(?("), i):
            return pattern[i:i + 3]
        i += 1
    return None


@dataclass(frozen=True)
class _Matcher:
    """One pattern. `literal` set: an exact name; `regex` set: a pattern; neither: `*`."""

    literal: Optional[str] = None
    regex: Optional[re.Pattern] = None

    def match(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        if self.regex is not None:
            return self.regex.search(name) is not None
        return True

    def lowered(self) -> "_Matcher":
        if self.literal is not None:
            return _Matcher(literal=self.literal.lower())
        if self.regex is not None:
            return _Matcher(regex=re.compile(self.regex.pattern, self.regex.flags | re.IGNORECASE))
        return self


_ANY = _Matcher()


class _Parser:
    """Where errors are reported from: `<cmdline>` line 1 (TiDB never advances it for the
    rules of one list), or the file and line of an imported rule."""

    def __init__(self) -> None:
        self.file = _CMDLINE
        self.line = 1

    def error(self, message: str) -> FilterRuleError:
        return FilterRuleError(f"at {self.file}:{self.line}: {message}")

    def regexp(self, pattern: str) -> _Matcher:
        if pattern == "^.*\\Z":
            return _ANY  # TiDB's special case: a lone `*` matches everything
        try:
            return _Matcher(regex=re.compile(pattern, re.DOTALL))
        except re.error as e:
            raise self.error(f"invalid pattern: error parsing regexp: {e}") from None

    def pattern(self, line: str, needs_dot: bool) -> tuple[_Matcher, str]:
        if not line:
            raise self.error("syntax error: missing pattern")
        first = line[0]
        if first == "/":
            m = _REGEXP.match(line)
            if m is None:
                raise self.error("syntax error: incomplete regexp")
            body = line[1:m.end() - 1]
            unsupported = _perl_only(body)
            if unsupported is not None:
                raise self.error(f"invalid pattern: error parsing regexp: invalid or unsupported Perl syntax: "
                                 f"`{unsupported}`")
            try:
                regex = re.compile(body)
            except re.error as e:
                raise self.error(f"invalid pattern: error parsing regexp: {e}") from None
            return _Matcher(regex=regex), line[m.end():]
        if first in ('"', "`"):
            m = (_DOUBLE_QUOTED if first == '"' else _BACKQUOTED).match(line)
            if m is None:
                raise self.error("syntax error: incomplete quoted identifier")
            return _Matcher(literal=line[1:m.end() - 1].replace(first * 2, first)), line[m.end():]
        return self.wildcard(line, needs_dot)

    def wildcard(self, line: str, needs_dot: bool) -> tuple[_Matcher, str]:
        literal: list[str] = []
        regex: list[str] = ["^"]
        is_literal = True
        i = 0
        while i < len(line):
            c = line[i]
            if c == "\\":
                if i == len(line) - 1:
                    raise self.error("syntax error: cannot place \\ at end of line")
                esc = line[i + 1]
                if _is_ascii_alnum(esc):
                    raise self.error(f"cannot escape a letter or number (\\{esc}), it is reserved for future extension")
                literal.append(esc)
                regex.append(re.escape(esc))
                i += 2
            elif c == ".":
                if needs_dot:
                    break  # the schema/table separator
                raise self.error(f"unexpected special character '{c}'")
            elif c == "*":
                is_literal = False
                regex.append(".*")
                i += 1
            elif c == "?":
                is_literal = False
                regex.append(".")
                i += 1
            elif c == "[":
                is_literal = False
                m = _RANGE.match(line, i)
                if m is None:
                    raise self.error("syntax error: failed to parse character class")
                body = line[i + 1:m.end()]
                if body.startswith("!"):
                    regex.append("[^" + body[1:])
                elif body.startswith("^"):
                    regex.append("[\\^" + body[1:])  # `[^` is not special in a glob
                else:
                    regex.append("[" + body)
                i = m.end()
            else:
                if not (c in "$_" or _is_ascii_alnum(c) or ord(c) >= 0x80):
                    raise self.error(f"unexpected special character '{c}'")
                literal.append(c)
                regex.append(re.escape(c))
                i += 1
        rest = line[i:]
        if is_literal:
            return _Matcher(literal="".join(literal)), rest
        # Go's `$` without multi-line mode is the end of the text; Python's is `\Z`.
        return self.regexp("".join(regex) + "\\Z"), rest

    def rules(self, lines: Iterable[str], parse_one: Callable[[str], Optional[tuple]], can_import: bool) -> list:
        out: list = []
        for raw in lines:
            line = raw.strip(" \t")
            if not line or line[0] == "#":
                pass
            elif line[0] == "@":
                if not can_import:
                    raise self.error("importing filter files recursively is not allowed")
                out += self.imported(line[1:], parse_one)
            else:
                out.append(parse_one(line))
            if not can_import:
                self.line += 1
        return out

    def imported(self, file_name: str, parse_one: Callable[[str], Optional[tuple]]) -> list:
        try:
            text = Path(file_name).read_text(encoding="utf-8")
        except OSError as e:
            raise self.error(f"cannot open filter file: {e}") from None
        saved = (self.file, self.line)
        self.file, self.line = file_name, 1
        out = self.rules(text.splitlines(), parse_one, can_import=False)
        self.file, self.line = saved
        return out


def _positive(line: str) -> tuple[bool, str]:
    return (False, line[1:]) if line[0] == "!" else (True, line)


@dataclass(frozen=True)
class TableFilter:
    """`schema.table` rules; `match` answers whether a table is selected."""

    rules: tuple[tuple[_Matcher, _Matcher, bool], ...]  # newest first
    case_sensitive: bool = True

    @classmethod
    def parse(cls, rules: Iterable[str], case_sensitive: bool = True) -> "TableFilter":
        p = _Parser()

        def one(line: str) -> tuple[_Matcher, _Matcher, bool]:
            positive, line = _positive(line)
            schema, line = p.pattern(line, needs_dot=True)
            if not line:
                raise p.error("wrong table pattern")
            if line[0] != ".":
                raise p.error("syntax error: missing '.' between schema and table patterns")
            table, line = p.pattern(line[1:], needs_dot=True)
            if line:
                raise p.error("syntax error: stray characters after table pattern")
            return schema, table, positive

        parsed = p.rules(list(rules), one, can_import=True)
        if not case_sensitive:
            parsed = [(s.lowered(), t.lowered(), pos) for s, t, pos in parsed]
        return cls(tuple(reversed(parsed)), case_sensitive)

    def match(self, schema: str, table: str) -> bool:
        if not self.case_sensitive:
            schema, table = schema.lower(), table.lower()
        for s, t, positive in self.rules:
            if s.match(schema) and t.match(table):
                return positive
        return False


@dataclass(frozen=True)
class ColumnFilter:
    """Column rules; `match` answers whether a column is kept. Always case-insensitive."""

    rules: tuple[tuple[_Matcher, bool], ...]  # newest first

    @classmethod
    def parse(cls, rules: Iterable[str]) -> "ColumnFilter":
        p = _Parser()

        def one(line: str) -> tuple[_Matcher, bool]:
            positive, line = _positive(line)
            column, line = p.pattern(line, needs_dot=False)
            if line:
                raise p.error("syntax error: stray characters after column pattern")
            return column.lowered(), positive

        return cls(tuple(reversed(p.rules(list(rules), one, can_import=True))))

    def match(self, column: str) -> bool:
        name = column.lower()
        for m, positive in self.rules:
            if m.match(name):
                return positive
        return False
