"""What upstream did to a table or a row: the causes the consumer-state findings name.

A consumer's table can hold what upstream no longer has for different reasons, and each has its own
rule: a row upstream deleted (CONSUMER-DELETE-1), the old image of an UPDATE that moved the row to
another key or replaced its image (CONSUMER-UPDATE-1), rows a TRUNCATE, DROP or RENAME removed
(CONSUMER-DDL-3), a table upstream never created, dropped or renamed away (CONSUMER-TABLE-1).

The history is replayed once through the ground truth's own interpreter (ticdc_contract.state,
the one definition of what a DDL does to rows), read from the case's truth/ files
(ticdc_contract.truth.read_history; the generator is never run again). Memory holds upstream's current rows (the interpreter's), the
DDLs that created, dropped, renamed or truncated a table (few), and facts for the rows asked about
only: never a fact per key of the stream.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

import orjson

from ticdc_conformance.protocols.common.projection import projection_options
from ticdc_contract.canonical import key_order_token
from ticdc_contract.model import DDL, DDLType, Row, TableSchema, Transaction
from ticdc_contract.state import TableStates
from ticdc_contract.truth import read_history

from .projection import row_projection
from .selection import consumer_table, selectors

Name = tuple[str, str]
# DDLs that make a table name appear or vanish: what CONSUMER-TABLE-1 tells of a table.
_NAME_DDLS = (DDLType.CREATE_TABLE, DDLType.DROP_TABLE, DDLType.DROP_SCHEMA, DDLType.RENAME_TABLE,
              DDLType.TRUNCATE_TABLE)
# What a DDL did to the rows it took from a table (ADD COLUMN and the like rewrite a row's image).
_WORDS = {DDLType.TRUNCATE_TABLE: "truncated", DDLType.DROP_TABLE: "dropped", DDLType.DROP_SCHEMA: "dropped",
          DDLType.DROP_TABLE_PARTITION: "removed", DDLType.TRUNCATE_TABLE_PARTITION: "removed",
          DDLType.EXCHANGE_TABLE_PARTITION: "moved to the other table"}


def qualified(name: Name) -> str:
    return f"{name[0]}.{name[1]}"


def history_events(truth: Path) -> Iterator[DDL | Transaction]:
    """The upstream history the case's truth/ folder holds, event by event, in commit order."""
    return read_history(Path(truth))


class Upcoming:
    """The events of a stream in commit order, taken up to a commit ts at a time: the first event
    after it waits for the next call. Take each call's events to the end."""

    def __init__(self, events: Iterable) -> None:
        self._events = iter(events)
        self._next = None

    def up_to(self, ts: int) -> Iterator:
        while True:
            event = self._next or next(self._events, None)
            self._next = None
            if event is None:
                return
            if event.commit_ts > ts:
                self._next = event
                return
            yield event


# --- tables ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableEvent:
    """A DDL that made a table name appear or vanish."""

    commit_ts: int
    ddl_type: DDLType
    query: str
    renamed_to: Optional[str] = None  # a RENAME's new name, on the event of the old name


class TableFates:
    """Per table name, the DDLs that created, dropped, renamed or truncated it, in commit order."""

    def __init__(self) -> None:
        self.events: dict[str, list[TableEvent]] = {}

    def note(self, ddl: DDL, tables: list[Name]) -> None:
        """`tables`: upstream's tables just before the DDL (a DROP DATABASE names none of them)."""
        if ddl.ddl_type not in _NAME_DDLS:
            return
        if ddl.ddl_type is DDLType.DROP_SCHEMA:
            names = [qualified(n) for n in tables if n[0] == ddl.schema]
        elif ddl.ddl_type is DDLType.RENAME_TABLE and ddl.table_before is not None:
            old = qualified((ddl.table_before.schema, ddl.table_before.table))
            new = qualified((ddl.table_after.schema, ddl.table_after.table))
            self.events.setdefault(old, []).append(TableEvent(ddl.commit_ts, ddl.ddl_type, ddl.query, new))
            names = [new]
        else:
            names = [qualified((ddl.schema, ddl.table))]
        for name in names:
            self.events.setdefault(name, []).append(TableEvent(ddl.commit_ts, ddl.ddl_type, ddl.query))

    def removal(self, table: str) -> Optional[TableEvent]:
        """The DDL by which the table last vanished (DROP, DROP DATABASE, RENAME away), if it did."""
        gone = [e for e in self.events.get(table, []) if e.ddl_type in (DDLType.DROP_TABLE, DDLType.DROP_SCHEMA)
                or e.renamed_to is not None]
        return gone[-1] if gone else None

    def describe(self, table: str) -> str:
        """What upstream did to a table it does not hold now: the words of a CONSUMER-TABLE-1 finding."""
        events = self.events.get(table, [])
        if not events:
            return "upstream never created this table"
        last = events[-1]
        if last.renamed_to is not None:
            return f"upstream renamed this table to {last.renamed_to} at ts {last.commit_ts} ({last.query})"
        if last.ddl_type in (DDLType.DROP_TABLE, DDLType.DROP_SCHEMA):
            return f"upstream dropped this table at ts {last.commit_ts} ({last.query})"
        return f"upstream's last DDL of this table was at ts {last.commit_ts} ({last.query})"

    def created_later(self, table: str, ts: int) -> Optional[TableEvent]:
        """The DDL that first created the table after `ts` (a table the consumer made too early)."""
        return next((e for e in self.events.get(table, []) if e.commit_ts > ts and e.renamed_to is None
                     and e.ddl_type in (DDLType.CREATE_TABLE, DDLType.RENAME_TABLE)), None)


