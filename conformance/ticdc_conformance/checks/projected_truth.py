"""The ground truth replayed event by event, every row also kept as a protocol's consumer holds it.

The checkpoint check compares a consumer's tables with this at every checkpoint, the golden
corpus's expected outputs are its final tables, and the final-state check takes its rows where a
row's projection depends on when the row was written (`written_finals`).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Optional

import orjson

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.common.wire import compact
from ticdc_contract.canonical import row_to_json
from ticdc_contract.model import DDL, Op, Row, TableSchema, Transaction
from ticdc_contract.schema_json import table_from_json
from ticdc_contract.state import TableStates
from ticdc_contract.truth import read_history

from .key_updates import moves_handle_key
from .projection import row_projection
from .selection import consumer_table, selectors, unjudged_columns

Name = tuple[str, str]
_SORTED = orjson.OPT_SORT_KEYS


# --- what is judged ----------------------------------------------------------------------------
def unjudged_by_table(truth_dir: Path, options: dict) -> dict[Name, frozenset[str]]:
    """Per table name, the columns no consumer can know in any of its schema versions (virtual
    generated, unselected). One set per name for the whole run keeps a row's comparable image the
    same whenever it is computed."""
    chosen = selectors(options)
    out: dict[Name, set[str]] = defaultdict(set)
    with open(Path(truth_dir) / "tables.ndjson", "rb") as f:
        for line in f:
            t = table_from_json(orjson.loads(line))
            out[(t.schema, t.table)] |= unjudged_columns(t, chosen)
    return {name: frozenset(cols) for name, cols in out.items()}


def comparable(row: dict, hidden: frozenset[str]) -> bytes:
    """The row's image as the tables of both sides count it, sorted keys and `hidden` left out,
    every number with the digits it was read with (exact_json), in orjson's buffer: one that is
    kept (a held row's, a state line's until its `to`) is kept as a copy of its own size
    (wire.compact); a state line's image read in is copied into a batch."""
    if not hidden:  # most tables: nothing to leave out
        return exact_json.dumps(row, _SORTED)
    return exact_json.dumps({k: v for k, v in row.items() if k not in hidden}, _SORTED)


def bump_count(counts: Counter, image: bytes, delta: int) -> None:
    """Adds `delta` to an image's count; a count back at zero is removed, not kept as 0: every
    UPDATE makes a new image, and the zeros would keep every image of the stream in memory."""
    n = counts.get(image, 0) + delta  # not counts[image]: a Counter's missing key costs a Python call
    if n:
        counts[image] = n
    else:
        counts.pop(image, None)


# --- upstream, event by event ------------------------------------------------------------------
def _frozen(row: Row) -> tuple:
    return tuple(sorted(row.items()))


def _model_row_projection(view: TableSchema, protocol: str, options: dict) -> Callable[[Row], dict]:
    """The projection of a model row as the consumer of `view` knows it: the projection
    reads truth-file values (canonical JSON form), which are the model's own but for binary values
    (base64, which the projection puts them in), and only the view's columns."""
    return row_projection(view, protocol, options, model_rows=True)


