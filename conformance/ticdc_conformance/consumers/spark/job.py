"""The reference Spark consumer: records -> the sequential consumer's outputs, computed as sets.

It writes what the sequential reference consumer (sequential/consumer.py) writes -- `final/`, `applied.ndjson` +
`applied.parquet`, `states/` + `states.parquet` and `consumer.json` (docs/consumer-protocol.md,
"Output") -- and follows the same rules (docs/consumer-rules.md), so the checkpoint check holds it
against the ground truth at every checkpoint. Stages, each one or two Spark jobs:

1. decode (consumers/rules/decode_stage.py): one task per Kafka partition decodes its records in
   offset order with `mapInArrow` -- a record file, which holds one partition in offset order, is
   read whole by its task as it lies, without a shuffle; a DataFrame, or record files that turn out
   not to keep that order, are repartitioned by Kafka partition and sorted by offset first. Every
   event carries its record's place in the merged arrival order; the partitions' watermark progress
   rides along as rows of its own. Written to WORK/decoded/;
2. plan (plan.py, on the driver): from the small rows only (watermark, progress, DDL,
   BOOTSTRAP, one summary per partition) the checkpoints -- the global watermark, the minimum over
   partitions, each time it rises, at the record where it does --, which DDL is applied at which
   checkpoint and which copies are dropped, the watermark regressions;
3. admit (admit.py): per Kafka partition in offset order, each row event is dropped (a
   re-send below the watermark applied when it arrived), applied at the first checkpoint at or
   above its commit ts, or left waiting; WORK/admitted/;
4. tables (shards.py): the sequential consumer's table logic replayed on shards of the rows
   (a hash of the row key within each group of tables linked by RENAME/EXCHANGE), every shard with
   all metadata steps of its tables; copies of an event meet in its shard and are dropped there;
   WORK/replayed/ holds the state lines, final rows and the applied row events;
5. write (write.py): each output sorted and written by one task with consumers/output.py's writers.

Nothing of the stream is collected to the driver. What is: the decode stage's watermark, progress
and DDL rows and one summary row per partition (one watermark per partition per resolved-ts tick,
one DDL per DDL and partition that carries it), the first 20 undecodable records, per table and key shape
the count of row events, per table the column lists its row events name (one per list and DDL in
between), the DDL problems and two figures per task, and a summary row per writer.
The outputs equal the sequential consumer's: the applied log line for line (both read the
partitions in the same merged order), the states at every checkpoint and the final tables; only
the order of the lines in `states/` differs (sorted by table and version here), which the format
leaves open.

The same job runs in-process (`consume`, local[2] by default) and as a spark-submit application
with any master (`main`, docs/spark-submit.md). Imports are absolute so that this file can be
spark-submit's application file.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

if __name__ == "__main__":
    # As an application file, this file's folder comes first on sys.path, where sibling modules
    # would shadow top-level modules of the same name; the package is imported by its full name.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import orjson

from ticdc_conformance.consumers.output import StatesWriter, final_file_name
from ticdc_conformance.consumers.rules.decode_stage import DECODED_SCHEMA, arrow_decoder
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.spark import SPARK_LOG_ENV
from ticdc_conformance.consumers.spark.admit import AdmitPlan, admitted_schema, admitter
from ticdc_conformance.consumers.spark.plan import (
    APPLY_KEY,
    PHASE_ARRIVAL,
    PHASE_FLUSH,
    Checkpoints,
    admit_ddls,
    checkpoint_key,
    ddl_keys,
    regressions,
)
from ticdc_conformance.consumers.spark.shards import (
    REPLAY_SCHEMA,
    Components,
    MetadataReplay,
    ReplayPlan,
    intro_rows,
    metadata_steps,
    replayer,
    steps_by_component,
)
from ticdc_conformance.consumers.spark.write import (
    FINAL_COLUMNS,
    FINAL_ORDER,
    LOG_INPUT,
    STATE_COLUMNS,
    SUMMARY_SCHEMA,
    applied_writer,
    final_writer,
    state_order,
    states_writer,
    write_applied_log,
)
from ticdc_conformance.errors import ConsumerError

MAX_REPORTED_ERRORS = 20
SMALL_KINDS = ("progress", "watermark", "ddl", "end")
SMALL_COLUMNS = ["kind", "topic", "partition", "offset", "seq", "pos_ts", "pos_offset", "commit_ts", "mark", "schema",
                 "table", "query", "record_ts", "columns", "summary"]
_SPARK_TYPES = {"string": "string", "int32": "int", "int64": "bigint", "binary": "binary", "bool": "boolean"}


def _spark_ddl(schema) -> str:
    """A Spark DDL schema string for an Arrow schema of the consumer's own types."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[str(f.type)]}" for f in schema)


