"""The ground truth: replays an upstream history into table states, and writes it to disk.

Format (docs/truth-format.md): `truth/tables.ndjson` (every schema version), `truth/history.ndjson`
(every DDL and transaction in commit order), `truth/final/<schema>.<table>.ndjson` (final rows,
sorted by handle key), all in the canonical JSON value form.

The history lines hold every field of the model's events, so `read_history` gives back the very
events the generator wrote (equal, field for field): a reader of a case folder replays upstream
from its truth alone, without running the generator again.
"""
from __future__ import annotations

from binascii import a2b_base64, b2a_base64
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Optional

import orjson

from ticdc_contract.canonical import dumps_line, key_order_token, row_to_json, value_from_json, value_to_json
from ticdc_contract.model import (
    DDL,
    ROWID,
    DDLType,
    Op,
    Row,
    RowChange,
    TableSchema,
    Transaction,
    row_change,
    transaction,
)
from ticdc_contract.schema_json import table_from_json, table_to_json
from ticdc_contract.state import TableStates


def _json_key(t: TableSchema, key: tuple) -> list:
    if not t.handle_key:
        return list(key)  # the hidden row ID
    cols = [t.column(c) for c in t.handle_key]
    return [value_to_json(c.type, v) for c, v in zip(cols, key)]


def _table_or_null(t: Optional[TableSchema]) -> Optional[dict]:
    return None if t is None else table_to_json(t)


def _row_id(change: RowChange) -> int:
    """The hidden row ID of a change to a table without a handle key (an UPDATE keeps it)."""
    ids = {image[ROWID] for image in (change.before, change.after) if image is not None}
    if len(ids) != 1:
        raise ValueError(f"a change to {change.table.qualified_name} carries the hidden row IDs {sorted(ids)}; "
                         "a row keeps its one ID")
    return ids.pop()


def _change_line(change: RowChange, image: Callable[[TableSchema, Row], Any] = row_to_json) -> dict:
    t = change.table
    line: dict[str, Any] = {
        "table": t.qualified_name, "op": change.op.value,
        "before": image(t, change.before) if change.before is not None else None,
        "after": image(t, change.after) if change.after is not None else None,
    }
    if not t.handle_key:
        line["row_id"] = _row_id(change)
    return line


def history_line(event: DDL | Transaction) -> dict:
    if isinstance(event, DDL):
        backfill_types = {c.name: c.type for c in event.table_after.columns} if event.table_after else {}
        return {
            "kind": "ddl", "commit_ts": event.commit_ts, "ddl_type": event.ddl_type.name,
            "schema": event.schema, "table": event.table, "query": event.query,
            "schema_version": event.table_after.schema_version if event.table_after else None,
            "table_before": _table_or_null(event.table_before),
            "backfill": {name: value_to_json(backfill_types[name], v) for name, v in event.backfill.items()},
            "other_before": _table_or_null(event.other_before),
            "other_after": _table_or_null(event.other_after),
        }
    return {"kind": "txn", "start_ts": event.start_ts, "commit_ts": event.commit_ts,
            "changes": [_change_line(ch) for ch in event.changes]}


def _b64_default(v: Any) -> str:
    """orjson's `default` for the values it cannot write: the model holds bytes in binary columns
    only, and the canonical form writes them as base64 (canonical.value_to_json)."""
    return b2a_base64(v, newline=False).decode("ascii")


def _model_image(t: TableSchema, row: Row) -> Any:
    """The image as it is when it is a dict of the version's columns in order (as the model builds
    them): orjson then writes what row_to_json would make of it, its binary values by `default`."""
    return row if type(row) is dict and tuple(row) == t.column_names else row_to_json(t, row)


def txn_line_bytes(txn: Transaction) -> bytes:
    """`dumps_line(history_line(txn))` without a copy of every image the model built
    (_model_image); any other image takes row_to_json (tests/generators/test_truth_lines.py)."""
    return orjson.dumps({"kind": "txn", "start_ts": txn.start_ts, "commit_ts": txn.commit_ts,
                         "changes": [_change_line(ch, _model_image) for ch in txn.changes]},
                        default=_b64_default) + b"\n"


class _RowReader:
    """Reads the row changes of one table version from truth-file lines: the canonical JSON form is
    the model's form but for binary columns (base64), so an image with exactly the version's
    columns, in its order, becomes the row as it is, its binary values decoded in place."""

    def __init__(self, t: TableSchema) -> None:
        self.table = t
        self.read = _image_reader(t.column_names, tuple(c.name for c in t.columns if c.type.is_binary))
        self.keyless = not t.handle_key

    def change(self, line: dict[str, Any]) -> Optional[RowChange]:
        """The change a history line's entry holds; None for a change to a table without a handle
        key that names no row ID (a truth written by an older generator)."""
        row_id = line.get("row_id")
        if row_id is None and self.keyless:
            return None
        before, after, read = line["before"], line["after"], self.read
        return row_change(self.table, _OPS[line["op"]], None if before is None else read(before, row_id),
                           None if after is None else read(after, row_id))


