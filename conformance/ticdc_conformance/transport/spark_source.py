"""Spark reads Kafka with Spark's own Kafka source, as users' jobs do.

The source is `org.apache.spark:spark-sql-kafka-0-10_<scala>:<spark>`, the build for the installed
PySpark's Spark and Scala versions, put on the classpath through `spark.jars.packages` (resolved
by Spark's Ivy at JVM start, from the repository and into the cache that maven.py sets up). A
Spark JVM takes packages only when it starts, so a session must be made with `spark_kafka_conf()`
(a builder of one's own) or after `enable_kafka_source()` (any session made afterwards).

`spark_source` gives the DataFrame of a bounded read, earliest to latest offsets, with exactly the
columns of record files: key, value, topic, partition, offset, timestamp, timestampType, headers.
`record_files_dataframe` gives the same DataFrame from record files, their footers checked first.
"""
from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Iterator

from ticdc_contract.record import KafkaRecord

from .errors import TransportError
from .kafka_io import DEFAULT_TIMEOUT_S, cluster_metadata, publish
from .maven import Module, ivy_home, ivy_settings, resolve_first
from .record_files import checked_record_files

SUBMIT_ARGS_ENV = "PYSPARK_SUBMIT_ARGS"
SPARK_GROUP = "org.apache.spark"
_SPARK_CORE_JAR = re.compile(r"spark-core_(\d+\.\d+)-(.+)\.jar$")


def installed_spark() -> tuple[str, str]:
    """(Scala binary version, Spark version) of the installed PySpark, read off its spark-core jar."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("spark-core_*.jar")):
        m = _SPARK_CORE_JAR.search(jar.name)
        if m:
            return m.group(1), m.group(2)
    raise TransportError(f"no spark-core jar in {jars}: cannot tell the installed Spark and Scala versions")


def spark_kafka_package(echo=None) -> str:
    """Maven coordinates of Spark's Kafka source for the installed PySpark: its Scala version, and
    its Spark version or, where the repository lacks that one or a jar it needs, the newest patch
    release of the same Spark line before it that resolves whole (patch releases keep the source's
    interfaces). The choice is cached (maven.py)."""
    scala, spark = installed_spark()
    name = f"spark-sql-kafka-0-10_{scala}"
    major, minor, patch = (spark.split(".") + ["0", "0"])[:3]
    patches = range(int(patch), -1, -1) if patch.isdigit() else [patch]
    alternatives: list[tuple[Module, ...]] = [(Module(SPARK_GROUP, name, f"{major}.{minor}.{p}"),) for p in patches]
    chosen = resolve_first(f"spark-kafka-source-{scala}-{spark}", alternatives, echo=echo).modules[0]
    return str(chosen)


def spark_kafka_conf(echo=None) -> dict[str, str]:
    """Spark settings that put the Kafka source on a new Spark JVM's classpath."""
    return {
        "spark.jars.packages": spark_kafka_package(echo),
        "spark.jars.ivySettings": str(ivy_settings()),
        "spark.jars.ivy": str(ivy_home()),
    }


def _loads_kafka_source(jvm) -> bool:
    try:
        loader = jvm.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName("org.apache.spark.sql.kafka010.KafkaSourceProvider", False, loader)
        return True
    except Exception:  # py4j reports the JVM's ClassNotFoundException as a Py4JJavaError
        return False


def has_kafka_source(spark) -> bool:
    """Whether the session's JVM can load Spark's Kafka source."""
    return _loads_kafka_source(spark._jvm)


def enable_kafka_source(echo=None) -> None:
    """Makes the next Spark JVM this process starts carry the Kafka source (PySpark's
    PYSPARK_SUBMIT_ARGS); call it before the first session. Harmless when repeated."""
    from pyspark import SparkContext

    if SparkContext._jvm is not None:
        if _loads_kafka_source(SparkContext._jvm):
            return
        raise TransportError("a Spark JVM without the Kafka source runs in this process already; "
                             "enable the Kafka source before the first Spark session is made")
    args = shlex.split(os.environ.get(SUBMIT_ARGS_ENV, "pyspark-shell"))
    conf = spark_kafka_conf(echo)
    package = conf.pop("spark.jars.packages")
    if "--packages" in args:  # spark-submit keeps the last --packages only: join the lists
        at = args.index("--packages") + 1
        if package in args[at].split(","):
            return
        args[at] += f",{package}"
        extra = []
    else:
        extra = ["--packages", package]
    for key, value in conf.items():
        extra += ["--conf", f"{key}={value}"]
    # The application resource ("pyspark-shell") stays last, after the options.
    os.environ[SUBMIT_ARGS_ENV] = shlex.join(extra + args)


def spark_source(spark, bootstrap: str, topics: list[str], timeout_s: float = DEFAULT_TIMEOUT_S):
    """A batch DataFrame of `topics` read by Spark's Kafka source, from the earliest to the latest offsets.

    The cluster and the topics are checked first with a bounded client call, so an unreachable
    cluster or a missing topic is a TransportError at once rather than Spark's retries.
    """
    if not topics:
        raise TransportError("no topics to read")
    metadata = cluster_metadata(bootstrap, timeout_s)
    for topic in topics:
        if topic not in metadata.topics:
            raise TransportError(f"no such topic at {bootstrap}", topic=topic)
    if not has_kafka_source(spark):
        raise TransportError(f"this Spark session cannot load the Kafka source ({spark_kafka_package()}); "
                             "make it with spark_kafka_conf() or after enable_kafka_source()")
    return (spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", ",".join(sorted(topics)))
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .option("includeHeaders", "true")
            .option("failOnDataLoss", "true")
            .load())


def kafka_dataframe(spark, records_dir: Path, manifest: dict, bootstrap: str, timeout_s: float = DEFAULT_TIMEOUT_S):
    """Kafka as a run's transport: publishes a case's record files to `bootstrap` (replacing the
    manifest's topics, so that offsets are the files' ones) and returns what Spark's Kafka source
    reads back, the input of the reference Spark consumer."""
    publish(records_dir, bootstrap, manifest, replace=True, timeout_s=timeout_s)
    return spark_source(spark, bootstrap, sorted(manifest["topics"]), timeout_s)


def record_files_dataframe(spark, directory: Path):
    """A record-file directory as Spark reads it, once every file's footer has shown Spark's
    Kafka-source columns (record_files.checked_record_files): a garbage, truncated or empty file, or
    one without a column, is a RecordFileError naming it rather than a failure inside Spark's reader.
    Rows are not checked here: the decode stage meets them in offset order per partition."""
    checked_record_files(directory)
    return spark.read.parquet(str(Path(directory).resolve()))


def spark_records(df) -> Iterator[KafkaRecord]:
    """The rows of a Kafka-source DataFrame as KafkaRecords, in (topic, partition, offset) order,
    streamed to the driver one Spark partition at a time."""
    from pyspark.sql import functions as F

    rows = (df.select("topic", "partition", "offset", "key", "value",
                      F.unix_millis("timestamp").alias("timestamp_ms"), "timestampType", "headers")
            .orderBy("topic", "partition", "offset"))
    for row in rows.toLocalIterator():
        yield KafkaRecord(
            topic=row["topic"], partition=row["partition"], offset=row["offset"],
            key=_bytes(row["key"]), value=_bytes(row["value"]), timestamp_ms=row["timestamp_ms"],
            headers=tuple((h["key"], _bytes(h["value"])) for h in (row["headers"] or ())),
            timestamp_type=row["timestampType"])


def _bytes(value) -> bytes | None:
    return None if value is None else bytes(value)
