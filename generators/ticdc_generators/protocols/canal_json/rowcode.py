"""Canal-JSON's fast path: a DML message's text from what is worked out once per table version.

`message.dml_value` is the reference: it looks every column's facts up and quotes every name for
each row. Here a `_Layout` per (table version, selected columns) holds the constant parts of the
message (its head up to `type`, `mysqlType`, the quoted keys) and two generated functions
(golang/codegen.py) that write the `sqlType` object and a row object column by column. The bytes
are `dml_value`'s for the rows it handles: whole rows (no handle-key-only cut, no
only-output-updated-columns `old`), with at least one column sent; the encoder sends every other
row down the reference path. tests/generators/protocols/test_canal_json_rowcode.py compares both
over the type matrix.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Optional

from ticdc_contract import tso
from ticdc_contract.model import Op, RowChange, TableSchema

from ..golang import json_text
from ..golang.codegen import compile_function
from .keys import pk_names
from .values import _JAVA_BY_BASE, _UNSIGNED_PROMOTION, is_binary, java_type, mysql_type, render_value

_QUOTE = json_text.quoter(json_text.EASYJSON)
_EVENT_TYPE = {Op.INSERT: '"INSERT"', Op.UPDATE: '"UPDATE"', Op.DELETE: '"DELETE"'}
_TEXT_BASES = frozenset(("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "decimal", "date",
                         "datetime", "timestamp", "time", "json"))
# The fixed fragments the generated sources may hold.
_CONSTANTS = ('"%d"', "null", "[{", "}]", "{", "}")
_LAYOUTS_KEPT = 1024


def _latin1(v: Any) -> str:
    return bytes(v).decode("latin-1")


# A binary value's text and a text value's, kept per value (json_text.memoized): the rows of an
# UPDATE and the later events of a row write the same values again, and a binary value's escaping
# is most of a row's cost.
_QUOTE_BINARY = json_text.memoized(lambda v: _QUOTE(_latin1(v)))
# render_value is str(value); canonical values of these types are already str
_QUOTE_TEXT = json_text.memoized(lambda v: _QUOTE(v if type(v) is str else str(v)))


def _column_expression(i: int, t, namespace: dict) -> str:
    """Source of the JSON text of column i's value `v{i}` (not null), as render_value + quote give it."""
    if is_binary(t):
        return f"QBIN(v{i})"
    if t.is_integer or t.base in ("year", "bit"):
        return f"('\"%d\"' % v{i})"
    if t.base in _TEXT_BASES:
        return f"QTEXT(v{i})"
    namespace[f"R{i}"] = partial(render_value, t)
    return f"QUOTE(R{i}(v{i}))"


def _row_object(columns: list) -> Callable[[dict], str]:
    """row -> `[{"name":"value",...}]`, TiCDC's fillColumns array of one object."""
    namespace: dict[str, Any] = {"QUOTE": _QUOTE, "QBIN": _QUOTE_BINARY, "QTEXT": _QUOTE_TEXT}
    lines = ["def row_object(row):"]
    parts = []
    for i, c in enumerate(columns):
        namespace[f"N{i}"] = c.name
        namespace[f"K{i}"] = ("," if i else "") + json_text.quote(c.name, json_text.EASYJSON) + ":"
        lines.append(f"    v{i} = row.get(N{i})")
        parts.append(f"K{i} + ('null' if v{i} is None else {_column_expression(i, c.type, namespace)})")
    lines.append("    return '[{' + " + " + ".join(parts) + " + '}]'")
    return compile_function("\n".join(lines) + "\n", "row_object", namespace, _CONSTANTS,
                            "<canal-json row object>")


