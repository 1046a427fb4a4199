"""Where the lint reads records from: a record-file directory, or a Kafka topic.

Record files hold one topic-partition each, in offset order (docs/consumer-protocol.md). Broadcast
checks compare partitions, so the files are read side by side, merged by Kafka timestamp (ties by
topic, then partition), each in its own offset order: a broadcast's copies arrive close together
and nothing is held per partition but a small batch. Kafka's consumer interleaves partitions itself.
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
from pathlib import Path
from typing import Iterable, Iterator, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_generators.kafka_record import KafkaRecord
from ticdc_generators.sink.records import records_from_batch

# Records read ahead per file: small, since a wide-row value can be hundreds of KiB.
BATCH_RECORDS = 256


class LintInputError(ValueError):
    """Input the lint cannot read as a Kafka stream: a missing or malformed record file, records out
    of offset order. Names the file or the record."""


def _file_records(path: Path) -> Iterator[KafkaRecord]:
    try:
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=BATCH_RECORDS):
            yield from records_from_batch(batch)
    except (OSError, pa.ArrowException, KeyError, TypeError, ValueError) as e:
        raise LintInputError(f"{path}: not a record file with Spark's Kafka-source columns "
                             f"({type(e).__name__}: {e})") from None


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
    files' topic-partitions (known before any record is judged)."""

    def __init__(self, directory: Path) -> None:
        files = sorted(Path(directory).glob("*.parquet"))
        if not files:
            raise LintInputError(f"{directory}: no record files (*.parquet)")
        self.partitions: dict[str, set[int]] = {}
        self._streams: list[Iterator[KafkaRecord]] = []
        for path in files:
            records = _file_records(path)
            first = next(records, None)
            if first is not None:
                self.partitions.setdefault(first.topic, set()).add(first.partition)
                self._streams.append(itertools.chain([first], records))

    def __iter__(self) -> Iterator[KafkaRecord]:
        return merge_by_timestamp(self._streams)


def in_offset_order(records: Iterable[KafkaRecord]) -> Iterator[KafkaRecord]:
    """The records, refusing one whose offset is not above its partition's previous one."""
    last: dict[tuple[str, int], int] = {}
    for record in records:
        key = (record.topic, record.partition)
        previous = last.get(key)
        if previous is not None and record.offset <= previous:
            raise LintInputError(f"{record.coordinates}: offset not above the partition's previous offset "
                                 f"{previous}; a partition's records must come in offset order")
        last[key] = record.offset
        yield record


class KafkaTopic:
    """A topic's records from a Kafka cluster through the project's Kafka transport: one reader per
    partition, merged by timestamp as record files are. The partitions come from `partition_count`
    (a manifest) or else from the topic's metadata."""

    def __init__(self, bootstrap: str, topic: str, partition_count: Optional[int] = None) -> None:
        try:
            from ..transport import kafka_io
            from ..transport.errors import TransportError
        except ImportError as e:
            raise LintInputError(f"reading Kafka needs ticdc_conformance.transport.kafka_io ({e})") from None
        self.bootstrap, self.topic, self._io, self._error = bootstrap, topic, kafka_io, TransportError
        if partition_count is None:
            with self._translated():
                meta = kafka_io.cluster_metadata(bootstrap, topic=topic).topics.get(topic)
            if meta is None or getattr(meta, "error", None) is not None:
                raise LintInputError(f"Kafka at {bootstrap}: no topic {topic!r}")
            numbers = sorted(meta.partitions)
        else:
            numbers = list(range(partition_count))
        self.partitions: dict[str, set[int]] = {topic: set(numbers)}

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except self._error as e:
            raise LintInputError(f"Kafka at {self.bootstrap}: {e}") from None

    def __iter__(self) -> Iterator[KafkaRecord]:
        readers = (iter(self._io.kafka_records(self.bootstrap, self.topic, [p]))
                   for p in sorted(self.partitions[self.topic]))
        with self._translated():
            yield from merge_by_timestamp(readers)
