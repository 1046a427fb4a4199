"""The tables of plain components in Spark SQL: state versions with window functions.

A component (shards.Components) is plain when nothing path-dependent happens to its rows: each of
its tables is keyed by the key columns its messages name (one key shape, never the whole image),
no DDL touches it once its first row event is applied, its column list stays what it was then, and
every row image its events put carries exactly those columns in that order (so an image's JSON
text is the table's line for it, as consumers/output.py row_json would print it). Most tables of
a long stream are plain; the others go through the sequential consumer's table logic in shards
(shards.py). For a plain table the rules of consumers/rules/tables.py reduce to, per row key:

- copies of a row event are dropped (consumers/rules/ordering.py: same table, commit ts, op and
  images; the first to arrive stays), while waiting too;
- an event removes its row (DELETE; UPDATE, under its old key when the key changed) and puts a new
  image (INSERT, UPDATE); within a transaction every removal comes first, so at the end of
  checkpoint interval k a key holds the last image put by the last transaction of the interval that
  touched it, or nothing when that transaction only removed it;
- a state line closes at checkpoint W_k and a new one opens when the row's line changed, when it
  came or went, or when the interval removed it at all (a removed row is a new entry in tables.py,
  even when the same image comes back), and lasts until the next such change (`lead`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ticdc_conformance.consumers.output import parse_columns
from ticdc_conformance.consumers.rules.ddl_semantics import Name
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer
from ticdc_conformance.consumers.spark.plan import APPLY_KEY, PHASE_FLUSH
from ticdc_conformance.consumers.spark.shards import REPLAY_SCHEMA, Components, Step, apply_step
from ticdc_conformance.consumers.spark.write import LOG_INPUT

POSITION = ["pos_ts", "topic", "partition", "pos_offset", "offset", "seq"]
IDENTITY = ["schema", "table", "commit_ts", "op", "before", "after"]  # ordering.row_identity


@dataclass
class PlainTables:
    components: set[int]  # the plain components
    columns: dict[Name, list[str]]  # each plain table's column list
    problems: list[str]  # DDLs of plain components that could not be applied (shards.py reports the others)


def plain_tables(comps: Components, steps: dict[int, list[Step]], counts: list[dict], protocol: str) -> PlainTables:
    """The components whose tables the SQL versions can build (module docstring), from the admitted
    row events' counts (job.py admit: per table, key shape, state, phase, column list; the first
    applied in apply order; whether every put image's keys are that column list)."""
    by_comp: dict[int, list[dict]] = {}
    for c in counts:
        by_comp.setdefault(comps.of[(c["schema"], c["table"])], []).append(c)
    plain, columns, problems = set(), {}, []
    for comp in set(comps.of.values()):
        groups = by_comp.get(comp, [])
        live = [g for g in groups if g["state"] != "dropped"]
        if any(g["key_shape"] is None or g["key_shape"].startswith("image:") for g in live):
            continue
        if len({(g["schema"], g["table"], g["key_shape"]) for g in live}) != len({(g["schema"], g["table"])
                                                                                   for g in live}):
            continue  # a table whose key columns change is re-keyed by tables.py
        applied = [g for g in live if g["state"] == "applied"]
        if any(g["phase"] != PHASE_FLUSH or g["keys_match"] is False for g in applied):
            continue
        first = min((tuple(g["first"][c] for c in APPLY_KEY[:-1]) + (0,) for g in applied), default=None)
        cols, comp_problems = _fixed_columns(steps.get(comp, []), first, protocol)
        if cols is None or any(parse_columns(g["columns"]) != cols.get((g["schema"], g["table"])) for g in applied):
            continue
        plain.add(comp)
        columns.update(cols)
        if live:  # a shard exists where row events do: a component without any reports nothing
            problems += comp_problems
    return PlainTables(plain, columns, problems)


def _fixed_columns(steps: list[Step], first, protocol: str) -> tuple:
    """The component's tables' columns when its first row event is applied (`first`, its apply
    key; None: no row event is), provided no DDL comes after it and no later step changes them
    (otherwise None), and the DDL problems of its steps, as a shard meets them (shards.py)."""
    consumer = LocalConsumer(protocol, {}, [])
    fixed = None
    for key, kind, payload in steps:
        if first is not None and key >= first:
            if kind == "ddl":
                return None, []
            if fixed is None:
                fixed = _columns(consumer)
        apply_step(consumer, kind, payload)
        if fixed is not None and _columns(consumer) != fixed:
            return None, []
    return (fixed if fixed is not None else _columns(consumer)), list(consumer.problems)


def _columns(consumer: LocalConsumer) -> dict[Name, list[str]]:
    return {name: list(meta.columns) for name, meta in consumer.tables.metas.items()}


