"""The applied log built in Spark SQL: output.AppliedLog's lines and Parquet rows, byte for byte.

The applied row events (their apply-order columns, plan.APPLY_KEY) become transactions -- the rows
of one commit ts in one flush, or one event applied on arrival -- whose line
`{"kind":"txn","commit_ts":T,"rows":[…]}` is concatenated in the JVM: each row's
`{"schema":…,"table":…,"op":…,"before":` prefix is printed by orjson on the driver for every table
and op (table names are JSON-escaped exactly as the sequential consumer escapes them), its images
are already canonical JSON text. The DDL and checkpoint lines come from the driver, printed by
orjson with their apply keys. One sort of the lines by apply key gives the file; a line number
(`row_number`) and the rows of each line give applied.parquet, written by one task with the
output's Arrow schema (vectorized: no row passes through Python one by one).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ticdc_conformance.consumers.output import APPLIED_SCHEMA
from ticdc_conformance.consumers.spark.plan import APPLY_KEY, PHASE_FLUSH

OPS = ("insert", "update", "delete")  # events.DecodedRow.op
KEY_TYPE = ("struct<k: int, phase: int, ts0: bigint, kind_rank: int, s_schema: string, s_table: string, "
            "s_key_order: string, op_rank: int, pos_ts: bigint, topic: string, partition: int, pos_offset: bigint, "
            "offset: bigint, seq: int, piece: int>")
ENTRY_TYPE = "struct<schema: string, table: string, op: string, before: string, after: string, query: string>"
SUMMARY_TYPE = "name string, value bigint"


def _item_rows(items: list) -> list[tuple]:
    """The DDL and checkpoint lines (plan: apply key, kind, payload) as rows of the log."""
    out = []
    for key, kind, payload in items:
        if kind == "ddl":
            line = orjson.dumps({"kind": "ddl", "commit_ts": payload["commit_ts"], "schema": payload["schema"],
                                 "table": payload["table"], "query": payload["query"]}).decode()
            entry = (payload["schema"], payload["table"], None, None, None, payload["query"])
            out.append((key, line, "ddl", payload["commit_ts"], [entry]))
        else:
            line = orjson.dumps({"kind": "checkpoint", "ts": payload["ts"]}).decode()
            out.append((key, line, "checkpoint", payload["ts"], [(None, None, None, None, None, None)]))
    return out


def log_lines(spark, log_rows, items: list, names: list[tuple[str, str]]):
    """Every line of the log: `key` (apply order), `line`, `kind`, `ts` and its Parquet `entries`."""
    from pyspark.sql import functions as F

    prefixes = spark.createDataFrame(
        [(s, t, op, orjson.dumps({"schema": s, "table": t, "op": op})[:-1].decode() + ',"before":')
         for s, t in names for op in OPS], "schema string, `table` string, op string, _prefix string")
    rows = log_rows.join(F.broadcast(prefixes), ["schema", "table", "op"], "left")
    prefix = F.coalesce(F.col("_prefix"), F.raise_error(F.concat(
        F.lit("an applied row event of a table or op the driver did not name: "), F.col("schema"), F.lit("."),
        F.col("table"), F.lit(" "), F.col("op"))))
    text = F.concat(prefix, F.coalesce(F.col("before"), F.lit("null")), F.lit(',"after":'),
                    F.coalesce(F.col("after"), F.lit("null")), F.lit("}"))
    key = F.struct(*[F.col(c) for c in APPLY_KEY])
    entry = F.struct("schema", "table", "op", "before", "after", F.lit(None).cast("string").alias("query"))
    # A transaction: the rows of one commit ts in one flush; applied on arrival, one event.
    txns = (rows.groupBy(F.struct("k", "phase", "ts0").alias("_t"),
                         F.when(F.col("phase") != PHASE_FLUSH, key).alias("_a"))
            .agg(F.min(key).alias("key"), F.max("commit_ts").alias("ts"),
                 F.array_sort(F.collect_list(F.struct(key.alias("key"), text.alias("text"), entry.alias("entry"))))
                 .alias("_rows")))
    txn_lines = txns.select(
        "key", F.concat(F.lit('{"kind":"txn","commit_ts":'), F.coalesce(F.col("ts").cast("string"), F.lit("null")),
                        F.lit(',"rows":['), F.array_join(F.transform("_rows", lambda r: r["text"]), ","),
                        F.lit("]}")).alias("line"),
        F.lit("txn").alias("kind"), "ts", F.transform("_rows", lambda r: r["entry"]).alias("entries"))
    item_lines = spark.createDataFrame(_item_rows(items), f"key {KEY_TYPE}, line string, kind string, ts bigint, "
                                                          f"entries array<{ENTRY_TYPE}>")
    return txn_lines.unionByName(item_lines)


def write_log_text(lines, scratch: Path) -> None:
    """applied.ndjson's lines in apply order, one task, Spark's text writer."""
    lines.select("key", "line").repartition(1).sortWithinPartitions("key").select("line").write.text(str(scratch))


def log_parquet_rows(lines):
    """applied.parquet's rows in order: a line's number (`seq`) and one row per entry."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    numbered = lines.withColumn("seq", F.row_number().over(Window.orderBy("key")) - 1)
    return (numbered.select("seq", "kind", "ts", F.posexplode("entries").alias("_pos", "e"))
            .select("seq", "_pos", "kind", "ts", "e.schema", "e.table", "e.op", "e.before", "e.after", "e.query")
            .repartition(1).sortWithinPartitions("seq", "_pos"))


def parquet_log_writer(target: Path):
    """mapInArrow over log_parquet_rows: writes applied.parquet with output.APPLIED_SCHEMA; returns
    the transactions and rows applied."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        writer = pq.ParquetWriter(Path(target) / "applied.parquet", APPLIED_SCHEMA)
        transactions = rows = 0
        last = None
        for batch in batches:
            table = pa.Table.from_batches([batch]).select(APPLIED_SCHEMA.names).cast(APPLIED_SCHEMA)
            writer.write_table(table)
            seqs = pc.filter(table.column("seq"), pc.equal(table.column("kind"), "txn")).to_numpy()
            rows += len(seqs)
            if len(seqs):
                transactions += int((seqs[1:] != seqs[:-1]).sum()) + (seqs[0] != last)
                last = seqs[-1]
        writer.close()
        yield pa.RecordBatch.from_pydict({"name": ["transactions_applied", "rows_applied"],
                                          "value": [int(transactions), rows]},
                                         schema=pa.schema([("name", pa.string()), ("value", pa.int64())]))

    return write
