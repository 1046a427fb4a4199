"""The floor under the consumer's rate: what Spark jobs that only read, only parse or only decode
every message of the same record files take on the same master, measured after the consumer in
its session (`bench consume`, consume.py).

Passes, each one Spark job:
- scan: every record read and its value hashed (xxhash64) -- reading the input and touching each
  byte once, which every consumer must do;
- parse (JSON encodings): every value parsed by Spark's own JSON reader (Jackson, in the JVM) with
  `from_json(value, 'map<string,string>')`, which tokenizes the whole message (nested objects are
  kept as their JSON text, so every byte is read), and the parsed messages written once as Parquet
  to a scratch folder -- decoding in the JVM at its cheapest, plus writing every row event once,
  as the applied log alone already does. Open Protocol's batch frames and Simple Avro are binary:
  no parse pass;
- decode: every record decoded by this suite's reference decoder in the Python workers
  (`mapInArrow`), events counted and dropped -- the consumer's first stage without building,
  shuffling or writing rows. Each record file is read whole by one task (the decoders keep state
  per partition and need its offset order, which the record files keep, one file per partition);
  a task that sees a partition's offsets go back fails the pass rather than time a wrong decode
  (consumers/spark/job.py in_file_order, the check of the consumer's own decode stage).
Scan and parse read the files in splits of SPLIT_BYTES, so that both cores stay busy to the end
(Spark's default packs the `large` scenario's three files into three tasks: two waves on two
cores); the decode pass cannot split a partition.

The consumer must at least read and decode every message, so the faster of parse and decode bounds
its rate from above on this machine; `judge` (consume.py) says when that bound is below the target.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from .inputs import VARIANTS

# Encodings whose message values are JSON text Spark's from_json reads.
JSON_ENCODINGS = frozenset({"canal-json", "debezium", "simple-json"})
_WHOLE_FILES = str(1 << 40)  # maxPartitionBytes and openCostInBytes: one task per record file
SPLIT_BYTES = str(8 << 20)


@dataclass
class FloorFigures:
    scan_seconds: float
    parse_seconds: Optional[float]  # None: binary messages
    decode_seconds: Optional[float] = None

    def passes(self) -> list[tuple[str, float]]:
        return [(name, s) for name, s in (("scan", self.scan_seconds), ("parse", self.parse_seconds),
                                          ("decode", self.decode_seconds)) if s is not None]

    def fastest_decode(self) -> Optional[tuple[str, float]]:
        """The faster of the parse and decode passes: the least any consumer spends decoding."""
        timed = [(n, s) for n, s in self.passes() if n != "scan"]
        return min(timed, key=lambda p: p[1]) if timed else None


def _counting_decoder(protocol: str, options: dict):
    """Decodes every record and yields one row with the number of events; the batches must hold
    each partition's records together in increasing offsets (the consumer's decode stage checks
    them the same way), or the pass fails rather than time a wrong decode."""
    from ticdc_conformance.consumers.spark.job import in_file_order

    def count(batches: Iterator) -> Iterator:
        import pyarrow as pa

        from ticdc_conformance.consumers.rules.decode_stage import PartitionDecoders
        from ticdc_contract.record_files import records_from_batch

        decoders = PartitionDecoders(protocol, options)
        rows = 0
        for batch in batches:
            for record in records_from_batch(batch):
                rows += len(decoders.decode(record))  # an undecodable record is one error row
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    return in_file_order(count)


def spark_floor(spark, records: str, scratch: Path, json_messages: bool, protocol: Optional[str] = None,
                options: Optional[dict] = None) -> FloorFigures:
    """Times the passes over the record files in `spark`'s session (decode only with a protocol);
    the parse pass writes under `scratch`, which is removed afterwards."""
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.files.maxPartitionBytes", SPLIT_BYTES)
    df = spark.read.parquet(records)
    start = time.perf_counter()
    df.select(F.count(F.lit(1)), F.bit_xor(F.xxhash64("value"))).collect()
    scan = time.perf_counter() - start
    parse = None
    if json_messages:
        parsed = F.from_json(F.col("value").cast("string"), "map<string,string>")
        target = Path(scratch).resolve() / "parsed"
        start = time.perf_counter()
        df.select("topic", "partition", "offset", parsed.alias("message")).write.mode("overwrite").parquet(str(target))
        parse = time.perf_counter() - start
        shutil.rmtree(target, ignore_errors=True)
    decode = None
    if protocol is not None:
        for name in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes"):
            spark.conf.set(name, _WHOLE_FILES)
        whole = spark.read.parquet(records)
        start = time.perf_counter()
        whole.mapInArrow(_counting_decoder(protocol, options or {}), "rows long").agg(F.sum("rows")).collect()
        decode = time.perf_counter() - start
    return FloorFigures(scan, parse, decode)


def message_kind(variant: str) -> str:
    """"json" where Spark's from_json reads the message values (a parse pass runs), else "binary"."""
    return "json" if VARIANTS[variant][0] in JSON_ENCODINGS else "binary"
