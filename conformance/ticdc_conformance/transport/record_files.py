"""Reading record files, checked: the one reader of the reference consumers and the lint.

Record files (docs/consumer-protocol.md) are Parquet files with Spark's Kafka-source columns, one
topic-partition per file, records in offset order. What is not so is refused with a
RecordFileError naming the file and the record (topic/partition@offset, or the row number where
the coordinates themselves are missing), never a traceback from deep inside a reader:
- a file that is not Parquet (garbage, truncated, 0 bytes) or lacks or mistypes a column;
- a row without topic, partition or offset; a row of another topic-partition than the file's
  first row, or than the file's name (`<topic>-<partition>.parquet`) says;
- offsets that do not grow; with `contiguous`, a gap between two offsets (`generate` writes every
  offset of a partition; a stream captured from Kafka may skip some, so the lint allows gaps);
- two files holding the same topic-partition.
The checks run per batch on Arrow columns, so reading stays about as fast as without them.
`merge_by_timestamp` gives the arrival order every reference reader uses: the files side by side,
always the one whose next record has the smallest Kafka timestamp (ties by topic, then partition).
"""
from __future__ import annotations

import heapq
import itertools
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_contract.record import RECORD_SCHEMA, KafkaRecord
from ticdc_contract.record_files import records_from_batch

from ..errors import ConsumerError

