"""Generated columns: the expressions the model supports, and their evaluation.

TiDB computes a generated column from the other columns of the row. The model keeps the
expression as SQL text (it appears in DDL) and evaluates it itself; the supported grammar is
small on purpose — column references, integer literals, + - * and the string functions
UPPER, LOWER and CONCAT — and written by hand because no library evaluates MySQL expressions.
NULL propagates as in MySQL: any NULL operand gives NULL.
"""
from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)+`)|(\d+)|([A-Za-z_]+)\s*\(|([-+*(),]))")


class ExpressionError(ValueError):
    pass


def evaluate(expr: str, row: dict[str, Any]) -> Any:
    tokens = _tokens(expr)
    value, rest = _sum(tokens, row)
    if rest:
        raise ExpressionError(f"unexpected {rest[0][1]!r} in generated expression {expr!r}")
    return value


def referenced_columns(expr: str) -> set[str]:
    return {text[1:-1].replace("``", "`") for kind, text in _tokens(expr) if kind == "col"}


def _tokens(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        m = _TOKEN.match(expr, pos)
        if m is None:
            raise ExpressionError(f"unsupported generated expression {expr!r} at {expr[pos:]!r}")
        col, num, func, op = m.groups()
        out.append(("col", col) if col else ("num", num) if num else ("func", func.upper()) if func else ("op", op))
        pos = m.end()
    return out


def _sum(tokens, row):
    value, tokens = _product(tokens, row)
    while tokens and tokens[0] in (("op", "+"), ("op", "-")):
        op = tokens[0][1]
        rhs, tokens = _product(tokens[1:], row)
        value = None if value is None or rhs is None else (value + rhs if op == "+" else value - rhs)
    return value, tokens


def _product(tokens, row):
    value, tokens = _atom(tokens, row)
    while tokens and tokens[0] == ("op", "*"):
        rhs, tokens = _atom(tokens[1:], row)
        value = None if value is None or rhs is None else value * rhs
    return value, tokens


def _atom(tokens, row):
    if not tokens:
        raise ExpressionError("generated expression ends early")
    kind, text = tokens[0]
    if kind == "col":
        return row[text[1:-1].replace("``", "`")], tokens[1:]
    if kind == "num":
        return int(text), tokens[1:]
    if (kind, text) == ("op", "("):
        value, tokens = _sum(tokens[1:], row)
        return value, _expect(tokens, ")")
    if kind == "func":
        args, tokens = [], tokens[1:]
        while True:
            v, tokens = _sum(tokens, row)
            args.append(v)
            if tokens and tokens[0] == ("op", ","):
                tokens = tokens[1:]
                continue
            tokens = _expect(tokens, ")")
            break
        if any(a is None for a in args):
            return None, tokens
        if text == "UPPER" and len(args) == 1:
            return str(args[0]).upper(), tokens
        if text == "LOWER" and len(args) == 1:
            return str(args[0]).lower(), tokens
        if text == "CONCAT":
            return "".join(str(a) for a in args), tokens
        raise ExpressionError(f"unsupported function {text}")
    raise ExpressionError(f"unexpected {text!r}")


def _expect(tokens, op):
    if not tokens or tokens[0] != ("op", op):
        raise ExpressionError(f"expected {op!r}")
    return tokens[1:]
