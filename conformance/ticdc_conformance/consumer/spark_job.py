"""The reference Spark consumer: records -> decoded events -> final table states.

Stages, each a Spark job (nothing of the stream is collected to the driver; only the DDL list,
the per-partition watermarks and the per-table column lists, which are small, are):
1. decode: records repartitioned by Kafka partition and sorted by offset, decoded in parallel
   with `mapInArrow` (decode_stage.py), persisted to WORK/decoded/;
2. watermark: per partition the highest watermark (a watermark never moves back: a regression is
   a replay and is ignored), the global watermark = the minimum over all partitions of all topics
   (spec 003 WATERMARK; TiCDC cmd/kafka-consumer). DML and DDL above it are not applied;
3. apply: replayed copies of one row event (same table, key, commit ts, op) are applied once; per
   row key the event with the highest (commit_ts, offset) wins; a DELETE removes the row; an UPDATE
   that moved the key also deletes the old key;
4. write: OUT/final/<schema>.<table>.ndjson (output.py) and OUT/consumer.json (figures).

The same job runs in-process (`consume`, local[2] by default) and as a spark-submit application
with any master (`main`, docs/spark-submit.md). Imports are absolute so that this file can be
spark-submit's application file.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any, Optional

if __name__ == "__main__":
    # As an application file, this file's folder comes first on sys.path, where sibling modules
    # would shadow top-level modules of the same name; the package is imported by its full name.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import orjson

from ticdc_conformance.consumer.decode_stage import DECODED_SCHEMA, arrow_decoder
from ticdc_conformance.consumer.output import final_file_name, parse_columns, project_row
from ticdc_conformance.errors import ConsumerError

def _spark_ddl(schema) -> str:
    import pyarrow as pa
    names = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", pa.binary(): "binary"}
    return ", ".join(f"`{f.name}` {names[f.type]}" for f in schema)


_DECODED_DDL = _spark_ddl(DECODED_SCHEMA)
MAX_REPORTED_ERRORS = 20


def spark_session(master: Optional[str] = None, app_name: str = "ticdc-conformance"):
    """A Spark session; `local[2]` unless a master is given or the job runs under spark-submit."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Local mode talks to itself; binding to loopback avoids the host-name lookup warning.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log4j = Path(__file__).with_name("log4j2.properties")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    # Under spark-submit the master comes from the command line (PYSPARK_GATEWAY_PORT is set by it).
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(master or os.environ.get("TICDC_CONFORMANCE_SPARK_MASTER", "local[2]"))
    spark = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={log4j.as_uri()}")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", os.environ.get("TICDC_CONFORMANCE_DRIVER_MEMORY", "2g"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def consume(spark, records: Any, manifest: dict, out: Path, work: Path) -> dict:
    """Runs the consumer over a record-file directory (or a DataFrame with the Kafka-source columns)."""
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    out, work = Path(out), Path(work)
    for d in (out / "final", work / "decoded", work / "final"):
        if d.exists():
            shutil.rmtree(d)
    (out / "final").mkdir(parents=True, exist_ok=True)

    df = spark.read.parquet(str(records)) if isinstance(records, (str, Path)) else records
    partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
    decoded = (
        df.repartition(max(1, len(partitions)), "topic", "partition")
        .sortWithinPartitions("topic", "partition", "offset")
        .mapInArrow(arrow_decoder(manifest["protocol"], manifest["sink"]), _DECODED_DDL)
    )
    decoded.write.parquet(str(work / "decoded"))
    ev = spark.read.parquet(str(work / "decoded"))

    errors = ev.filter(F.col("kind") == "error")
    n_errors = errors.count()
    if n_errors:
        shown = errors.orderBy("topic", "partition", "offset").limit(MAX_REPORTED_ERRORS).collect()
        lines = "\n".join(f"  {r['error']}" for r in shown)
        more = f"\n  … and {n_errors - len(shown)} more" if n_errors > len(shown) else ""
        raise ConsumerError(f"{n_errors} record(s) could not be decoded as {manifest['protocol']}:\n{lines}{more}")

    # Global watermark: min over every partition of the highest watermark seen there.
    marks = {(r["topic"], r["partition"]): r["wm"] for r in
             ev.filter(F.col("kind") == "watermark").groupBy("topic", "partition")
             .agg(F.max("commit_ts").alias("wm")).collect()}
    if marks:
        global_wm: Optional[int] = min(marks.get(tp, 0) for tp in partitions)
    else:
        global_wm = None  # the stream carries no watermark (e.g. Canal-JSON without the TiDB extension)

    visible = F.col("commit_ts").isNull() if global_wm is None else \
        (F.col("commit_ts").isNull() | (F.col("commit_ts") <= F.lit(global_wm)))
    rows = ev.filter((F.col("kind") == "row") & visible)
    cols = ["schema", "table", "key", "key_order", "commit_ts", "topic", "partition", "offset", "seq", "op",
            "after", "columns"]
    moved = rows.filter(F.col("old_key").isNotNull()).select(
        "schema", "table", F.col("old_key").alias("key"), F.col("old_key_order").alias("key_order"),
        "commit_ts", "topic", "partition", "offset", (F.col("seq") - F.lit(1_000_000)).alias("seq"),
        F.lit("delete").alias("op"), F.lit(None).cast("string").alias("after"), "columns",
    )
    effects = rows.select(*cols).unionByName(moved)
    order = [F.col("commit_ts").asc_nulls_first(), "topic", "partition", "offset", "seq"]
    first_copy = Window.partitionBy("schema", "table", "key", "commit_ts", "op").orderBy(*order)
    deduped = effects.withColumn("_copy", F.row_number().over(first_copy)).filter("_copy = 1").drop("_copy")
    latest = Window.partitionBy("schema", "table", "key").orderBy(*[
        F.col("commit_ts").desc_nulls_last(), F.col("topic").desc(), F.col("partition").desc(),
        F.col("offset").desc(), F.col("seq").desc()])
    last = deduped.withColumn("_rank", F.row_number().over(latest)).filter("_rank = 1").drop("_rank")
    final_rows = last.filter(F.col("op") != "delete")

    ddl_visible = F.lit(True) if global_wm is None else (F.col("commit_ts") <= F.lit(global_wm))
    ddls = (ev.filter((F.col("kind") == "ddl") & ddl_visible)
            .dropDuplicates(["commit_ts", "schema", "table", "query"])
            .orderBy("commit_ts").collect())
    columns = _table_columns(ev, rows, ddls, F, Window)

    projected = final_rows.select("schema", "table", "key_order", "after").mapInArrow(
        _projector(columns), "schema string, `table` string, key_order string, line string")
    (projected.repartition("schema", "table").sortWithinPartitions("schema", "table", "key_order")
     .select("schema", "table", F.col("line").alias("value"))
     .write.partitionBy("schema", "table").text(str(work / "final")))
    for (schema, table) in sorted(columns):
        _collect_table_file(work / "final", schema, table, out / "final" / final_file_name(schema, table))

    figures = {
        "records": df.count(),
        "events": ev.count(),
        "global_watermark": global_wm,
        "partition_watermarks": {f"{t}/{p}": marks.get((t, p)) for t, p in partitions},
        "row_events_applied": deduped.count(),
        "ddl_applied": [{"commit_ts": d["commit_ts"], "schema": d["schema"], "table": d["table"],
                         "query": d["query"]} for d in ddls],
        "tables": {f"{s}.{t}": len(c) for (s, t), c in sorted(columns.items())},
    }
    (out / "consumer.json").write_text(json.dumps(figures, indent=2) + "\n")
    return figures


def _table_columns(ev, rows, ddls, F, Window) -> dict[tuple[str, str], list[str]]:
    """Each table's column list: from the latest schema-carrying DDL or BOOTSTRAP, unless a row event
    came later, whose image then tells the columns in force."""
    latest_row = Window.partitionBy("schema", "table").orderBy(
        F.col("commit_ts").desc_nulls_last(), F.col("topic").desc(), F.col("partition").desc(), F.col("offset").desc())
    last_rows = {(r["schema"], r["table"]): (r["commit_ts"], parse_columns(r["columns"])) for r in
                 rows.withColumn("_r", F.row_number().over(latest_row)).filter("_r = 1")
                 .select("schema", "table", "commit_ts", "columns").collect()}
    out: dict[tuple[str, str], list[str]] = {}
    ddl_cols: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for d in ddls:
        name = (d["schema"], d["table"])
        if d["table"]:
            out.setdefault(name, [])
        if d["columns"]:
            ddl_cols[name] = (d["commit_ts"] or 0, parse_columns(d["columns"]))
    for name, (ts, cols) in last_rows.items():
        ddl = ddl_cols.get(name)
        out[name] = ddl[1] if ddl is not None and (ts is None or ddl[0] > ts) else cols
    for name, (_, cols) in ddl_cols.items():
        if not out.get(name):
            out[name] = cols
    return out


def _projector(columns: dict[tuple[str, str], list[str]]):
    import pyarrow as pa

    def project(batches):
        for batch in batches:
            d = batch.to_pydict()
            lines = [project_row(orjson.loads(a), columns[(s, t)])[:-1].decode()
                     for s, t, a in zip(d["schema"], d["table"], d["after"])]
            yield pa.RecordBatch.from_pydict(
                {"schema": d["schema"], "table": d["table"], "key_order": d["key_order"], "line": lines})

    return project


def _collect_table_file(root: Path, schema: str, table: str, target: Path) -> None:
    """Spark writes a folder per table; the consumer output is one file per table."""
    folder = root / f"schema={_escape(schema)}" / f"table={_escape(table)}"
    with open(target, "wb") as f:
        if folder.exists():
            for part in sorted(folder.glob("part-*")):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, f)


