"""The consumer's tables: rows applied transaction by transaction, DDL applied by its meaning, and
what changed since the last checkpoint.

Rows are keyed by the key columns the messages name. When those change (ADD/DROP PRIMARY KEY,
a Canal-JSON table whose pkNames appear or vanish), the table is re-keyed on the first row event
that names the new ones: both are unique keys of the same rows, so the rows stay what they are.
A table whose messages name no key identifies rows by their whole image and keeps them as a
multiset, since such a table may hold the same row twice.

Change tracking for the temporal state output: every row version knows the state line it has in
the output since which checkpoint; at the next checkpoint only the versions touched since are
compared, closed ("to") and reopened ("from"), so a checkpoint costs what changed, not the tables'
size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import orjson

from ticdc_conformance.consumers.output import row_json
from ticdc_conformance.consumers.rules.ddl_semantics import (
    AddColumn,
    CreateTable,
    DropColumn,
    DropSchema,
    DropTable,
    Effect,
    Name,
    RenameColumn,
    RenameTable,
    TableMeta,
    apply_to_metas,
    row_fate,
    tables_touched,
)
from ticdc_conformance.protocols.common.wire import compact
from ticdc_contract.canonical import key_order_token


class Entry:
    """One row (or, in a key-less table, one distinct row image and how often it is there)."""
    __slots__ = ("order", "image", "count", "home", "line", "line_name", "line_count", "since", "dirty", "key",
                 "json")

    def __init__(self, order: str, image: dict, home: "TableRows", key: Optional[bytes] = None,
                 json: Optional[bytes] = None) -> None:
        self.order, self.image, self.count, self.home = order, image, 1, home
        # The key it was placed under in `home.rows` (None: to be computed from the image, which a
        # DDL changed since).
        self.key = key
        self.json = json  # orjson.dumps(image) when known (the event's text), else None
        self.line: Optional[bytes] = None  # the state line open in the output, None: none yet
        self.line_name: Optional[Name] = None
        self.line_count = 0
        self.since: Optional[int] = None
        self.dirty = False


@dataclass
class TableRows:
    name: Name
    key_columns: Optional[tuple[str, ...]] = None  # None: no row event seen yet
    image_keyed: bool = False

    def __post_init__(self) -> None:
        self.rows: dict[bytes, Entry] = {}

    def key_of(self, image: dict) -> tuple[bytes, str]:
        values = [image.get(c) for c in self.key_columns or ()]
        return orjson.dumps(values), key_order_token(values)


StateSink = Callable[[Name, int, Optional[int], bytes, int], None]  # (table, from, to, row, copies)
PARSED_TEXTS = 4096  # column-list texts kept parsed (a stream has a few per table)


class ConsumerTables:
    def __init__(self) -> None:
        self.metas: dict[Name, TableMeta] = {}
        self.rows: dict[Name, TableRows] = {}
        self._dirty: list[Entry] = []
        self._gone: list[Entry] = []
        self._parsed: dict[str, Any] = {}  # column-list text -> its list (never changed by the caller)

    def _names(self, text: str) -> Any:
        """orjson.loads of a column-list text, remembered."""
        names = self._parsed.get(text)
        if names is None:
            if len(self._parsed) >= PARSED_TEXTS:
                self._parsed.clear()
            names = self._parsed[text] = orjson.loads(text)
        return names

    # --- bookkeeping ---------------------------------------------------------------------------
    def _touch(self, e: Entry) -> None:
        if not e.dirty:
            e.dirty = True
            self._dirty.append(e)

    def _drop(self, tr: TableRows, key: bytes, e: Entry) -> None:
        del tr.rows[key]
        if e.line is not None:
            self._gone.append(e)
        e.count = 0

    def table(self, name: Name, columns: Optional[list[str]] = None) -> TableRows:
        """The table, created when first named (a consumer that joined mid-stream, or a table whose
        CREATE it did not see), and its column list extended by columns a message carries."""
        tr = self.rows.get(name)
        if tr is None:
            tr = self.rows[name] = TableRows(name)
            self.metas.setdefault(name, TableMeta())
        meta = self.metas.setdefault(name, TableMeta())
        if columns and columns != meta.columns:
            new = [c for c in columns if c not in meta.columns and c not in meta.dropped]
            if new:
                meta.columns.extend(new)
                self._touch_all(tr)  # every row's line gains the column
        return tr

    def set_columns(self, name: Name, columns: list[str]) -> None:
        """The full column list after a DDL, from a protocol that carries it (Debezium, Simple)."""
        meta = self.metas.get(name)
        if meta is None or meta.columns == columns:
            return
        meta.columns = list(columns)
        meta.dropped -= set(columns)
        if name in self.rows:
            self._touch_all(self.rows[name])

    def _touch_all(self, tr: TableRows) -> None:
        for e in tr.rows.values():
            self._touch(e)

    def _rekey(self, tr: TableRows, key_columns: tuple[str, ...], image_keyed: bool) -> None:
        entries = list(tr.rows.values())
        tr.key_columns, tr.image_keyed, tr.rows = key_columns, image_keyed, {}
        for e in entries:
            self._place(tr, e)

    def _place(self, tr: TableRows, e: Entry) -> None:
        """Puts a moved entry into `tr` under `tr`'s key (merging copies in a key-less table)."""
        key, e.order = tr.key_of(e.image)
        e.home, e.key = tr, key
        self._touch(e)
        there = tr.rows.get(key)
        if there is not None and tr.image_keyed:
            there.count += e.count
            self._touch(there)
            if e.line is not None:
                self._gone.append(e)
            return
        if there is not None and there.line is not None:
            self._gone.append(there)
        tr.rows[key] = e

    # --- rows ----------------------------------------------------------------------------------
    def apply_txn(self, events: list[dict]) -> None:
        """The row events of one commit ts. A transaction's changes commute: every old image goes
        first, then every new image arrives, so rows that trade keys within it (split into DELETE +
        INSERT pairs possibly on different partitions) end where upstream put them.
        An event's images and keys come from its `_keys` (decode_stage.ROW_KEYS) while its images' JSON
        (text or UTF-8 bytes) is the one they were made from, else from that JSON."""
        decoded = []
        loads = orjson.loads
        rows, metas = self.rows, self.metas
        for ev in events:
            columns = ev["columns"]
            columns = self._names(columns) if columns else None
            name = (ev["schema"], ev["table"])
            tr, meta = rows.get(name), metas.get(name)
            if tr is None or meta is None or columns and columns != meta.columns:  # else table() changes nothing
                tr = self.table(name, columns)
            k = ev.get("_keys")
            if k is not None and k[0] is ev["after"] and k[1] is ev["before"] and k[2] is ev.get("key_columns"):
                # The before image is not kept: its key is k[9]; it is parsed where that key does not serve.
                after, key_columns, image_keyed = k[3], k[5], k[6]
                before = ev["before"] or None
            else:
                k = None
                after = loads(ev["after"]) if ev["after"] else None
                before = loads(ev["before"]) if ev["before"] else None
                named = tuple(self._names(ev["key_columns"])) if ev.get("key_columns") else ()
                image_keyed = not named
                key_columns = named or tuple(after if after is not None else before)
            if tr.key_columns != key_columns or tr.image_keyed != image_keyed:
                self._rekey(tr, key_columns, image_keyed)
            decoded.append((tr, ev["op"], before, after, k))
        for tr, op, before, after, k in decoded:
            if op == "delete" or op == "update":
                # Without the old image (old value off) the row is found by the new image's key.
                image = before if before is not None else after
                if image is None:
                    continue
                if k is not None and tr.key_columns == k[5]:
                    self._remove(tr, k[9])
                else:
                    self._remove(tr, tr.key_of(image if isinstance(image, dict) else loads(image))[0])
        for tr, op, before, after, k in decoded:
            if op != "delete" and after is not None:
                if k is not None and tr.key_columns == k[5]:
                    self._put(tr, after, k[7], k[8], k[0])
                else:
                    self._put(tr, after, *tr.key_of(after))

    def _remove(self, tr: TableRows, key: bytes) -> None:
        e = tr.rows.get(key)
        if e is None:
            return  # a row this consumer never had (it joined mid-stream)
        if tr.image_keyed and e.count > 1:
            e.count -= 1
            self._touch(e)
            return
        self._drop(tr, key, e)

    def _put(self, tr: TableRows, image: dict, key: bytes, order: str, json: Optional[bytes] = None) -> None:
        e = tr.rows.get(key)
        if e is None:
            key = compact(key)  # type: ignore[assignment]  # a key is never None
            e = tr.rows[key] = Entry(order, image, tr, key, compact(json))
        elif tr.image_keyed:
            e.count += 1
        else:
            e.image, e.json = image, compact(json)  # an upsert: TiCDC's consumer writes with REPLACE semantics too
        self._touch(e)

    # --- DDL -----------------------------------------------------------------------------------
    def apply_effect(self, effect: Effect) -> None:
        """Applies one DDL effect (ddl_semantics) to rows and metadata. Raises
        ddl_semantics.PartitionsUnknown when a partition DDL meets a table of unknown partitions."""
        touched = [n for n in tables_touched(effect, self.rows) if n in self.rows]
        moves: list[tuple[TableRows, Entry, Name, dict]] = []
        for n in touched:
            tr = self.rows[n]
            for key, e in list(tr.rows.items()):
                fate = row_fate(effect, n, e.image, self.metas)
                if fate is None:
                    self._drop(tr, key, e)
                elif fate[0] != n:
                    del tr.rows[key]
                    moves.append((tr, e, fate[0], fate[1]))
                elif fate[1] is not e.image:
                    e.image, e.key, e.json = fate[1], None, None
                    self._touch(e)
        self._reshape_containers(effect)
        apply_to_metas(effect, self.metas)
        for src, e, dest_name, image in moves:
            dest = self.rows.get(dest_name)
            if dest is None:
                dest = self.rows[dest_name] = TableRows(dest_name, src.key_columns, src.image_keyed)
                self.metas.setdefault(dest_name, TableMeta(list(self.metas.get(src.name, TableMeta()).columns)))
            elif dest.key_columns is None:
                dest.key_columns, dest.image_keyed = src.key_columns, src.image_keyed
            if image is not e.image:
                e.image, e.json = image, None
            self._place(dest, e)
        if isinstance(effect, (AddColumn, DropColumn, RenameColumn)) and effect.name in self.rows:
            self._touch_all(self.rows[effect.name])  # every line's columns changed

    def _reshape_containers(self, effect: Effect) -> None:
        if isinstance(effect, DropSchema):
            for n in [n for n in self.rows if n[0] == effect.schema]:
                del self.rows[n]
        elif isinstance(effect, DropTable):
            self.rows.pop(effect.name, None)
        elif isinstance(effect, CreateTable):
            self.rows[effect.name] = TableRows(effect.name)
        elif isinstance(effect, RenameTable) and effect.old in self.rows:
            old = self.rows.pop(effect.old)
            self.rows[effect.new] = TableRows(effect.new, old.key_columns, old.image_keyed)

    # --- checkpoints ---------------------------------------------------------------------------
    def _line(self, e: Entry) -> bytes:
        meta = self.metas.get(e.home.name)
        if meta is None or list(e.image) == meta.columns:  # the image is the line's object as it is
            return e.json if e.json is not None else orjson.dumps(e.image)
        return row_json(e.image, meta.columns)

    def checkpoint(self, ts: int, sink: StateSink) -> None:
        """Closes the state lines of rows that changed or went since the last checkpoint at `ts`
        and opens lines for their new versions from `ts` on."""
        for e in self._gone:
            sink(e.line_name, e.since, ts, e.line, e.line_count)
            e.line = None
        self._gone = []
        for e in self._dirty:
            e.dirty = False
            if e.count == 0 or e.home.rows.get(e.key if e.key is not None else e.home.key_of(e.image)[0]) is not e:
                continue  # removed or merged into another entry; its line (if any) closed above
            line = self._line(e)
            if e.line is not None:
                if (e.line, e.line_name, e.line_count) == (line, e.home.name, e.count):
                    continue
                sink(e.line_name, e.since, ts, e.line, e.line_count)
            e.line, e.line_name, e.line_count, e.since = line, e.home.name, e.count, ts
        self._dirty = []

    def finish(self, sink: StateSink) -> None:
        """Writes every state line still open (to = null), table by table, rows by key."""
        for name in sorted(self.rows):
            for e in sorted(self.rows[name].rows.values(), key=lambda e: e.order):
                if e.line is not None:
                    sink(e.line_name, e.since, None, e.line, e.line_count)

    # --- final state ---------------------------------------------------------------------------
    def final_tables(self) -> Iterator[tuple[Name, list[str], Iterator[dict]]]:
        for name in sorted(self.rows):
            meta = self.metas.get(name) or TableMeta()
            entries = sorted(self.rows[name].rows.values(), key=lambda e: e.order)
            yield name, meta.columns, (e.image for e in entries for _ in range(e.count))
