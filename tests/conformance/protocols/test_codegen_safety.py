"""Generated row readers treat whatever a stream names as data (protocols/common/codegen.py).

Two halves: codegen's own rules, each broken by a hand-written source that must be refused; and
each protocol whose fast path generates code (Open Protocol, Canal-JSON, Simple JSON), fed tables
whose column names and values are hostile text, decoded with the fast path and with
`fast-path = false`: the events must be equal, the fast path must have generated (and run) a
reader for the names it can take, no injected text may have run, and no column name may appear
in a generated source other than as the repr() of itself.
"""
from __future__ import annotations

import ast
import builtins

import orjson
import pytest

from tests.helpers import assert_fast_matches_reference
from ticdc_conformance.protocols import canal_json, open_protocol, simple
from ticdc_conformance.protocols.canal_json.java_type import expected_sql_type
from ticdc_conformance.protocols.canal_json.mysql_type import parse_mysql_type
from ticdc_conformance.protocols.canal_json.values import decode_value
from ticdc_conformance.protocols.common import codegen
from ticdc_conformance.protocols.common.codegen import GeneratedCodeError, compile_function, literal
from ticdc_contract.record import KafkaRecord

from .test_simple_decoder import column, dtype, pk
from .test_simple_fast_path import JSON

CANARY = "codegen_canary_ran"
_SET_CANARY = f"__import__('builtins').setattr(__import__('builtins'), '{CANARY}', 1)"
# Text that runs _SET_CANARY if it is ever pasted into source: bare, closing a '…' or "…" literal,
# or a triple-quoted one, or ending a line.
INJECTIONS = [_SET_CANARY, f"x'); {_SET_CANARY}; ('", f"'''+{_SET_CANARY}+'''", f"x') or {_SET_CANARY} #"]
# The same with a double quote, a backslash or a newline, which msgspec cannot match as a field name.
UNMATCHABLE_INJECTIONS = [f'x"); {_SET_CANARY}; ("', f"\n{_SET_CANARY}\n", f"x\\'); {_SET_CANARY} #"]
# Names that read as code or clash with what generated code binds, keywords, unicode, a long one.
NAMES = ["id", "class", "None", "True", "event", "msg", "row", "new", "old", "key", "N0", "t0", "r0", "c0",
         "KEY", "Decline", "__init__", "__builtins__", "__class__", "a'b", "{x}", "名字", "😀", "x y", "lambda: 1",
         "0", "'''", "Ω" * 3, "x" * 5000, *INJECTIONS]
# Names msgspec cannot match without unescaping (Canal-JSON and Simple leave their tables to the
# reference path; the names still reach Open Protocol's reader).
UNMATCHABLE = ['a"b', "a\\b", "x\ny", "t\tab", '"""', *UNMATCHABLE_INJECTIONS]
VALUES = ["", "'", '"', "\\", "\n", "\\n", "'''", '"""', _SET_CANARY, f"'); {_SET_CANARY} #", "名字😀", "\x00",
          "y" * 100_000]


@pytest.fixture
def sources(monkeypatch):
    """The generated sources codegen compiles during a test, and a check that none ran injected text."""
    seen: list[tuple[str, frozenset]] = []
    check = codegen.check_source

    def spy(source, name, namespace, literals=()):
        literals = tuple(literals)
        seen.append((source, frozenset(literals)))
        return check(source, name, namespace, literals)
    monkeypatch.setattr(codegen, "check_source", spy)
    yield seen
    assert not hasattr(builtins, CANARY)


def _names_are_data(seen: list[tuple[str, frozenset]], names: list[str]) -> None:
    """No column name is in a generated source but as a str constant it was declared as."""
    assert seen
    for source, declared in seen:
        constants = {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)}
        for name in names:
            if name in constants:
                assert name in declared and literal(name) in source
            elif not name.isidentifier() and len(name) >= 3:  # identifiers are the template's words too
                assert name not in source, name


# --- codegen's rules -------------------------------------------------------------------------------------

def test_a_plain_generated_function_compiles_and_runs_without_builtins():
    source = "def f(x, y):\n    if x is None:\n        return [Y, 'a']\n    return {'k': -1 <= x < LEN(y)}\n"
    f = compile_function(source, "f", {"Y": "bound", "LEN": len}, "<test>", ["a", "k"])
    assert f(None, "") == ["bound", "a"] and f(0, "ab") == {"k": True}
    assert f.__globals__["__builtins__"] == {}