# What each column may be read as (records_from_batch reads any of these alike).
_COLUMN_KINDS: dict[str, Callable[[pa.DataType], bool]] = {
    "key": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
    "value": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
    "topic": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "partition": pa.types.is_integer,
    "offset": pa.types.is_integer,
    "timestamp": pa.types.is_timestamp,
    "timestampType": pa.types.is_integer,
    "headers": lambda t: (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_struct(t.value_type)
    and {t.value_type.field(i).name for i in range(t.value_type.num_fields)} == {"key", "value"},
}
_COORDINATES = ("topic", "partition", "offset")
_FILE_NAME = re.compile(r"(?P<topic>.+)-(?P<partition>[0-9]+)\.parquet")


class RecordFileError(ConsumerError, ValueError):
    """A record file that is not what record files are; the message names the file and the record."""


def check_schema(path: Path) -> pq.ParquetFile:
    """The opened file, once its footer reads and its columns are Spark's Kafka-source columns
    (reads the footer only: a cheap check before Spark reads the files itself)."""
    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except (OSError, pa.ArrowException) as e:
        size = path.stat().st_size if path.exists() else None
        raise RecordFileError(f"{path}: not a readable Parquet file ({size} bytes; truncated, empty or not "
                              f"Parquet: {e})") from None
    for field in RECORD_SCHEMA:
        at = schema.get_field_index(field.name)
        if at < 0:
            raise RecordFileError(f"{path}: no column {field.name!r}; record files hold Spark's Kafka-source "
                                  f"columns ({', '.join(RECORD_SCHEMA.names)})")
        if not _COLUMN_KINDS[field.name](schema.field(at).type):
            raise RecordFileError(f"{path}: column {field.name!r} is {schema.field(at).type}, "
                                  f"not {field.type} as in Spark's Kafka source")
    return pf


def file_records(path: Path, batch_size: int, contiguous: bool = False) -> Iterator[KafkaRecord]:
    """The records of one record file, checked as the module docstring says, streaming."""
    path = Path(path)
    pf = check_schema(path)
    named = _FILE_NAME.fullmatch(path.name)
    tp: Optional[tuple[str, int]] = None
    last: Optional[int] = None
    row = 0
    try:
        batches = pf.iter_batches(batch_size=batch_size)
        for batch in batches:
            tp, last = _check_batch(path, batch, row, tp, last, contiguous, named)
            row += batch.num_rows
            yield from records_from_batch(batch)
    except (OSError, pa.ArrowException) as e:
        raise RecordFileError(f"{path}: unreadable after row {row} (a damaged row group: {e})") from None


def _check_batch(path: Path, batch: pa.RecordBatch, first_row: int, tp: Optional[tuple[str, int]],
                 last: Optional[int], contiguous: bool, named: Optional[re.Match]) -> tuple:
    """(the file's topic-partition, its last offset) after `batch`; RecordFileError at the first bad row."""
    if batch.num_rows == 0:
        return tp, last
    for name in _COORDINATES:
        column = batch.column(name)
        if column.null_count:
            at = column.is_null().to_numpy(zero_copy_only=False).argmax()
            raise RecordFileError(f"{path}: row {first_row + at}: {name} is null")
    topics, partitions = batch.column("topic"), batch.column("partition")
    if tp is None:
        tp = (topics[0].as_py(), partitions[0].as_py())
        if named is not None and (named["topic"], int(named["partition"])) != tp and named["topic"] == tp[0]:
            raise RecordFileError(f"{path}: row {first_row} ({_coordinates(batch, 0)}) is of partition {tp[1]}, "
                                  f"but the file is named for partition {named['partition']}")
    stray = np.flatnonzero((partitions.to_numpy() != tp[1]) | (topics.to_numpy(zero_copy_only=False) != tp[0]))
    if stray.size:
        at = int(stray[0])
        raise RecordFileError(f"{path}: row {first_row + at} ({_coordinates(batch, at)}) is filed under "
                              f"{tp[0]}/{tp[1]}, the topic-partition of the file's first row")
    offsets = batch.column("offset").to_numpy()
    steps = np.diff(offsets, prepend=offsets[0] - 1 if last is None else last)
    bad = np.flatnonzero(steps <= 0 if not contiguous else steps != 1)
    if bad.size:
        at = int(bad[0])
        before = last if at == 0 else int(offsets[at - 1])
        assert before is not None  # the first row's step is against `last` only when there is one
        missing = (f"offset {before + 1} is missing" if offsets[at] == before + 2 else
                   f"offsets {before + 1}..{int(offsets[at]) - 1} are missing")
        what = "does not grow" if steps[at] <= 0 else \
            f"leaves a gap: {missing} (record files hold every offset of a partition)"
        raise RecordFileError(f"{path}: row {first_row + at} ({_coordinates(batch, at)}): offset after {before} {what}")
    return tp, int(offsets[-1])


def _coordinates(batch: pa.RecordBatch, at: int) -> str:
    return f"{batch.column('topic')[at].as_py()}/{batch.column('partition')[at].as_py()}@{batch.column('offset')[at].as_py()}"


def merge_by_timestamp(streams: Iterable[Iterator[KafkaRecord]]) -> Iterator[KafkaRecord]:
    """The records of several partition streams side by side: always the stream whose next record has
    the smallest Kafka timestamp (ties by topic, partition, then stream), each stream in its own order."""
    tie = itertools.count()
    heads = []
    for records in streams:
        first = next(records, None)
        if first is not None:
            heads.append((first.timestamp_ms, first.topic, first.partition, next(tie), first, records))
    heapq.heapify(heads)
    while heads:
        _, _, _, _, record, records = heads[0]
        following = next(records, None)
        if following is None:
            heapq.heappop(heads)
        else:
            heapq.heapreplace(heads, (following.timestamp_ms, following.topic, following.partition, next(tie),
                                      following, records))
        yield record


class RecordFiles:
    """The records of a directory's `*.parquet` files, merged by timestamp; `partitions` lists the
    files' topic-partitions (known before any record is judged: each file's first batch is read)."""

    def __init__(self, directory: Path, batch_size: int, contiguous: bool = False) -> None:
        files = sorted(Path(directory).glob("*.parquet"))
        if not files:
            raise RecordFileError(f"{directory}: no record files (*.parquet)")
        self.partitions: dict[str, set[int]] = {}
        self._streams: list[Iterator[KafkaRecord]] = []
        owners: dict[tuple[str, int], Path] = {}
        for path in files:
            records = file_records(path, batch_size, contiguous)
            first = next(records, None)
            if first is None:
                continue
            tp = (first.topic, first.partition)
            if tp in owners:
                raise RecordFileError(f"{path}: holds {first.topic}/{first.partition}, as {owners[tp]} does; "
                                      "one file per topic-partition")
            owners[tp] = path
            self.partitions.setdefault(first.topic, set()).add(first.partition)
            self._streams.append(itertools.chain([first], records))

    def __iter__(self) -> Iterator[KafkaRecord]:
        return merge_by_timestamp(self._streams)
