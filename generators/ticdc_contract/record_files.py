"""Record files: one Parquet file per topic-partition with Spark's Kafka-source columns.

Written in row groups as records arrive, so a stream of any length needs memory for one
row group per partition only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_contract.record import RECORD_SCHEMA, KafkaRecord

ROW_GROUP_RECORDS = 8192


def record_file_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}.parquet"


def records_to_table(records: list[KafkaRecord]) -> pa.Table:
    return pa.Table.from_pydict(
        {
            "key": [r.key for r in records],
            "value": [r.value for r in records],
            "topic": [r.topic for r in records],
            "partition": [r.partition for r in records],
            "offset": [r.offset for r in records],
            "timestamp": [r.timestamp_ms * 1000 for r in records],
            "timestampType": [r.timestamp_type for r in records],
            "headers": [[{"key": k, "value": v} for k, v in r.headers] for r in records],
        },
        schema=RECORD_SCHEMA,
    )


class RecordFileWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._writers: dict[tuple[str, int], pq.ParquetWriter] = {}
        self._pending: dict[tuple[str, int], list[KafkaRecord]] = {}
        self.count = 0

    def write(self, record: KafkaRecord) -> None:
        key = (record.topic, record.partition)
        buf = self._pending.setdefault(key, [])
        buf.append(record)
        self.count += 1
        if len(buf) >= ROW_GROUP_RECORDS:
            self._flush(key)

    def write_all(self, records: Iterable[KafkaRecord]) -> None:
        for r in records:
            self.write(r)

    def _flush(self, key: tuple[str, int]) -> None:
        buf = self._pending.get(key)
        if not buf:
            return
        w = self._writers.get(key)
        if w is None:
            path = self.directory / record_file_name(*key)
            w = self._writers[key] = pq.ParquetWriter(path, RECORD_SCHEMA, compression="zstd")
        w.write_table(records_to_table(buf))
        self._pending[key] = []

    def close(self) -> None:
        for key in sorted(self._pending):
            self._flush(key)
        for w in self._writers.values():
            w.close()

    def __enter__(self) -> "RecordFileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_record_files(directory: Path) -> Iterable[KafkaRecord]:
    """Every record of a record-file directory, per file in offset order (pure Python, no Spark)."""
    for path in sorted(Path(directory).glob("*.parquet")):
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=ROW_GROUP_RECORDS):
            yield from records_from_batch(batch)


def records_from_batch(batch: pa.RecordBatch) -> Iterable[KafkaRecord]:
    # The timestamp column is read as integers only: turning it into zone-aware datetimes first
    # would cost more than everything else this function does.
    cols = batch.drop_columns(["timestamp"]).to_pydict()
    micros = batch.column("timestamp").cast(pa.int64()).to_pylist()
    for i in range(batch.num_rows):
        ts = micros[i]
        yield KafkaRecord(
            topic=cols["topic"][i], partition=cols["partition"][i], offset=cols["offset"][i],
            key=cols["key"][i], value=cols["value"][i],
            timestamp_ms=ts // 1000 if ts is not None else 0,
            headers=tuple((h["key"], h["value"]) for h in (cols["headers"][i] or ())),
            timestamp_type=cols["timestampType"][i],
        )
