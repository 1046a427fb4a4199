"""Record files: one Parquet file per topic-partition with Spark's Kafka-source columns.

Written in row groups as records arrive, so a stream of any length needs memory for one
row group per partition only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_contract.record import CREATE_TIME, RECORD_SCHEMA, KafkaRecord

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


class _Columns:
    """One row group of one topic-partition, kept as columns while its records arrive and turned
    into Arrow arrays straight from buffers.

    pyarrow's conversion of Python lists (`pa.array`, `Table.from_pydict`) imports pandas on first
    use, which costs more than a short generation, and walks every record again; `from_buffers`
    needs neither. The arrays equal `records_to_table`'s (same types, values and nulls), so the
    Parquet bytes are the same."""

    __slots__ = ("topic", "partition", "keys", "values", "offsets", "timestamps", "timestamp_types", "headers")

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.keys: list = []
        self.values: list = []
        self.offsets: list[int] = []
        self.timestamps: list[int] = []
        self.timestamp_types: list[int] = []
        self.headers: list[tuple] = []

    def add(self, offset: int, key: Optional[bytes], value: Optional[bytes], timestamp_ms: int,
                   headers: tuple, timestamp_type: int) -> int:
        self.keys.append(key)
        self.values.append(value)
        self.offsets.append(offset)
        self.timestamps.append(timestamp_ms)
        self.timestamp_types.append(timestamp_type)
        self.headers.append(headers)
        return len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def table(self) -> pa.Table:
        n = len(self.keys)
        topic = self.topic.encode("utf-8")
        arrays = [
            _binary(pa.binary(), self.keys),
            _binary(pa.binary(), self.values),
            pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * len(topic)),
                                                   pa.py_buffer(topic * n)], null_count=0),
            _fixed(pa.int32(), np.full(n, self.partition, dtype=np.int32)),
            _fixed(pa.int64(), np.array(self.offsets, dtype=np.int64)),
            _fixed(RECORD_SCHEMA.field("timestamp").type, np.array(self.timestamps, dtype=np.int64) * 1000),
            _fixed(pa.int32(), np.array(self.timestamp_types, dtype=np.int32)),
            _headers(self.headers),
        ]
        if any(a is None for a in arrays) or n * len(topic) > _MAX_32:
            # A column past 32-bit offsets (gigabytes in one row group): pyarrow's own conversion
            # splits it into chunks.
            return records_to_table([KafkaRecord(self.topic, self.partition, o, k, v, t, h, tt) for k, v, o, t, tt, h
                                     in zip(self.keys, self.values, self.offsets, self.timestamps,
                                            self.timestamp_types, self.headers)])
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=RECORD_SCHEMA)])


_MAX_32 = 2**31 - 1


def _validity(items: list) -> tuple[object, int]:
    """The validity bitmap of a column (None when nothing is null) and its null count."""
    nulls = items.count(None)
    if not nulls:
        return None, 0
    valid = np.fromiter((v is not None for v in items), dtype=bool, count=len(items))
    return pa.py_buffer(np.packbits(valid, bitorder="little").tobytes()), nulls


def _binary(kind: pa.DataType, items: list) -> pa.Array | None:
    """A binary or string array of `items` (bytes, or str for a string array; None is null)."""
    n = len(items)
    validity, nulls = _validity(items)
    if nulls:
        items = [b"" if v is None else v for v in items]
    if kind == pa.string():
        items = [v.encode("utf-8") for v in items]
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
    total = int(lengths.sum())
    if total > _MAX_32:
        return None
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:], dtype=np.int32)
    return pa.Array.from_buffers(kind, n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(items))],
                                 null_count=nulls)


def _fixed(kind: pa.DataType, values: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)], null_count=0)


_HEADER_TYPE = RECORD_SCHEMA.field("headers").type


def _headers(headers: list[tuple]) -> pa.Array | None:
    n = len(headers)
    counts = np.fromiter(map(len, headers), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:], dtype=np.int32)
    pairs = [pair for h in headers for pair in h]
    keys = _binary(pa.string(), [k for k, _ in pairs])
    values = _binary(pa.binary(), [v for _, v in pairs])
    if keys is None or values is None:
        return None
    struct_type = _HEADER_TYPE.value_type
    entries = pa.StructArray.from_arrays([keys, values], fields=list(struct_type))
    return pa.Array.from_buffers(_HEADER_TYPE, n, [None, pa.py_buffer(offsets)], null_count=0, children=[entries])


class RecordFileWriter:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._writers: dict[tuple[str, int], pq.ParquetWriter] = {}
        self._pending: dict[tuple[str, int], _Columns] = {}
        self.count = 0

    def write(self, record: KafkaRecord) -> None:
        self.write_fields(record.topic, record.partition, record.offset, record.key, record.value,
                          record.timestamp_ms, record.headers, record.timestamp_type)

    def write_fields(self, topic: str, partition: int, offset: int, key: Optional[bytes], value: Optional[bytes],
                     timestamp_ms: int, headers: tuple = (), timestamp_type: int = CREATE_TIME) -> None:
        """`write` of the record with these fields, without a KafkaRecord made for it (the
        generator's simulator hands its records over so: SinkSimulator.run_into)."""
        key_ = (topic, partition)
        buf = self._pending.get(key_)
        if buf is None:
            buf = self._pending[key_] = _Columns(topic, partition)
        self.count += 1
        if buf.add(offset, key, value, timestamp_ms, headers, timestamp_type) >= ROW_GROUP_RECORDS:
            self._flush(key_)

    def write_all(self, records: Iterable[KafkaRecord]) -> None:
        write = self.write
        for r in records:
            write(r)

    def _flush(self, key: tuple[str, int]) -> None:
        buf = self._pending.get(key)
        if not buf:
            return
        w = self._writers.get(key)
        if w is None:
            path = self.directory / record_file_name(*key)
            w = self._writers[key] = pq.ParquetWriter(path, RECORD_SCHEMA, compression="zstd")
        w.write_table(buf.table())
        self._pending[key] = _Columns(*key)

    def close(self) -> None:
        for key in sorted(self._pending):
            self._flush(key)
        for w in self._writers.values():
            w.close()

    def __enter__(self) -> "RecordFileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parquet_batches(pf: pq.ParquetFile, batch_size: int, **options) -> Iterator[pa.RecordBatch]:
    """`pf.iter_batches(batch_size, **options)` over the whole file, read with one reader per row
    group. One reader over a whole file keeps Arrow memory that grows with the rows read (pyarrow
    26, a record file's binary `value` column: 100 MB more after 600,000 records, 260 MB after
    1,500,000; a 10M-event stream took the sequential consumer to 2 GB), where a reader per row group
    holds one row group's at most (8 MB) and reads no slower. `row_groups` in `options` is not
    taken: this is the whole file."""
    for group in range(pf.metadata.num_row_groups):
        yield from pf.iter_batches(batch_size=batch_size, row_groups=[group], **options)


def iter_record_files(directory: Path) -> Iterable[KafkaRecord]:
    """Every record of a record-file directory, per file in offset order (pure Python, no Spark)."""
    for path in sorted(Path(directory).glob("*.parquet")):
        for batch in parquet_batches(pq.ParquetFile(path), ROW_GROUP_RECORDS):
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
