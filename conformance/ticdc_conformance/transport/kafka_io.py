"""Record files to a Kafka cluster and back, exactly: same partition, offset, key, value, headers, timestamp.

`publish` creates the manifest's topics with its partition counts and produces every record of a
record-file directory to its own partition, in offset order, with an idempotent producer (so
retries neither reorder nor duplicate), and checks that the broker gave each record the offset it
has in the files. `kafka_records` reads a topic back as KafkaRecords, partition by partition, up to
the end offsets it saw when it started, so it always ends. Every call is bounded by a timeout: an
unreachable cluster gives KafkaUnavailable, never a hang.

Client: confluent-kafka (librdkafka), the project's `kafka` extra.
"""
from __future__ import annotations

import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ticdc_contract.record import CREATE_TIME, KafkaRecord
from ticdc_contract.record_files import iter_record_files

from .errors import KafkaUnavailable, PublishError, TransportError

DEFAULT_TIMEOUT_S = 30.0
LONG_MAX = 9223372036854775807
# TiCDC's own default max-message-bytes (10 MiB), used when a manifest names none.
TICDC_DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
# A topic's max.message.bytes bounds a whole record batch: the batch header (61 bytes) and each
# record's framing and headers come on top of the largest message TiCDC would send.
BATCH_FRAMING_BYTES = 64 * 1024
POLL_EVERY = 1000
READ_BATCH = 1000
# confluent-kafka's timestamp kinds -> Kafka's TimestampType ids (Spark's timestampType column).
_TIMESTAMP_TYPES = {1: CREATE_TIME, 2: 1, 0: -1}
_TIMESTAMP_CONFIGS = ("message.timestamp.before.max.ms", "message.timestamp.after.max.ms")

log = logging.getLogger("ticdc_conformance.kafka")
log.addHandler(logging.NullHandler())


def _client():
    try:
        import confluent_kafka
        import confluent_kafka.admin  # noqa: F401  (ck.admin below)
    except ImportError:
        raise TransportError("the Kafka transport needs confluent-kafka: "
                             "pip install 'ticdc-conformance[kafka]'") from None
    return confluent_kafka


def client_config(bootstrap: str, timeout_s: float) -> dict:
    """Settings every client of this module shares: bounded connection attempts, librdkafka's
    messages to Python logging instead of stderr."""
    ms = str(max(1, int(timeout_s * 1000)))
    return {"bootstrap.servers": bootstrap, "socket.connection.setup.timeout.ms": ms,
            "socket.timeout.ms": ms, "logger": log}


def _unavailable(bootstrap: str, timeout_s: float, error: object) -> KafkaUnavailable:
    return KafkaUnavailable(f"no Kafka broker answered at {bootstrap} within {timeout_s:g}s ({error})")


@contextmanager
def _reaching(bootstrap: str, timeout_s: float):
    """A client call that fails for want of a broker raises KafkaUnavailable."""
    ck = _client()
    try:
        yield
    except ck.KafkaException as e:
        raise _unavailable(bootstrap, timeout_s, e.args[0] if e.args else e) from None


def cluster_metadata(bootstrap: str, timeout_s: float = DEFAULT_TIMEOUT_S, topic: Optional[str] = None):
    """The cluster's metadata (brokers, topics), or KafkaUnavailable after `timeout_s`."""
    admin = _client().admin.AdminClient(client_config(bootstrap, timeout_s))
    with _reaching(bootstrap, timeout_s):
        return admin.list_topics(topic=topic, timeout=timeout_s)


@dataclass
class PublishResult:
    records: int
    topics: dict[str, int]
    seconds: float

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else float("inf")


def topic_configs(manifest: dict) -> dict[str, str]:
    """Topic settings under which the broker keeps every record as the files have it."""
    max_message = int(manifest.get("sink", {}).get("max-message-bytes") or TICDC_DEFAULT_MAX_MESSAGE_BYTES)
    return {
        "message.timestamp.type": "CreateTime",          # keep the producer's (TiCDC's) timestamps
        "message.timestamp.before.max.ms": str(LONG_MAX),  # scenario times may be years off the clock
        "message.timestamp.after.max.ms": str(LONG_MAX),
        "retention.ms": "-1",                            # never deleted for being old
        "cleanup.policy": "delete",                      # never compacted away
        "max.message.bytes": str(max_message + BATCH_FRAMING_BYTES),
    }


def _wait(futures: dict, what: str, bootstrap: str, timeout_s: float) -> None:
    ck = _client()
    for topic, future in futures.items():
        try:
            future.result(timeout=timeout_s)
        except ck.KafkaException as e:
            raise PublishError(f"{what} failed: {e.args[0] if e.args else e}", topic=topic) from None
        except TimeoutError:
            raise _unavailable(bootstrap, timeout_s, f"{what} of {topic} unanswered") from None