def _typed(F, name: str):
    """A null of the replay output's column type."""
    spark_type = {"string": "string", "int32": "int", "int64": "bigint"}[str(REPLAY_SCHEMA.field(name).type)]
    return F.lit(None).cast(spark_type).alias(name)


def _shaped(F, df, values: dict):
    """`df` with the replay output's columns (shards.REPLAY_SCHEMA): `values` by name, the rest null."""
    return df.select(*[values[f.name].alias(f.name) if f.name in values else _typed(F, f.name)
                       for f in REPLAY_SCHEMA])


def plain_outputs(spark, admitted, checkpoints: list[int]):
    """The log, state, final and figure rows (shards.REPLAY_SCHEMA) of the admitted row events of
    plain tables (`admitted` holds only those)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    live = admitted.filter(F.col("state") != "dropped")
    first = Window.partitionBy(*IDENTITY).orderBy(*POSITION)
    live = live.withColumn("_copy", F.row_number().over(first) > 1)
    figures = live.groupBy().agg(
        F.coalesce(F.sum(F.col("_copy").cast("long")), F.lit(0)).alias("row_copies_dropped_while_waiting"),
        F.coalesce(F.sum((~F.col("_copy") & (F.col("state") == "waiting")).cast("long")), F.lit(0))
        .alias("rows_waiting_above_watermark"))
    figures = figures.select(F.explode(F.array(*[F.struct(F.lit(n).alias("name"), F.col(n).alias("value"))
                                                 for n in figures.columns])).alias("f"))
    figure_rows = _shaped(F, figures, {"what": F.lit("figure"), "schema": F.col("f.name"),
                                       "copies": F.col("f.value")})
    applied = live.filter(~F.col("_copy") & (F.col("state") == "applied"))
    log_rows = _shaped(F, applied, {"what": F.lit("log"), **{c: F.col(c) for c in LOG_INPUT}})

    # Every applied event as its pieces: the removal of its row, the new image put.
    order = [F.col("ts0"), F.col("op_rank"), *[F.col(c) for c in POSITION]]
    removal = F.when(F.col("op").isin("delete", "update"),
                     F.struct(F.coalesce(F.col("old_key"), F.col("key")).alias("key"), F.lit(None).cast("string")
                              .alias("key_order"), F.lit(None).cast("string").alias("image"), F.lit(0).alias("put")))
    put = F.when((F.col("op") != "delete") & F.col("after").isNotNull(),
                 F.struct(F.col("key").alias("key"), F.col("key_order").alias("key_order"),
                          F.col("after").alias("image"), F.lit(1).alias("put")))
    pieces = (applied.select("schema", "table", "k", F.struct(*order).alias("o"),
                             F.explode(F.array(removal, put)).alias("p"))
              .filter(F.col("p").isNotNull()))
    # The key at the end of each interval: the last piece (a put comes after the removals of its
    # transaction) decides; removed at all in the interval or not.
    at = (pieces.groupBy("schema", "table", F.col("p.key").alias("key"), "k")
          .agg(F.max(F.struct(F.col("o.ts0"), F.col("p.put"), F.col("o"), F.col("p.image"), F.col("p.key_order")))
               .alias("last"), F.min(F.col("p.put")).alias("min_put"))
          .select("schema", "table", "key", "k", F.when(F.col("last.put") == 1, F.col("last.image")).alias("image"),
                  F.col("last.key_order").alias("key_order"), (F.col("min_put") == 0).alias("removed")))
    per_key = Window.partitionBy("schema", "table", "key").orderBy("k")
    prev = F.lag("image").over(per_key)
    changed = (prev.isNull() & F.col("image").isNotNull()) | (
        prev.isNotNull() & (F.col("image").isNull() | F.col("removed") | (F.col("image") != prev)))
    versions = at.withColumn("_changed", changed).filter("_changed")
    versions = versions.withColumn("_next", F.lead("k").over(per_key)).filter(F.col("image").isNotNull())
    marks = spark.createDataFrame(list(enumerate(checkpoints)), "k int, w bigint")
    versions = (versions.join(F.broadcast(marks), "k")
                .join(F.broadcast(marks.withColumnRenamed("k", "_next").withColumnRenamed("w", "w_to")), "_next", "left"))
    name = {"schema": F.col("schema"), "table": F.col("table"), "s_schema": F.col("schema"),
            "s_table": F.col("table"), "row": F.col("image"), "copies": F.lit(1).cast("long")}
    state_rows = _shaped(F, versions, {"what": F.lit("state"), "from": F.col("w"), "to": F.col("w_to"), **name})
    final_rows = _shaped(F, versions.filter(F.col("_next").isNull()),
                         {"what": F.lit("final"), "s_key_order": F.col("key_order"), **name})
    return log_rows.unionByName(state_rows).unionByName(final_rows).unionByName(figure_rows)
