"""The ground truth: replays an upstream history into table states, and writes it to disk.

Format (docs/truth-format.md): `truth/tables.ndjson` (every schema version), `truth/history.ndjson`
(every DDL and transaction in commit order), `truth/final/<schema>.<table>.ndjson` (final rows,
sorted by handle key), all in the canonical JSON value form.
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, Iterable, Iterator, Optional

from .canonical import dumps_line, key_order_token, row_to_json, value_to_json
from .model import DDL, DDLType, Op, Row, TableSchema, Transaction
from .schema_json import table_to_json


class TableStates:
    """Upstream tables as of the last applied event."""

    def __init__(self) -> None:
        self.schemas: dict[tuple[str, str], TableSchema] = {}
        self.rows: dict[tuple[str, str], dict[tuple, Row]] = {}

    def apply(self, event: DDL | Transaction) -> None:
        if isinstance(event, Transaction):
            for ch in event.changes:
                name = (ch.table.schema, ch.table.table)
                rows = self.rows[name]
                if ch.op is Op.INSERT:
                    rows[ch.table.key_of(ch.after)] = dict(ch.after)
                elif ch.op is Op.UPDATE:
                    del rows[ch.table.key_of(ch.before)]
                    rows[ch.table.key_of(ch.after)] = dict(ch.after)
                else:
                    del rows[ch.table.key_of(ch.before)]
            return
        ddl = event
        if ddl.ddl_type is DDLType.DROP_TABLE:
            name = (ddl.schema, ddl.table)
            self.schemas.pop(name, None)
            self.rows.pop(name, None)
            return
        if ddl.table_after is None:
            return
        t = ddl.table_after
        name = (t.schema, t.table)
        if ddl.ddl_type in (DDLType.CREATE_TABLE, DDLType.TRUNCATE_TABLE) or name not in self.rows:
            self.rows[name] = {}
        else:
            rows = self.rows[name]
            for key, row in rows.items():
                for col in t.columns:
                    if col.name not in row:
                        row[col.name] = ddl.backfill.get(col.name, col.default)
                for gone in [c for c in row if c not in t.column_names]:
                    del row[gone]
        self.schemas[name] = t

    def table_rows(self, schema: str, table: str) -> list[Row]:
        t = self.schemas[(schema, table)]
        rows = self.rows[(schema, table)]
        return [rows[k] for k in sorted(rows, key=lambda k: key_order_token(_json_key(t, k)))]


def _json_key(t: TableSchema, key: tuple) -> list:
    cols = [t.column(c) for c in t.handle_key]
    return [value_to_json(c.type, v) for c, v in zip(cols, key)]


def history_line(event: DDL | Transaction) -> dict:
    if isinstance(event, DDL):
        return {
            "kind": "ddl", "commit_ts": event.commit_ts, "ddl_type": event.ddl_type.name,
            "schema": event.schema, "table": event.table, "query": event.query,
            "schema_version": event.table_after.schema_version if event.table_after else None,
        }
    return {
        "kind": "txn", "start_ts": event.start_ts, "commit_ts": event.commit_ts,
        "changes": [
            {
                "table": ch.table.qualified_name, "op": ch.op.value,
                "before": row_to_json(ch.table, ch.before) if ch.before is not None else None,
                "after": row_to_json(ch.table, ch.after) if ch.after is not None else None,
            }
            for ch in event.changes
        ],
    }


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
            self._history.write(dumps_line(history_line(event)))
            self.last_commit_ts = event.commit_ts
            yield event

    def close(self) -> None:
        self._tables.close()
        self._history.close()
        final = self.directory / "final"
        final.mkdir(exist_ok=True)
        for (schema, table) in sorted(self.states.schemas):
            t = self.states.schemas[(schema, table)]
            with open(final / f"{schema}.{table}.ndjson", "wb") as f:
                for row in self.states.table_rows(schema, table):
                    f.write(dumps_line(row_to_json(t, row)))