def test_one_source_compiled_once_still_binds_each_namespace_apart():
    source = "def f():\n    return Y\n"
    first = compile_function(source, "f", {"Y": 1}, "<test>")
    second = compile_function(source, "f", {"Y": 2}, "<test>")
    assert (first(), second()) == (1, 2) and first.__code__ is second.__code__
    # A namespace without a name the source reads is checked anew, not served from the cache.
    with pytest.raises(GeneratedCodeError, match="'Y'"):
        compile_function(source, "f", {"Z": 1}, "<test>")


@pytest.mark.parametrize("source, why", [
    ("def f(x):\n    return __import__(x)\n", "'__import__'"),
    ("def f(x):\n    return len(x)\n", "'len'"),
    ("def f(x):\n    return eval(x)\n", "'eval'"),
    ("def f(x):\n    return x.__class__\n", "attribute '__class__'"),
    ("def f(x):\n    return x._private\n", "attribute '_private'"),
    ("def f(x):\n    return 'undeclared'\n", "undeclared constant"),
    ("def f(x):\n    return b'bytes'\n", "undeclared constant"),
    ("def f(x):\n    return 1.5\n", "undeclared constant"),
    ("def f(x):\n    import os\n", "Import"),
    ("def f(x):\n    return lambda: x\n", "Lambda"),
    ("def f(x):\n    return [y for y in x]\n", "ListComp"),
    ("def f(x):\n    return f'{x}'\n", "JoinedStr"),
    ("def f(x):\n    return X(*x)\n", "Starred"),
    ("def f(x):\n    def g():\n        pass\n", "FunctionDef"),
    ("def f(x):\n    for y in x:\n        pass\n", "For"),
    ("def f(x):\n    try:\n        pass\n    except X:\n        pass\n", "Try"),
    ("def f(x):\n    global X\n", "Global"),
    ("def f(x):\n    return x\nX()\n", "exactly one function"),
    ("def g(x):\n    return x\n", "exactly one function"),
    ("@X\ndef f(x):\n    return x\n", "plain positional"),
    ("def f(x=X):\n    return x\n", "plain positional"),
    ("def f(*x):\n    return x\n", "plain positional"),
    ("def f(x):\n    return 'a\n", "does not parse"),
])
def test_source_breaking_a_rule_is_refused_before_it_runs(source, why):
    with pytest.raises(GeneratedCodeError, match=why):
        compile_function(source, "f", {"X": object()}, "<test>", ["ok"])


def test_a_literal_is_the_repr_of_a_plain_value_only():
    for value in [*NAMES, *UNMATCHABLE, *VALUES, 0, -2**64, True, None]:
        assert ast.literal_eval(literal(value)) == value
        assert type(ast.literal_eval(literal(value))) is type(value)

    class Sly(str):
        def __repr__(self) -> str:
            return _SET_CANARY
    for value in (Sly("x"), 1.5, b"x", ("x",), object()):
        with pytest.raises(GeneratedCodeError):
            literal(value)
    with pytest.raises(GeneratedCodeError, match="must be a str"):
        compile_function("def f():\n    return 1\n", "f", {}, "<test>", [Sly("x")])


# --- each protocol's generated readers -------------------------------------------------------------------

def _same_both_ways(package, options: dict, records: list[KafkaRecord]) -> list:
    """Each record's outcome, asserted identical with the fast path and without; none an error."""
    fast, reference = package.new_decoder(options), package.new_decoder({**options, "fast-path": False})
    outcomes = [assert_fast_matches_reference(fast, reference, rec) for rec in records]
    assert not [o for o in outcomes if o[0] == "DecodeError"]
    return outcomes


def _records(values: list[bytes], key: bytes | None = None) -> list[KafkaRecord]:
    return [KafkaRecord("t", 0, offset, key if isinstance(key, bytes) else None, value, 0)
            for offset, value in enumerate(values)]


# Canal-JSON: a column of each kind the reader handles differently, rotating over the names.
_CANAL_KINDS = [("int", "-3", "4"), ("varchar", None, None), ("decimal(8,2)", "1.50", "2.00"), ("varbinary", "ÿ", "a")]