ARROW_BATCH_BYTES = 8 << 20
# Row groups of the scratch Parquet between stages. Each writing task buffers one row group in the
# heap; at parquet-mr's 128 MiB, two writers beside a sort's in-memory run left no room in the 1 GiB
# driver heap of local[2] (docs/performance.md, Debezium at 10M).
SCRATCH_ROW_GROUP_BYTES = 32 << 20


def write_scratch(df, path: Path) -> None:
    """df as the scratch Parquet a later stage reads."""
    df.write.option("parquet.block.size", SCRATCH_ROW_GROUP_BYTES).parquet(str(path))


# A session for fewer records than this compiles with the driver JVM's quick compiler only (C1), which
# in local mode runs the executor too. A short run then spends a third less CPU time compiling: a
# session and three consumes of the smoke scenario took 70 s of CPU instead of 112 s. Over Canal-JSON's
# 200,000 events both compilers took the same time (70.3 s quick only, 71.6 s both); over 1,000,000 the
# quick one alone was 27% slower (256.6 s against 202.4 s), so longer runs keep the optimizing one.
QUICK_COMPILER_BELOW_RECORDS = 200_000
QUICK_COMPILER = "-XX:TieredStopAtLevel=1"


def session_options(master: Optional[str] = None, app_name: str = "ticdc-conformance",
                    records: Optional[int] = None) -> dict[str, str]:
    """The Spark configuration spark_session starts with; `records`, the input's size if known,
    chooses the compiler (QUICK_COMPILER_BELOW_RECORDS)."""
    log4j = Path(__file__).with_name("log4j2.properties")
    java = f"-Dlog4j.configurationFile={log4j.as_uri()} -Dlog4j2.configurationFile={log4j.as_uri()}"
    if records is not None and records < QUICK_COMPILER_BELOW_RECORDS:
        java += f" {QUICK_COMPILER}"
    options = {
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": java,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # 1g: on local[N] the executors share the driver's JVM, whose RSS then stays under 2 GiB
        # (1,454 MiB peak at 1M records; 2g gave 2.2-2.6 GiB, and no faster: docs/performance.md).
        "spark.driver.memory": os.environ.get("TICDC_CONFORMANCE_DRIVER_MEMORY", "1g"),
        # Batches into the Python workers are otherwise cut at 10,000 rows whatever their size:
        # 10,000 Open Protocol batch records (8 KiB each) took 570 MiB of direct memory in the
        # driver JVM while decoding; bounded in bytes, 82 MiB (docs/performance.md). Records of
        # under 800 bytes still go 10,000 to a batch.
        "spark.sql.execution.arrow.maxBytesPerBatch": str(ARROW_BATCH_BYTES),
        # A sort that spilled merges all its spill files at once, and with read-ahead each reader
        # holds two 1 MiB heap buffers: heap that grew with the bytes per Kafka partition (about
        # 100 spill files, 200 MiB, for Debezium at 10M) until the decode stage ran out of it.
        # Without read-ahead a reader keeps one 1 MiB buffer, outside the heap.
        "spark.unsafe.sorter.spill.read.ahead.enabled": "false",
    }
    # Under spark-submit the master comes from the command line (PYSPARK_GATEWAY_PORT is set by it).
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        options["spark.master"] = master or os.environ.get("TICDC_CONFORMANCE_SPARK_MASTER", "local[2]")
    return options


