"""Tests marked `@pytest.mark.rules("ID", ...)`, found by reading tests/ with `ast` (no pytest run).

A mark applies where pytest would apply it:
- a decorator of a test function (`def test_*`) or of a test class (`class Test*`, all its tests);
- a module's `pytestmark = pytest.mark.rules(...)` (or a list of marks), all tests of the module;
- `marks=pytest.mark.rules(...)` of a `pytest.param` written inside a test's decorators.
Rule ids must be string literals: a mark whose ids cannot be read statically is an error naming
file and line, so nothing is silently left out of the coverage report.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MARK = "rules"


class MarkerError(ValueError):
    """A rules mark that cannot be read statically."""


@dataclass(frozen=True)
class MarkedTest:
    node_id: str  # pytest's id without parameters: path::[Class::]function
    rule_ids: tuple[str, ...]


def _is_rules_mark(node: ast.AST) -> bool:
    """`pytest.mark.rules(...)` or `mark.rules(...)` (from `from pytest import mark`)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != MARK:
        return False
    owner = node.func.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "mark") or \
        (isinstance(owner, ast.Name) and owner.id == "mark")


def _ids(call: ast.Call, where: str) -> list[str]:
    ids = []
    for arg in call.args:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            raise MarkerError(f"{where}:{call.lineno}: rules mark arguments must be string literals")
        ids.append(arg.value)
    if call.keywords or not ids:
        raise MarkerError(f"{where}:{call.lineno}: a rules mark takes rule ids only, at least one")
    return ids


def _marks_in(nodes: list[ast.AST], where: str) -> list[str]:
    found: list[str] = []
    for node in nodes:
        for sub in ast.walk(node):
            if _is_rules_mark(sub):
                found.extend(_ids(sub, where))
    return found


def _module_marks(tree: ast.Module, where: str) -> list[str]:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in stmt.targets):
            return _marks_in([stmt.value], where)
    return []


def _tests(body: list[ast.stmt], prefix: str, inherited: list[str], where: str) -> Iterator[MarkedTest]:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            ids = inherited + _marks_in(stmt.decorator_list, where)
            if ids:
                yield MarkedTest(f"{prefix}::{stmt.name}", tuple(dict.fromkeys(ids)))
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            yield from _tests(stmt.body, f"{prefix}::{stmt.name}",
                              inherited + _marks_in(stmt.decorator_list, where), where)


def marked_tests_in(path: Path, root: Path) -> list[MarkedTest]:
    """The marked tests of one file; node ids are relative to `root`'s parent (the checkout)."""
    rel = path.relative_to(root.parent).as_posix()
    source = path.read_text(encoding="utf-8")
    if MARK not in source:
        return []  # cheap skip: most files carry no mark
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError as e:
        raise MarkerError(f"{rel}:{e.lineno}: cannot parse ({e.msg})") from None
    return list(_tests(tree.body, rel, _module_marks(tree, rel), rel))


def find_marked_tests(tests_dir: Path) -> list[MarkedTest]:
    """Every marked test under `tests_dir` (test_*.py and *_test.py files), in path order."""
    tests_dir = Path(tests_dir).resolve()
    files = sorted(p for p in tests_dir.rglob("*.py") if p.name.startswith("test_") or p.name.endswith("_test.py"))
    out: list[MarkedTest] = []
    for path in files:
        out.extend(marked_tests_in(path, tests_dir))
    return out