def _image_reader(names: tuple[str, ...], binary: tuple[str, ...]) -> Callable[[dict[str, Any], Optional[int]], Row]:
    """The row of one table version an image (not NULL) holds, and its hidden row ID if any. A
    function with the version's names bound, not a method: every image of the history comes here."""
    def read(image: dict[str, Any], row_id: Optional[int]) -> Row:
        if tuple(image) == names:  # nearly always: the truth writer writes every column in order
            row = image
        else:  # the version's columns in its order; a missing one is the KeyError it always was
            row = {name: image[name] for name in names}
        for name in binary:
            value = row[name]
            if value is not None:
                row[name] = a2b_base64(value)  # base64.b64decode's own step, without its Python wrapper
        if row_id is not None:
            row[ROWID] = row_id
        return row
    return read


_OPS = {op.value: op for op in Op}


class OldTruthError(ValueError):
    """A truth folder written before the history lines held whole events: generate the case again."""


def _older(directory: Path, n: int, missing: str) -> OldTruthError:
    return OldTruthError(f"{directory / 'history.ndjson'} line {n} has no {missing}: the truth was written by an "
                         "older generator and does not hold the whole history; generate the case again")


def read_history(directory: Path) -> Iterator[DDL | Transaction]:
    """The history a truth folder holds, as the model's events, in commit order. A DDL's table
    after it is its tables.ndjson line (one per DDL with a table after it, in history order)."""
    directory = Path(directory)
    tables: dict[str, TableSchema] = {}  # qualified name -> the version rows are written under
    readers: dict[str, _RowReader] = {}  # qualified name -> the row reader of its version in force
    with open(directory / "tables.ndjson", "rb") as versions, open(directory / "history.ndjson", "rb") as lines:
        for n, raw in enumerate(lines, 1):
            line = orjson.loads(raw)
            if line["kind"] == "txn":
                changes = []
                for ch in line["changes"]:
                    read = readers.get(ch["table"])
                    if read is None:  # the first change to the table since the last DDL
                        read = readers[ch["table"]] = _RowReader(tables[ch["table"]])
                    change = read.change(ch)
                    if change is None:
                        raise _older(directory, n, "row_id for a change to a table without a handle key")
                    changes.append(change)
                yield transaction(line["start_ts"], line["commit_ts"], tuple(changes))
                continue
            if "table_before" not in line:
                raise _older(directory, n, "table_before")
            after = None
            if line["schema_version"] is not None:
                after = table_from_json(orjson.loads(versions.readline()))
            before, other_before, other_after = (None if line[k] is None else table_from_json(line[k])
                                                 for k in ("table_before", "other_before", "other_after"))
            types = {c.name: c.type for c in after.columns} if after is not None else {}
            ddl = DDL(line["commit_ts"], DDLType[line["ddl_type"]], line["query"], line["schema"], line["table"],
                      after, before, {name: value_from_json(types[name], v) for name, v in line["backfill"].items()},
                      other_before, other_after)
            _follow(tables, ddl)
            readers.clear()  # only a DDL changes a table's version: its rows are read anew after it
            yield ddl


def _follow(tables: dict[str, TableSchema], ddl: DDL) -> None:
    """The table versions in force after `ddl`, by qualified name."""
    if ddl.ddl_type is DDLType.DROP_SCHEMA:
        for name in [q for q, t in tables.items() if t.schema == ddl.schema]:
            del tables[name]
        return
    if ddl.ddl_type is DDLType.DROP_TABLE:
        tables.pop(f"{ddl.schema}.{ddl.table}", None)
    for gone in (ddl.table_before, ddl.other_before):
        if gone is not None:
            tables.pop(gone.qualified_name, None)
    for now in (ddl.table_after, ddl.other_after):
        if now is not None:
            tables[now.qualified_name] = now


class TruthWriter:
    """Tees a history stream into truth files while it flows on to the simulator."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.states = TableStates()
        self._tables: IO[bytes] = open(self.directory / "tables.ndjson", "wb")
        self._history: IO[bytes] = open(self.directory / "history.ndjson", "wb")
        self.last_commit_ts: Optional[int] = None

    def tee(self, history: Iterable[DDL | Transaction]) -> Iterator[DDL | Transaction]:
        for event in history:
            self.states.apply(event)
            if isinstance(event, DDL) and event.table_after is not None:
                self._tables.write(dumps_line(table_to_json(event.table_after)))
            self._history.write(txn_line_bytes(event) if isinstance(event, Transaction)
                                else dumps_line(history_line(event)))
            self.last_commit_ts = event.commit_ts
            yield event

    def close(self) -> None:
        self._tables.close()
        self._history.close()
        final = self.directory / "final"
        final.mkdir(exist_ok=True)
        for (schema, table) in self.states.tables():
            t = self.states.schemas[(schema, table)]
            rows = self.states.rows[(schema, table)]
            with open(final / f"{schema}.{table}.ndjson", "wb") as f:
                for key in sorted(rows, key=lambda k: key_order_token(_json_key(t, k))):
                    f.write(dumps_line(row_to_json(t, rows[key])))
