"""Upstream snapshot reads, which complete the rows of handle-key-only messages.

With large-message-handle-option = handle-key-only TiCDC sends a row too large for
max-message-bytes with its handle-key columns only, and marks it (Open Protocol key "ohk",
Canal-JSON `_tidb.onlyHandleKey`, Simple `handleKeyOnly`). TiCDC's own consumer completes the row by
reading the upstream TiDB with `set @@tidb_snapshot = <ts>` and `select * ... where <key columns>`
(TiCDC pkg/sink/codec/common/helper.go, MustSnapshotQuery), at
- the commit ts for the row after the change (INSERT, the new row of an UPDATE), and
- the commit ts - 1 for the row before it (the old row of an UPDATE, DELETE)
(TiCDC pkg/sink/codec/{open,canal,simple}/decoder.go). A snapshot at ts sees every transaction
committed at or before ts. The reference decoders ask a `SnapshotLookup` the same question.

Values come back in the form the asking decoder itself produces for that protocol: the canonical
JSON value projected with the protocol's `project_value`, the columns a full message would carry
(docs/consumer-protocol.md, "Large messages"). A completed row is then indistinguishable from the
row a full message would have carried. TiCDC's consumer instead takes whatever its SQL read returns
(ENUM/SET as member names, for one), which would make a completed row differ from its neighbours
at the same fidelity.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Protocol, runtime_checkable

import orjson

from ticdc_contract.model import TableSchema
from ticdc_contract.schema_json import table_from_json

from .column_selection import consumer_table, selectors
from .projection import project_truth_row, projection_options

Name = tuple[str, str]
# The decoder option (not a TiCDC one) that hands a decoder its SnapshotLookup.
SNAPSHOT_LOOKUP = "snapshot-lookup"


@runtime_checkable
class SnapshotLookup(Protocol):
    def row(self, schema: str, table: str, key: dict[str, Any], ts: int) -> Optional[dict[str, Any]]:
        """The row of `schema.table` whose columns named in `key` hold `key`'s values (values in the
        asking protocol's decoded form), as a snapshot read at `ts` sees it; None if there is none.

        Raises SnapshotUnavailable when the source cannot tell.
        """


class SnapshotUnavailable(Exception):
    """The snapshot source cannot answer the question (as a real TiDB past its GC safe point)."""


# What a DDL does to the rows stored under a table name, as far as the snapshot cares.
_RESET = "reset"  # CREATE / TRUNCATE TABLE: the name holds no rows from here on
_GONE = "gone"  # DROP TABLE / SCHEMA, the old name of a RENAME: no table under the name
_BARRIER = "barrier"  # anything else: rows may have been reshaped, moved in or out
_KIND_OF_DDL = {"CREATE_TABLE": _RESET, "TRUNCATE_TABLE": _RESET, "DROP_TABLE": _GONE}
# DDLs that change the rows of a table their history line does not name (the normal table of an
# EXCHANGE PARTITION is only in its query text), so they count against every table.
_EVERYWHERE = {"EXCHANGE_TABLE_PARTITION"}


@dataclass
class _Commit:
    """What one transaction did to the row under one key."""

    ts: int
    before: Optional[dict[str, Any]] = None  # the row just before ts (None: no row)
    after: Optional[dict[str, Any]] = None  # the row from ts on (None: no row)


class _Catalog:
    """Per table name: the schema in force over time and the DDLs that touched its rows."""

    def __init__(self) -> None:
        self.versions: dict[Name, list[tuple[int, Optional[TableSchema]]]] = {}
        self.marks: dict[Name, list[tuple[int, str]]] = {}
        self.everywhere: list[int] = []
        self._name_of_id: dict[int, Name] = {}

    def add(self, line: dict[str, Any], tables: Iterator[TableSchema]) -> None:
        ts, ddl_type = line["commit_ts"], line["ddl_type"]
        name: Name = (line["schema"], line["table"])
        if line.get("schema_version") is not None:
            # ticdc_contract/truth.py writes one tables.ndjson line per DDL with a table after it, in history order.
            after = next(tables, None)
            if after is None or (after.schema, after.table) != name:
                raise SnapshotUnavailable(f"the truth files disagree: the DDL at {ts} on {name[0]}.{name[1]} "
                                          "has no matching tables.ndjson line")
            old = self._name_of_id.get(after.table_id)
            if old is not None and old != name:  # a RENAME: the old name is gone
                self._mark(old, ts, _GONE, None)
            self._name_of_id[after.table_id] = name
            self._mark(name, ts, _KIND_OF_DDL.get(ddl_type, _BARRIER), after)
        elif ddl_type == "DROP_SCHEMA":
            for other in [n for n in self.versions if n[0] == name[0]]:
                self._mark(other, ts, _GONE, None)
        elif name[1]:
            kind = _KIND_OF_DDL.get(ddl_type, _BARRIER)
            self._mark(name, ts, kind, None if kind == _GONE else self.schema_at(name, ts))
        if ddl_type in _EVERYWHERE:
            self.everywhere.append(ts)

    def _mark(self, name: Name, ts: int, kind: str, schema: Optional[TableSchema]) -> None:
        self.marks.setdefault(name, []).append((ts, kind))
        self.versions.setdefault(name, []).append((ts, schema))

    def schema_at(self, name: Name, ts: int) -> Optional[TableSchema]:
        versions = self.versions.get(name, [])
        i = bisect.bisect_right(versions, ts, key=lambda v: v[0])
        return versions[i - 1][1] if i else None

    def marks_of(self, name: Name) -> list[tuple[int, str]]:
        return sorted(self.marks.get(name, []) + [(ts, _BARRIER) for ts in self.everywhere])


class TruthSnapshot:
    """A SnapshotLookup answering from a generated run's ground truth (docs/truth-format.md).

    A row at ts is the image written by the last transaction at or before ts that touched its key,
    when no DDL on the table came after it; otherwise the image the next transaction on that key
    found before it, when no DDL came in between; otherwise the truth cannot tell (a DDL reshaped
    the table and no row image shows the result) and SnapshotUnavailable is raised. Both questions
    a handle-key-only message asks -- at a change's commit ts and commit ts - 1 -- always have an
    answer. The history is read lazily: the DDL lines once, the changes of a table when the table
    is first asked about (held in memory from then on).
    """

    def __init__(self, truth_dir: Path, protocol: str, options: Mapping[str, Any]) -> None:
        self.truth_dir = Path(truth_dir)
        self.protocol = protocol
        # The sink options without the lookup a decoder's options may carry (this one, even).
        self.options = {k: v for k, v in options.items() if k != SNAPSHOT_LOOKUP}
        chosen = selectors(self.options)
        # The view of a row the checks also take (column selection, virtual columns, fidelity), so
        # a completed row is judged exactly like one a full message carried.
        self._project_row = lambda t, image: project_truth_row(consumer_table(t, chosen), image,
                                                               protocol, self.options)
        self._catalog: Optional[_Catalog] = None
        self._changes: dict[Name, list[tuple[int, Optional[dict], Optional[dict]]]] = {}
        self._indexes: dict[tuple[Name, tuple[str, ...]], dict[tuple, list[_Commit]]] = {}

    @classmethod
    def for_run(cls, run_dir: Path) -> "TruthSnapshot":
        """The truth of a `ticdc-conformance generate` output folder, projected as its manifest's protocol."""
        manifest = orjson.loads((Path(run_dir) / "manifest.json").read_bytes())
        return cls(Path(run_dir) / "truth", manifest["protocol"], projection_options(manifest))

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to Spark workers by configuration only; each rebuilds its own indexes.
        return {"truth_dir": self.truth_dir, "protocol": self.protocol, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["truth_dir"], state["protocol"], state["options"])

    # --- SnapshotLookup ---------------------------------------------------------------
    def row(self, schema: str, table: str, key: dict[str, Any], ts: int) -> Optional[dict[str, Any]]:
        if not key:
            raise SnapshotUnavailable("a snapshot read needs at least one key column")
        name = (schema, table)
        t = self._tables().schema_at(name, ts)
        if t is None:
            return None
        cols = tuple(sorted(key))
        for c in cols:
            if c not in t.column_names:
                raise SnapshotUnavailable(f"{schema}.{table} has no column {c!r} at ts {ts}")
        commits = self._index(name, cols).get(tuple(key[c] for c in cols), [])
        image = self._state(name, commits, ts)
        if image is None:
            return None
        return self._project_row(t, image)

    # --- answering ----------------------------------------------------------------------
    def _state(self, name: Name, commits: list[_Commit], ts: int) -> Optional[dict[str, Any]]:
        marks = self._tables().marks_of(name)
        i = bisect.bisect_right(commits, ts, key=lambda c: c.ts)
        j = bisect.bisect_right(marks, ts, key=lambda m: m[0])
        last = commits[i - 1] if i else None
        mark = marks[j - 1] if j else None
        if last is not None and (mark is None or mark[0] < last.ts):
            return last.after
        if mark is None or mark[1] != _BARRIER:
            return None  # emptied or dropped since the key's last change, or never written
        following = commits[i] if i < len(commits) else None
        next_mark = marks[j] if j < len(marks) else None
        if following is not None and (next_mark is None or next_mark[0] > following.ts):
            return following.before
        raise SnapshotUnavailable(f"the ground truth cannot tell the row of {name[0]}.{name[1]} at ts {ts}: "
                                  f"the DDL at {mark[0]} changed the table and no later row image shows the result")

    # --- loading ------------------------------------------------------------------------
    def _tables(self) -> _Catalog:
        if self._catalog is None:
            catalog = _Catalog()
            with open(self.truth_dir / "tables.ndjson", "rb") as f:
                tables = (table_from_json(orjson.loads(line)) for line in f if line.strip())
                for line in self._history_lines(b'"ddl"'):
                    if line.get("kind") == "ddl":
                        catalog.add(line, tables)
            self._catalog = catalog
        return self._catalog

    def _history_lines(self, must_contain: bytes) -> Iterator[dict[str, Any]]:
        """The history lines whose text contains `must_contain` (a cheap filter before parsing)."""
        with open(self.truth_dir / "history.ndjson", "rb") as f:
            for raw in f:
                if must_contain in raw:
                    yield orjson.loads(raw)

    def _table_changes(self, name: Name) -> list[tuple[int, Optional[dict], Optional[dict]]]:
        changes = self._changes.get(name)
        if changes is None:
            qualified = f"{name[0]}.{name[1]}"
            changes = [(line["commit_ts"], ch["before"], ch["after"])
                       for line in self._history_lines(orjson.dumps(qualified))
                       if line.get("kind") == "txn"
                       for ch in line["changes"] if ch["table"] == qualified]
            self._changes[name] = changes
        return changes

    def _index(self, name: Name, cols: tuple[str, ...]) -> dict[tuple, list[_Commit]]:
        """The table's commits per key, the key being the projected values of `cols`."""
        index = self._indexes.get((name, cols))
        if index is not None:
            return index
        index = {}
        for ts, before, after in self._table_changes(name):
            t = self._tables().schema_at(name, ts)
            for side, image in (("before", before), ("after", after)):
                key = self._key_of(t, image, cols)
                if key is None:
                    continue
                commits = index.setdefault(key, [])
                if not commits or commits[-1].ts != ts:
                    commits.append(_Commit(ts))
                setattr(commits[-1], side, image)
        self._indexes[(name, cols)] = index
        return index

    def _key_of(self, t: Optional[TableSchema], image: Optional[dict], cols: tuple[str, ...]) -> Optional[tuple]:
        """The projected values of `cols` in a truth image (what the asking decoder would read)."""
        if t is None or image is None or any(c not in image for c in cols):
            return None
        projected = self._project_row(t, image)
        if any(c not in projected for c in cols):
            return None
        return tuple(projected[c] for c in cols)
