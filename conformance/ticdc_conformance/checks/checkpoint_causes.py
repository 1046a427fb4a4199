"""What a CONSUMER-CHECKPOINT-1 finding adds to the difference it saw: what the consumer applied
since its tables were last right, and what upstream did to a row the consumer holds in excess.

The checkpoint check (checks/checkpoints.py) notes every entry of the applied log here; when the
tables at a checkpoint equal upstream's, the note starts again from that checkpoint. A finding then
names the DDLs and the first transactions (commit ts, tables) applied since the last good
checkpoint: the window in which the consumer went wrong. Memory: the first few entries and counts.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

from ticdc_conformance.findings.finding import Finding

from .causes import ask, explain
from .differential import load_truth_tables
from .selection import consumer_table, selectors
from .upstream_history import RowQuestions, trace

FIRST_NAMED = 3
QUERY_CHARS = 80  # a CREATE TABLE is long; its start names it


def _short(query: str) -> str:
    return query if len(query) <= QUERY_CHARS else query[: QUERY_CHARS - 1] + "…"


class SinceGood:
    """The applied-log entries since the last checkpoint at which the consumer's tables were right."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, checkpoint: Optional[int]) -> None:
        self.checkpoint = checkpoint
        self.ddls: list[tuple[Optional[int], str]] = []
        self.txns: list[tuple[Optional[int], list[str]]] = []
        self.more_ddls = self.more_txns = 0

    def ddl(self, commit_ts: Optional[int], query: str) -> None:
        if len(self.ddls) < FIRST_NAMED:
            self.ddls.append((commit_ts, query))
        else:
            self.more_ddls += 1

    def txn(self, commit_ts: Optional[int], rows: list[dict]) -> None:
        if len(self.txns) < FIRST_NAMED:
            self.txns.append((commit_ts, sorted({f"{r['schema']}.{r['table']}" for r in rows})))
        else:
            self.more_txns += 1

    def text(self) -> str:
        since = (f"since checkpoint {self.checkpoint}, the last at which its tables were right" if self.checkpoint
                 is not None else "since the start of the applied log (its tables were right at no checkpoint)")
        parts = [f"DDL at ts {ts} ({_short(q)})" for ts, q in self.ddls]
        if self.more_ddls:
            parts.append(f"{self.more_ddls} more DDL(s)")
        txns = [f"ts {ts} ({', '.join(tables) or 'no rows'})" for ts, tables in self.txns]
        if txns:
            parts.append(f"{len(txns) + self.more_txns} transaction(s): " + ", ".join(txns)
                         + (f" and {self.more_txns} more" if self.more_txns else ""))
        return f"{since}, the consumer applied " + ("; ".join(parts) if parts else "nothing")


def explain_rows(findings: list[Finding], truth_dir: Path, manifest: dict, hidden: dict[tuple[str, str], frozenset],
                 since_at: dict[int, str], all_listed: bool = True) -> list[Finding]:
    """The checkpoint findings with their causes: a CONSUMER-CHECKPOINT-1 row the consumer holds in
    excess gets what upstream did to it up to its checkpoint (rows a DDL removed become one finding
    per table and DDL), and every CONSUMER-CHECKPOINT-1 / CONSUMER-TABLE-1 finding what the consumer
    applied since its tables were last right (`since_at`, per checkpoint). `all_listed` False: the
    check listed only the first findings of a rule, so a count of rows is a lower bound."""
    rows = [i for i, f in enumerate(findings)
            if f.rule == "CONSUMER-CHECKPOINT-1" and f.actual is not None and f.expected is None and f.checkpoint]
    if rows:
        proxies = [replace(findings[i], rule="CONSUMER-ROW-1",
                           message=findings[i].message.removeprefix(f"at checkpoint {findings[i].checkpoint}: "))
                   for i in rows]
        questions = RowQuestions()
        asked = {j: ask(questions, p, p.checkpoint) for j, p in enumerate(proxies)}
        chosen = selectors(manifest.get("sink", {}))
        tables = load_truth_tables(Path(truth_dir))
        trace(questions, manifest, Path(truth_dir),
              {q: consumer_table(t, chosen).handle_key for q, t in tables.items()},
              {f"{n[0]}.{n[1]}": cols for n, cols in hidden.items()})
        explained = [replace(e, rule="CONSUMER-CHECKPOINT-1", message=f"at checkpoint {e.checkpoint}: {e.message}")
                     for e in explain(proxies, questions, asked, all_listed)]
        first, skipped = rows[0], set(rows)
        findings = [f for i, f in enumerate(findings) if i < first and i not in skipped] + explained + \
            [f for i, f in enumerate(findings) if i > first and i not in skipped]
    return [replace(f, message=f"{f.message}; {since_at[f.checkpoint]}")
            if f.rule in ("CONSUMER-CHECKPOINT-1", "CONSUMER-TABLE-1") and f.checkpoint in since_at else f
            for f in findings]
