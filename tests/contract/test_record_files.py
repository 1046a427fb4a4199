"""Reading record files a row group at a time (ticdc_contract.record_files.parquet_batches)."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_contract.record import RECORD_SCHEMA, KafkaRecord
from ticdc_contract.record_files import (
    ROW_GROUP_RECORDS,
    RecordFileWriter,
    iter_record_files,
    parquet_batches,
    records_to_table,
)

GROUPS = 40


def _record(offset: int, rng: random.Random) -> KafkaRecord:
    # Values like a stream's: a shared shape with varying fields, some repeating (the writer's
    # dictionary encoding applies to a few of them, then falls back to plain).
    body = {"id": offset, "name": rng.choice(["a", "b", "c"]) * rng.randint(1, 40),
            "pad": "".join(rng.choice("xyz0123456789") for _ in range(rng.randint(200, 900)))}
    return KafkaRecord(topic="t", partition=0, offset=offset, key=str(offset).encode(),
                       value=repr(body).encode(), timestamp_ms=1_700_000_000_000 + offset, headers=(),
                       timestamp_type=0)


def _file(tmp_path: Path, records: int, group: int) -> Path:
    rng = random.Random(7)
    path = tmp_path / "t-0.parquet"
    rows = [_record(i, rng) for i in range(records)]
    with pq.ParquetWriter(path, RECORD_SCHEMA, compression="zstd") as w:
        for start in range(0, records, group):
            w.write_table(records_to_table(rows[start:start + group]))
    return path


def test_same_rows_as_one_reader_over_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, 1_000, 300)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups == 4
    whole = pa.Table.from_batches(list(pf.iter_batches(batch_size=128)))
    batches = list(parquet_batches(pq.ParquetFile(path), 128))
    assert pa.Table.from_batches(batches).equals(whole)
    # No batch crosses a row group: 300 = 128 + 128 + 44, three times, then 100 = 100.
    assert [b.num_rows for b in batches] == [128, 128, 44] * 3 + [100]


def test_options_pass_through(tmp_path: Path) -> None:
    path = _file(tmp_path, 500, 200)
    [first, *_] = parquet_batches(pq.ParquetFile(path), 64, columns=["offset"], use_threads=False)
    assert first.schema.names == ["offset"]
    assert first.column("offset").to_pylist() == list(range(64))


def test_a_file_without_row_groups_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t-0.parquet"
    pq.ParquetWriter(path, RECORD_SCHEMA).close()
    assert list(parquet_batches(pq.ParquetFile(path), 64)) == []


def test_arrow_memory_stays_that_of_one_row_group(tmp_path: Path) -> None:
    """A long file read to its end holds about one row group's Arrow memory, not a share of every
    row group read (what one pyarrow reader over the whole file keeps; a 10M-event stream took the
    sequential consumer to 2 GB)."""
    group = 2_000
    path = _file(tmp_path, GROUPS * group, group)
    one_group = pq.ParquetFile(path).metadata.row_group(0).total_byte_size
    base = pa.total_allocated_bytes()
    peak = 0
    for batch in parquet_batches(pq.ParquetFile(path), 512):
        peak = max(peak, pa.total_allocated_bytes() - base)
        del batch
    assert peak < 3 * one_group, f"peak Arrow allocation {peak:,} B over {GROUPS} row groups of {one_group:,} B"


def test_iter_record_files_reads_every_record_in_order(tmp_path: Path) -> None:
    rng = random.Random(3)
    records = [_record(i, rng) for i in range(ROW_GROUP_RECORDS + 10)]
    with RecordFileWriter(tmp_path) as writer:
        writer.write_all(records)
    assert list(iter_record_files(tmp_path)) == records