def _listed(admin, bootstrap: str, topics, timeout_s: float) -> list[str]:
    with _reaching(bootstrap, timeout_s):
        listed = admin.list_topics(timeout=timeout_s).topics
    return [t for t in topics if t in listed]


def _create(admin, bootstrap: str, topics: dict[str, int], configs: dict[str, str], timeout_s: float) -> None:
    # The broker's default replication factor (-1): 1 on the local broker, the cluster's own elsewhere.
    new = [_client().admin.NewTopic(t, n, -1, config=configs) for t, n in sorted(topics.items())]
    _wait(admin.create_topics(new, operation_timeout=timeout_s), "creating the topic", bootstrap, timeout_s)


def prepare_topics(admin, bootstrap: str, topics: dict[str, int], configs: dict[str, str], replace: bool,
                   timeout_s: float) -> None:
    """Creates `topics` empty, so that offsets start at 0; with `replace`, deletes them first."""
    existing = _listed(admin, bootstrap, topics, timeout_s)
    if existing and not replace:
        raise PublishError("the topic exists already: its offsets would not be the record files' ones "
                           "(publish to a fresh cluster, or replace the topics)", topic=existing[0])
    if existing:
        _wait(admin.delete_topics(existing, operation_timeout=timeout_s), "deleting the topic", bootstrap, timeout_s)
        deadline = time.monotonic() + timeout_s
        while _listed(admin, bootstrap, existing, timeout_s):
            if time.monotonic() > deadline:
                raise PublishError(f"still listed {timeout_s:g}s after its deletion", topic=existing[0])
            time.sleep(0.1)
    try:
        _create(admin, bootstrap, topics, configs, timeout_s)
    except PublishError as e:
        if not any(name in str(e) for name in _TIMESTAMP_CONFIGS):
            raise
        # Brokers before Kafka 3.6 do not know these settings; they accept any timestamp anyway.
        _create(admin, bootstrap, topics, {k: v for k, v in configs.items() if k not in _TIMESTAMP_CONFIGS},
                timeout_s)


class _Deliveries:
    """Delivery reports: each record must land at the offset it has in the files."""

    def __init__(self) -> None:
        self.acknowledged = 0
        self.failures: list[PublishError] = []

    def report(self, expected: KafkaRecord, err, msg) -> None:
        if err is not None:
            self.failures.append(PublishError(f"not delivered: {err.str()}", expected.topic, expected.partition,
                                              expected.offset))
        elif msg.partition() != expected.partition or msg.offset() != expected.offset:
            self.failures.append(PublishError(
                f"the broker stored it at {msg.topic()}/{msg.partition()}@{msg.offset()}",
                expected.topic, expected.partition, expected.offset))
        else:
            self.acknowledged += 1


def _checked(records: Iterable[KafkaRecord], topics: dict[str, int]) -> Iterator[KafkaRecord]:
    """The records, checked to be exactly what a fresh topic can hold: known partitions, offsets
    from 0 without gaps (a broker assigns offsets; it cannot be told one), producer timestamps."""
    next_offset: dict[tuple[str, int], int] = {}
    for r in records:
        if r.topic not in topics or not 0 <= r.partition < topics[r.topic]:
            raise PublishError(f"partition not in the manifest's topics {topics}", r.topic, r.partition, r.offset)
        expected = next_offset.get((r.topic, r.partition), 0)
        if r.offset != expected:
            raise PublishError(f"offset out of sequence: a fresh topic would store this record at {expected}",
                               r.topic, r.partition, r.offset)
        if r.timestamp_type != CREATE_TIME:
            raise PublishError(f"timestamp type {r.timestamp_type} is the broker's to set; only a producer's "
                               f"(CreateTime, {CREATE_TIME}) can be published as it is", r.topic, r.partition, r.offset)
        if r.timestamp_ms < 1:
            # librdkafka reads 0 as "now", and Kafka refuses negative timestamps.
            raise PublishError(f"timestamp {r.timestamp_ms} cannot be produced as it is (the smallest is 1 ms)",
                               r.topic, r.partition, r.offset)
        next_offset[(r.topic, r.partition)] = expected + 1
        yield r


