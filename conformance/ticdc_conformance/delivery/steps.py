"""What a delivery asks the session to do, one step at a time (docs/delivery-schedules.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from ticdc_contract.record import KafkaRecord

TopicPartition = tuple[str, int]
# (schema, table, columns, row or None for a table without rows): one line of a late join's snapshot
SnapshotRow = tuple[str, str, list[str], Optional[dict]]


@dataclass(frozen=True)
class Poll:
    """One poll batch: records to write to the consumer, in this order."""

    records: tuple[KafkaRecord, ...]


@dataclass(frozen=True)
class Commit:
    """Ask the consumer to commit (it answers the offsets it needs again after a restart)."""


@dataclass(frozen=True)
class Restart:
    """Stop the consumer (crash=False: commit, close stdin, wait for its exit) or kill it (crash=True),
    then start it again; the session then calls Delivery.resume with the offsets it last committed."""

    crash: bool


@dataclass(frozen=True)
class AskTables:
    """Ask the consumer for its tables now."""


Step = Poll | Commit | Restart | AskTables


def _no_snapshot() -> Iterator[SnapshotRow]:
    return iter(())


@dataclass(frozen=True)
class Start:
    """Where the first start of the consumer begins."""

    offsets: dict[TopicPartition, int]  # the first offset delivered per (topic, partition)
    checkpoint_ts: Optional[int] = None  # late join: the snapshot's commit ts, else None
    _snapshot: Callable[[], Iterator[SnapshotRow]] = field(default=_no_snapshot, repr=False, compare=False)

    def snapshot(self) -> Iterator[SnapshotRow]:
        """Upstream's tables at checkpoint_ts as the protocol's consumer knows them, one row at a time
        (a table without rows once, with row None); empty unless this is a late join."""
        return self._snapshot()

    def offsets_json(self) -> dict[str, dict[str, int]]:
        """The offsets as the testee protocol's header writes them: {topic: {"partition": offset}}."""
        out: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(self.offsets.items()):
            out.setdefault(topic, {})[str(partition)] = offset
        return out


def offsets_from_json(doc: object) -> dict[TopicPartition, int]:
    """Offsets as the testee protocol writes them ({topic: {"partition": offset}}, a `committed`
    answer) as Delivery.resume takes them; ValueError naming the entry that is not one."""
    if not isinstance(doc, dict):
        raise ValueError(f"offsets: expected an object {{topic: {{partition: offset}}}}, got {doc!r}")
    out: dict[TopicPartition, int] = {}
    for topic, partitions in doc.items():
        if not isinstance(partitions, dict):
            raise ValueError(f"offsets of topic {topic!r}: expected an object {{partition: offset}}, got {partitions!r}")
        for partition, offset in partitions.items():
            if not str(partition).isdigit() or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
                raise ValueError(f"offsets: {topic}/{partition} = {offset!r} is not a partition number with an "
                                 "offset (an integer >= 0)")
            out[(topic, int(partition))] = offset
    return out
