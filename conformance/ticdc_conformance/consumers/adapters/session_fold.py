"""A session's output, folded into the output folder every consumer writes (docs/consumer-protocol.md,
"Output"; docs/testee-protocol.md, "How the session is judged").

While the session runs, the consumer's applied-log lines and `tables` answers go to a journal
(`CASE/consumer-session.ndjson`, kept for reading after the run) exactly as they came. Its position
after each `committed` answer is its durable mark: a crash cuts the journal back to it, as a sink
that commits its writes together with its offsets loses what it wrote after them. At the end the
journal is folded into OUT in two passes, streaming:
- the first pass finds the checkpoints the consumer answered `tables` for;
- the second writes `applied.ndjson` (+ parquet; `type` becomes `kind`), keeping only those
  checkpoints, `states/` from consecutive `tables` answers (a row version runs from the answer that
  first held it to the first that no longer did), `final/` from the last answer.
Memory holds the current tables (one answer) and the rows of the answer being read.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator, Optional

from ticdc_conformance.consumers.output import AppliedLog, StatesWriter, final_file_name

from .session_wire import CHECKPOINT, DDL, ROW, TABLES, TXN, dumps, loads

JOURNAL_FILE = "consumer-session.ndjson"
CONSUMER_FIGURES = "consumer.json"


class Journal:
    """The consumer's applied-log lines and tables answers in the order they came, cut back to the
    last durable mark by a crash."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._f: IO[bytes] = open(path, "wb")
        self._mark = 0
        self.discarded = 0  # lines a crash discarded

    def add(self, raw: bytes) -> None:
        self._f.write(raw if raw.endswith(b"\n") else raw + b"\n")

    def mark(self) -> None:
        """Everything so far is durable: the consumer committed it."""
        self._f.flush()
        self._mark = self._f.tell()

    def cut(self) -> None:
        """A crash: what came after the last mark is lost."""
        self._f.flush()
        if self._f.tell() > self._mark:
            with open(self.path, "rb") as f:
                f.seek(self._mark)
                self.discarded += sum(1 for _ in f)
        self._f.seek(self._mark)
        self._f.truncate()

    def close(self) -> None:
        self._f.close()

    def lines(self) -> Iterator[dict]:
        self._f.flush()
        with open(self.path, "rb") as f:
            for raw in f:
                yield loads(raw)


@dataclass
class _Version:
    """A row image (one table, one JSON text) present in the current tables: the checkpoint from
    which each copy of it has been there, and how often the answer being read holds it."""

    row: bytes
    since: list[int]
    seen: int = 0
    added: int = 0


@dataclass
class FoldFigures:
    applied_entries: int = 0
    checkpoints_kept: int = 0
    checkpoints_left_out: int = 0  # checkpoints no tables answer was asked for (several in one sync answer)
    tables_answers: int = 0
    state_lines: int = 0
    final_tables: int = 0
    final_rows: int = 0
    notes: list[str] = field(default_factory=list)


def fold(journal: Journal, out: Path) -> FoldFigures:
    """Writes OUT/applied.ndjson (+ applied.parquet), OUT/states/ (+ states.parquet) and OUT/final/."""
    answered = set()
    answers = 0
    for line in journal.lines():
        if line["type"] == TABLES:
            answers += 1
            if line["checkpoint"] is not None:
                answered.add(line["checkpoint"])
    figures = FoldFigures(tables_answers=answers)
    log, states = AppliedLog(out), StatesWriter(out)
    current: dict[tuple[str, str], dict[bytes, _Version]] = {}
    last_state: Optional[int] = None
    final: dict[tuple[str, str], list[bytes]] = {}
    answer = 0
    for line in journal.lines():
        kind = line["type"]
        if kind == TXN:
            log.txn(line["commit_ts"], [{**r, "before": _text(r["before"]), "after": _text(r["after"])}
                                        for r in line["rows"]])
            figures.applied_entries += 1
        elif kind == DDL:
            log.ddl(line["commit_ts"], line["schema"], line["table"], line["query"])
            figures.applied_entries += 1
        elif kind == CHECKPOINT:
            if line["ts"] in answered:
                log.checkpoint(line["ts"])
                figures.checkpoints_kept += 1
                figures.applied_entries += 1
            else:
                figures.checkpoints_left_out += 1
        elif kind == ROW:
            name = (line["schema"], line["table"])
            versions = current.setdefault(name, {})
            if answer == answers - 1:
                final.setdefault(name, [])  # a table without rows is there too
            if line["row"] is None:
                continue
            row = dumps(line["row"])
            if answer == answers - 1:
                final[name].append(row)
            key = dumps(line["row"], sort_keys=True)
            v = versions.get(key)
            if v is None:
                v = versions[key] = _Version(row, [])
            if v.seen < len(v.since):
                v.seen += 1
            else:
                v.added += 1
        elif kind == TABLES:
            w = line["checkpoint"]
            if w is not None and (last_state is None or w > last_state):
                figures.state_lines += _close_versions(current, w, states)
                last_state = w
            else:
                _reset_versions(current)
            answer += 1
    for name in sorted(current):
        for v in sorted(current[name].values(), key=lambda v: v.row):
            for since in v.since:
                states(name, since, None, v.row, 1)
                figures.state_lines += 1
    log.close()
    states.close()
    _write_final(out, final, figures)
    return figures


def _text(image: Optional[dict]) -> Optional[str]:
    return None if image is None else dumps(image).decode()


def _close_versions(current: dict, w: int, states: StatesWriter) -> int:
    """The answer at checkpoint `w` is read: copies it no longer holds end at `w`, new ones start."""
    written = 0
    for name, versions in current.items():
        for key in list(versions):
            v = versions[key]
            for since in v.since[v.seen:]:
                states(name, since, w, v.row, 1)
                written += 1
            v.since = v.since[:v.seen] + [w] * v.added
            v.seen = v.added = 0
            if not v.since:
                del versions[key]
    return written


def _reset_versions(current: dict) -> None:
    """An answer at no new checkpoint (a stream without watermarks, the answer at the end at the
    last checkpoint) shows no state at a checkpoint: the versions stay as the last state had them."""
    for versions in current.values():
        for key in list(versions):
            v = versions[key]
            v.seen = v.added = 0
            if not v.since:
                del versions[key]


def _write_final(out: Path, final: dict[tuple[str, str], list[bytes]], figures: FoldFigures) -> None:
    folder = out / "final"
    folder.mkdir(parents=True, exist_ok=True)
    for (schema, table), rows in sorted(final.items()):
        with open(folder / final_file_name(schema, table), "wb") as f:
            for row in sorted(rows):  # deterministic output; the check does not depend on row order
                f.write(row + b"\n")
        figures.final_tables += 1
        figures.final_rows += len(rows)


def write_figures(out: Path, figures: dict) -> None:
    (out / CONSUMER_FIGURES).write_text(json.dumps(figures, indent=2) + "\n")