# --- rows --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gone:
    """How a row upstream had stopped being there: deleted, replaced by an UPDATE, or removed by a DDL."""

    cause: str  # "delete", "update" or "ddl"
    commit_ts: int
    moved_to: Optional[list] = None  # an UPDATE that changed the key: the key the row moved to
    ddl: Optional[str] = None  # the query of the DDL that removed it
    ddl_type: Optional[DDLType] = None
    renamed_to: Optional[str] = None  # a RENAME: where the rows went


@dataclass
class _Asked:
    table: str
    token: str  # the row's key as key_order_token, or its whole image in a table without a key
    bound: float  # facts after this commit ts do not count (a checkpoint)
    image: Optional[bytes] = None  # a consumer's row image: when did upstream last replace it?
    gone: Optional[Gone] = None
    present: bool = False
    image_gone: Optional[Gone] = None
    last_change: Optional[tuple[int, Optional[str]]] = None  # (commit ts, the DDL's query when a DDL wrote it)


def image_bytes(row: dict, hidden: frozenset[str] = frozenset()) -> bytes:
    return orjson.dumps({k: v for k, v in row.items() if k not in hidden}, option=orjson.OPT_SORT_KEYS)


class RowQuestions:
    """The rows a check asks about, each with the bound its comparison was made at."""

    def __init__(self) -> None:
        self.asked: list[_Asked] = []

    def ask(self, table: str, key: Optional[list], row: dict, bound: float = float("inf"),
            image: Optional[bytes] = None) -> int:
        """`key` None: a row of a table without a key, known by its image. Returns the question's index."""
        token = key_order_token(key) if key is not None else image_bytes(row).decode()
        self.asked.append(_Asked(table, token, bound, image))
        return len(self.asked) - 1

    def __len__(self) -> int:
        return len(self.asked)


