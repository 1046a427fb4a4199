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
`RecordFiles` gives the same order a batch at a time (`merge_batches`): per record that merge is a
sort by (running maximum of the timestamp within its file, topic, partition, offset), which numpy
does for a batch of every file at once, instead of a heap step per record.
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
from ticdc_contract.record_files import parquet_batches

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
# A batch is bounded in bytes as well as in records: an Open Protocol record batches some 16 events
# (11 KB), so 4,096 of them are 45 MB a file, held as Arrow buffers and as Python bytes for every
# file of the merge at once. Records of a few hundred bytes keep the caller's batch size.
BATCH_BYTES = 8 << 20
# The file is read through a buffer of this size instead of a whole column chunk at a time (a row
# group of 8,192 such records is 90 MB uncompressed).
READ_BUFFER = 1 << 20
_FILE_NAME = re.compile(r"(?P<topic>.+)-(?P<partition>[0-9]+)\.parquet")


class RecordFileError(ConsumerError, ValueError):
    """A record file that is not what record files are; the message names the file and the record."""


def check_schema(path: Path) -> pq.ParquetFile:
    """The opened file, once its footer reads and its columns are Spark's Kafka-source columns
    (reads the footer only: a cheap check before Spark reads the files itself)."""
    try:
        pf = pq.ParquetFile(path, buffer_size=READ_BUFFER)
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


def checked_record_files(directory: Path) -> list[Path]:
    """The record files of `directory`, once every one's footer has shown Spark's Kafka-source
    columns (check_schema): the Spark consumers call it before they start a session, so a bad file
    is named in a second rather than after the JVM's start or inside Spark's reader."""
    files = sorted(Path(directory).glob("*.parquet"))
    if not files:
        raise RecordFileError(f"{directory}: no record files (*.parquet)")
    for path in files:
        check_schema(path)
    return files


def file_records(path: Path, batch_size: int, contiguous: bool = False) -> Iterator[KafkaRecord]:
    """The records of one record file, checked as the module docstring says, streaming."""
    for records, _ in file_batches(path, batch_size, contiguous):
        yield from records


def file_batches(path: Path, batch_size: int, contiguous: bool = False
                 ) -> Iterator[tuple[list[KafkaRecord], np.ndarray]]:
    """`file_records` a batch at a time: the batch's records and their Kafka timestamps (ms)."""
    path = Path(path)
    pf = check_schema(path)
    named = _FILE_NAME.fullmatch(path.name)
    tp: Optional[tuple[str, int]] = None
    last: Optional[int] = None
    row = 0
    try:
        batches = parquet_batches(pf, _rows_per_batch(pf.metadata, batch_size))
        for batch in batches:
            tp, last = _check_batch(path, batch, row, tp, last, contiguous, named)
            row += batch.num_rows
            if batch.num_rows:
                yield batch_records(batch)
    except (OSError, pa.ArrowException) as e:
        raise RecordFileError(f"{path}: unreadable after row {row} (a damaged row group: {e})") from None