class ProjectedTruth(TableStates):
    """The ground truth's interpreter (ticdc_contract.state), with every row also kept as the
    protocol's consumer sees it and every change since the last checkpoint noted.

    Projection happens when a row is written: a protocol may encode a value differently under a
    later schema version (Debezium writes a NULL as the column's DEFAULT at the time), and the
    consumer keeps what it received. Rows a DDL rewrites (ADD COLUMN, RENAME, EXCHANGE, a new key)
    keep the projection of every column whose value the DDL did not change."""

    def __init__(self, protocol: str, options: dict, hidden: dict[Name, frozenset[str]]) -> None:
        super().__init__(keep_history=False)
        self.protocol, self.options, self.chosen, self.hidden = protocol, options, selectors(options), hidden
        self.proj: dict[Name, dict[tuple, tuple[Row, dict, bytes]]] = defaultdict(dict)
        self.counts: dict[Name, Counter] = defaultdict(Counter)
        self.dirty: dict[Name, set[bytes]] = defaultdict(set)  # per table: the images whose count changed
        self._in_ddl = False
        self._stash: dict[tuple, list[tuple[Row, dict, bytes]]] = defaultdict(list)
        self.expected: dict[tuple[Name, bytes], int] = {}  # row events of the last transaction, per (table, key)
        # Per table name: the schema version last asked about, its view and its row projection.
        # Every row a version sees asks for them, so each version makes them once.
        self._views: dict[Name, tuple[TableSchema, TableSchema, Callable[[dict], dict]]] = {}
        # Per table version a change names (by its id): what _apply_txn looks up for its rows
        # (_txn_table), kept from one transaction to the next while it stays what it is: a DDL (a
        # new version, a new dict of rows) empties it, as does a new note of changed images
        # (`dirty` replaced at a checkpoint).
        self._txn_tables: dict[int, tuple] = {}
        self._txn_tables_dirty = self.dirty

    def _version(self, name: Name) -> tuple[TableSchema, TableSchema, Callable[[dict], dict]]:
        schema = self.schemas[name]
        hit = self._views.get(name)
        if hit is None or hit[0] is not schema:
            view = consumer_table(schema, self.chosen)
            hit = self._views[name] = (schema, view, _model_row_projection(view, self.protocol, self.options))
        return hit

    def view(self, name: Name) -> TableSchema:
        return self._version(name)[1]

    def _count(self, name: Name, image: bytes, delta: int) -> None:
        bump_count(self.counts[name], image, delta)
        self.dirty[name].add(image)

    def _drop(self, name: Name, key: tuple) -> Optional[tuple[Row, dict, bytes]]:
        """Takes the row at `key` out of the projected rows and its image out of the counts."""
        old = self.proj[name].pop(key, None)
        if old is not None:
            self._count(name, old[2], -1)
        return old

    def _add(self, name: Name, key: tuple, row: Row, carried: Optional[tuple[Row, dict, bytes]] = None,
             ) -> tuple[Row, dict, bytes]:
        """Projects the row the interpreter now holds at `key` and counts its image; `carried`: the
        row's entry before a DDL rewrote it, whose projection of an unchanged value is kept."""
        proj = self._version(name)[2](row)
        if carried is not None:
            raw, before, _ = carried
            proj = {c: before[c] if c in before and c in raw and raw[c] == row.get(c) else v for c, v in proj.items()}
        image = compact(comparable(proj, self.hidden.get(name, frozenset())))
        # The interpreter's own row (the interpreter replaces rows, it never changes one in place).
        entry = self.proj[name][key] = (row, proj, image)
        self._count(name, image, +1)
        return entry

    def _put(self, name: Name, key: tuple, row: Optional[Row], ts: int) -> None:
        """A row a DDL writes or removes (a transaction's rows go through _apply_txn)."""
        old = self._drop(name, key)
        if old is not None and row is None and self._in_ddl:
            self._stash[_frozen(old[0])].append(old)
        super()._put(name, key, row, ts)
        if row is None:
            return
        carried = old if self._in_ddl else None
        if self._in_ddl and carried is None and self._stash.get(_frozen(row)):
            carried = self._stash[_frozen(row)].pop()
        self._add(name, key, row, carried)

    def _apply_ddl(self, ddl: DDL) -> None:
        self._txn_tables.clear()
        self._in_ddl = True
        try:
            super()._apply_ddl(ddl)
        finally:
            self._in_ddl = False
            self._stash.clear()

    def upstream_row(self, name: Name, key: tuple) -> Optional[tuple[Row, dict, bytes]]:
        """The row upstream holds under `key` now, as (row, projected row, comparable image)."""
        return self.proj.get(name, {}).get(key)

    def key_of(self, name: Name, row: dict) -> bytes:
        """The row's key as the consumer's messages name it (the whole image in a key-less table)."""
        handle = self.view(name).handle_key
        if handle:
            return exact_json.dumps([row.get(c) for c in handle])
        return comparable(row, self.hidden.get(name, frozenset()))

    def _event_key(self, name: Name, entry: Optional[tuple[Row, dict, bytes]], handle: tuple[str, ...]) -> bytes:
        """`key_of` the projected row of `entry` (`handle`: the view's handle key), from what the
        entry holds; an entry that is not there (a row never held) has the key of an empty row."""
        if entry is None:
            return self.key_of(name, {})
        if len(handle) == 1:  # most keys: one column, read without a comprehension
            return orjson.dumps([entry[1].get(handle[0])])
        if handle:
            proj = entry[1]
            return orjson.dumps([proj.get(c) for c in handle])
        return entry[2]  # key_of a key-less row is its comparable image, made already

    def _apply_txn(self, txn: Transaction) -> None:
        """As the interpreter applies a transaction (every old image goes, then every new one
        arrives), each row also projected; and notes the row events TiCDC sends for it, per table
        and key: a key-changing UPDATE is a DELETE and an INSERT unless output-raw-change-event
        (key_updates.py). The interpreter's rows are kept here, not by a _put per change: every
        change of the stream comes this way, and its old entry serves the events' keys too."""
        changes = txn.changes
        # _take, _give, _drop, _add, _count and _event_key in line, with what they look up per
        # table looked up once (until a DDL or a checkpoint): every row change of the stream comes
        # here, and the calls were half the time of applying one. The order is theirs: every old
        # image goes, then every new one.
        tables = self._txn_tables
        if self._txn_tables_dirty is not self.dirty:
            tables.clear()
            self._txn_tables_dirty = self.dirty
        # Each change's table, by the identity of the table version it names (a TableSchema
        # hashes every field it has); the entry holds the version, so the identity stays its own.
        entries = []
        for ch in changes:
            entry = tables.get(id(ch.table))
            if entry is None:
                entry = self._txn_table(ch.table, txn)
            entries.append(entry)
        # The row events are counted as the images go and come, not in a pass of their own: a
        # DELETE's event (and the DELETE TiCDC makes of an UPDATE that moves the key) is the old
        # image's key, every other change's the new image's. A plain dict: the counts are compared
        # whole (checkpoints.py), and a Counter's own construction cost a tenth of this method.
        raw = bool(self.options.get("output-raw-change-event"))
        expected: dict[tuple[Name, bytes], int] = {}
        for ch, entry in zip(changes, entries):
            before = ch.before
            if before is None:  # an INSERT: no old image goes, and its event is the new image's key
                if ch.op is Op.DELETE:  # a DELETE without its old image: the key of an empty row
                    event = (entry[0], self._event_key(entry[0], None, entry[9]))
                    expected[event] = expected.get(event, 0) + 1
                continue
            key = entry[1](before)
            entry[2].pop(key, None)
            old = entry[3].pop(key, None)
            if old is not None:
                image, n_images = old[2], entry[4]
                n = n_images.get(image, 0) - 1  # bump_count's steps
                if n:
                    n_images[image] = n
                else:
                    n_images.pop(image, None)
                entry[5].add(image)
            op = ch.op
            if op is Op.DELETE or (op is Op.UPDATE and not raw and moves_handle_key(ch)):
                event = (entry[0], orjson.dumps([old[1].get(entry[8])]) if entry[8] is not None and old is not None
                         else self._event_key(entry[0], old, entry[9]))
                expected[event] = expected.get(event, 0) + 1
        for ch, entry in zip(changes, entries):
            after = ch.after
            if after is None:  # a DELETE: its event was counted with the old image
                if ch.op is not Op.DELETE:  # any other change without a new image: the key of an empty row
                    event = (entry[0], self._event_key(entry[0], None, entry[9]))
                    expected[event] = expected.get(event, 0) + 1
                continue
            _, row_key, held, proj_rows, n_images, changed, project, unjudged, one_key = entry[:9]
            key = row_key(after)
            gone = proj_rows.pop(key, None)
            if gone is not None:
                image = gone[2]
                n = n_images.get(image, 0) - 1
                if n:
                    n_images[image] = n
                else:
                    n_images.pop(image, None)
                changed.add(image)
            row = held[key] = dict(after)
            proj = project(row)
            image = compact(comparable(proj, unjudged) if unjudged else orjson.dumps(proj, option=_SORTED))
            proj_rows[key] = (row, proj, image)
            n_images[image] = n_images.get(image, 0) + 1  # never 0 after adding one
            changed.add(image)
            event = (entry[0], orjson.dumps([proj.get(one_key)]) if one_key is not None
                     else self._event_key(entry[0], proj_rows[key], entry[9]))
            expected[event] = expected.get(event, 0) + 1
        self.expected = expected

    def _txn_table(self, table: TableSchema, txn: Transaction) -> tuple:
        """What _apply_txn looks up for the rows of `table` (a version of a table the states
        hold), kept in `_txn_tables` by the version's identity; a transaction that writes a table
        the states do not hold is refused here, before any of its changes. A tuple read by
        position, which costs less per change than names would: 0 the table's name, 1 the row key
        of the version in force, 2 its rows, 3 its projected rows, 4 its image counts, 5 its
        changed images, 6 its row projection, 7 its unjudged columns, 8 the one column of a
        one-column handle key (else None), 9 the view's handle key, 10 `table` itself (kept alive,
        so that its id names no other version)."""
        name = (table.schema, table.table)
        if name not in self.rows:
            self.check_tables(txn)  # refuses it
        _, view, project = self._version(name)
        handle = view.handle_key
        entry = (name, self.schemas[name].row_key, self.rows[name], self.proj[name], self.counts[name],
                 self.dirty[name], project, self.hidden.get(name), handle[0] if len(handle) == 1 else None, handle,
                 table)
        self._txn_tables[id(table)] = entry
        return entry


