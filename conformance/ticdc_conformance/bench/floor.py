"""The floor under the consumer's rate: what Spark jobs that only read, only parse or only decode
every message of the same record files take on the same master, measured next to the consumer
(`bench consume`).

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

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from .child_failure import child_failure
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


_CHILD = r"""
import json, sys
from pathlib import Path
from ticdc_conformance.bench.floor import spark_floor
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.spark.job import spark_session
records, kind, master, manifest, scratch = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5])
m = json.loads(manifest.read_text())
spark = spark_session(master)
f = spark_floor(spark, records, scratch, kind == "json", m["protocol"], decoder_options(m, manifest.parent))
spark.stop()
print(json.dumps({"scan": f.scan_seconds, "parse": f.parse_seconds, "decode": f.decode_seconds}))
"""


def run_floor(variant: str, records: Path, manifest: Path, scratch: Path, master: str, env: dict) -> FloorFigures:
    """The floor in a child process of its own (its own session, like the consumer's run), so
    the consumer's sampled CPU time and memory stay its own."""
    kind = "json" if VARIANTS[variant][0] in JSON_ENCODINGS else "binary"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(Path(records).resolve()), kind, master,
                           str(Path(manifest).resolve()), str(scratch)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise child_failure(f"the floor run over {records}", proc.returncode, proc.stderr,
                            Path(scratch).parent.with_name(f"{Path(scratch).parent.name}.floor.stderr.log"))
    f = json.loads(proc.stdout.strip().splitlines()[-1])
    return FloorFigures(f["scan"], f["parse"], f["decode"])
