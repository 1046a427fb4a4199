"""The HTML report: one static, self-contained page (docs/reports.md).

It is rendered from the jinja2 template in templates/ (its style sheet inlined, no script, no
request to anywhere), with autoescape on: every value a consumer wrote, a rule quoted, a path or a
command is escaped. Sections: the run's header, the rule × case grid (each cell links to its
failure), the divergence plot (plot.py), each failure with its minimal diff and replay command, the
expected-failure list's judgement, and the fidelity matrix of the run's encodings.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

import jinja2
import orjson

from ticdc_conformance.findings.case_ids import OUTCOME_IDS, run_rules
from ticdc_conformance.findings.finding import ABSENT_TEXT, Finding, document_diff, rule_quote
from ticdc_conformance.findings.outcome import (
    EXIT_NOTHING_JUDGED,
    EXIT_STALE_EXPECTED_FAILURES,
    NOT_APPLICABLE,
    NOTHING_JUDGED,
    STALE_EXPECTED_FAILURES,
)
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.runner import EncodingResult

from .checks import EXPECTED, FAILED, PASSED, Check, RunChecks
from .plot import divergence_charts

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = "report.html.j2"
EXAMPLE_CHARS = 60  # a lossy cell's example in the fidelity table; docs/fidelity.md has the whole values
FINDINGS_SHOWN = 20  # per failed check on the page; the JSON files keep them all
FINDINGS_OPEN = 3  # of those, shown unfolded; the rest behind a <details>
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:=@-]")


def _environment() -> jinja2.Environment:
    # StrictUndefined: a field the template names but the context lacks is an error, never a blank.
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def anchor(check_id: str) -> str:
    """A fragment id for a check (the grid links to it): its id with only URL-safe characters."""
    return "check-" + _ID_CHARS.sub("_", check_id)


def _text(v: Any) -> str:
    return v if v == ABSENT_TEXT else exact_json.dumps(v, orjson.OPT_SORT_KEYS).decode()


def _short(text: str, chars: int = EXAMPLE_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def minimal_diff(f: Finding) -> dict:
    """The finding's minimal difference as table rows: DeepDiff's paths where the rows differ; the whole
    row, column by column, where only one side has it."""
    if f.diff:
        rows = []
        for path, c in f.diff.items():
            rows.append({"path": path, "expected": _text(c["expected"]), "actual": _text(c["actual"])})
            rows += [{"path": f"{path} ▸ {inner}", "expected": _text(e), "actual": _text(a)}
                     for inner, e, a in document_diff(c["expected"], c["actual"])]
        return {"kind": "deepdiff", "rows": rows}
    if f.expected is None and f.actual is None:
        return {"kind": "none", "rows": []}
    expected, actual = f.expected or {}, f.actual or {}
    columns = list(dict.fromkeys([*expected, *actual]))
    side = "upstream has this row, the consumer has none" if f.actual is None else \
        "the consumer has this row, upstream has none" if f.expected is None else "both sides have the row"
    return {"kind": "row", "note": side, "rows": [
        {"path": c, "expected": _text(expected[c]) if c in expected else ABSENT_TEXT,
         "actual": _text(actual[c]) if c in actual else ABSENT_TEXT} for c in columns]}


def _finding(f: Finding, encoding: str) -> dict:
    where = [("table", f.table)] + ([("key", _text(f.key))] if f.key is not None else []) \
        + ([("commit ts", str(f.commit_ts))] if f.commit_ts is not None else []) \
        + ([("checkpoint", str(f.checkpoint))] if f.checkpoint is not None else []) \
        + ([("record", f.record)] if f.record else []) + ([("DDL", f.ddl)] if f.ddl else []) \
        + ([("not located", f.unlocated)] if f.unlocated else [])
    return {"message": f.message, "where": where, "diff": minimal_diff(f), "quote": rule_quote(f.rule, encoding)}


def _failure(result: EncodingResult, check: Check, full_list: Sequence[Path]) -> dict:
    shown = check.findings[:FINDINGS_SHOWN]
    return {
        "id": check.id, "anchor": anchor(check.id), "rule": check.rule, "status": check.status,
        "expected_by": list(check.expected_by),
        "messages": [] if check.findings else [f.message for f in check.failures],
        "findings": [_finding(f, result.encoding) for f in shown],
        "more": len(check.findings) - len(shown),
        "full_list": [str(p) for p in full_list],
        "quote": rule_quote(check.rule, result.encoding) if check.rule not in OUTCOME_IDS else "",
    }


def _grid(checks: RunChecks) -> dict:
    results = checks.results
    one_scenario = len({(r.scenario, r.seed) for r in results}) == 1 and not any(r.variant for r in results)
    columns = [{"label": r.encoding if one_scenario else r.case_id, "case": r.case_id, "outcome": r.outcome}
               for r in results]
    by_rule: dict[str, list[Optional[Check]]] = {}
    for i, (_, case_checks) in enumerate(checks.cases):
        for c in case_checks:
            by_rule.setdefault(c.rule, [None] * len(results))[i] = c
    order = {rule: n for n, rule in enumerate((*run_rules(), *OUTCOME_IDS))}
    rules = sorted(by_rule, key=lambda rule: (order.get(rule, len(order) - len(OUTCOME_IDS) - 0.5), rule))
    rows = [{"rule": rule, "cells": [None if c is None else _cell(c, checks) for c in by_rule[rule]]}
            for rule in rules]
    return {"columns": columns, "rows": rows}


def _cell(c: Check, checks: RunChecks) -> dict:
    """A grid cell; a passing check an entry of the list still names is marked stale (it fails the run)."""
    j = checks.judgement
    stale = [j.where(e) for e in j.stale if e.judges_case(c.case) and e.rule in (None, c.rule)] \
        if j is not None and c.status == PASSED else []
    title = _cell_title(c) + (f"; listed as expected at {', '.join(stale)}: the entry is stale" if stale else "")
    href = "#" + anchor(c.id) if c.status in (FAILED, EXPECTED) else "#expected-failures" if stale else None
    return {"status": c.status, "findings": len(c.findings) or len(c.failures), "title": title, "href": href,
            "stale": bool(stale)}


def _cell_title(c: Check) -> str:
    if c.status == PASSED:
        return f"{c.id}: passed"
    if c.reason:
        return f"{c.id}: {c.reason}"
    what = f"{len(c.findings)} finding(s)" if c.findings else (c.failures[0].message if c.failures else "")
    return f"{c.id}: {c.status}, {what}" + (f" (expected: {', '.join(c.expected_by)})" if c.expected_by else "")


def fidelity(encodings: Sequence[str]) -> dict:
    """The fidelity matrix (fidelity/matrix.py) for the columns of the run's encodings: type × column ->
    exact, lossy (why, and an edge value it changes) or absent."""
    return _fidelity(tuple(sorted(set(encodings))))


@lru_cache(maxsize=8)  # about a second a column, the same for every report of a process
def _fidelity(encodings: tuple[str, ...]) -> dict:
    from ticdc_conformance.fidelity.matrix import COLUMNS, cell, type_label
    from ticdc_contract.type_catalogue import all_types_matrix

    columns = [c for c in COLUMNS if c.encoding in encodings] or list(COLUMNS)
    rows = []
    for t in all_types_matrix():
        cells = []
        for col in columns:
            c = cell(t, col)
            example = _short(f"{_text(c.example['value'])} → {_text(c.example['read'])}") if c.example else ""
            cells.append({"level": c.level, "why": c.why, "example": example})
        rows.append({"type": type_label(t), "cells": cells})
    return {"columns": [{"name": c.name, "options": ", ".join(f"{k}={v}" for k, v in c.settings().items())}
                        for c in columns], "rows": rows}


def _verdict(checks: RunChecks) -> str:
    """The run's verdict in words: the outcome that gives its exit status (findings/outcome.py)."""
    code, results = checks.exit_code, checks.results
    if code == EXIT_STALE_EXPECTED_FAILURES:
        return STALE_EXPECTED_FAILURES
    if code == EXIT_NOTHING_JUDGED:
        return NOTHING_JUDGED
    if code == 0:
        passed = sum(r.conformant for r in results)
        declined = sum(r.outcome == NOT_APPLICABLE for r in results)
        expected = len(checks.judgement.expected) if checks.judgement is not None else 0
        words = (["conformant"] if passed else ["nothing passed"]) \
            + ([f"{expected} expected failure(s)"] if expected else []) \
            + ([f"{declined} case(s) not applicable"] if declined else [])
        return ", ".join(words)
    return next(r.outcome for r in results if r.exit_code == code)