# --- final rows projected when written -----------------------------------------------------------
def defaults_changed(truth_dir: Path) -> bool:
    """Whether a DDL of the history changed the DEFAULT of a column a table kept (SET DEFAULT,
    MODIFY COLUMN), read from the table versions of truth/tables.ndjson."""
    last: dict[Name, dict[object, tuple]] = {}
    with open(Path(truth_dir) / "tables.ndjson", "rb") as f:
        for line in f:
            t = table_from_json(orjson.loads(line))
            now = {c.column_id or c.name: (c.has_default, c.default) for c in t.columns}
            before = last.get((t.schema, t.table), {})
            if any(k in before and before[k] != v for k, v in now.items()):
                return True
            last[(t.schema, t.table)] = now
    return False


def written_finals(truth_dir: Path, protocol: str, options: dict) -> dict[str, tuple[list[dict], list[dict]]]:
    """Per table (qualified name) upstream's final rows (truth-file form) and each row as projected
    when it was last written, for a protocol whose value of a column depends on the schema at that
    time (one with a column projection: Debezium writes a NULL as the DEFAULT of the day) in a
    history that changed a DEFAULT. Projecting upstream's final rows with the final schema would
    then expect values no message carried. Empty otherwise, which is nearly always: this replays the
    whole history and holds every table in memory, as the checkpoint check does."""
    if protocol_spec(protocol).project_column is None or not defaults_changed(truth_dir):
        return {}
    truth = ProjectedTruth(protocol, options, unjudged_by_table(truth_dir, options))
    for event in read_history(Path(truth_dir)):
        truth.apply(event)
    out = {}
    for name, rows in truth.proj.items():
        schema = truth.schemas.get(name)
        if schema is not None:
            out[schema.qualified_name] = ([row_to_json(schema, raw) for raw, _, _ in rows.values()],
                                          [proj for _, proj, _ in rows.values()])
    return out
