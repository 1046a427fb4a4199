"""A delivery: one schedule played over one stream, as the steps a session performs.

`Delivery(schedule, records, manifest, truth)` reads the record files (one per topic-partition)
partition by partition with a bounded read-ahead, never the whole stream. `start` says where the
consumer's first start begins (and, on a late join, its snapshot); `steps()` yields Poll, Commit,
Restart and AskTables until the stream is over. After performing a Restart the session calls
`resume(offsets)` with what the consumer last committed, and later polls deliver each partition
from there again. Everything follows from the schedule's seed: the same schedule, stream and
resume offsets give the same steps.
"""
from __future__ import annotations

import random
from functools import partial
from pathlib import Path
from typing import Iterator, Optional

from ticdc_conformance.protocols.common.projection import projection_options

from .classify import Classifier, stream_options
from .late_join import LateJoinRefused, choose_checkpoint, late_join_refusal, partition_blind_spans, snapshot
from .merges import CLASSIFYING, MERGE_FUNCTIONS, Batch, MergeContext
from .partitions import PartitionReader, Skew, record_files, row_count
from .schedule import Schedule
from .steps import AskTables, Commit, Poll, Restart, Start, Step, TopicPartition


class Delivery:
    def __init__(self, schedule: Schedule, records: Path, manifest: dict, truth: Optional[Path] = None) -> None:
        self.schedule, self.records, self.manifest = schedule, Path(records), manifest
        files = record_files(self.records)
        self._check_topics(files)
        skew = Skew(schedule.seed, schedule.skew_ms) if schedule.skew_ms else None
        self.readers = {tp: PartitionReader(tp, path, skew) for tp, path in sorted(files.items())}
        # Each concern draws from its own generator, so that asking for restarts or a late join does
        # not change the merge's choices before the first restart.
        seed = schedule.seed
        self._merge_rng = random.Random(f"merge/{schedule.merge}/{seed}")
        options = stream_options(manifest, self.records.parent)
        self._classifier = Classifier(manifest["protocol"], options) if schedule.merge in CLASSIFYING else None
        first = {tp: self._first_offset(reader) for tp, reader in self.readers.items()}
        # A partition of the manifest without records starts at 0 too: the header names every partition.
        first.update({tp: 0 for tp in self._manifest_partitions() if tp not in first})
        if schedule.late_join:
            self.start = self._late_join(files, options, truth, first, random.Random(f"late-join/{seed}"))
            for tp, reader in self.readers.items():
                reader.seek(self.start.offsets[tp])
        else:
            self.start = Start(first)
        total = sum(max(0, row_count(path) - (self.start.offsets[tp] - first[tp])) for tp, path in files.items())
        self.total = total  # records from the start offsets to the end (without re-deliveries)
        restarts = random.Random(f"restarts/{seed}")
        points = sorted(restarts.sample(range(1, total), min(schedule.restarts, max(0, total - 1))))
        kinds = [schedule.restart == "crash" or (schedule.restart == "mixed" and restarts.random() < 0.5)
                 for _ in points]
        self._restarts = list(zip(points, kinds))  # (records delivered, crash) per restart
        self._resumed = False

    def _manifest_partitions(self) -> list[TopicPartition]:
        return [(topic, p) for topic, count in sorted(self.manifest.get("topics", {}).items()) for p in range(count)]

    def _check_topics(self, files: dict[TopicPartition, Path]) -> None:
        topics = self.manifest.get("topics", {})
        for topic, partition in sorted(files):
            if topics and (topic not in topics or not 0 <= partition < topics[topic]):
                raise ValueError(f"{files[(topic, partition)]}: holds {topic}/{partition}, which the manifest's "
                                 f"topics {topics} do not name")

    @staticmethod
    def _first_offset(reader: PartitionReader) -> int:
        head = reader.peek()
        return head.offset if head is not None else 0

    def _late_join(self, files: dict[TopicPartition, Path], options: dict, truth: Optional[Path],
                   first: dict[TopicPartition, int], rng: random.Random) -> Start:
        refusal = late_join_refusal(self.manifest)
        if refusal is not None:
            raise LateJoinRefused(refusal)
        if truth is None or not Path(truth).is_dir():
            given = "none was given" if truth is None else f"{truth} is no folder"
            raise ValueError("late join: the snapshot is upstream's tables at the checkpoint, so the case's truth "
                             f"folder is needed (Delivery(..., truth=CASE/truth)); {given}")
        checkpoint_ts, offsets = choose_checkpoint(files, Classifier(self.manifest["protocol"], options), options, rng,
                                                   partition_blind_spans(Path(truth)))
        tables = partial(snapshot, Path(truth), checkpoint_ts, self.manifest["protocol"],
                         projection_options(self.manifest))
        return Start({**first, **offsets}, checkpoint_ts, tables)

    # --- the steps ---------------------------------------------------------------------------------
    def _polls(self) -> Iterator[Batch]:
        ctx = MergeContext(self.readers, self.schedule, self._merge_rng, self._classifier)
        return MERGE_FUNCTIONS[self.schedule.merge](ctx)

    def steps(self) -> Iterator[Step]:
        """The steps of the whole delivery: polls in the schedule's order, a commit request every
        `commit_every` polls (with restarts), the restarts at their seeded points, and one request for
        the tables once half the stream is delivered. It ends when every partition is delivered."""
        polls = self._polls()
        restarts = list(self._restarts)
        delivered = count = 0
        ask_at = self.total // 2 if self.total > 1 else None
        while True:
            batch = next(polls, None)
            if batch is None:
                return
            yield Poll(batch)
            delivered += len(batch)
            count += 1
            if self.schedule.restarts and count % self.schedule.commit_every == 0:
                yield Commit()
            if ask_at is not None and delivered >= ask_at:
                ask_at = None
                yield AskTables()
            if restarts and delivered >= restarts[0][0]:
                self._resumed = False
                yield Restart(crash=restarts.pop(0)[1])
                if self._resumed:  # the readers moved: the merge starts again from where they are
                    polls = self._polls()

    def resume(self, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """After a Restart: deliver each partition from `offsets` (the consumer's last committed
        offsets) and return where each partition now starts, for the next header's start.offsets.
        A partition missing from `offsets`, or given one below start.offsets (0 for a partition never
        committed, on a late join), starts where the first start did: before it lies the snapshot."""
        unknown = sorted(set(offsets) - set(self.start.offsets))
        if unknown:
            raise ValueError(f"resume: offsets for {', '.join(f'{t}/{p}' for t, p in unknown)}, which the stream "
                             f"does not have (partitions {', '.join(f'{t}/{p}' for t, p in self.start.offsets)})")
        negative = sorted(tp for tp, offset in offsets.items() if not isinstance(offset, int) or offset < 0)
        if negative:
            raise ValueError(f"resume: offset {offsets[negative[0]]!r} for {negative[0][0]}/{negative[0][1]} is no "
                             "offset (an integer >= 0)")
        starts = {tp: max(offsets.get(tp, first), first) for tp, first in self.start.offsets.items()}
        for tp, reader in self.readers.items():
            reader.seek(starts[tp])
            if self._classifier is not None:
                self._classifier.reset(tp)
        self._resumed = True
        return starts