def spark_session(master: Optional[str] = None, app_name: str = "ticdc-conformance", log: Optional[Path] = None,
                  records: Optional[int] = None):
    """A Spark session; `local[2]` unless a master is given or the job runs under spark-submit.

    `log` (default: $TICDC_CONFORMANCE_SPARK_LOG) is a file that takes the JVM's stdout and stderr --
    its start-up notes, log4j's lines and its Python workers' output -- when this call starts the
    JVM, so none of it reaches the user's output (`run` points it into its work folder). `records`,
    the number of records the session is started for, if known: a short run's JVM compiles with
    the quick compiler only (session_options)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Local mode talks to itself; binding to loopback avoids the host-name lookup warning.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    options = session_options(master, app_name, records)
    log = log if log is not None else (Path(os.environ[SPARK_LOG_ENV]) if os.environ.get(SPARK_LOG_ENV) else None)
    if log is not None:
        _start_jvm(options, log)
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _start_jvm(options: dict, log: Path) -> None:
    """Starts the JVM and its SparkContext with stdout and stderr going to `log`, unless one runs
    already (an earlier session's, or spark-submit's, whose output is its own). PySpark's own start
    would leave them on the suite's stderr."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(options.items()))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as sink:
        gateway = None if SparkContext._gateway is not None else launch_gateway(
            conf, popen_kwargs={"stdout": sink, "stderr": sink})
    SparkContext(conf=conf, gateway=gateway)


_OUTPUTS = ("final", "states", "applied.ndjson", "applied.parquet", "states.parquet")
_SCRATCH = ("decoded", "admitted", "replayed", "written")


def consume(spark, records: Any, manifest: dict, out: Path, work: Path, run_dir: Optional[Path] = None,
            stage_seconds: Optional[dict[str, float]] = None) -> dict:
    """Runs the consumer over a record-file directory or a DataFrame with the Kafka-source columns.

    `run_dir` is the generated run's folder, where large messages are resolved from (claim-check
    files, the upstream snapshot; consumers/rules/decoder_options.py); by default the folder holding a record-file
    directory, none for a DataFrame. `stage_seconds`, when given, receives the elapsed seconds of
    each stage (decode, admit, replay, write) for the benchmark; consumer.json stays free of timings
    so that two runs of one stream write identical files."""
    clock = _StageClock(stage_seconds)
    if isinstance(records, (str, Path)):
        run_dir = Path(records).parent if run_dir is None else run_dir
        from ticdc_conformance.transport.spark_source import record_files_dataframe
        files: Optional[Path] = Path(records).resolve()
        records = record_files_dataframe(spark, files)
    else:
        files = None
    from .watchdog import watched  # the driver's only: executors import this module without psutil

    run = _Run(spark, manifest, out, work, run_dir, clock)
    with watched(spark, lambda: clock.current):
        with clock("decode"):
            facts, cps, ddls = run.decode(records, files)
        with clock("admit"):
            counts = run.admit(cps, ddls)
        meta, written = run.tables(cps, ddls, counts)
    figures = _figures(facts, cps, ddls, counts, meta, written)
    (run.out / "consumer.json").write_text(json.dumps(figures, indent=2) + "\n")
    problems = sorted(name[len(PROBLEM):] for name in written if name.startswith(PROBLEM))
    if problems:
        raise ConsumerError(f"{len(problems)} DDL(s) could not be applied:\n" + "\n".join(f"  {p}" for p in problems[:20]))
    return figures


PROBLEM = "problem:"  # a DDL problem among the written figures


class _StageClock:
    """Adds each stage's elapsed seconds into a caller's dict (none given: times nothing)."""

    def __init__(self, seconds: Optional[dict[str, float]]) -> None:
        self.seconds = seconds
        self.current = "decode"  # the stage running now, for the watchdog's message

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        self.current = stage
        try:
            yield
        finally:
            if self.seconds is not None:
                self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start


