"""The reference Spark consumer in the form of the `spark:` mode (docs/consumer-modes.md):
`--consumer spark:ticdc_conformance.consumers.spark.function:consume`.

`consume(df, header)` runs the reference job (job.py `consume`, unchanged) over `df`, a DataFrame
with the Kafka-source columns, into a scratch folder, and returns what it wrote as DataFrames:
the final tables as one DataFrame of (`schema`, `table`, `row`) with the rows' canonical JSON
text, the applied log as (`seq`, `line`) and the states as (`schema`, `table`, `line`), so a run
through this mode shows what the `spark` consumer shows. The returned DataFrames are
materialised (localCheckpoint) before the scratch folder is removed, so they outlive it.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ticdc_conformance.consumers.spark.job import consume as consume_job


def _lines(spark, folder: Path, with_table: bool):
    """The lines of the NDJSON files under `folder` (a file or a folder of <schema>.<table>.ndjson),
    with their order (`seq`) and, per file, the table it holds; materialised."""
    from pyspark.sql import functions as F

    df = spark.read.text(str(folder)).withColumnRenamed("value", "line")
    if with_table:
        name = F.regexp_replace(F.col("_metadata.file_name"), r"\.ndjson$", "")
        df = df.select(F.regexp_extract(name, r"^([^.]*)\.", 1).alias("schema"),
                       F.regexp_extract(name, r"^[^.]*\.(.*)$", 1).alias("table"), "line")
    else:
        # One small file, read in order: the ids grow with the line number (across splits too).
        df = df.select(F.monotonically_increasing_id().alias("seq"), "line")
    return df.localCheckpoint(eager=True)


def consume(df, header: dict) -> dict:
    """The reference consumer's outputs over `df` (the Kafka-source columns), `header` the manifest."""
    spark = df.sparkSession
    scratch = Path(tempfile.mkdtemp(prefix="ticdc-conformance-spark-function-"))
    try:
        out = scratch / "out"
        run_dir = Path(header["run_dir"]) if header.get("run_dir") else None  # large messages resolve there
        consume_job(spark, df, header, out, scratch / "work", run_dir=run_dir)
        final = _lines(spark, out / "final", with_table=True).withColumnRenamed("line", "row")
        applied = _lines(spark, out / "applied.ndjson", with_table=False)
        states = _lines(spark, out / "states", with_table=True)
        return {"tables": final, "applied": applied, "states": states}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
