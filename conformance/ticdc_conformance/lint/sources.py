"""Where the lint reads records from: a record-file directory, or a Kafka topic.

Record files hold one topic-partition each, in offset order (docs/consumer-protocol.md); they are
read and checked by the reader the reference consumers use (transport/record_files.py). Broadcast
checks compare partitions, so the files are read side by side, merged by Kafka timestamp (ties by
topic, then partition), each in its own offset order: a broadcast's copies arrive close together
and nothing is held per partition but a small batch. Kafka's consumer interleaves partitions itself.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ticdc_contract.record import KafkaRecord

from ..transport import record_files
from ..transport.record_files import merge_by_timestamp

# Records read ahead per file: small, since a wide-row value can be hundreds of KiB.
BATCH_RECORDS = 256


class LintInputError(ValueError):
    """Input the lint cannot read as a Kafka stream: a missing or malformed record file, records out
    of offset order. Names the file or the record."""


class RecordFiles:
    """The records of a directory's `*.parquet` files, merged by timestamp, checked by the reader the
    reference consumers use (transport/record_files.py; offsets may skip, as Kafka's may); `partitions`
    lists the files' topic-partitions (known before any record is judged)."""

    def __init__(self, directory: Path) -> None:
        with _as_lint_input():
            self._files = record_files.RecordFiles(directory, BATCH_RECORDS)
        self.partitions = self._files.partitions

    def __iter__(self) -> Iterator[KafkaRecord]:
        with _as_lint_input():
            yield from self._files


@contextlib.contextmanager
def _as_lint_input() -> Iterator[None]:
    try:
        yield
    except record_files.RecordFileError as e:
        raise LintInputError(str(e)) from None


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
