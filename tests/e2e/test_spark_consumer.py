"""The reference Spark consumer: the sequential consumer's semantics computed as sets.

Without Spark: the decode stage's arrival places reproduce the sequential consumer's merge of the
partitions (also where a restarted changefeed's timestamps go back), and the checkpoints the
driver derives from the progress rows are the ones the sequential consumer records.
With Spark: every scenario conformant at every checkpoint for every encoding; the outputs equal the
sequential consumer's (applied log line for line, the tables at every checkpoint, the final tables,
the figures); any DataFrame with the Kafka-source columns is an input.
"""
from __future__ import annotations

import heapq
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ticdc_conformance.consumers.rules.decode_stage import PROGRESS_SEQ, _PartitionProgress, arrow_decoder
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.sequential.consumer import consume_local, merged_records
from ticdc_conformance.consumers.spark.plan import Checkpoints, position
from ticdc_conformance.runner import run_encoding
from ticdc_contract.record import KafkaRecord
from ticdc_generators.pipeline import config_for, encoding_names, generate

CONFORMANCE_SCENARIOS = ["smoke", "keys", "ddl-evolution", "multi-table", "replays"]
SPARK_SCENARIOS = [*CONFORMANCE_SCENARIOS, "types", "wide-rows", "large"]


def spark_matrix(scenarios: list[str]) -> list:
    """Each scenario × encoding on Spark, one case a test. CI runs a diagonal of the matrix: the
    scenario at position i in SPARK_SCENARIOS with the encoding at i modulo five, so every scenario and
    every encoding runs on each change; the rest carries `nightly` (the whole matrix took 550 s of
    the Spark stage, over CI's 30 minutes)."""
    encodings = encoding_names()
    return [pytest.param(scenario, encoding, id=f"{scenario}-{encoding}",
                         marks=[] if encodings.index(encoding) == SPARK_SCENARIOS.index(scenario) % len(encodings)
                         else [pytest.mark.nightly])
            for scenario in scenarios for encoding in encodings]


# --- without Spark --------------------------------------------------------------------------------
def _decoded(case: Path, manifest: dict) -> list[dict]:
    """The decode stage over every record file, one partition after the other, as Spark runs it."""
    rows = []
    for path in sorted((case / "records").glob("*.parquet")):
        decode = arrow_decoder(manifest["protocol"], decoder_options(manifest, case))
        for batch in decode(iter(pq.read_table(path).to_batches(max_chunksize=64))):
            rows.extend(batch.to_pylist())
    return rows


def _joined_late(case: Path, encoding: str) -> dict:
    """A Simple stream read by a consumer that joined late: the first records of every partition
    are gone, rows wait for the next BOOTSTRAP (sent every 20 row changes of a table)."""
    manifest = generate("smoke", 1, config_for("smoke", encoding, send_bootstrap_in_msg_count=20), case)
    for path in (case / "records").glob("*.parquet"):
        pq.write_table(pq.read_table(path).slice(40), path)
    return manifest


@pytest.fixture(scope="module")
def restarted(tmp_path_factory):
    """A stream whose changefeed restarted: timestamps go back within a partition."""
    case = tmp_path_factory.mktemp("replays") / "open-protocol"
    manifest = generate("replays", 1, config_for("replays", "open-protocol"), case)
    return case, manifest


def test_arrival_places_reproduce_the_sequential_consumers_merge(restarted):
    case, manifest = restarted
    went_back = False
    for path in (case / "records").glob("*.parquet"):
        stamps = pq.read_table(path, columns=["timestamp"]).column("timestamp").to_pylist()
        went_back |= any(b < a for a, b in zip(stamps, stamps[1:]))
    assert went_back, "the restarts should send records with earlier timestamps again"
    places = {}
    for row in _decoded(case, manifest):
        places.setdefault((row["topic"], row["partition"], row["offset"]), position(row)[:5])
    merged = [(r.topic, r.partition, r.offset) for r in merged_records(case / "records")]
    assert sorted(places, key=places.get) == merged


