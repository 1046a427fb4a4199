"""The Kafka transport against a real broker: record files go to Kafka and come back byte for byte,
through the Kafka client and through Spark's own Kafka source; a missing broker is a prompt error."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import CLI, ROOT
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter, iter_record_files
from ticdc_generators.pipeline import config_for, encoding_names, generate

pytest.importorskip("confluent_kafka")

from ticdc_conformance.transport.broker import KafkaBroker, free_port  # noqa: E402
from ticdc_conformance.transport.errors import BrokerError, KafkaUnavailable, PublishError, TransportError  # noqa: E402
from ticdc_conformance.transport.kafka_io import cluster_metadata, kafka_records, publish  # noqa: E402
from ticdc_conformance.transport.provision import provision_broker  # noqa: E402
from ticdc_conformance.transport.spark_source import spark_source  # noqa: E402

# Cold: the jars are resolved from the Maven repository first (a minute or two, once per machine).
BROKER_TIMEOUT_S = 900


def by_partition(records) -> dict[tuple[str, int], list[KafkaRecord]]:
    out: dict[tuple[str, int], list[KafkaRecord]] = {}
    for r in records:
        out.setdefault((r.topic, r.partition), []).append(r)
    return out


def read_back(bootstrap: str, manifest: dict) -> dict[tuple[str, int], list[KafkaRecord]]:
    return by_partition(r for t in sorted(manifest["topics"]) for r in kafka_records(bootstrap, t, timeout_s=30))


@pytest.fixture(scope="module")
def broker():
    """testcontainers' Kafka where a Docker engine answers, else the local broker (provision.py)."""
    with provision_broker() as b:
        yield b


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> dict[str, Path]:
    """The smoke scenario generated in every encoding: encoding -> case folder."""
    root = tmp_path_factory.mktemp("smoke")
    for enc in encoding_names():
        generate("smoke", 1, config_for("smoke", enc), root / enc)
    return {enc: root / enc for enc in encoding_names()}


def write_records(folder: Path, records: list[KafkaRecord], topics: dict[str, int], max_message_bytes: int) -> Path:
    with RecordFileWriter(folder / "records") as w:
        w.write_all(records)
    (folder / "manifest.json").write_text(json.dumps({"topics": topics,
                                                      "sink": {"max-message-bytes": max_message_bytes}}))
    return folder / "records"


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_every_encoding_is_published_and_read_back_byte_for_byte(broker, smoke):
    assert broker.timings["start_s"] < BROKER_TIMEOUT_S
    for enc, case in smoke.items():
        manifest = json.loads((case / "manifest.json").read_text())
        # The encodings share topic names: each replaces the previous one's topics.
        result = publish(case / "records", broker.bootstrap, replace=True)
        assert result.records == manifest["records"] and result.topics == manifest["topics"]
        expected = by_partition(iter_record_files(case / "records"))
        actual = read_back(broker.bootstrap, manifest)
        assert sorted(actual) == sorted(expected), enc
        for tp, records in expected.items():
            # KafkaRecord equality: topic, partition, offset, key, value, timestamp, type, headers.
            assert actual[tp] == records, f"{enc} {tp}"
            assert [r.offset for r in actual[tp]] == list(range(len(records)))
        assert {f"{t}-{p}": len(rs) for (t, p), rs in actual.items()} == manifest["records_per_partition"]


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_keys_values_headers_and_timestamps_kafka_treats_specially_survive(broker, tmp_path):
    big = bytes(range(256)) * (6 * 1024)  # 1.5 MiB: above Kafka's 1 MiB default message size
    headers = (("h", None), ("h", b""), ("ключ", b"\x00\xff"), ("h", b"again"))
    rows = [  # partition 0: what clients and brokers are apt to alter; partition 1: order kept
        dict(key=None, value=b"null key", ts=1, headers=()),  # the smallest timestamp a producer can set
        dict(key=b"", value=b"", ts=1, headers=headers),
        dict(key=b"tombstone", value=None, ts=4102444800000, headers=(("only", None),)),  # 2100-01-01
        dict(key=b"\x00\x01", value=big, ts=1767225600000, headers=()),
    ]
    records = [KafkaRecord("edge", 0, i, r["key"], r["value"], r["ts"], r["headers"]) for i, r in enumerate(rows)]
    records += [KafkaRecord("edge", 1, i, b"k%d" % i, b"v%d" % i, 1000 + i) for i in range(50)]
    records_dir = write_records(tmp_path, records, {"edge": 2}, max_message_bytes=2 * len(big))
    publish(records_dir, broker.bootstrap)
    assert read_back(broker.bootstrap, {"topics": {"edge": 2}}) == by_partition(records)


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_records_a_fresh_topic_cannot_hold_are_refused_by_name(broker, tmp_path):
    cases = {  # record the broker could not store as it is -> the reason given
        KafkaRecord("gaps", 0, 2, b"b", b"2", 6): "offset out of sequence: a fresh topic would store this record at 1",
        KafkaRecord("gaps", 0, 1, b"b", b"2", 0): "timestamp 0 cannot be produced as it is",
        KafkaRecord("gaps", 0, 1, b"b", b"2", 6, timestamp_type=1): "timestamp type 1 is the broker's to set",
        KafkaRecord("gaps", 1, 1, b"b", b"2", 6): "partition not in the manifest's topics",
    }
    for bad, reason in cases.items():
        case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        records_dir = write_records(case, [KafkaRecord("gaps", 0, 0, b"a", b"1", 5), bad], {"gaps": 1}, 1024)
        with pytest.raises(PublishError) as refused:
            publish(records_dir, broker.bootstrap, replace=True)
        assert (refused.value.topic, refused.value.partition, refused.value.offset) == \
            (bad.topic, bad.partition, bad.offset)
        assert str(refused.value).startswith(f"gaps/{bad.partition}@{bad.offset}: {reason}")
    # The topic was made before the bad record was met: publishing again must not append to it.
    with pytest.raises(PublishError, match="gaps: the topic exists already"):
        publish(records_dir, broker.bootstrap)
    for read in (lambda: next(kafka_records(broker.bootstrap, "absent", timeout_s=5)),
                 lambda: spark_source(None, broker.bootstrap, ["gaps", "absent"], timeout_s=5)):
        with pytest.raises(TransportError, match=f"^absent: no such topic at {broker.bootstrap}"):
            read()


