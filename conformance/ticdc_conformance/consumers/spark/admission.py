"""Admission in Spark SQL: what happens to each row event, without a pass through the Python workers.

The same decisions as admit.py (which stays for streams without watermarks, where events apply in
arrival order), as columns over the decoded rows, for a stream whose checkpoints are known:
- `reached`: the checkpoints recorded before the event arrived (by arrival place, ranks.py), and
  the watermark applied then (`wm_before`);
- `state`: `dropped` when its commit ts is at or below that watermark (a re-send of something
  already applied), else `applied` at the first checkpoint at or above its commit ts (`k`), or
  `waiting` when no checkpoint reaches it (k = the number of checkpoints);
- the apply-order columns (plan.APPLY_KEY) and `seg`, the DDLs applied before it: a row event
  flushed at commit ts T comes after every DDL of a lower commit ts (DDLs are flushed at the first
  checkpoint at or above theirs, as row events are) and before those of T and above;
- `epoch` (only where a table without key needs it to tell a re-send from a duplicate): how often
  its partition showed a re-send before it -- a watermark below the partition's, or a table's
  commit ts going back among the events not dropped -- as a running count per partition in offset
  order (window functions over the partition's rows and watermarks).
"""
from __future__ import annotations

from ticdc_conformance.consumers.spark.plan import PHASE_FLUSH, Checkpoints
from ticdc_conformance.consumers.spark.ranks import Ladder, with_count_below

POSITION = ["pos_ts", "topic", "partition", "pos_offset", "offset", "seq"]
_OP_RANKS = {"delete": 0, "update": 1, "insert": 2}  # sequential/consumer.py _OP_RANK; anything else 3
ROW_COLUMNS = ["commit_ts", "schema", "table", "op", "key", "key_order", "old_key", "old_key_order", "key_columns",
               "after", "before", "columns", *POSITION]


def sql_admissible(cps: Checkpoints, ddl_keys: list[tuple]) -> bool:
    """Admission in SQL covers streams with watermarks whose DDLs carry commit ts (flushed)."""
    return cps.seen and all(key[1] == PHASE_FLUSH for key in ddl_keys)


def admitted_rows(spark, ev, cps: Checkpoints, ddl_keys: list[tuple]):
    """The decoded row events (`ev`: the decode stage's rows) with admit.py's columns but `epoch`."""
    from pyspark.sql import functions as F

    rows = ev.filter(F.col("kind") == "row").select(*ROW_COLUMNS)
    n = cps.count
    reached = Ladder.of(cps.positions, payload=lambda i: cps.values[i - 1] if i > 0 else None)
    rows = with_count_below(spark, rows, F.struct(*POSITION), "pos_ts", reached, "reached", ("wm_before", "bigint"))
    rows = with_count_below(spark, rows, F.col("commit_ts"), "commit_ts", Ladder.of(cps.values), "flush")
    rows = with_count_below(spark, rows, F.col("commit_ts"), "commit_ts", Ladder.of([key[2] for key in ddl_keys]),
                            "seg")
    ts = F.col("commit_ts")
    arrival = ts.isNull()
    dropped = F.col("wm_before").isNotNull() & (ts <= F.col("wm_before"))
    state = (F.when(arrival, "applied").when(dropped, "dropped")
             .when(F.col("flush") < n, "applied").otherwise("waiting"))
    ranked = F.coalesce(F.element_at(F.create_map(*[F.lit(x) for kv in _OP_RANKS.items() for x in kv]), F.col("op")),
                        F.lit(3))
    flushed = ~arrival & ~dropped
    image_keyed = F.col("key_columns").isNull() | (F.col("key_columns") == "[]")
    image = F.coalesce(F.col("after"), F.col("before"))
    return (rows.withColumn("state", state)
            .withColumn("k", F.when(arrival | dropped, F.col("reached")).otherwise(F.col("flush")).cast("int"))
            .withColumn("phase", F.when(arrival, 0).otherwise(PHASE_FLUSH).cast("int"))
            .withColumn("ts0", F.when(arrival, F.lit(0).cast("bigint")).otherwise(ts))
            .withColumn("kind_rank", F.lit(0))
            .withColumn("s_schema", F.when(arrival, "").otherwise(F.col("schema")))
            .withColumn("s_table", F.when(arrival, "").otherwise(F.col("table")))
            .withColumn("s_key_order", F.when(flushed, F.coalesce(F.col("key_order"), F.lit(""))).otherwise(""))
            .withColumn("op_rank", F.when(flushed, ranked).otherwise(0).cast("int"))
            .withColumn("piece", F.lit(0))
            .withColumn("image_keyed", image_keyed)
            # What the table is keyed by after this event; only its distinctness counts (shards.Components).
            .withColumn("key_shape", F.when(image_keyed, F.concat(F.lit("image:"), F.to_json(F.json_object_keys(image))))
                        .otherwise(F.col("key_columns")))
            .withColumn("seg", F.col("seg").cast("int"))
            .drop("reached", "wm_before", "flush"))


def with_epochs(ev, admitted):
    """`admitted` with `epoch` (admit.py): per partition in (offset, seq) order, the running count of
    watermarks below the partition's watermark and of not-dropped row events whose commit ts is
    below an earlier one of their table (inclusive: the event that shows the re-send is in the new epoch)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    marks = (ev.filter(F.col("kind") == "watermark")
             .select("topic", "partition", "offset", "seq", (F.col("commit_ts") < F.col("mark")).alias("_resend")))
    nd = (F.col("state") != "dropped") & F.col("commit_ts").isNotNull()
    earlier = Window.partitionBy("topic", "partition", "schema", "table").orderBy("offset", "seq") \
        .rowsBetween(Window.unboundedPreceding, -1)
    high = F.max(F.when(nd, F.col("commit_ts"))).over(earlier)
    rows = admitted.withColumn("_resend", nd & F.coalesce(F.col("commit_ts") < high, F.lit(False)))
    both = rows.unionByName(marks, allowMissingColumns=True)
    running = Window.partitionBy("topic", "partition").orderBy("offset", "seq") \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    return (both.withColumn("epoch", F.sum(F.col("_resend").cast("int")).over(running).cast("int"))
            .filter(F.col("state").isNotNull()).drop("_resend"))
