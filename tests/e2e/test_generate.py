"""`generate`: record files with Spark's Kafka-source columns, a manifest, the truth; deterministic."""
import json
import subprocess

import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI
from ticdc_contract.record import RECORD_SCHEMA
from ticdc_contract.record_files import iter_record_files
from ticdc_generators.pipeline import config_for, encoding_names, generate


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = {}
    for enc in encoding_names():
        d = tmp_path_factory.mktemp(enc)
        out[enc] = (d, generate("smoke", 1, config_for("smoke", enc), d))
    return out


@pytest.mark.parametrize("encoding", encoding_names())
def test_records_have_the_kafka_source_columns_and_contiguous_offsets(generated, encoding):
    d, manifest = generated[encoding]
    files = sorted((d / "records").glob("*.parquet"))
    assert len(files) == 3
    for f in files:
        assert pq.read_schema(f).remove_metadata() == RECORD_SCHEMA
    per_partition = {}
    for r in iter_record_files(d / "records"):
        per_partition.setdefault(r.partition, []).append(r.offset)
    assert sorted(per_partition) == [0, 1, 2]
    for offsets in per_partition.values():
        assert offsets == list(range(len(offsets)))
    assert sum(map(len, per_partition.values())) == manifest["records"]


@pytest.mark.parametrize("encoding", encoding_names())
def test_manifest_names_protocol_options_topics_scenario_and_seed(generated, encoding):
    d, _ = generated[encoding]
    m = json.loads((d / "manifest.json").read_text())
    assert m["scenario"] == "smoke" and m["seed"] == 1 and m["encoding"] == encoding
    assert m["topics"] == {"ticdc-smoke": 3}
    assert "enable-tidb-extension" in m["sink"] and "encoding-format" in m["sink"]
    if encoding in ("canal-json", "debezium"):
        assert m["sink"]["enable-tidb-extension"] is True
    if encoding == "simple-avro":
        assert m["sink"]["encoding-format"] == "avro"


def test_truth_holds_schemas_history_and_final_states(generated):
    d, _ = generated["open-protocol"]
    truth = d / "truth"
    tables = [json.loads(line) for line in (truth / "tables.ndjson").read_text().splitlines()]
    assert [t["table"] for t in tables] == ["orders", "customers", "orders"]
    assert [c["name"] for c in tables[-1]["columns"]][-1] == "status"
    history = [json.loads(line) for line in (truth / "history.ndjson").read_text().splitlines()]
    assert sum(1 for h in history if h["kind"] == "txn") == 100
    assert sorted(p.name for p in (truth / "final").iterdir()) == ["smoke.customers.ndjson", "smoke.orders.ndjson"]


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        generate("smoke", seed, config_for("smoke", "canal-json"), tmp_path / name)

    def contents(d):
        return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}

    assert contents(tmp_path / "a") == contents(tmp_path / "b")
    assert contents(tmp_path / "a")["records/ticdc-smoke-0.parquet"] != contents(tmp_path / "c")["records/ticdc-smoke-0.parquet"]


def test_cli_generate_each_protocol_spelling(tmp_path):
    for args, enc in ((["--protocol", "simple", "--encoding", "avro"], "simple-avro"),
                      (["--protocol", "simple", "--encoding-format", "json"], "simple-json"),
                      (["--protocol", "debezium"], "debezium")):
        out = tmp_path / enc
        subprocess.run(CLI + ["generate", "--scenario", "smoke", "--seed", "1", *args, "--out", str(out)], check=True,
                       capture_output=True)
        assert json.loads((out / "manifest.json").read_text())["encoding"] == enc


@pytest.mark.spark
def test_spark_reads_record_files_with_the_kafka_source_schema(generated, spark):
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )
    # The schema of Spark's Kafka source (spark-sql-kafka-0-10, with includeHeaders=true).
    kafka_source = StructType([
        StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
        StructField("partition", IntegerType()), StructField("offset", LongType()),
        StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType()),
        StructField("headers", ArrayType(StructType([StructField("key", StringType()),
                                                      StructField("value", BinaryType())]))),
    ])
    d, manifest = generated["debezium"]
    df = spark.read.parquet(str(d / "records"))
    assert [(f.name, f.dataType) for f in df.schema] == [(f.name, f.dataType) for f in kafka_source]
    assert df.count() == manifest["records"]


def test_where_ticdc_fails_the_changefeed_the_cli_says_why_without_a_traceback(tmp_path):
    # TiCDC fails the changefeed on a row message over max-message-bytes (ErrMessageTooLarge).
    done = subprocess.run([*CLI, "generate", "--scenario", "wide-rows", "--protocol", "canal-json", "--sink-uri",
                           "kafka://h/t?protocol=canal-json&enable-tidb-extension=true&max-message-bytes=65536",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "the simulated TiCDC changefeed fails (scenario wide-rows, seed 1): message is too large" in done.stderr
    assert "Traceback" not in done.stderr
