"""The Spark consumer's ordered outputs, each written whole by one task with consumers/output.py's writers.

`applied.ndjson` is one sequence in apply order and `applied.parquet` numbers its lines, so each
output must come out of one ordered stream. Each output is its own job: the rows it needs, moved
into one partition (`repartition(1)`) and sorted there, handed to one task. The log's task merges
in the DDLs and checkpoints (a small list from the driver) and writes through output.AppliedLog,
the sequential consumer's own writer; the states go through output.StatesWriter, the final rows
line by line. Sort + one partition was chosen over range-partitioned part files concatenated
afterwards: `seq` in applied.parquet is the line number in the whole log, which a part file cannot
know, and one partition needs no sampling job for range bounds. The three jobs run at the same
time. The tasks write under the job's scratch folder (on a cluster, a file system every host
mounts, as for the decoded events); the driver moves the files into place. Each task returns what
it wrote as (name, value) rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, Iterator, Optional

import pyarrow as pa

from ticdc_conformance.consumers.output import AppliedLog, StatesWriter, final_file_name
from ticdc_conformance.consumers.spark.plan import APPLY_KEY, PHASE_FLUSH

SUMMARY_SCHEMA = pa.schema([pa.field("name", pa.string()), pa.field("value", pa.int64())])
LOG_INPUT = [*APPLY_KEY, "schema", "table", "commit_ts", "op", "before", "after"]
LogItem = tuple[tuple, str, dict]  # (apply key, "ddl" | "checkpoint", payload)


def _summary(figures: dict[str, int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"name": list(figures), "value": list(figures.values())}, schema=SUMMARY_SCHEMA)


def _rows(batches: Iterator[pa.RecordBatch], columns: list[str]) -> Iterator[dict]:
    for batch in batches:
        d = batch.select(columns).to_pydict()
        for i in range(batch.num_rows):
            yield {c: d[c][i] for c in columns}


class _LogWriter:
    def __init__(self, target: Path, items: list[LogItem]) -> None:
        self.log = AppliedLog(target)
        self.items, self.next = items, 0
        self.txn: list[dict] = []
        self.txn_id: Optional[tuple] = None
        self.figures = {"transactions_applied": 0, "rows_applied": 0}

    def _close_txn(self) -> None:
        if self.txn:
            self.log.txn(self.txn[0]["commit_ts"], self.txn)
            self.figures["transactions_applied"] += 1
            self.figures["rows_applied"] += len(self.txn)
            self.txn = []

    def _items_before(self, key: Optional[tuple]) -> None:
        while self.next < len(self.items) and (key is None or self.items[self.next][0] < key):
            _, kind, payload = self.items[self.next]
            self.next += 1
            self._close_txn()
            if kind == "ddl":
                self.log.ddl(payload["commit_ts"], payload["schema"], payload["table"], payload["query"])
            else:
                self.log.checkpoint(payload["ts"])

    def row(self, r: dict) -> None:
        key = tuple(r[c] for c in APPLY_KEY)
        self._items_before(key)
        # A transaction is the row events of one commit ts in one flush; without a commit ts, one event.
        this = key[:3] if key[1] == PHASE_FLUSH else key
        if this != self.txn_id:
            self._close_txn()
            self.txn_id = this
        self.txn.append(r)

    def close(self) -> dict[str, int]:
        self._items_before(None)
        self._close_txn()
        self.log.close()
        return self.figures


STATE_COLUMNS = ["schema", "table", "from", "to", "row", "copies"]
FINAL_COLUMNS = ["schema", "table", "row", "copies"]


def state_order(col) -> list:
    """State lines by table, then as the sequential consumer writes them: when they end."""
    return ["schema", "table", col("to").asc_nulls_last(), "from", "row"]


FINAL_ORDER = ["schema", "table", "s_key_order", "row"]


def applied_writer(target: Path, items: list[LogItem]):
    """mapInArrow over the applied row events in apply order: applied.ndjson, applied.parquet."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        w = _LogWriter(Path(target), items)
        for r in _rows(batches, LOG_INPUT):
            w.row(r)
        yield _summary(w.close())

    return write


def write_applied_log(target: Path, items: list[LogItem]) -> dict[str, int]:
    """The log when no row event was applied (no task ran): DDLs and checkpoints only."""
    return _LogWriter(Path(target), items).close()


def states_writer(target: Path):
    """mapInArrow over the state lines sorted by table: states/ and states.parquet."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        w = StatesWriter(Path(target))
        for r in _rows(batches, STATE_COLUMNS):
            w((r["schema"], r["table"]), r["from"], r["to"], r["row"].encode(), r["copies"])
        w.close()
        yield _summary({"state_lines": w.lines})

    return write


def final_writer(target: Path):
    """mapInArrow over the final rows sorted by (table, key order): final/<schema>.<table>.ndjson."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        folder = Path(target)
        folder.mkdir(parents=True, exist_ok=True)
        f: Optional[IO[bytes]] = None
        name: Optional[tuple[str, str]] = None
        lines = 0
        for r in _rows(batches, FINAL_COLUMNS):
            if (r["schema"], r["table"]) != name:
                if f is not None:
                    f.close()
                name = (r["schema"], r["table"])
                f = open(folder / final_file_name(*name), "wb")
            line = r["row"].encode() + b"\n"
            for _ in range(r["copies"]):
                f.write(line)
            lines += r["copies"]
        if f is not None:
            f.close()
        yield _summary({"final_rows": lines})

    return write