def _judgement(checks: RunChecks) -> Optional[dict]:
    j = checks.judgement
    if j is None:
        return None
    return {"file": str(j.path) if j.path is not None else "", "ok": j.ok,
            "counts": [(entry, j.where(entry), n) for entry, n in j.counts()],
            "unexpected": [f.id for f in j.unexpected],
            "stale": [(str(e), j.where(e)) for e in j.stale], "not_run": [(str(e), j.where(e)) for e in j.not_run]}


def context(checks: RunChecks, name: str, full_list) -> dict:
    results = checks.results
    cases = []
    for r, case_checks in checks.cases:
        failed = [c for c in case_checks if c.status in (FAILED, EXPECTED)]
        cases.append({"id": r.case_id, "outcome": r.outcome, "verdict": r.verdict_line, "replay": r.replay_command,
                      "error": r.error, "consumer_log": str(r.consumer_log) if r.consumer_log else "",
                      "checkpoints": r.checkpoint_summary, "records": r.records, "seconds": f"{r.seconds:.1f}",
                      "notes": list(r.notes), "undecidable": len(r.undecidable),
                      "failures": [_failure(r, c, full_list(r)) for c in failed]})
    return {
        "name": name,
        "scenarios": sorted({r.scenario for r in results}),
        "seeds": sorted({r.seed for r in results}),
        "consumers": sorted({r.consumer for r in results}),
        "verdict": _verdict(checks), "exit_code": checks.exit_code, "counts": checks.counts(),
        "grid": _grid(checks), "charts": divergence_charts(results), "cases": cases,
        "judgement": _judgement(checks),
        "fidelity": fidelity(sorted({r.encoding for r in results})), "findings_open": FINDINGS_OPEN,
    }


def render_html(checks: RunChecks, name: str, full_list) -> str:
    return _environment().get_template(TEMPLATE).render(context(checks, name, full_list))


def write_html(path: Path, checks: RunChecks, name: str, full_list) -> None:
    path.write_text(render_html(checks, name, full_list), encoding="utf-8")