def test_arrival_rule_equals_a_heap_merge_of_unsorted_partitions():
    # heapq.merge over partitions whose keys go back still takes the smallest head each time.
    for trial in range(300):
        rng = random.Random(trial)
        streams = [[KafkaRecord("t", p, off, None, None, rng.randint(0, 5)) for off in range(rng.randint(0, 9))]
                   for p in range(rng.randint(1, 4))]
        merged = list(heapq.merge(*streams, key=lambda r: (r.timestamp_ms, r.topic, r.partition, r.offset)))
        placed = []
        for stream in streams:
            progress = _PartitionProgress()
            for r in stream:
                progress.arrive(r)
                placed.append(((progress.pos_ts, r.topic, r.partition, progress.pos_offset, r.offset), r))
        assert [r for _, r in sorted(placed, key=lambda x: x[0])] == merged


def _lines(path: Path) -> list[bytes]:
    """NDJSON lines (split at newlines only: row values may hold other line-breaking characters)."""
    return [line for line in path.read_bytes().split(b"\n") if line]


def _local_checkpoints(out: Path) -> list[int]:
    return [json.loads(line)["ts"] for line in _lines(out / "applied.ndjson") if b'"kind":"checkpoint"' in line]


@pytest.mark.parametrize("variant", ["restarted", "simple-joined-late"])
def test_checkpoints_from_progress_rows_are_the_sequential_consumers(tmp_path, restarted, variant):
    if variant == "restarted":
        case, manifest = restarted
    else:  # rows wait for their schema, and their partition's watermark waits with them
        case = tmp_path / "simple"
        manifest = _joined_late(case, "simple-json")
    figures = consume_local(case / "records", manifest, tmp_path / "local")
    rows = _decoded(case, manifest)
    partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
    cps = Checkpoints.from_progress([r for r in rows if r["kind"] == "progress"], partitions,
                                    seen=any(r["kind"] == "watermark" for r in rows))
    assert cps.values == _local_checkpoints(tmp_path / "local") and cps.count > 5
    assert all(r["seq"] == PROGRESS_SEQ for r in rows if r["kind"] == "progress")
    held = sum(json.loads(r["summary"])["held"] for r in rows if r["kind"] == "end")
    assert held == figures["rows_waiting_for_schema"]
    if variant != "restarted":  # rows waited: a BOOTSTRAP's record released row events
        released = {(r["topic"], r["partition"], r["offset"]) for r in rows if r["kind"] == "bootstrap"}
        assert any((r["topic"], r["partition"], r["offset"]) in released for r in rows if r["kind"] == "row")


def test_a_short_runs_session_compiles_with_the_quick_compiler_only():
    from ticdc_conformance.consumers.spark.job import QUICK_COMPILER, QUICK_COMPILER_BELOW_RECORDS, session_options

    def java(records):
        return session_options("local[2]", records=records)["spark.driver.extraJavaOptions"].split()

    assert QUICK_COMPILER in java(306) and QUICK_COMPILER in java(QUICK_COMPILER_BELOW_RECORDS - 1)
    assert QUICK_COMPILER not in java(QUICK_COMPILER_BELOW_RECORDS) and QUICK_COMPILER not in java(None)
    for records in (306, None):  # the log configuration either way
        assert any(o.startswith("-Dlog4j2.configurationFile=") for o in java(records))


