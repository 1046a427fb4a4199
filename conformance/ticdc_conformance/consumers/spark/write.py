"""The Spark consumer's outputs: the applied log through one task, the tables through Spark's writers.

`applied.ndjson` is one sequence in apply order and `applied.parquet` numbers its lines, so the log
must come out of one ordered stream: its rows, moved into one partition (`repartition(1)`) and
sorted there, go to one task, which merges in the DDLs and checkpoints (a small list from the
driver) and writes through output.AppliedLog, the sequential consumer's own writer. Sort + one
partition was chosen over range-partitioned part files concatenated afterwards: `seq` in
applied.parquet is the line number in the whole log, which a part file cannot know, and one
partition needs no sampling job for range bounds. The state lines and final rows need no such
order across tables: their text (output.StatesWriter's and write_final's, byte for byte) is built
in the JVM and written by Spark's text writer partitioned by table, one task per table file, and
states.parquet by its Parquet writer; no row of them passes through the Python workers. The jobs
run at the same time. The tasks write under the job's scratch folder (on a cluster, a file system
every host mounts, as for the decoded events); the driver moves the files into place. The log's
task returns what it wrote as (name, value) rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional

import pyarrow as pa

from ticdc_conformance.consumers.output import AppliedLog, final_file_name
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


# --- table files in the JVM ---------------------------------------------------------------------
STRAY = "__HIVE_DEFAULT_PARTITION__"  # Spark's folder for a null partition value: a table without an id


def state_lines(F, states):
    """The lines of states/ files (output.StatesWriter's text), one per copy of a state row."""
    line = F.concat(F.lit('{"from":'), F.col("from").cast("string"), F.lit(',"to":'),
                    F.coalesce(F.col("to").cast("string"), F.lit("null")), F.lit(',"row":'), F.col("row"), F.lit("}"))
    return states.withColumn("line", F.explode(F.array_repeat(line, F.col("copies").cast("int"))))


def final_lines(F, finals):
    """The lines of final/ files: a row as many times as the table holds it."""
    return finals.withColumn("line", F.explode(F.array_repeat(F.col("row"), F.col("copies").cast("int"))))


def write_table_files(spark, lines, names: list[tuple[str, str]], scratch: Path, order: list, partitions: int):
    """Spark's text writer: each table's lines (`lines`: schema, table, line and the `order`
    columns) into a file of its own under `scratch` (`_f=<index in names>/part-…`), sorted by
    `order` within it; the work of output.StatesWriter and output.write_final without a pass
    through the Python workers. Every table's lines go to one task, so each file is one part."""
    from pyspark.sql import functions as F

    ids = spark.createDataFrame([(s, t, i) for i, (s, t) in enumerate(names)], "schema string, `table` string, _f int")
    (lines.join(F.broadcast(ids), ["schema", "table"], "left")
     .repartition(max(1, min(partitions, len(names))), "_f").sortWithinPartitions("_f", *order)
     .select("_f", "line").write.partitionBy("_f").text(str(scratch)))


def place_table_files(scratch: Path, names: list[tuple[str, str]], folder: Path) -> list[tuple[str, str]]:
    """Moves the files write_table_files wrote into `folder` as <schema>.<table>.ndjson; returns
    the tables written. Lines of a table the driver did not name stop the run."""
    from ticdc_conformance.errors import ConsumerError

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for part_dir in sorted(scratch.glob("_f=*")):
        index = part_dir.name[len("_f="):]
        if index == STRAY:
            raise ConsumerError(f"rows of a table the consumer does not know were written (see {part_dir})")
        name = names[int(index)]
        parts = sorted(part_dir.glob("part-*"))
        with open(folder / final_file_name(*name), "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(1 << 20):
                        out.write(chunk)
        written.append(name)
    return written
