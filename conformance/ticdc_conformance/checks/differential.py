"""Differential check: a consumer's final tables against the ground truth, at the protocol's fidelity.

The truth row is first projected onto what a perfect consumer of the protocol can know
(`protocols/<protocol>/fidelity.py`), then compared key by key. Every finding names the table,
the row key and, for differing rows, the DeepDiff of expected and actual row (findings/finding.py,
which also shows it); the runner then adds the commit ts and the record (checks/locate.py).
The encodings compared with one another are cross_encoding.py (beside the entry points: it generates them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import orjson

from ticdc_conformance.consumers.output import final_file_name
from ticdc_conformance.findings.finding import APPLIED_TWICE, Finding, row_diff
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.common.wire import Malformed, json_object
from ticdc_contract.canonical import key_order_token
from ticdc_contract.model import TableSchema
from ticdc_contract.schema_json import table_from_json

from .arrival_order import excuse_undecidable
from .causes import ask, explain, foreign_table, is_surplus
from .projected_truth import written_finals
from .projection import row_projection
from .selection import consumer_table, selectors, unjudged_columns
from .upstream_history import RowQuestions, trace
from .value_forms import normalise_rows


@dataclass
class TableVerdict:
    table: str
    expected_rows: int
    actual_rows: int
    findings: list[Finding]
    # Rows whose final value depends on an order the stream does not convey ({table, key, reason}).
    undecidable: list[dict] = field(default_factory=list)


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
    """A consumer's final/ file, each line checked: its output is input the suite does not control.
    Its numbers keep every digit they were written with (exact_json)."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        try:
            return [json_object(line, f"final/{path.name} line {n}", exact=True)
                    for n, line in enumerate(f, 1) if line.strip()]
        except Malformed as e:
            raise UnreadableRows(e.reason) from None


def compare_rows_as_multiset(name: str, expected: list[dict], actual: list[dict]) -> list[Finding]:
    """A table without a handle key: rows have no identity but their image, so the states are
    compared as multisets of rows."""
    def count(rows):
        c: dict[bytes, int] = {}
        for r in rows:
            k = exact_json.dumps(r, orjson.OPT_SORT_KEYS)
            c[k] = c.get(k, 0) + 1
        return c

    e, a = count(expected), count(actual)
    findings = []
    for k in sorted(e.keys() | a.keys()):
        diff = a.get(k, 0) - e.get(k, 0)
        row = exact_json.loads(k)
        if diff < 0:
            findings.append(Finding("CONSUMER-STATE-1", name, None,
                                    f"{-diff} row(s) missing from the consumer's table: {k.decode()}", expected=row))
        elif diff > 0:
            # Its cause (a DELETE or UPDATE not applied, a DDL ignored, an event applied twice) is
            # found in the upstream history (checks/causes.py).
            held = f", upstream holds it {e[k]} time(s)" if e.get(k) else ""
            findings.append(Finding("CONSUMER-ROW-1", name, None,
                                    f"{diff} row(s) more in the consumer's table than upstream{held}: {k.decode()}",
                                    actual=row))
    return findings


def compare_table(table: TableSchema, expected: list[dict], actual: list[dict]) -> list[Finding]:
    name = table.qualified_name
    key_cols = list(table.handle_key)
    if not key_cols:
        return compare_rows_as_multiset(name, expected, actual)
    findings: list[Finding] = []

    twice: dict[str, list[dict]] = {}  # token -> every copy of a key the consumer holds more than once

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
                if side == "expected":  # two upstream keys equal at the protocol's fidelity
                    findings.append(Finding("CONSUMER-STATE-1", name, key, "upstream holds two rows whose keys "
                                            "are equal at the protocol's fidelity: they cannot be told apart"))
                    continue
                twice.setdefault(token, [out[token][1]]).append(r)
                continue
            out[token] = (key, r)
        return out

    exp, act = index(expected, "expected"), index(actual, "actual")
    for token in sorted(twice):
        key = act[token][0]
        want = exp.get(token, (None, None))[1]
        stale = [r for r in twice[token] if r != want]
        if want in twice[token]:
            act[token] = (key, want)  # the right copy is compared; the others are the finding
        if not stale or all(r == stale[0] for r in twice[token]):
            findings.append(Finding("CONSUMER-DEDUP-1", name, key, f"the consumer's table holds this row "
                                    f"{len(twice[token])} times under one key: {APPLIED_TWICE}",
                                    actual=twice[token][0]))
        else:
            # A copy upstream replaced: its cause is found in the upstream history (checks/causes.py).
            findings.append(Finding("CONSUMER-DEDUP-1", name, key, f"the consumer's table holds this key "
                                    f"{len(twice[token])} times, with different images", actual=stale[-1]))
    for token in sorted(exp.keys() - act.keys()):
        key, e = exp[token]
        findings.append(Finding("CONSUMER-STATE-1", name, key, "row missing from the consumer's table", expected=e))
    for token in sorted(act.keys() - exp.keys()):
        key, a = act[token]
        findings.append(Finding("CONSUMER-ROW-1", name, key,
                                "row present in the consumer's table under a key upstream does not hold", actual=a))
    for token in sorted(exp.keys() & act.keys()):
        key, e = exp[token]
        _, a = act[token]
        if e == a:
            continue
        findings.append(Finding("CONSUMER-STATE-1", name, key, "row differs from upstream", row_diff(e, a),
                                expected=e, actual=a))
    return findings


