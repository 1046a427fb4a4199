"""The Spark consumer's table outputs through Spark's writers (the applied log: log.py).

The state lines and final rows need no order across tables: their text (output.StatesWriter's and
write_final's, byte for byte) is built in the JVM and written by Spark's text writer partitioned
by table, one task per table file, and states.parquet by its Parquet writer; no row of them passes
through the Python workers. `applied.ndjson` is one sequence in apply order and `applied.parquet`
numbers its lines, so the log is sorted into one partition (log.py): sort + one partition was
chosen over range-partitioned part files concatenated afterwards, since `seq` is the line number
in the whole log, which a part file cannot know, and one partition needs no sampling job for
range bounds. The jobs run at the same time. The tasks write under the job's scratch folder (on a
cluster, a file system every host mounts, as for the decoded events); the driver moves the files
into place.
"""
from __future__ import annotations

from pathlib import Path

from ticdc_conformance.consumers.output import final_file_name
from ticdc_conformance.consumers.spark.plan import APPLY_KEY

LOG_INPUT = [*APPLY_KEY, "schema", "table", "commit_ts", "op", "before", "after"]
STATE_COLUMNS = ["schema", "table", "from", "to", "row", "copies"]
FINAL_COLUMNS = ["schema", "table", "row", "copies"]


def state_order(col) -> list:
    """State lines by table, then as the sequential consumer writes them: when they end."""
    return ["schema", "table", col("to").asc_nulls_last(), "from", "row"]


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
