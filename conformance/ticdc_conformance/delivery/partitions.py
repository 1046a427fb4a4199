"""One partition's records, read from its record file with a bounded read-ahead and re-positioned
at any offset (a restart re-delivers from the committed offset).

Kafka timestamps are skewed here when the schedule asks: each record's shift follows from the seed
and its coordinates alone, so a record delivered again after a restart carries the same timestamp.
"""
from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Optional

import pyarrow.parquet as pq

from ticdc_conformance.transport.record_files import RecordFileError, check_schema, file_records
from ticdc_contract.record import KafkaRecord

from .steps import TopicPartition

READ_BATCH = 1024  # rows read from a record file at a time


def record_files(records: Path) -> dict[TopicPartition, Path]:
    """The record files of a folder by their topic-partition (read from each file's first row)."""
    found: dict[TopicPartition, Path] = {}
    files = sorted(Path(records).glob("*.parquet"))
    if not files:
        raise RecordFileError(f"{records}: no record files (*.parquet)")
    for path in files:
        pf = check_schema(path)
        if pf.metadata.num_rows == 0:
            continue  # an empty partition: nothing to deliver (Start.offsets still names it)
        first = next(pf.iter_batches(batch_size=1, columns=["topic", "partition"])).to_pylist()[0]
        tp = (first["topic"], first["partition"])
        if tp in found:
            raise RecordFileError(f"{path}: holds {tp[0]}/{tp[1]}, as {found[tp]} does; one file per topic-partition")
        found[tp] = path
    return found


def row_count(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


class Skew:
    """Kafka timestamps moved by a seeded amount in [-skew_ms, +skew_ms] per record."""

    def __init__(self, seed: int, skew_ms: int) -> None:
        self.seed, self.skew_ms = seed, skew_ms

    def shift(self, record: KafkaRecord) -> int:
        digest = hashlib.blake2b(f"{self.seed}/{record.topic}/{record.partition}/{record.offset}".encode(),
                                 digest_size=8).digest()
        return int.from_bytes(digest, "big") % (2 * self.skew_ms + 1) - self.skew_ms

    def apply(self, record: KafkaRecord) -> KafkaRecord:
        return replace(record, timestamp_ms=max(0, record.timestamp_ms + self.shift(record)))


class PartitionReader:
    """The records of one partition from `offset` on; `peek` looks ahead, `take` delivers."""

    def __init__(self, tp: TopicPartition, path: Path, skew: Optional[Skew] = None) -> None:
        self.tp, self.path, self.skew = tp, path, skew
        self.position = 0  # the offset of the next record `take` delivers
        self._ahead: deque[KafkaRecord] = deque()
        self._source: Iterator[KafkaRecord] = iter(())
        self.seek(0)

    def seek(self, offset: int) -> None:
        """Delivers from `offset` on (the first record at or after it); reopens the file."""
        if offset < 0:
            raise ValueError(f"{self.tp[0]}/{self.tp[1]}: offset {offset} is negative")
        self._ahead.clear()
        self._source = (r for r in file_records(self.path, READ_BATCH, contiguous=True) if r.offset >= offset)
        self.position = offset

    def peek(self, at: int = 0) -> Optional[KafkaRecord]:
        """The record `at` places after the next one, or None past the end."""
        while len(self._ahead) <= at:
            record = next(self._source, None)
            if record is None:
                return None
            self._ahead.append(self.skew.apply(record) if self.skew is not None else record)
        return self._ahead[at]

    @property
    def exhausted(self) -> bool:
        return self.peek() is None

    def take(self, n: int = 1) -> tuple[KafkaRecord, ...]:
        """The next `n` records (fewer at the end), delivered."""
        out = []
        for _ in range(n):
            record = self.peek()
            if record is None:
                break
            out.append(self._ahead.popleft())
        if out:
            self.position = out[-1].offset + 1
        return tuple(out)