class _Run:
    def __init__(self, spark, manifest: dict, out: Path, work: Path, run_dir: Optional[Path], clock: _StageClock) -> None:
        from pyspark.sql import functions

        self.spark, self.manifest, self.F, self.clock = spark, manifest, functions, clock
        # Absolute: the executors' tasks write under WORK, and on a cluster they do not share the
        # driver's working directory.
        self.out, self.work = Path(out).resolve(), Path(work).resolve()
        for name in _OUTPUTS:
            _remove(self.out / name)
        for name in _SCRATCH:
            _remove(self.work / name)
        self.out.mkdir(parents=True, exist_ok=True)
        self.options = decoder_options(manifest, Path(run_dir).resolve()) if run_dir is not None else \
            dict(manifest["sink"])
        self.protocol = manifest["protocol"]
        self.partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
        self.shards = int(spark.conf.get("spark.sql.shuffle.partitions"))

    def _by_partition(self, df, *order: str):
        """One Spark partition per Kafka partition, in `order` within it."""
        n = max(1, len(self.partitions))
        slot = self._slots(n)
        return df.repartition(n, slot).sortWithinPartitions(*order)

    def _slots(self, n: int):
        """A column that places each Kafka partition of the manifest in a Spark partition of its own.

        `repartition(n, topic, partition)` hashes, so two Kafka partitions can share a task while
        another task stays empty (at 1M records: decoded part files of 173 MB, 88 MB and none). Spark
        places a row by pmod(hash(columns), n) (HashPartitioning); so each Kafka partition i gets
        as its slot the first integer whose hash Spark itself computes to land in Spark partition i.
        A partition the manifest does not name keeps the hash of its topic and partition."""
        F = self.F
        if not hasattr(self, "_slot_values"):
            buckets = (self.spark.range(0, 64 * n).select(F.col("id").cast("int").alias("v"))
                       .select("v", F.pmod(F.hash("v"), F.lit(n)).alias("b")).collect())
            first: dict[int, int] = {}
            for r in buckets:
                first.setdefault(r["b"], r["v"])
            self._slot_values = first
        slot = F.hash("topic", "partition")
        for i, (topic, partition) in enumerate(self.partitions):
            if i in self._slot_values:  # 64·n integers leave no bucket empty unless n is huge
                slot = F.when((F.col("topic") == topic) & (F.col("partition") == partition),
                              F.lit(self._slot_values[i])).otherwise(slot)
        return slot

    def decode(self, records, files: Optional[Path] = None) -> tuple["_StreamFacts", Checkpoints, Any]:
        """Stages 1 and 2: the decoded events on disk, the small rows on the driver, the plan.

        `files`, the record-file folder `records` was read from: each file is read whole by a task
        of its own and decoded as it lies (no shuffle: the whole input moved once less). A file
        whose records are not one partition's in increasing offsets (in_file_order stops the task),
        or two files of one partition (two "end" rows for it), make it decode `records` the general
        way instead: placed by partition and sorted."""
        decoder = arrow_decoder(self.protocol, self.options)
        if files is not None:
            try:
                with _whole_files(self.spark):
                    write_scratch(self.spark.read.parquet(str(files)).mapInArrow(
                        in_file_order(decoder), _spark_ddl(DECODED_SCHEMA)), self.work / "decoded")
                facts = self._facts()
                if all(n == 1 for n in Counter((r["topic"], r["partition"]) for r in facts.rows("end")).values()):
                    return self._plan(facts)
            except Exception as e:  # noqa: BLE001 - only the order check's own failure falls back
                if OUT_OF_ORDER not in str(e):
                    raise
            _remove(self.work / "decoded")
        write_scratch(self._by_partition(records, "topic", "partition", "offset")
                      .mapInArrow(decoder, _spark_ddl(DECODED_SCHEMA)), self.work / "decoded")
        return self._plan(self._facts())

    def _facts(self) -> "_StreamFacts":
        self.ev = ev = self.spark.read.parquet(str(self.work / "decoded"))
        return _StreamFacts([r.asDict() for r in ev.filter(ev.kind.isin(*SMALL_KINDS)).select(*SMALL_COLUMNS).collect()])

    def _plan(self, facts: "_StreamFacts") -> tuple["_StreamFacts", Checkpoints, Any]:
        ev = self.ev
        if facts.errors:
            _raise_decode_errors(ev, facts.errors, self.protocol)
        cps = Checkpoints.from_progress(facts.rows("progress"), self.partitions, seen=bool(facts.rows("watermark")))
        return facts, cps, admit_ddls(facts.rows("ddl"), cps)

    def admit(self, cps: Checkpoints, ddls) -> list[dict]:
        """Stage 3; returns per table, key shape, state, phase, column list and DDL segment the row
        events' count and the first (in apply order) that named the column list."""
        F = self.F
        write_scratch(self._by_partition(self.ev.filter(self.ev.kind.isin("row", "watermark")),
                                         "topic", "partition", "offset", "seq")
                      .mapInArrow(admitter(AdmitPlan(cps, ddl_keys(ddls)), DECODED_SCHEMA),
                                  _spark_ddl(admitted_schema(DECODED_SCHEMA))),
                      self.work / "admitted")
        self.adm = self.spark.read.parquet(str(self.work / "admitted"))
        return [r.asDict(recursive=True) for r in
                self.adm.groupBy("schema", "table", "key_shape", "state", "phase", "columns", "seg")
                .agg(F.count(F.lit(1)).alias("count"), F.min(F.struct(*APPLY_KEY[:-1])).alias("first")).collect()]

    def tables(self, cps: Checkpoints, ddls, counts: list[dict]) -> tuple[MetadataReplay, dict[str, int]]:
        """Stages 4 and 5: the table replay in shards, then the outputs."""
        F = self.F
        shapes: dict[tuple[str, str], set[str]] = {}
        for c in counts:
            if c["state"] != "dropped":
                shapes.setdefault((c["schema"], c["table"]), set()).add(c["key_shape"])
        tables = {(c["schema"], c["table"]) for c in counts} | {(d["schema"], d["table"]) for _, d in ddls.items if d["table"]}
        comps = Components.build(sorted(tables), ddls.items, shapes, self.shards)
        steps = metadata_steps(ddls.items, intro_rows(_first_per_columns([c for c in counts
                                                                                  if c["state"] == "applied"])))
        flushed_at_end = not cps.seen and (_applied(counts, PHASE_FLUSH) > 0 or
                                           any(k[1] == PHASE_FLUSH for k, _ in ddls.items))
        meta = MetadataReplay(self.protocol, steps, flushed_at_end)
        plan = ReplayPlan(self.protocol, list(cps.values), steps_by_component(steps, comps))
        comp_df = self.spark.createDataFrame([(s, t, c, comps.shards[c]) for (s, t), c in sorted(comps.of.items())],
                                             "schema string, `table` string, component int, nshards int")
        # An UPDATE that moved its row: removal (piece 1, old key) and insertion (piece 2), each in its key's shard.
        pieces = self.adm.filter(F.col("state") != "dropped").withColumn("piece", F.explode(
            F.when(F.col("old_key").isNull(), F.array(F.lit(0))).otherwise(F.array(F.lit(1), F.lit(2)))))
        shard_key = F.when(F.col("piece") == 1, F.col("old_key")).otherwise(F.col("key"))
        with self.clock("replay"):
            write_scratch(pieces.join(F.broadcast(comp_df), ["schema", "table"])
                          .withColumn("shard", F.pmod(F.xxhash64(shard_key), F.col("nshards")).cast("int"))
                          .repartition(self.shards, "component", "shard")
                          .sortWithinPartitions("component", "shard", *APPLY_KEY)
                          .mapInArrow(replayer(plan), _spark_ddl(REPLAY_SCHEMA)),
                          self.work / "replayed")
        log_items = sorted([(key, "ddl", d) for key, d in ddls.items] +
                           [(checkpoint_key(k), "checkpoint", {"ts": w}) for k, w in enumerate(cps.values)],
                           key=lambda item: item[0])
        with self.clock("write"):
            return meta, self.write(log_items, meta.final_tables())

    def write(self, log_items: list, final_tables: list[tuple[str, str]]) -> dict[str, int]:
        """Stage 5: the three outputs written at once, each by one task; then moved into OUT."""
        F = self.F
        rep = self.spark.read.parquet(str(self.work / "replayed"))
        target = self.work / "written"

        def one_task(what: str, columns: list, order: list, task):
            return (rep.filter(F.col("what") == what).select(*columns).repartition(1).sortWithinPartitions(*order)
                    .mapInArrow(task, _spark_ddl(SUMMARY_SCHEMA)))

        jobs = [one_task("log", LOG_INPUT, APPLY_KEY, applied_writer(target, log_items)),
                one_task("state", STATE_COLUMNS, state_order(F.col), states_writer(target)),
                one_task("final", FINAL_COLUMNS + ["s_key_order"], FINAL_ORDER, final_writer(target / "final")),
                rep.filter(F.col("what").isin("problem", "figure")).select("what", "schema", "row", "copies")]
        with ThreadPoolExecutor(len(jobs)) as pool:  # independent jobs share the executors
            *summaries, others = pool.map(lambda job: job.collect(), jobs)
        written = {r["name"]: r["value"] for rows in summaries for r in rows}
        if "transactions_applied" not in written:  # no task had a row event to write
            written.update(write_applied_log(target, log_items))
        if "state_lines" not in written:
            StatesWriter(target).close()
        _place_outputs(target, self.out, final_tables)
        for r in others:
            if r["what"] == "problem":
                written[PROBLEM + r["row"]] = 1
            else:
                written[r["schema"]] = written.get(r["schema"], 0) + r["copies"]
        return written