def publish(records_dir: Path, bootstrap: str, manifest: Optional[dict] = None, replace: bool = False,
            timeout_s: float = DEFAULT_TIMEOUT_S) -> PublishResult:
    """Publishes a record-file directory (written by `generate`) to the cluster at `bootstrap`.

    The manifest (default: records_dir/../manifest.json) gives the topics and partition counts.
    The topics must not exist yet, unless `replace` (they are then deleted and made anew).
    """
    ck = _client()
    records_dir = Path(records_dir)
    if manifest is None:
        manifest = json.loads((records_dir.parent / "manifest.json").read_text())
    topics = {t: int(n) for t, n in manifest["topics"].items()}
    configs = topic_configs(manifest)
    started = time.monotonic()
    admin = ck.admin.AdminClient(client_config(bootstrap, timeout_s))
    prepare_topics(admin, bootstrap, topics, configs, replace, timeout_s)
    producer = ck.Producer({
        **client_config(bootstrap, timeout_s),
        "enable.idempotence": True,  # acks=all, in order per partition, no duplicates on retry
        "compression.type": "none",
        "linger.ms": 20,
        "message.max.bytes": int(configs["max.message.bytes"]),
        "message.timeout.ms": int(timeout_s * 1000),
    })
    deliveries = _Deliveries()
    produced = 0
    for record in _checked(iter_record_files(records_dir), topics):
        _produce(producer, record, partial(deliveries.report, record))
        produced += 1
        if produced % POLL_EVERY == 0:
            producer.poll(0)
        if deliveries.failures:
            break
    left = producer.flush(timeout_s)
    if deliveries.failures:
        raise deliveries.failures[0]
    if left:
        raise _unavailable(bootstrap, timeout_s, f"{left} of {produced} record(s) unacknowledged")
    if deliveries.acknowledged != produced:
        raise PublishError(f"{deliveries.acknowledged} of {produced} record(s) acknowledged")
    return PublishResult(produced, topics, time.monotonic() - started)


def _produce(producer, record: KafkaRecord, on_delivery) -> None:
    while True:
        try:
            producer.produce(record.topic, value=record.value, key=record.key, partition=record.partition,
                             timestamp=record.timestamp_ms, headers=list(record.headers) or None,
                             on_delivery=on_delivery)
            return
        except BufferError:  # the local queue is full: let deliveries drain it
            producer.poll(0.1)


def _to_record(msg) -> KafkaRecord:
    kind, ts = msg.timestamp()
    return KafkaRecord(topic=msg.topic(), partition=msg.partition(), offset=msg.offset(), key=msg.key(),
                       value=msg.value(), timestamp_ms=ts, headers=tuple(msg.headers() or ()),
                       timestamp_type=_TIMESTAMP_TYPES.get(kind, -1))


def kafka_records(bootstrap: str, topic: str, partitions: Optional[Iterable[int]] = None,
                  timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[KafkaRecord]:
    """The records of `topic` (all partitions, or `partitions`), partition by partition in offset order,
    from the earliest offset to the end offset each partition had when its turn came.

    Streams; TransportError if the topic is missing or no record arrives for `timeout_s`.
    """
    ck = _client()
    consumer = ck.Consumer({**client_config(bootstrap, timeout_s), "group.id": "ticdc-conformance-reader",
                            "enable.auto.commit": False, "enable.auto.offset.store": False,
                            "auto.offset.reset": "error"})
    try:
        with _reaching(bootstrap, timeout_s):
            meta = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
        if meta is None or meta.error is not None:
            raise TransportError(f"no such topic at {bootstrap}" + (f" ({meta.error.str()})" if meta else ""),
                                 topic=topic)
        for p in sorted(meta.partitions) if partitions is None else partitions:
            if p not in meta.partitions:
                raise TransportError(f"no such partition at {bootstrap}", topic=topic, partition=p)
            yield from _read_partition(ck, consumer, bootstrap, topic, p, timeout_s)
    finally:
        consumer.close()


def _read_partition(ck, consumer, bootstrap: str, topic: str, partition: int, timeout_s: float):
    tp = ck.TopicPartition(topic, partition)
    with _reaching(bootstrap, timeout_s):
        low, high = consumer.get_watermark_offsets(tp, timeout=timeout_s)
    if high <= low:
        return
    consumer.assign([ck.TopicPartition(topic, partition, low)])
    position = low
    # Time spent waiting for records, not time the caller held this generator (readers of several
    # partitions are advanced in turn): a stall is `timeout_s` of consecutive empty polls.
    waited = 0.0
    while position < high:
        polled = time.monotonic()
        batch = consumer.consume(READ_BATCH, timeout=min(1.0, timeout_s))
        for msg in batch:
            if msg.error() is not None:
                raise TransportError(f"read failed: {msg.error().str()}", topic, partition, position)
            if msg.offset() >= high:
                position = high
                break
            yield _to_record(msg)
            position = msg.offset() + 1
        if batch:
            waited = 0.0
            continue
        waited += time.monotonic() - polled
        # Offsets the broker holds but never hands out (transaction markers) end the range too.
        position = max(position, consumer.position([tp])[0].offset)
        if position < high and waited > timeout_s:
            raise TransportError(f"no record arrived for {timeout_s:g}s before end offset {high}",
                                 topic, partition, position)
    consumer.unassign()
