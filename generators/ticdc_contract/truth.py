"""The ground truth: replays an upstream history into table states, and writes it to disk.

Format (docs/truth-format.md): `truth/tables.ndjson` (every schema version), `truth/history.ndjson`
(every DDL and transaction in commit order), `truth/final/<schema>.<table>.ndjson` (final rows,
sorted by handle key), all in the canonical JSON value form.
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, Iterable, Iterator, Optional

from ticdc_contract.canonical import dumps_line, key_order_token, row_to_json, value_to_json
from ticdc_contract.model import DDL, TableSchema, Transaction
from ticdc_contract.schema_json import table_to_json
from ticdc_contract.state import TableStates


def _json_key(t: TableSchema, key: tuple) -> list:
    if not t.handle_key:
        return list(key)  # the hidden row ID
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
        for (schema, table) in self.states.tables():
            t = self.states.schemas[(schema, table)]
            rows = self.states.rows[(schema, table)]
            with open(final / f"{schema}.{table}.ndjson", "wb") as f:
                for key in sorted(rows, key=lambda k: key_order_token(_json_key(t, k))):
                    f.write(dumps_line(row_to_json(t, rows[key])))
