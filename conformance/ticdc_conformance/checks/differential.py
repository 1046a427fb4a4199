"""Differential check: a consumer's final tables against the ground truth, at the protocol's fidelity.

The truth row is first projected onto what a perfect consumer of the protocol can know
(`protocols/<protocol>/fidelity.py`), then compared key by key. Every finding names the table,
the row key and, for differing rows, the DeepDiff of expected and actual row (checks/finding.py,
which also shows it); the runner then adds the commit ts and the record (checks/locate.py).
The encodings compared with one another are checks/cross_encoding.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ticdc_generators.canonical import key_order_token
from ticdc_generators.model import TableSchema
from ticdc_generators.schema_json import table_from_json

from ..consumer.output import final_file_name
from ..protocols import protocol_package
from ..protocols.common import Malformed, json_object
from .finding import Finding, row_diff
from .selection import consumer_table, selectors, unjudged_columns
from .value_forms import normalise_rows

MAX_FINDINGS_PER_TABLE = 20


@dataclass
class TableVerdict:
    table: str
    expected_rows: int
    actual_rows: int
    findings: list[Finding]


def load_truth_tables(truth: Path) -> dict[str, TableSchema]:
    """The final schema of every table in the truth (later versions replace earlier ones)."""
    tables: dict[str, TableSchema] = {}
    with open(Path(truth) / "tables.ndjson", "rb") as f:
        for line in f:
            t = table_from_json(orjson.loads(line))
            tables[t.qualified_name] = t
    return tables


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


class UnreadableRows(ValueError):
    """A line of a consumer's final/ file that is not a JSON object."""


def read_consumer_rows(path: Path) -> list[dict[str, Any]]:
    """A consumer's final/ file, each line checked: its output is input the suite does not control."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        try:
            return [json_object(line, f"final/{path.name} line {n}") for n, line in enumerate(f, 1) if line.strip()]
        except Malformed as e:
            raise UnreadableRows(e.reason) from None


def project_truth_row(table: TableSchema, row: dict[str, Any], protocol: str, options: dict) -> dict[str, Any]:
    pkg = protocol_package(protocol)
    # A protocol whose encoding of a value depends on the column beyond its type (Debezium writes
    # a NULL as the column's DEFAULT) projects whole columns.
    column_projection = getattr(pkg, "project_column", None)
    if column_projection is not None:
        return {c.name: column_projection(c, row.get(c.name), options) for c in table.columns if not c.is_virtual}
    # Virtual generated columns never reach a consumer: TiCDC does not replicate them.
    return {c.name: pkg.project_value(c.type, row.get(c.name), options) for c in table.columns if not c.is_virtual}


def compare_rows_as_multiset(name: str, expected: list[dict], actual: list[dict]) -> list[Finding]:
    """A table without a handle key: rows have no identity but their image, so the states are
    compared as multisets of rows."""
    def count(rows):
        c: dict[bytes, int] = {}
        for r in rows:
            k = orjson.dumps(r, option=orjson.OPT_SORT_KEYS)
            c[k] = c.get(k, 0) + 1
        return c

    e, a = count(expected), count(actual)
    findings = []
    for k in sorted(e.keys() | a.keys()):
        diff = a.get(k, 0) - e.get(k, 0)
        row = orjson.loads(k)
        if diff < 0:
            findings.append(Finding("CONSUMER-STATE-1", name, None,
                                    f"{-diff} row(s) missing from the consumer's table: {k.decode()}", expected=row))
        elif diff > 0:
            findings.append(Finding("CONSUMER-STATE-1", name, None,
                                    f"{diff} row(s) present in the consumer's table but not upstream: {k.decode()}",
                                    actual=row))
    return findings


def compare_table(table: TableSchema, expected: list[dict], actual: list[dict]) -> list[Finding]:
    name = table.qualified_name
    key_cols = list(table.handle_key)
    if not key_cols:
        return compare_rows_as_multiset(name, expected, actual)
    findings: list[Finding] = []

    def index(rows: list[dict], side: str) -> dict[str, tuple[list, dict]]:
        out: dict[str, tuple[list, dict]] = {}
        for r in rows:
            if any(c not in r for c in key_cols):
                findings.append(Finding("CONSUMER-STATE-1", name, None,
                                        f"{side} row lacks key column(s) {key_cols}: {r}"))
                continue
            key = [r[c] for c in key_cols]
            token = key_order_token(key)
            if token in out:
                findings.append(Finding("CONSUMER-DEDUP-1", name, key, f"{side} state holds the key twice"))
            out[token] = (key, r)
        return out

    exp, act = index(expected, "expected"), index(actual, "actual")
    for token in sorted(exp.keys() - act.keys()):
        key, e = exp[token]
        findings.append(Finding("CONSUMER-STATE-1", name, key, "row missing from the consumer's table", expected=e))
    for token in sorted(act.keys() - exp.keys()):
        key, a = act[token]
        findings.append(Finding("CONSUMER-STATE-1", name, key,
                                "row present in the consumer's table but not upstream (a lost delete?)", actual=a))
    for token in sorted(exp.keys() & act.keys()):
        key, e = exp[token]
        _, a = act[token]
        if e == a:
            continue
        findings.append(Finding("CONSUMER-STATE-1", name, key, "row differs from upstream", row_diff(e, a),
                                expected=e, actual=a))
    return findings


def check_final_state(truth: Path, consumer_out: Path, protocol: str, options: dict) -> list[TableVerdict]:
    verdicts = []
    tables = load_truth_tables(truth)
    chosen = selectors(options)  # sink.column-selectors: a consumer knows the selected columns only
    truth_final = Path(truth) / "final"
    for qname in sorted(tables):
        t = consumer_table(tables[qname], chosen)
        expected_path = truth_final / final_file_name(t.schema, t.table)
        if not expected_path.exists():
            continue  # dropped upstream
        upstream = read_rows(expected_path)
        expected = [project_truth_row(t, r, protocol, options) for r in upstream]
        actual_path = Path(consumer_out) / "final" / final_file_name(t.schema, t.table)
        # Virtual generated and unselected columns never reach a consumer; what it writes there is not judged.
        hidden = unjudged_columns(tables[qname], chosen)
        try:
            actual = [{k: v for k, v in r.items() if k not in hidden} for r in read_consumer_rows(actual_path)]
        except UnreadableRows as e:  # judged unreadable as a whole: a partial table would list every row as missing
            verdicts.append(TableVerdict(qname, len(expected), 0, [Finding("CONSUMER-OUTPUT-1", qname, None, str(e))]))
            continue
        # Every faithful spelling of a value in the compared form, checked against upstream's row (value_forms.py).
        actual = normalise_rows(t, actual, upstream, expected, protocol, options)
        findings = compare_table(t, expected, actual)
        if not actual_path.exists() and expected:
            findings.insert(0, Finding("CONSUMER-STATE-1", qname, None, f"the consumer wrote no {actual_path.name}"))
        verdicts.append(TableVerdict(qname, len(expected), len(actual), findings))
    return verdicts