def _applied(counts: list[dict], phase: int) -> int:
    return sum(c["count"] for c in counts if c["state"] == "applied" and c["phase"] == phase)


def _figures(facts: "_StreamFacts", cps: Checkpoints, ddls, counts: list[dict], meta: MetadataReplay,
             written: dict[str, int]) -> dict:
    """consumer.json: the sequential consumer's figures (sequential/consumer.py write) plus records and events."""
    c = meta.consumer
    c.watermarks.seen = cps.seen  # its ordering() then names the order this run used
    c.figures.update(rows_in_arrival_order=_applied(counts, PHASE_ARRIVAL), ddl_in_arrival_order=ddls.in_arrival_order)
    n_regressions, regression_log = regressions(facts.rows("watermark"))
    return {
        "records": facts.total("records"),
        "events": facts.total("events"),
        "ordering": c.ordering(),
        "applied_watermark": cps.values[-1] if cps.values else 0,
        "checkpoints": cps.count,
        "transactions_applied": written["transactions_applied"],
        "rows_applied": written["rows_applied"],
        "ddl_applied": c.figures["ddl_applied"],
        "rows_dropped_below_watermark": sum(x["count"] for x in counts if x["state"] == "dropped"),
        "ddl_dropped_below_watermark": ddls.dropped_below_watermark,
        "rows_in_arrival_order": c.figures["rows_in_arrival_order"],
        "ddl_in_arrival_order": ddls.in_arrival_order,
        "ddl_without_row_effect_known": c.figures["ddl_without_row_effect_known"],
        "row_copies_dropped_while_waiting": written.get("row_copies_dropped_while_waiting", 0),
        "ddl_copies_dropped": ddls.copies_dropped,
        "watermark_regressions": n_regressions,
        "watermark_regression_log": regression_log,
        "rows_waiting_above_watermark": written.get("rows_waiting_above_watermark", 0),
        "ddl_waiting_above_watermark": ddls.waiting,
        "rows_waiting_for_schema": facts.total("held"),
        "notes": c.notes,
    }


