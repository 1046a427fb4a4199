"""Findings that lead to causes: what upstream did to the rows and tables a consumer holds in excess.

A comparison of tables sees a row the consumer holds and upstream does not (CONSUMER-ROW-1) or a
key held twice (CONSUMER-DEDUP-1); the upstream history (checks/upstream_history.py) tells why:

| upstream did | rule | one finding per |
|---|---|---|
| deleted the row at ts T | CONSUMER-DELETE-1 | row |
| an UPDATE at T moved the row to another key, or replaced this image | CONSUMER-UPDATE-1 | row |
| a TRUNCATE / DROP / RENAME (any DDL that removes rows) at T | CONSUMER-DDL-3 | table and DDL, with a count |
| holds the same row: the consumer applied an event twice | CONSUMER-DEDUP-1 | row |
| never had a row under that key | CONSUMER-ROW-1 | row |

A table the consumer holds that upstream does not is CONSUMER-TABLE-1, saying what upstream did
to it (never created / dropped at T by QUERY / renamed to X at T).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import orjson

from ticdc_conformance.findings.finding import APPLIED_TWICE, Finding
from ticdc_conformance.protocols.common import exact_json
from ticdc_contract.model import TableSchema

from .upstream_history import Gone, RowQuestions, TableFates, ddl_words

FIRST_KEYS_NAMED = 3


def _json(v) -> str:
    return exact_json.dumps(v, orjson.OPT_SORT_KEYS).decode()


def is_surplus(f: Finding) -> bool:
    """A row the consumer holds beyond upstream's: the findings whose cause the history can tell."""
    return f.actual is not None and f.expected is None and f.rule in ("CONSUMER-ROW-1", "CONSUMER-DEDUP-1") \
        and not (f.rule == "CONSUMER-DEDUP-1" and APPLIED_TWICE in f.message)


def ask(questions: RowQuestions, f: Finding, bound: float = float("inf")) -> int:
    """A question for the surplus finding `f`: what last happened upstream to its key (or image)."""
    image = exact_json.dumps(f.actual, orjson.OPT_SORT_KEYS) if f.rule == "CONSUMER-DEDUP-1" else None
    return questions.ask(f.table, f.key, f.actual, bound, image)


def first_keys(keys: list, total: int) -> str:
    shown = ", ".join(_json(k) for k in keys[:FIRST_KEYS_NAMED])
    return shown + (f" and {total - FIRST_KEYS_NAMED} more" if total > FIRST_KEYS_NAMED else "")


def explain(findings: list[Finding], questions: RowQuestions, asked: dict[int, int],
            all_listed: bool = True) -> list[Finding]:
    """`findings` with every surplus row given its cause (`asked`: finding index -> question index,
    answered by `upstream_history.trace`). Rows a DDL removed become one CONSUMER-DDL-3 per table and
    DDL, in the place of the first of them; `all_listed` False: the check listed only some rows, so
    the count is a lower bound."""
    out: list[Optional[Finding]] = []
    by_ddl: dict[tuple[str, int, str], tuple[int, list[Finding], Gone]] = {}
    for i, f in enumerate(findings):
        q = asked.get(i)
        if q is None:
            out.append(f)
            continue
        a = questions.asked[q]
        gone = a.image_gone if f.rule == "CONSUMER-DEDUP-1" else (None if a.present else a.gone)
        if gone is not None and gone.cause == "ddl":
            slot = (f.table, gone.commit_ts, gone.ddl)
            if slot not in by_ddl:
                by_ddl[slot] = (len(out), [], gone)
                out.append(None)
            by_ddl[slot][1].append(f)
            continue
        out.append(_row_cause(f, gone, a.present))
    for (table, ts, query), (place, rows, gone) in by_ddl.items():
        words = ddl_words(gone)
        keys = [r.key if r.key is not None else r.actual for r in rows]
        out[place] = Finding("CONSUMER-DDL-3", table, None,
                             f"{'' if all_listed else 'at least '}{len(rows)} row(s) still in the consumer's "
                             f"table though upstream's {words} "
                             f"(first: {first_keys(keys, len(rows))}): the DDL was not applied",
                             commit_ts=ts, checkpoint=rows[0].checkpoint, ddl=query)
    return [f for f in out if f is not None]


def _row_cause(f: Finding, gone: Optional[Gone], present: bool) -> Finding:
    held = f.message  # what the comparison saw, kept after the cause
    if gone is not None and gone.cause == "delete":
        return replace(f, rule="CONSUMER-DELETE-1", commit_ts=gone.commit_ts,
                       message=f"upstream deleted this row at ts {gone.commit_ts}; the DELETE was not applied")
    if gone is not None and gone.cause == "update":
        moved = (f" that moved the key from {_json(f.key)} to {_json(gone.moved_to)}"
                 if gone.moved_to is not None and f.key is not None and gone.moved_to != f.key else "")
        return replace(f, rule="CONSUMER-UPDATE-1", commit_ts=gone.commit_ts,
                       message=f"the old image of the UPDATE at ts {gone.commit_ts}{moved} was never removed"
                       + (f" ({held})" if f.rule == "CONSUMER-DEDUP-1" else ""))
    if f.rule == "CONSUMER-DEDUP-1":
        return replace(f, message=f"{held}: no UPDATE upstream replaced the extra image")
    if present and f.key is None:
        return replace(f, rule="CONSUMER-DEDUP-1", message=f"{held}: {APPLIED_TWICE}")
    if not present and gone is None:
        return replace(f, message="upstream never had a row under this key" if f.key is not None
                       else f"{held}: upstream never had this row")
    return f


def foreign_table(table: str, rows: list[dict], schema: Optional[TableSchema], fates: Optional[TableFates],
                  checkpoint: Optional[int] = None) -> Finding:
    """CONSUMER-TABLE-1 for a table the consumer holds that upstream does not (at the end, or at
    `checkpoint`): what upstream did to it, and the rows it holds (count, first keys)."""
    key = schema.handle_key if schema is not None else ()
    keys = [[r.get(c) for c in key] if key else r for r in rows[:FIRST_KEYS_NAMED]]
    held = f"{len(rows)} row(s)" + (f" (first: {first_keys(keys, len(rows))})" if rows else "")
    when = f"at checkpoint {checkpoint}" if checkpoint is not None else "at the end"
    if fates is None:
        return Finding("CONSUMER-TABLE-1", table, None, f"the consumer holds this table with {held}; upstream "
                       f"has no such table {when} (no manifest next to the truth, so its history is not read)",
                       checkpoint=checkpoint)
    later = fates.created_later(table, checkpoint) if checkpoint is not None else None
    removal = fates.removal(table)
    if later is not None and (removal is None or removal.commit_ts > checkpoint):
        what = f"upstream creates it only at ts {later.commit_ts} (`{later.query}`)"
        at, ddl = later.commit_ts, later.query
    else:
        what = fates.describe(table)
        at, ddl = (removal.commit_ts, removal.query) if removal is not None else (None, None)
    return Finding("CONSUMER-TABLE-1", table, None, f"the consumer holds this table with {held} {when}, but "
                   f"{what}", commit_ts=at, checkpoint=checkpoint, ddl=ddl)
