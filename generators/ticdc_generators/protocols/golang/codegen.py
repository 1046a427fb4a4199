"""The one place where an encoder's fast path turns generated Python source into a function.

An encoder writes the same row shape for every row of a table version, so its fast path writes,
once per version, a straight-line function that renders a row column by column: the loop over the
columns, and a call per value, cost as much as the rendering itself.

Column names, types and values come from the upstream model, and a Hypothesis strategy or a
changefeed under test may choose names holding quotes, backslashes, newlines or code. None of that
text can become code:

1. What enters the source: fixed templates and identifiers the generator makes itself (`v0`,
   `K3`, `R2`...). Nothing of the model is ever written into the source; names, quoted keys,
   constants and the functions a column needs are bound as values in the function's namespace
   under those identifiers.
2. What the source may be: `compile_function` parses it and refuses it unless it is exactly one
   function definition whose string constants are all among those the generator declared (its
   templates' fixed fragments), so model text written raw into it by mistake is refused before
   anything runs.
3. What the function can reach: it runs with an empty `__builtins__`; only the namespace's values
   are callable from it.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Iterable, Mapping

# Compiled sources, by source text: tables of the same column kinds share one code object.
_COMPILED: dict[str, Any] = {}
_COMPILED_KEPT = 512


class GeneratedCodeError(ValueError):
    """Generated source that breaks a rule of this module: a fault of the generator, never of the data."""


def _check(source: str, name: str, constants: frozenset[str]) -> None:
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise GeneratedCodeError(f"generated source for {name} is not one function definition named {name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and node.value not in constants:
            raise GeneratedCodeError(f"generated source for {name} holds an undeclared constant {node.value!r}")
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Lambda, ast.Global, ast.Nonlocal)):
            raise GeneratedCodeError(f"generated source for {name} holds a {type(node).__name__}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise GeneratedCodeError(f"generated source for {name} reads the attribute {node.attr!r}")


def compile_function(source: str, name: str, namespace: Mapping[str, Any], constants: Iterable[str] = (),
                     filename: str = "<generated encoder>") -> Callable[..., Any]:
    """The function `name` that `source` defines, run in `namespace` with no builtins.

    `constants` are the str values the source may hold (the templates' fixed fragments)."""
    code = _COMPILED.get(source)
    if code is None:
        _check(source, name, frozenset(constants))
        code = compile(source, filename, "exec")
        if len(_COMPILED) >= _COMPILED_KEPT:
            _COMPILED.clear()
        _COMPILED[source] = code
    scope: dict[str, Any] = {"__builtins__": {}, **namespace}
    exec(code, scope)  # the checked definition only: it defines `name` and runs nothing else
    return scope[name]
