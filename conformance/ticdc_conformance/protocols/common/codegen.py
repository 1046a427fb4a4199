"""The one place where a decoder's fast path turns generated Python source into a function.

Three fast paths (Open Protocol, Canal-JSON and Simple JSON, each `_fast/rowcode.py`) write out,
once per table shape, a straight-line function that reads a row image column by column: a loop
over the columns costs about a quarter of a message's decode time more (docs/performance.md,
"Fast path: generated code or closures"). The columns' names and types come from the stream,
so a hostile stream chooses them. Why no text of the stream can become code:

1. What enters the source. The generators write the source from fixed templates, identifiers they
   make themselves (`t0`, `N3`, `READ2`...) and literals made by `literal()`: the repr() of a value
   of exactly str, int, bool or None, which Python reads back as that same value whatever quotes,
   backslashes, newlines, keywords or code it holds (a subclass, whose repr could be anything, is
   refused). Everything else a function needs (column names, patterns, readers, the event key) is
   bound as a value in its namespace, under a name the generator made.
2. What the source may be. `compile_function` parses the source and refuses it unless it is
   exactly one plain function definition built only of assignments, `if`, `return`, `raise` and
   expressions without lambdas, comprehensions, f-strings, imports or starred arguments; every
   name it reads is one of its parameters, a local it assigns, or a name of its namespace; no
   attribute starts with an underscore (no `__class__`, `__globals__` walk); and every str or
   bytes constant is one the generator declared (the template's fixed strings, or a value it gave
   to `literal()`). Text of the stream written raw into the source would parse as names,
   attributes, calls or constants nobody declared, and is refused before anything runs.
3. What the function can reach. It runs with an empty `__builtins__`: only the namespace's values
   are callable from it (no `__import__`, `eval`, `open`).

So whatever a stream names, the generated function treats it as data; tests/conformance/protocols/
test_codegen_safety.py feeds hostile column names and values through each protocol's generated
readers and compares their events with the reference path's, and gives this module hand-written
sources that break each rule.
"""
from __future__ import annotations

import ast
from types import CodeType
from typing import Any, Callable, Iterable, Mapping

from ticdc_conformance.protocols.common.wire import bounded_put

# What a literal may be: values whose repr() reads back as the value itself.
_LITERAL_TYPES = (str, int, bool, type(None))

# The syntax a generated function may use (rule 2 above): these node classes exactly.
_ALLOWED_NODES = frozenset((
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg,
    ast.Assign, ast.If, ast.Return, ast.Raise,
    ast.Name, ast.Load, ast.Store, ast.Attribute, ast.Subscript, ast.Constant,
    ast.Tuple, ast.List, ast.Dict,
    ast.Call, ast.keyword, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Compare,
    ast.And, ast.Or, ast.Not, ast.USub,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
))
_PLAIN_CONSTANTS = frozenset((int, bool, type(None)))

# Checked and compiled sources, by everything the check depends on. Every decoder of a stream (one
# per partition) builds the same readers, and Canal-JSON's and Open Protocol's sources hold no
# column names, so tables of the same column kinds share one: checking a source costs about three
# times compiling it, and is done once.
_COMPILED: dict[tuple, CodeType] = {}
_COMPILED_LIMIT = 256


class GeneratedCodeError(ValueError):
    """Generated source that breaks a rule of this module: a fault of the generator, never of a stream."""


def literal(value: Any) -> str:
    """The source text of `value` as a literal: its repr(), for a value of exactly str, int, bool or
    None (rule 1)."""
    if type(value) not in _LITERAL_TYPES:
        raise GeneratedCodeError(f"a {type(value).__name__} cannot enter generated source as a literal")
    return repr(value)


def compile_function(source: str, name: str, namespace: Mapping[str, Any], filename: str,
                     literals: Iterable[Any] = ()) -> Callable[..., Any]:
    """The function `name` that `source` defines, run in `namespace` with no builtins.

    `literals` are the str values the source may hold as constants; `filename` names the function
    in tracebacks and profiles only (it is never source). Raises GeneratedCodeError when the source
    breaks a rule of this module."""
    literals = tuple(literals)
    key = (source, name, filename, frozenset(namespace), frozenset(literals))
    code = _COMPILED.get(key)
    if code is None:
        code = compile(check_source(source, name, namespace, literals), filename, "exec")
        bounded_put(_COMPILED, key, code, _COMPILED_LIMIT)
    env: dict[str, Any] = dict(namespace)
    env["__builtins__"] = {}
    exec(code, env)
    return env[name]


def check_source(source: str, name: str, namespace: Mapping[str, Any], literals: Iterable[Any] = ()) -> ast.Module:
    """The parsed `source`; raises GeneratedCodeError unless it is one function `name` of the allowed
    syntax that reads only its parameters, its locals and `namespace`, and holds only declared
    string literals."""
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise GeneratedCodeError(f"generated source does not parse: {e}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise GeneratedCodeError(f"generated source must be exactly one function {name!r}")
    func = tree.body[0]
    args = func.args
    if (func.decorator_list or func.returns is not None or args.vararg or args.kwarg or args.posonlyargs
            or args.kwonlyargs or args.defaults or args.kw_defaults):
        raise GeneratedCodeError("a generated function takes plain positional parameters only")
    declared = set()
    for value in literals:
        if type(value) is not str:
            raise GeneratedCodeError(f"a declared literal must be a str, not {type(value).__name__}")
        declared.add(value)
    nodes = _nodes(func)
    stored = {node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound = {a.arg for a in args.args} | stored
    for node in nodes:
        kind = type(node)
        if kind not in _ALLOWED_NODES or (kind is ast.FunctionDef and node is not func):
            raise GeneratedCodeError(f"{kind.__name__} is not allowed in generated source "
                                     f"(line {getattr(node, 'lineno', '?')})")
        if isinstance(node, ast.Name):
            if node.id.startswith("__") or (node.id not in bound and node.id not in namespace):
                raise GeneratedCodeError(f"generated source reads {node.id!r}, which is neither a parameter, "
                                         "a local nor a name of its namespace")
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise GeneratedCodeError(f"generated source reads the attribute {node.attr!r}")
        elif isinstance(node, ast.Constant) and type(node.value) not in _PLAIN_CONSTANTS:
            if type(node.value) is not str or node.value not in declared:
                raise GeneratedCodeError(f"generated source holds the undeclared constant {node.value!r}")
    return tree


def _nodes(root: ast.AST) -> list[ast.AST]:
    """Every node under `root`, itself included (ast.walk's nodes, in another order, at half its cost)."""
    out: list[ast.AST] = []
    stack = [root]
    AST = ast.AST
    while stack:
        node = stack.pop()
        out.append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, AST))
            elif isinstance(value, AST):
                stack.append(value)
    return out