def _first_per_columns(groups: list[dict]) -> list[dict]:
    """The first row event naming each (table, column list) in each DDL segment."""
    first: dict[tuple, dict] = {}
    for g in groups:
        ident = (g["schema"], g["table"], g["columns"], g["seg"])
        key = tuple(g["first"][c] for c in APPLY_KEY[:-1])
        if ident not in first or key < tuple(first[ident]["first"][c] for c in APPLY_KEY[:-1]):
            first[ident] = g
    return list(first.values())


OUT_OF_ORDER = "record file out of partition and offset order"
# maxPartitionBytes and openCostInBytes: a file is never split, and no two share a task.
_WHOLE_FILES = {"spark.sql.files.maxPartitionBytes": str(1 << 40), "spark.sql.files.openCostInBytes": str(1 << 40)}


@contextmanager
def _whole_files(spark) -> Iterator[None]:
    """File scans planned meanwhile read every file whole, in a task of its own."""
    saved = {name: spark.conf.get(name, None) for name in _WHOLE_FILES}
    for name, value in _WHOLE_FILES.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, value)


def in_file_order(decode):
    """`decode` (a mapInArrow function) over batches that must hold each topic-partition's records
    together, in increasing offsets; otherwise the task stops with OUT_OF_ORDER in its message."""

    def checked(batches: Iterator) -> Iterator:
        finished: set[tuple[str, int]] = set()
        current, last = None, -1
        for batch in batches:
            columns = batch.select(["topic", "partition", "offset"]).to_pydict()
            for topic, partition, offset in zip(columns["topic"], columns["partition"], columns["offset"]):
                if (topic, partition) != current:
                    if (topic, partition) in finished:
                        raise ValueError(f"{OUT_OF_ORDER}: {topic}/{partition} resumes at offset {offset}")
                    if current is not None:
                        finished.add(current)
                    current, last = (topic, partition), -1
                if offset <= last:
                    raise ValueError(f"{OUT_OF_ORDER}: {topic}/{partition} goes from offset {last} to {offset}")
                last = offset
            yield batch

    return lambda batches: decode(checked(batches))