# --- with Spark -----------------------------------------------------------------------------------
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("scenario, encoding", spark_matrix(CONFORMANCE_SCENARIOS))
def test_spark_consumer_is_conformant_at_every_checkpoint(tmp_path, spark, scenario, encoding):
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer="spark", spark=spark)
    assert result.conformant, result.render()
    assert result.checkpoints.checked and result.checkpoints.checkpoints >= 10, result.checkpoint_summary


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("scenario, encoding", spark_matrix(["types", "wide-rows"]))
def test_spark_consumer_is_conformant_on_every_type_and_on_wide_rows(tmp_path, spark, scenario, encoding):
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer="spark", spark=spark)
    assert result.conformant, result.render()
    assert result.checkpoints.checked, result.checkpoint_summary


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("scenario, encoding", spark_matrix(["large"]))
def test_spark_consumer_is_conformant_on_the_large_scenario(tmp_path, spark, scenario, encoding):
    """The scale scenario, at a size a test affords; `bench consume` runs it at 1M and 10M."""
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer="spark", spark=spark, events=5000)
    assert result.conformant, result.render()
    # 5,000 events of `large` span two checkpoints (its watermarks follow TiCDC's 1 s ticks).
    assert result.checkpoints.checked and result.checkpoints.checkpoints >= 2, result.checkpoint_summary
    assert "--events 5000" in result.replay_command


def _tables_at_checkpoints(out: Path) -> dict[int, Counter]:
    """Every table's rows at every checkpoint of the applied log, from the temporal states."""
    checkpoints = _local_checkpoints(out)
    at: dict[int, Counter] = defaultdict(Counter)
    for path in (out / "states").glob("*.ndjson"):
        for line in _lines(path):
            doc = json.loads(line)
            for w in checkpoints:
                if doc["from"] <= w and (doc["to"] is None or w < doc["to"]):
                    at[w][(path.name, json.dumps(doc["row"], sort_keys=True))] += 1
    return {w: at[w] for w in checkpoints}


def _final(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "final").glob("*.ndjson"))}


def _consume_both(spark, case: Path, manifest: dict, tmp_path: Path, records=None) -> tuple[Path, Path, dict, dict]:
    from ticdc_conformance.consumers.spark.job import consume

    local, remote = tmp_path / "local", tmp_path / "spark"
    local_figures = consume_local(case / "records", manifest, local)
    spark_figures = consume(spark, case / "records" if records is None else records, manifest, remote,
                            tmp_path / "work", run_dir=case)
    return local, remote, local_figures, spark_figures


def _assert_same_outputs(local: Path, remote: Path, local_figures: dict, spark_figures: dict) -> None:
    # Both read the partitions in the same merged order, so the log is the same line for line.
    assert (remote / "applied.ndjson").read_bytes() == (local / "applied.ndjson").read_bytes()
    assert pq.read_table(remote / "applied.parquet").equals(pq.read_table(local / "applied.parquet"))
    assert _final(remote) == _final(local)
    at_local, at_spark = _tables_at_checkpoints(local), _tables_at_checkpoints(remote)
    assert at_spark == at_local and len(at_local) >= 10
    # The line order within a states file is free; the lines are the same.
    for path in (local / "states").glob("*.ndjson"):
        assert sorted(_lines(remote / "states" / path.name)) == sorted(_lines(path))
    assert sorted(p.name for p in (remote / "states").iterdir()) == sorted(p.name for p in (local / "states").iterdir())
    assert {k: v for k, v in spark_figures.items() if k not in ("records", "events")} == local_figures


@pytest.mark.spark
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("encoding", encoding_names())
def test_spark_outputs_equal_the_sequential_consumers_on_smoke(tmp_path, spark, encoding):
    case = tmp_path / "case"
    manifest = generate("smoke", 1, config_for("smoke", encoding), case)
    _assert_same_outputs(*_consume_both(spark, case, manifest, tmp_path))


@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_spark_outputs_equal_the_sequential_consumers_after_restarts(tmp_path, spark, restarted):
    case, manifest = restarted
    local, remote, local_figures, spark_figures = _consume_both(spark, case, manifest, tmp_path)
    _assert_same_outputs(local, remote, local_figures, spark_figures)
    assert spark_figures["watermark_regressions"] > 0 and spark_figures["rows_dropped_below_watermark"] > 0