def test_an_unreachable_cluster_is_a_prompt_error_not_a_hang():
    bootstrap = f"127.0.0.1:{free_port()}"  # nothing listens there
    for call in (lambda: cluster_metadata(bootstrap, timeout_s=2),
                 lambda: next(kafka_records(bootstrap, "t", timeout_s=2)),
                 lambda: publish(Path("unused"), bootstrap, {"topics": {"t": 1}}, timeout_s=2),
                 lambda: spark_source(None, bootstrap, ["t"], timeout_s=2)):  # checked before Spark is used
        started = time.monotonic()
        with pytest.raises(KafkaUnavailable, match=f"no Kafka broker answered at {bootstrap} within 2s"):
            call()
        assert time.monotonic() - started < 15


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_a_broker_that_cannot_start_is_reported_with_its_log(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        broker = KafkaBroker(port=taken.getsockname()[1], work_dir=tmp_path, start_timeout_s=120)
        started = time.monotonic()
        with pytest.raises(BrokerError, match="Address already in use"):
            broker.start()
    assert time.monotonic() - started < 120
    assert broker.process is None  # stopped, not left behind
    assert "exited" in broker.log_tail(200) or "Address already in use" in broker.log_tail(200)


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_cli_publish_then_export_gives_the_same_record_files(broker, smoke, tmp_path):
    case = smoke["debezium"]
    publish_cmd = CLI + ["kafka", "publish", "--records", str(case / "records"), "--bootstrap", broker.bootstrap,
                         "--replace-topics"]
    proc = subprocess.run(publish_cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    manifest = json.loads((case / "manifest.json").read_text())
    assert proc.returncode == 0 and f"published {manifest['records']} records" in proc.stdout, proc.stderr
    proc = subprocess.run(CLI + ["kafka", "export", "--bootstrap", broker.bootstrap, "--topic", "ticdc-smoke",
                                 "--out", str(tmp_path / "export")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert by_partition(iter_record_files(tmp_path / "export")) == by_partition(iter_record_files(case / "records"))
    # Without --replace-topics an existing topic is refused, with the topic named, exit 2.
    proc = subprocess.run(publish_cmd[:-1], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "error: ticdc-smoke: the topic exists already" in proc.stderr


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_cli_broker_stops_with_the_command_however_it_ends(tmp_path, stop_signal):
    cli = subprocess.Popen(CLI + ["kafka", "start"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           cwd=ROOT)
    try:
        lines = []
        while not any("ready at" in line for line in lines):
            line = cli.stdout.readline()
            assert line, "".join(lines)  # the command ended before the broker was ready
            lines.append(line)
        bootstrap = lines[-1].split("ready at ")[1].split()[0]
        assert cluster_metadata(bootstrap, timeout_s=10).brokers
        brokers = [p for p in psutil.Process(cli.pid).children(recursive=True) if "kafka.Kafka" in p.cmdline()]
        assert len(brokers) == 1
        work_dir = Path(brokers[0].cmdline()[-1]).parent
        cli.send_signal(stop_signal)
        cli.wait(60)
        # The broker goes with the command: stopped by it (TERM), or by the kernel when it dies (KILL).
        gone, alive = psutil.wait_procs(brokers, timeout=60)
        assert not alive
        if stop_signal == signal.SIGTERM:
            assert cli.returncode == 0 and not work_dir.exists()
        else:  # nothing of the command ran to remove the broker's folder
            shutil.rmtree(work_dir)
        with pytest.raises(KafkaUnavailable):
            cluster_metadata(bootstrap, timeout_s=2)
    finally:
        if cli.poll() is None:
            cli.kill()
        cli.stdout.close()


def test_enable_kafka_source_adds_the_package_to_the_next_spark_jvm(monkeypatch):
    from pyspark import SparkContext

    from ticdc_conformance.transport import spark_source as source

    conf = {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0",
            "spark.jars.ivySettings": "/cache/ivy/ivysettings.xml", "spark.jars.ivy": "/cache/ivy"}
    monkeypatch.setattr(source, "spark_kafka_conf", lambda echo=None: dict(conf))
    monkeypatch.setattr(SparkContext, "_jvm", None)  # as before this process's first session
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # PySpark's default when unset
    source.enable_kafka_source()
    expected = ("--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0 "
                "--conf spark.jars.ivySettings=/cache/ivy/ivysettings.xml --conf spark.jars.ivy=/cache/ivy pyspark-shell")
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == expected
    source.enable_kafka_source()
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == expected
    # spark-submit keeps one --packages: a user's list is extended, their other options kept.
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--packages a:b:1 --driver-memory 1g pyspark-shell")
    source.enable_kafka_source()
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == (
        "--conf spark.jars.ivySettings=/cache/ivy/ivysettings.xml --conf spark.jars.ivy=/cache/ivy "
        "--packages a:b:1,org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0 --driver-memory 1g pyspark-shell")


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_spark_kafka_source_package_is_built_for_the_installed_pyspark():
    import pyspark

    from ticdc_conformance.transport.spark_source import spark_kafka_package

    group, artifact, version = spark_kafka_package().split(":")
    scala_jar = next((Path(pyspark.__file__).parent / "jars").glob("scala-library-2.*.jar")).name
    scala = ".".join(scala_jar[len("scala-library-"):].split(".")[:2])
    assert (group, artifact) == ("org.apache.spark", f"spark-sql-kafka-0-10_{scala}")
    installed = tuple(int(x) for x in pyspark.__version__.split(".")[:3])
    chosen = tuple(int(x) for x in version.split("."))
    # The installed release, or an earlier patch release of the same line.
    assert chosen[:2] == installed[:2] and chosen[2] <= installed[2]


SPARK_EXPORT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from ticdc_conformance.consumers.spark.job import spark_session
    from ticdc_conformance.transport.spark_source import enable_kafka_source, kafka_dataframe, spark_records
    from ticdc_contract.record_files import RecordFileWriter

    bootstrap, out = sys.argv[1], Path(sys.argv[2])
    enable_kafka_source()
    spark = spark_session()
    for case in map(Path, sys.argv[3:]):
        manifest = json.loads((case / "manifest.json").read_text())
        df = kafka_dataframe(spark, case / "records", manifest, bootstrap)
        with RecordFileWriter(out / case.name) as w:
            w.write_all(spark_records(df))
    spark.stop()
""")


@pytest.mark.kafka
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(BROKER_TIMEOUT_S + 600)
def test_spark_kafka_source_reads_every_encoding_byte_for_byte(broker, smoke, tmp_path):
    # A Spark JVM takes packages only when it starts: a process of its own, with the Kafka source.
    proc = subprocess.run([sys.executable, "-c", SPARK_EXPORT, broker.bootstrap, str(tmp_path),
                           *map(str, smoke.values())], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for enc, case in smoke.items():
        expected = by_partition(iter_record_files(case / "records"))
        assert by_partition(iter_record_files(tmp_path / enc)) == expected, enc


@pytest.mark.kafka
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(BROKER_TIMEOUT_S + 600)
def test_run_with_the_reference_consumer_reading_from_kafka_conforms(broker, tmp_path):
    consumer = f"{sys.executable} -m ticdc_conformance kafka consume --bootstrap {broker.bootstrap}"
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "simple-avro", "--consumer", consumer,
                                 "--work", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "conformant" in proc.stdout and "NOT conformant" not in proc.stdout
    manifest = json.loads((tmp_path / "smoke-seed1" / "simple-avro" / "manifest.json").read_text())
    # The consumer read the stream from the broker: the topics hold the case's records.
    assert sum(len(rs) for rs in read_back(broker.bootstrap, manifest).values()) == manifest["records"]