class _Tracker(TableStates):
    """The ground truth's interpreter, noting for the rows asked about what last happened to them."""

    def __init__(self, questions: RowQuestions, key_columns: dict[str, tuple[str, ...]], manifest: dict,
                 hidden: dict[str, frozenset[str]]) -> None:
        super().__init__(keep_history=False)
        self.protocol, self.options = manifest["protocol"], projection_options(manifest)
        self.chosen = selectors(self.options)
        self.key_columns, self.hidden = key_columns, hidden
        self.fates = TableFates()
        self.by_slot: dict[tuple[str, str], list[_Asked]] = {}
        self.images: dict[tuple[str, bytes], list[_Asked]] = {}
        for a in questions.asked:
            self.by_slot.setdefault((a.table, a.token), []).append(a)
            if a.image is not None:
                self.images.setdefault((a.table, a.image), []).append(a)
        self.wanted_tables = {a.table for a in questions.asked}
        self.image_tables = {a.table for a in questions.asked if a.image is not None}
        self._ts = 0
        self._ddl: Optional[DDL] = None
        self._txn_causes: dict[tuple[Name, tuple], tuple[str, Optional[Row]]] = {}
        # Per table: the schema version, its row projection and that of its key columns.
        self._views: dict[Name, tuple[TableSchema, Callable[[Row], dict], Callable[[Row], dict]]] = {}

    def _projected(self, name: Name, row: Row, whole: bool) -> dict:
        schema = self.schemas[name]
        cached = self._views.get(name)
        if cached is None or cached[0] is not schema:  # a new schema version: its projections once
            view = consumer_table(schema, self.chosen)
            cols = self.key_columns.get(qualified(name), ())
            keys = replace(view, columns=tuple(c for c in view.columns if c.name in cols)) if cols else view
            whole_row = row_projection(view, self.protocol, self.options, model_rows=True)
            key_row = row_projection(keys, self.protocol, self.options, model_rows=True) if cols else whole_row
            cached = self._views[name] = (schema, whole_row, key_row)
        # project_truth_row of the row's truth-file form (row_to_json), for the view's columns
        return (cached[1] if whole else cached[2])(row)

    def _token(self, name: Name, row: Row) -> Optional[str]:
        cols = self.key_columns.get(qualified(name), ())
        if cols:
            proj = self._projected(name, row, whole=False)
            return key_order_token([proj[c] for c in cols]) if all(c in proj for c in cols) else None
        hidden = self.hidden.get(qualified(name), frozenset())
        return image_bytes(self._projected(name, row, whole=True), hidden).decode()

    def _apply_txn(self, txn: Transaction) -> None:
        self._ts, self._ddl = txn.commit_ts, None
        self._txn_causes = {}
        for ch in txn.changes:
            if ch.before is None or qualified((ch.table.schema, ch.table.table)) not in self.wanted_tables:
                continue
            old = ch.table.row_key(ch.before)
            moved = ch.after is not None and ch.table.row_key(ch.after) != old
            self._txn_causes[((ch.table.schema, ch.table.table), old)] = (
                "delete" if ch.after is None else "update", ch.after if moved else None)
        super()._apply_txn(txn)

    def _apply_ddl(self, ddl: DDL) -> None:
        self._ts, self._ddl = ddl.commit_ts, ddl
        self.fates.note(ddl, list(self.schemas))
        try:
            super()._apply_ddl(ddl)
        finally:
            self._ddl = None

    def _put(self, name: Name, key: tuple, row: Optional[Row], ts: int) -> None:
        old = self.rows.get(name, {}).get(key)
        table = qualified(name)
        if table in self.wanted_tables and old is not None:
            gone = self._gone(name, key) if row is None else None
            if gone is not None:
                token = self._token(name, old)
                for a in self.by_slot.get((table, token), ()):
                    if ts <= a.bound:
                        a.gone, a.present, a.last_change = gone, False, (ts, gone.ddl)
            if table in self.image_tables:
                image = image_bytes(self._projected(name, old, whole=True), self.hidden.get(table, frozenset()))
                for a in self.images.get((table, image), ()):
                    if ts <= a.bound:
                        a.image_gone = self._gone(name, key) or Gone("update", ts)
        super()._put(name, key, row, ts)
        if table in self.wanted_tables and row is not None:
            for a in self.by_slot.get((table, self._token(name, row)), ()):
                if ts <= a.bound:
                    a.present, a.last_change = True, (ts, self._ddl.query if self._ddl is not None else None)

    def _gone(self, name: Name, key: tuple) -> Optional[Gone]:
        ts = self._ts
        if self._ddl is not None:
            d = self._ddl
            renamed = qualified((d.table_after.schema, d.table_after.table)) \
                if d.ddl_type is DDLType.RENAME_TABLE and d.table_after is not None else None
            return Gone("ddl", ts, ddl=d.query, ddl_type=d.ddl_type, renamed_to=renamed)
        cause = self._txn_causes.get((name, key))
        if cause is None:
            return None
        kind, after = cause
        moved_to = None
        if after is not None:
            cols = self.key_columns.get(qualified(name), ())
            proj = self._projected(name, after, whole=not cols)
            moved_to = [proj.get(c) for c in cols] if cols else None
        return Gone(kind, ts, moved_to=moved_to)


def trace(questions: RowQuestions, manifest: dict, truth: Path, key_columns: dict[str, tuple[str, ...]],
          hidden: dict[str, frozenset[str]]) -> TableFates:
    """Answers `questions` in place (each `_Asked` gets `gone`, `present`, `image_gone`) in one
    replay of the history, and returns the table fates of the whole history. `key_columns`: per
    table, the key columns the consumer's rows are compared by (none: a table without a key)."""
    tracker = _Tracker(questions, key_columns, manifest, hidden)
    for event in history_events(truth):
        tracker.apply(event)
    return tracker.fates


def ddl_words(gone: Gone) -> str:
    """What the DDL that removed rows did to them, in the words of a finding."""
    if gone.renamed_to is not None:
        return f"DDL at ts {gone.commit_ts} ({gone.ddl}) moved them to {gone.renamed_to}"
    verb = _WORDS.get(gone.ddl_type, "rewrote")
    return f"DDL at ts {gone.commit_ts} ({gone.ddl}) {verb} them"