@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_spark_outputs_equal_the_sequential_consumers_for_a_simple_consumer_joining_late(tmp_path, spark):
    case = tmp_path / "case"
    manifest = _joined_late(case, "simple-avro")
    local, remote, local_figures, spark_figures = _consume_both(spark, case, manifest, tmp_path)
    _assert_same_outputs(local, remote, local_figures, spark_figures)
    assert spark_figures["records"] == sum(pq.read_metadata(p).num_rows for p in (case / "records").glob("*.parquet"))


@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_spark_consumer_without_commit_ts_applies_in_arrival_order_like_the_sequential_one(tmp_path, spark):
    case = tmp_path / "case"
    manifest = generate("ddl-evolution", 1, config_for("ddl-evolution", "canal-json", enable_tidb_extension=False), case)
    local, remote, local_figures, spark_figures = _consume_both(spark, case, manifest, tmp_path)
    assert spark_figures["ordering"] == "arrival (the stream carries no commit ts)"
    assert (remote / "applied.ndjson").read_bytes() == (local / "applied.ndjson").read_bytes()
    assert _final(remote) == _final(local)
    assert {k: v for k, v in spark_figures.items() if k not in ("records", "events")} == local_figures


@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_spark_consumer_takes_any_dataframe_with_the_kafka_source_columns(tmp_path, spark):
    from pyspark.sql import functions as F

    case = tmp_path / "case"
    manifest = generate("ddl-evolution", 1, config_for("ddl-evolution", "simple-json"), case)
    # As Spark's Kafka source gives it: its column order, the timestamp as a timestamp, no file behind it.
    df = (spark.read.parquet(str(case / "records"))
          .select("key", "value", "topic", "partition", "offset", F.col("timestamp").cast("timestamp"),
                  "timestampType", "headers").localCheckpoint())
    local, remote, local_figures, spark_figures = _consume_both(spark, case, manifest, tmp_path, records=df)
    _assert_same_outputs(local, remote, local_figures, spark_figures)


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_every_kafka_partition_is_decoded_in_a_task_of_its_own(tmp_path, spark):
    from pyspark.sql import functions as F

    from ticdc_conformance.consumers.spark.job import _Run, _StageClock

    topics = {"orders": 5, "ticdc-smoke": 7, "z": 1}
    manifest = {"protocol": "canal-json", "sink": {}, "topics": topics}
    run = _Run(spark, manifest, tmp_path / "out", tmp_path / "work", None, _StageClock(None))
    rows = [(t, p, o) for t, n in topics.items() for p in range(n) for o in range(3)]
    df = spark.createDataFrame(rows, "topic string, partition int, offset bigint")
    placed = (run._by_partition(df, "topic", "partition", "offset")
              .select("topic", "partition", F.spark_partition_id().alias("task")).distinct().collect())
    tasks = defaultdict(set)
    for r in placed:
        tasks[r["task"]].add((r["topic"], r["partition"]))
    # Hash placement would put some of these 13 partitions together (and leave tasks empty).
    assert len(tasks) == 13 and all(len(members) == 1 for members in tasks.values()), dict(tasks)
    # A partition the manifest does not name is still decoded, in some task.
    extra = spark.createDataFrame([("unnamed", 3, 0)], "topic string, partition int, offset bigint")
    assert run._by_partition(extra, "offset").count() == 1


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_batches_into_the_python_workers_are_bounded_in_bytes_not_only_in_rows(spark):
    """Large records (Open Protocol batches, claim-check-sized values) must not reach the decoders
    10,000 to an Arrow batch: each batch is held in the driver JVM's direct memory while it is sent."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from ticdc_conformance.consumers.spark.job import ARROW_BATCH_BYTES

    record_bytes = 1 << 20
    values = (spark.range(64, numPartitions=1)
              .select(F.expr(f"cast(repeat('x', {record_bytes}) as binary)").alias("value")))

    def measure(batches):
        for batch in batches:
            yield pa.RecordBatch.from_pydict({"rows": [batch.num_rows], "bytes": [batch.get_total_buffer_size()]})

    seen = values.mapInArrow(measure, "rows long, bytes long").collect()
    assert sum(r["rows"] for r in seen) == 64
    assert len(seen) > 1, "all 64 MiB of records came in one batch"
    assert max(r["bytes"] for r in seen) <= ARROW_BATCH_BYTES + record_bytes + 4096, seen


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_scratch_between_stages_is_written_in_bounded_row_groups(spark, tmp_path, monkeypatch):
    """Each task writing scratch Parquet holds a row group in the driver heap until it is full, so
    the row groups are bounded well below parquet-mr's 128 MiB; and sort spill files are merged
    without read-ahead buffers in the heap (docs/performance.md, Debezium at 10M)."""
    from pyspark.sql import functions as F

    from ticdc_conformance.consumers.spark import job as spark_job

    monkeypatch.setattr(spark_job, "SCRATCH_ROW_GROUP_BYTES", 1 << 20)
    rows = spark.range(4096, numPartitions=1).select(F.expr("sha2(cast(id as string), 512)").alias("v"),
                                                     F.expr("repeat(cast(id as string), 200)").alias("w"))
    spark_job.write_scratch(rows, tmp_path / "scratch")
    (part,) = (tmp_path / "scratch").glob("part-*.parquet")
    meta = pq.ParquetFile(part).metadata
    assert meta.num_rows == 4096
    assert meta.num_row_groups > 1, "4096 rows of ~1 KiB went into one row group"
    assert spark.sparkContext.getConf().get("spark.unsafe.sorter.spill.read.ahead.enabled") == "false"


def _rewrite_records(case: Path, target: Path, reorder) -> None:
    """CASE/records rewritten into TARGET: `reorder(table) -> [(file name, table)]` per record file."""
    target.mkdir()
    for path in sorted((case / "records").glob("*.parquet")):
        for name, table in reorder(path.stem, pq.read_table(path)):
            pq.write_table(table, target / f"{name}.parquet")


@pytest.mark.spark
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("layout", ["as written", "reversed", "split"])
def test_record_files_not_in_partition_order_are_placed_and_sorted_first(tmp_path, spark, layout, monkeypatch):
    """Record files are read whole, one task each, without a shuffle, when each holds one partition in
    offset order; a file in reverse offset order, or a partition split over two files, falls back
    to placing and sorting the records, with the same outputs."""
    from ticdc_conformance.consumers.spark import job
    from ticdc_conformance.consumers.spark.job import consume

    placed: list[tuple] = []  # the orders _by_partition sorts by: the decode stage's, the admit stage's
    by_partition = job._Run._by_partition
    monkeypatch.setattr(job._Run, "_by_partition", lambda self, df, *order: placed.append(order) or
                        by_partition(self, df, *order))
    case = tmp_path / "case"
    manifest = generate("ddl-evolution", 1, config_for("ddl-evolution", "canal-json"), case)

    def reorder(stem, table):
        if layout == "as written":
            return [(stem, table)]
        if layout == "reversed":
            return [(stem, table.take(list(range(table.num_rows - 1, -1, -1))))]
        half = table.num_rows // 2
        return [(stem + "-a", table.slice(0, half)), (stem + "-b", table.slice(half))]

    _rewrite_records(case, tmp_path / "records", reorder)
    local = tmp_path / "local"
    local_figures = consume_local(case / "records", manifest, local)
    spark_figures = consume(spark, tmp_path / "records", manifest, tmp_path / "spark", tmp_path / "work", run_dir=case)
    _assert_same_outputs(local, tmp_path / "spark", local_figures, spark_figures)
    decoded_by_placing = ("topic", "partition", "offset") in placed
    assert decoded_by_placing == (layout != "as written"), placed