def _rows_per_batch(meta: pq.FileMetaData, batch_size: int) -> int:
    """`batch_size`, or fewer records where that many would exceed BATCH_BYTES by the file's mean
    record size (its row groups' uncompressed bytes over its rows, from the footer)."""
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if size <= 0 or meta.num_rows <= 0:
        return batch_size
    return max(1, min(batch_size, BATCH_BYTES * meta.num_rows // size))


_new_record = object.__new__
_set_attribute = object.__setattr__


def batch_records(batch: pa.RecordBatch) -> tuple[list[KafkaRecord], np.ndarray]:
    """The records of a batch (as ticdc_contract.record_files.records_from_batch reads them) and their
    timestamps in ms. A record is built by setting its attribute dict at once: KafkaRecord is a frozen
    dataclass, whose constructor sets each of its eight fields through object.__setattr__."""
    stamps = batch.column("timestamp")
    if stamps.null_count:  # a record without a timestamp reads as 0, as records_from_batch reads it
        micros = np.array([v or 0 for v in stamps.cast(pa.int64()).to_pylist()], np.int64)
    else:
        micros = _integers(stamps)
    millis = micros // 1000
    headers = batch.column("headers")
    if _no_headers(headers):  # the usual case
        header_tuples: Iterable[tuple] = itertools.repeat((), batch.num_rows)
    else:
        header_tuples = [tuple((h["key"], h["value"]) for h in hs) if hs else () for hs in headers.to_pylist()]
    records: list[KafkaRecord] = []
    append = records.append
    for topic, partition, offset, key, value, ts, hs, ts_type in zip(
            batch.column("topic").to_pylist(), batch.column("partition").to_pylist(),
            batch.column("offset").to_pylist(), batch.column("key").to_pylist(), batch.column("value").to_pylist(),
            millis.tolist(), header_tuples, batch.column("timestampType").to_pylist()):
        record = _new_record(KafkaRecord)
        _set_attribute(record, "__dict__", {
            "topic": topic, "partition": partition, "offset": offset, "key": key, "value": value,
            "timestamp_ms": ts, "headers": hs, "timestamp_type": ts_type})
        append(record)
    return records, millis


def _no_headers(headers: pa.Array) -> bool:
    """Whether no record of a batch has a header: its list offsets do not move. Read from their
    buffer, as Array.flatten or ListArray.offsets import pyarrow.compute (a tenth of a second)."""
    width = 8 if pa.types.is_large_list(headers.type) else 4
    offsets = np.frombuffer(headers.buffers()[1], dtype=f"int{width * 8}", count=len(headers) + 1,
                            offset=headers.offset * width)
    return bool(offsets[0] == offsets[-1])


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
    # Topics compared as Python strings: numpy would need pandas to convert an Arrow string column.
    topic_list = topics.to_pylist()
    other_topic = topic_list.count(tp[0]) != len(topic_list)
    stray = np.flatnonzero((_integers(partitions) != tp[1])
                           | (np.array([t != tp[0] for t in topic_list]) if other_topic else False))
    if stray.size:
        at = int(stray[0])
        raise RecordFileError(f"{path}: row {first_row + at} ({_coordinates(batch, at)}) is filed under "
                              f"{tp[0]}/{tp[1]}, the topic-partition of the file's first row")
    offsets = _integers(batch.column("offset"))
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


def _integers(array: pa.Array) -> np.ndarray:
    """An integer or timestamp array without nulls as numpy, read from its buffer (Array.to_numpy
    imports pandas, which costs more than reading a short stream)."""
    kind = array.type
    bits = kind.bit_width
    dtype = np.dtype(f"uint{bits}" if pa.types.is_unsigned_integer(kind) else f"int{bits}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * (bits // 8))


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


Batch = tuple[list[KafkaRecord], np.ndarray]  # records in offset order and their timestamps (ms)


class _Buffered:
    """One file's batch being merged: its records from `pos` on are not given out yet; `keys` are
    their merge keys (the running maximum of the timestamp: a record cannot leave the merge before
    the records ahead of it in its file)."""

    def __init__(self, rank: int, batches: Iterator[Batch], first: Batch) -> None:
        self.rank, self.batches, self.high = rank, batches, -(2 ** 63)
        self.take(first)

    def take(self, batch: Batch) -> None:
        self.records, millis = batch
        self.keys = np.maximum.accumulate(np.maximum(millis, self.high))
        self.high = int(self.keys[-1])
        self.pos = 0

    def refill(self) -> bool:
        """The file's next batch; False at its end."""
        batch = next(self.batches, None)
        if batch is None:
            return False
        self.take(batch)
        return True


def merge_batches(files: list[tuple[tuple[str, int], Iterator[Batch]]]) -> Iterator[KafkaRecord]:
    """The records of `files` ((topic, partition), its non-empty batches) in merge_by_timestamp's order.

    merge_by_timestamp takes the file whose next record has the smallest (timestamp, topic,
    partition). A record waits behind every record ahead of it in its file, so records leave the merge
    in the order of (running maximum timestamp of the file up to the record, topic, partition,
    offset): if record x of file A has a smaller such key than record y of file B, then when the
    record that set y's running maximum is taken, A's next record is not after x (its timestamp is at
    most x's running maximum, which is below), so x has left. The merge is therefore a sort by that
    key. Of the batches read, every record whose key is below the smallest last key of a batch is
    final (each file's keys only grow); those are sorted and given out at once, then the batch that
    set that bound is refilled."""
    ranks = {tp: rank for rank, tp in enumerate(sorted(tp for tp, _ in files))}
    buffered = []
    for tp, batches in files:
        first = next(batches, None)
        if first is not None:
            buffered.append(_Buffered(ranks[tp], batches, first))
    while buffered:
        bound = min(buffered, key=lambda b: (b.high, b.rank))
        parts = []
        for b in buffered:
            if b is bound:
                end = len(b.records)
            else:  # the records sorting before the bound: a smaller key, or an equal one and a file ranked first
                end = b.pos + int(np.searchsorted(b.keys[b.pos:], bound.high,
                                                  side="right" if b.rank < bound.rank else "left"))
            if end > b.pos:
                parts.append((b, b.pos, end))
        if len(parts) == 1:
            b, start, end = parts[0]
            yield from b.records[start:end]
        else:
            keys = np.concatenate([b.keys[start:end] for b, start, end in parts])
            file_ranks = np.concatenate([np.full(end - start, b.rank, np.int64) for b, start, end in parts])
            records = [r for b, start, end in parts for r in b.records[start:end]]
            for i in np.lexsort((file_ranks, keys)).tolist():  # stable: a file's records stay in offset order
                yield records[i]
        for b, _, end in parts:
            b.pos = end
        buffered = [b for b in buffered if b.pos < len(b.records) or b.refill()]


class RecordFiles:
    """The records of a directory's `*.parquet` files, merged by timestamp; `partitions` lists the
    files' topic-partitions (known before any record is judged: each file's first batch is read)."""

    def __init__(self, directory: Path, batch_size: int, contiguous: bool = False) -> None:
        files = sorted(Path(directory).glob("*.parquet"))
        if not files:
            raise RecordFileError(f"{directory}: no record files (*.parquet)")
        self.partitions: dict[str, set[int]] = {}
        self._files: list[tuple[tuple[str, int], Iterator[Batch]]] = []
        owners: dict[tuple[str, int], Path] = {}
        for path in files:
            batches = file_batches(path, batch_size, contiguous)
            first = next(batches, None)
            if first is None:
                continue
            record = first[0][0]
            tp = (record.topic, record.partition)
            if tp in owners:
                raise RecordFileError(f"{path}: holds {record.topic}/{record.partition}, as {owners[tp]} does; "
                                      "one file per topic-partition")
            owners[tp] = path
            self.partitions.setdefault(record.topic, set()).add(record.partition)
            self._files.append((tp, itertools.chain([first], batches)))

    def __iter__(self) -> Iterator[KafkaRecord]:
        return merge_batches(self._files)