def _sql_type(columns: list) -> Callable[[dict], str]:
    """row -> the `sqlType` object: each column's java.sql.Types code, an unsigned integer's
    promoted to the next wider type when its value needs it (values.java_type)."""
    namespace: dict[str, Any] = {"INT": int}
    lines = ["def sql_type(row):"]
    parts = []
    for i, c in enumerate(columns):
        t = c.type
        key = ("," if i else "") + json_text.quote(c.name, json_text.EASYJSON) + ":"
        promoted = t.unsigned and t.base in _UNSIGNED_PROMOTION and t.base in _JAVA_BY_BASE
        if not promoted:
            namespace[f"C{i}"] = key + str(java_type(t, None))
            parts.append(f"C{i}")
            continue
        limit, wider = _UNSIGNED_PROMOTION[t.base]
        namespace.update({f"N{i}": c.name, f"L{i}": limit, f"C{i}": key + str(_JAVA_BY_BASE[t.base]),
                          f"W{i}": key + str(wider)})
        lines.append(f"    v{i} = row.get(N{i})")
        parts.append(f"(W{i} if v{i} is not None and INT(v{i}) > L{i} else C{i})")
    lines.append("    return '{' + " + " + ".join(parts) + " + '}'")
    return compile_function("\n".join(lines) + "\n", "sql_type", namespace, _CONSTANTS, "<canal-json sqlType>")


class _Layout:
    def __init__(self, table: TableSchema, selected: Optional[frozenset[str]], content_compatible: bool,
                 tiflow: bool) -> None:
        self.table = table  # kept so that the id it is found by stays this version's
        chosen = [c for c in table.columns if selected is None or c.name in selected]
        self.empty = not chosen
        names = [n for n in pk_names(table) if selected is None or not tiflow or n in selected]
        quote = partial(json_text.quote, dialect=json_text.EASYJSON)
        self.head = ('{"id":0,"database":' + quote(table.schema) + ',"table":' + quote(table.table)
                     + ',"pkNames":[' + ",".join(quote(n) for n in names) + '],"isDdl":false,"type":')
        if chosen:
            self.mysql_type = json_text.obj(((c.name, quote(mysql_type(c.type, content_compatible))) for c in chosen),
                                            json_text.EASYJSON)
            self.sql_type = _sql_type(chosen)
            self.row_object = _row_object(chosen)


class DMLWriter:
    """The DML messages of one encoder: `value` gives `dml_value`'s bytes, or None for a row the
    fast path does not handle."""

    def __init__(self, enable_tidb_extension: bool, content_compatible: bool, tiflow: bool) -> None:
        self._tidb = enable_tidb_extension
        self._content_compatible = content_compatible
        self._tiflow = tiflow
        self._layouts: dict[tuple[int, Optional[frozenset[str]]], _Layout] = {}

    def _layout(self, table: TableSchema, selected: Optional[frozenset[str]]) -> _Layout:
        key = (id(table), selected)
        layout = self._layouts.get(key)
        if layout is None or layout.table is not table:
            if len(self._layouts) >= _LAYOUTS_KEPT:
                self._layouts.clear()
            layout = self._layouts[key] = _Layout(table, selected, self._content_compatible, self._tiflow)
        return layout

    def value(self, change: RowChange, commit_ts: int, selected: Optional[frozenset[str]]) -> Optional[bytes]:
        layout = self._layout(change.table, selected)
        if layout.empty:
            return None
        op = change.op
        row = (change.before if op is Op.DELETE else change.after) or {}
        physical = str(tso.physical_ms(commit_ts))
        if op is Op.UPDATE:
            old = layout.row_object(change.before or {})
        else:
            old = "null"
        text = (layout.head + _EVENT_TYPE[op] + ',"es":' + physical + ',"ts":' + physical + ',"sql":"","sqlType":'
                + layout.sql_type(row) + ',"mysqlType":' + layout.mysql_type + ',"old":' + old + ',"data":'
                + layout.row_object(row))
        if self._tidb:
            text += ',"_tidb":{"commitTs":' + str(commit_ts) + "}}"
        else:
            text += "}"
        return text.encode("utf-8")