class _StreamFacts:
    """The small rows of the decode stage, by kind, and the partitions' summaries."""

    def __init__(self, rows: list[dict]) -> None:
        self.by_kind: dict[str, list[dict]] = {}
        for r in rows:
            self.by_kind.setdefault(r["kind"], []).append(r)
        self.summaries = [orjson.loads(r["summary"]) for r in self.rows("end")]
        self.errors = self.total("errors")

    def rows(self, kind: str) -> list[dict]:
        return self.by_kind.get(kind, [])

    def total(self, name: str) -> int:
        return sum(s[name] for s in self.summaries)


def _raise_decode_errors(ev, n_errors: int, protocol: str) -> None:
    shown = ev.filter(ev.kind == "error").orderBy("topic", "partition", "offset").limit(MAX_REPORTED_ERRORS).collect()
    lines = "\n".join(f"  {r['error']}" for r in shown)
    more = f"\n  … and {n_errors - len(shown)} more" if n_errors > len(shown) else ""
    raise ConsumerError(f"{n_errors} record(s) could not be decoded as {protocol}:\n{lines}{more}")


def _place_outputs(written: Path, out: Path, final_tables: list[tuple[str, str]]) -> None:
    """Moves what the writer tasks wrote into OUT; a table that exists at the end without rows gets
    an empty file, as the sequential consumer writes one."""
    for name in ("applied.ndjson", "applied.parquet", "states", "states.parquet"):
        shutil.move(str(written / name), str(out / name))
    final = out / "final"
    final.mkdir(parents=True, exist_ok=True)
    for schema, table in final_tables:
        name = final_file_name(schema, table)
        src = written / "final" / name
        if src.exists():
            shutil.move(str(src), str(final / name))
        else:
            (final / name).write_bytes(b"")
    # The shards and the driver replay the same metadata steps, so rows exist only in tables that exist.
    stray = sorted(p.name for p in (written / "final").glob("*")) if (written / "final").is_dir() else []
    if stray:
        raise ConsumerError(f"rows in tables that do not exist at the end of the stream: {', '.join(stray)}")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


# --- spark-submit -------------------------------------------------------------------------

def build_py_files(target: Path) -> int:
    """Writes the zip for spark-submit's --py-files: the consumer's package and the shared contract
    (records, upstream model, canonical values), source and package data, byte-identical for the same tree;
    the consumer imports nothing of the generators. Returns the number of files. Third-party modules (pyarrow,
    orjson, msgspec, fastavro, cramjam, lz4) are not in it: executors need them installed, as any PySpark
    job's dependencies."""
    import ticdc_conformance
    import ticdc_contract

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    files = []
    for package in (ticdc_conformance, ticdc_contract):
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
    """`spark-submit [--master M] --py-files ticdc-conformance.zip consumers/spark/job.py --records R --out O`."""
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
    from ticdc_conformance.consumers.spark.job import main as _main

    sys.exit(_main())