def _escape(name: str) -> str:
    # Spark escapes partition values in directory names the way Hive does.
    from urllib.parse import quote
    return quote(name, safe=" ")


# --- spark-submit -------------------------------------------------------------------------

def build_py_files(target: Path) -> int:
    """Writes the zip for spark-submit's --py-files: both packages (the consumer and the generators'
    record and canonical-value modules it imports), source and package data, byte-identical for the
    same tree. Returns the number of files. Third-party modules (pyarrow, orjson, fastavro, cramjam,
    lz4) are not in it: executors need them installed, as any PySpark job's dependencies."""
    import ticdc_conformance
    import ticdc_generators

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    files = []
    for package in (ticdc_conformance, ticdc_generators):
        root = Path(package.__file__).resolve().parent
        files += [(p, p.relative_to(root.parent).as_posix()) for p in sorted(root.rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path, name in files:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, path.read_bytes())
    return len(files)


def main(argv: Optional[list[str]] = None) -> int:
    """`spark-submit [--master M] --py-files ticdc-conformance.zip spark_job.py --records R --out O`."""
    import argparse

    parser = argparse.ArgumentParser(prog="spark_job.py", description="The reference TiCDC consumer as a Spark job.")
    parser.add_argument("--records", required=True, type=Path, help="Record-file folder.")
    parser.add_argument("--manifest", type=Path, help="manifest.json (default: next to --records).")
    parser.add_argument("--out", required=True, type=Path, help="Output folder.")
    parser.add_argument("--work", type=Path, help="Scratch folder (default OUT/work).")
    args = parser.parse_args(argv)
    # Absolute paths: executors of a cluster do not share the driver's working directory.
    records, out = args.records.resolve(), args.out.resolve()
    work = (args.work or args.out / "work").resolve()
    manifest = json.loads((args.manifest or records.parent / "manifest.json").read_text())
    spark = spark_session()
    try:
        figures = consume(spark, records, manifest, out, work)
    except ConsumerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    # Run the package's copy of this module, not __main__: functions shipped to executors are then
    # pickled by reference to an importable module.
    from ticdc_conformance.consumer.spark_job import main as _main

    sys.exit(_main())