def _canal_message(names: list[str], kind: str, data: dict, old) -> bytes:
    types = {"id": "bigint", **{n: _CANAL_KINDS[i % 4][0] for i, n in enumerate(names)}}
    codes = {n: expected_sql_type(parse_mysql_type(t), None if data is None or data[n] is None
                                  else decode_value(n, parse_mysql_type(t), data[n])) for n, t in types.items()}
    return orjson.dumps({"id": 0, "database": "d", "table": "t", "pkNames": ["id"], "isDdl": False, "type": kind,
                         "es": 1, "ts": 1, "sql": "", "sqlType": codes, "mysqlType": types, "old": old,
                         "data": [data], "_tidb": {"commitTs": 7}})


def _canal_rows(names: list[str], value_index: int) -> tuple[dict, dict]:
    new, old = {"id": str(value_index)}, {}
    for i, name in enumerate(names):
        _, a, b = _CANAL_KINDS[i % 4]
        text = VALUES[(i + value_index) % len(VALUES)]
        new[name], old[name] = (text, text[::-1]) if a is None else (a, b)
    return new, old


@pytest.mark.parametrize("names, taken", [(NAMES[1:], True), (UNMATCHABLE, False)], ids=["named", "unmatchable"])
def test_canal_json_reads_hostile_names_and_values_as_data(sources, names, taken):
    options = {"enable-tidb-extension": True}
    values = []
    for n in range(3):
        new, old = _canal_rows(names, n)
        values += [_canal_message(names, "INSERT", new, None), _canal_message(names, "UPDATE", new, [old]),
                   _canal_message(names, "DELETE", new, None)]
    _same_both_ways(canal_json, options, _records(values * 2))
    if taken:
        _names_are_data(sources, names)
    else:
        assert not sources


# Open Protocol: type code, flags and a value per kind (a BIGINT, a VARCHAR, a DECIMAL).
_OPEN_KINDS = [(8, 0x41, None), (15, 0x40, "text"), (246, 0x41, "1.50")]


def _open_record(offset: int, names: list[str], value_index: int, kind: str) -> KafkaRecord:
    def image(shift: int) -> dict:
        columns = {"id": {"t": 8, "h": True, "f": 0x0B, "v": value_index}}
        for i, name in enumerate(names):
            code, flags, v = _OPEN_KINDS[i % 3]
            if v == "text":
                v = VALUES[(i + value_index + shift) % len(VALUES)]
            columns[name] = {"t": code, "f": flags, "v": i + shift if v is None else v}
        return columns
    value = {"insert": {"u": image(0)}, "update": {"u": image(0), "p": image(1)}, "delete": {"d": image(1)}}[kind]
    key = orjson.dumps({"ts": 7, "scm": "db", "tbl": "t", "t": 1})
    value_bytes = orjson.dumps(value)
    return KafkaRecord("t", 0, offset, (1).to_bytes(8, "big") + len(key).to_bytes(8, "big") + key,
                       len(value_bytes).to_bytes(8, "big") + value_bytes, 0)


def test_open_protocol_reads_hostile_names_and_values_as_data(sources):
    names = NAMES[1:] + UNMATCHABLE
    records = [_open_record(i, names, i // 3, kind)
               for i, kind in enumerate(["insert", "update", "delete"] * 4)]
    _same_both_ways(open_protocol, {}, records)
    _names_are_data(sources, names)


# Simple JSON: a BIGINT, a VARCHAR and a DECIMAL, rotating over the names.
_SIMPLE_KINDS = [(dtype("bigint"), "5"), (dtype("varchar", "utf8mb4"), None), (dtype("decimal", decimal=2), "3.25")]


@pytest.mark.parametrize("names, taken", [(NAMES[1:], True), (UNMATCHABLE, False)], ids=["named", "unmatchable"])
def test_simple_json_reads_hostile_names_and_values_as_data(sources, names, taken):
    columns = [column("id", dtype("bigint"), nullable=False)]
    columns += [column(name, _SIMPLE_KINDS[i % 3][0]) for i, name in enumerate(names)]

    def row(n: int) -> dict:
        values = {"id": str(n)}
        for i, name in enumerate(names):
            wire = _SIMPLE_KINDS[i % 3][1]
            values[name] = VALUES[(i + n) % len(VALUES)] if wire is None else wire
        return values
    values = [JSON.bootstrap(columns, [pk("id")])]
    for n in range(3):
        values += [JSON.dml("INSERT", data=row(n)), JSON.dml("UPDATE", data=row(n), old=row(n + 1)),
                   JSON.dml("DELETE", old=row(n))]
    _same_both_ways(simple, {"encoding-format": "json"}, _records(values))
    if taken:
        _names_are_data(sources, names)
    else:
        assert not sources