def check_final_state(truth: Path, consumer_out: Path, protocol: str, options: dict,
                      manifest: Optional[dict] = None) -> list[TableVerdict]:
    """Every table upstream holds at the end against the consumer's, then every other file of the
    consumer's final/ (a table upstream does not hold: CONSUMER-TABLE-1). Rows the consumer holds in
    excess are given their cause from the upstream history (checks/causes.py), which `manifest`
    (default: the one `generate` wrote next to `truth`) lets the suite replay."""
    verdicts = []
    tables = load_truth_tables(truth)
    chosen = selectors(options)  # sink.column-selectors: a consumer knows the selected columns only
    truth_final = Path(truth) / "final"
    written = written_finals(truth, protocol, options)  # {} unless a DEFAULT changed in Debezium
    for qname in sorted(tables):
        t = consumer_table(tables[qname], chosen)
        expected_path = truth_final / final_file_name(t.schema, t.table)
        if not expected_path.exists():
            continue  # dropped upstream
        if qname in written:
            upstream, expected = written[qname]
        else:
            upstream = read_rows(expected_path)
            expected = list(map(row_projection(t, protocol, options), upstream))
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
        findings = [f for _, f in extra_columns(t, actual)] + compare_table(t, expected, actual)
        if not actual_path.exists() and expected:
            findings.insert(0, Finding("CONSUMER-STATE-1", qname, None, f"the consumer wrote no {actual_path.name}"))
        verdicts.append(TableVerdict(qname, len(expected), len(actual), findings))
    judged = {v.table for v in verdicts}
    foreign, unreadable = foreign_files(Path(consumer_out) / "final", judged)
    verdicts += unreadable
    # Without commit ts, rows tied to an event of the same millisecond are undecidable (arrival_order.py).
    foreign = excuse_undecidable(verdicts, foreign, truth, protocol, options)
    manifest = manifest if manifest is not None else _manifest_next_to(truth)
    if manifest is not None:
        manifest = dict(manifest, sink=options)  # the history read at the options the tables were compared at
    questions = RowQuestions()
    asked = [{i: ask(questions, f) for i, f in enumerate(v.findings) if is_surplus(f)} for v in verdicts]
    fates = None
    if manifest is not None and (len(questions) or foreign):
        views = {q: consumer_table(tables[q], chosen) for q in tables}
        fates = trace(questions, manifest, truth, {q: v.handle_key for q, v in views.items()},
                      {q: unjudged_columns(tables[q], chosen) for q in tables})
        for v, a in zip(verdicts, asked):
            if a:
                v.findings = explain(v.findings, questions, a)
    for qname, rows in foreign:
        schema = consumer_table(tables[qname], chosen) if qname in tables else None
        verdicts.append(TableVerdict(qname, 0, len(rows), [foreign_table(qname, rows, schema, fates)]))
    return verdicts


def extra_columns(table: TableSchema, actual: list[dict]) -> list[tuple[str, Finding]]:
    """CONSUMER-COLUMN-1 once per column the consumer's rows hold that the table does not have
    (unjudged columns are already left out), naming the first key that holds it, with the column's
    name; the column is then dropped from the rows so that it is not reported again as a difference
    of every row."""
    known = {c.name for c in table.columns}
    findings: list[tuple[str, Finding]] = []
    seen: set[str] = set()
    for r in actual:
        extra = [c for c in r if c not in known]
        for c in extra:
            if c not in seen:
                seen.add(c)
                key = [r.get(k) for k in table.handle_key] if table.handle_key else None
                findings.append((c, Finding("CONSUMER-COLUMN-1", table.qualified_name, key,
                                        f"the consumer's rows hold a column {c!r} the table does not have "
                                        f"(its columns: {', '.join(sorted(known))})",
                                        actual=dict(r) if key is None else None)))
            del r[c]
    return findings


def foreign_files(final_dir: Path, judged: set[str]) -> tuple[list[tuple[str, list[dict]]], list[TableVerdict]]:
    """The consumer's final/ files that are no table upstream holds at the end, with their rows; and
    a CONSUMER-OUTPUT-1 verdict for every file whose name is not `<schema>.<table>.ndjson` or whose
    lines are not rows."""
    foreign, unreadable = [], []
    for path in sorted(final_dir.glob("*.ndjson")) if final_dir.is_dir() else []:
        qname = path.name[: -len(".ndjson")]
        if qname in judged:
            continue
        schema, dot, table = qname.partition(".")
        if not (schema and dot and table):
            unreadable.append(TableVerdict(qname, 0, 0, [Finding(
                "CONSUMER-OUTPUT-1", f"final/{path.name}", None,
                "a final/ file is named <schema>.<table>.ndjson; this name says no table")]))
            continue
        try:
            foreign.append((qname, read_consumer_rows(path)))
        except UnreadableRows as e:
            unreadable.append(TableVerdict(qname, 0, 0, [Finding("CONSUMER-OUTPUT-1", qname, None, str(e))]))
    return foreign, unreadable


def _manifest_next_to(truth: Path) -> Optional[dict]:
    path = Path(truth).parent / "manifest.json"
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # a truth without its case: rows are compared, their causes not looked up
