"""A late join: the consumer starts at a global checkpoint W partway through the stream, with
upstream's tables at W as its snapshot.

W is a watermark ts every partition carries at a clean cut: on each partition, its first watermark
record of ts W comes after every row event and DDL of that partition seen so far, all of them at or
below W. Each partition starts right after that record, so what it delivered before the start is all
in the snapshot, and what it delivers after is either above W or a re-send of something at or below
it. A stream without watermarks (the protocol or its options carry none) has no such W: a late join
is refused, naming why.
The snapshot is upstream's tables at W (the truth, ticdc_contract.truth.read_history replayed by
ticdc_contract.state) projected onto the protocol's fidelity for the columns a consumer receives,
as the checks project upstream (protocols/common/projection.py, column_selection.py).
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator, Optional

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.column_selection import consumer_table, selectors
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_conformance.transport.record_files import file_records
from ticdc_contract.canonical import row_to_json
from ticdc_contract.model import DDL, DDLType
from ticdc_contract.state import TableStates
from ticdc_contract.truth import read_history

from .classify import Classifier
from .partitions import READ_BATCH
from .steps import SnapshotRow, TopicPartition

# DDLs whose effect on rows depends on the table's partition definitions (ddl semantics of the consumers).
_PARTITION_DDLS = (DDLType.ADD_TABLE_PARTITION, DDLType.DROP_TABLE_PARTITION, DDLType.TRUNCATE_TABLE_PARTITION,
                   DDLType.EXCHANGE_TABLE_PARTITION)
MAX_TRIES = 6  # checkpoints tried for a late join; each costs a decode of the stream after it


class LateJoinRefused(ValueError):
    """The stream allows no late join (the message says why); a run leaves the late join out."""


def late_join_refusal(manifest: dict) -> Optional[str]:
    """Why a stream of this manifest's protocol and options allows no late join, or None."""
    protocol = manifest["protocol"]
    if not protocol_spec(protocol).carries_watermarks(manifest["sink"]):
        return (f"a late join starts at a watermark every partition carries; {manifest.get('encoding', protocol)} "
                "with these sink options carries no watermark")
    return None


def clean_cuts(path: Path, classifier: Classifier) -> dict[int, int]:
    """Per watermark ts of one partition's file, the offset after its first record of that ts, where
    every row event and DDL before it (and in it) is at or below that ts."""
    cuts: dict[int, int] = {}
    seen: set[int] = set()
    highest = -1  # the highest commit ts of the row events and DDL so far
    for record in file_records(path, READ_BATCH, contiguous=True):
        carried = classifier.carried(record)
        if carried.commit_ts is not None:
            highest = max(highest, carried.commit_ts)
        mark = carried.watermark
        if mark is not None and mark not in seen:
            seen.add(mark)  # only a watermark's first record is a cut: a later one is a re-send
            if highest <= mark:
                cuts[mark] = record.offset + 1
    return cuts


def undecodable_from(tp: TopicPartition, path: Path, start: int, protocol: str, options: dict) -> Optional[str]:
    """Why a consumer that starts `tp` at `start` with a fresh decoder cannot read every record after
    it, or None: a record its decoder rejects, or row events still held back at the partition's end
    (a Simple row event waits for its table's BOOTSTRAP or DDL, which may never come again)."""
    fresh = Classifier(protocol, options)
    for record in file_records(path, READ_BATCH, contiguous=True):
        if record.offset < start:
            continue
        error = fresh.carried(record).error
        if error is not None:
            return f"starting at {tp[0]}/{tp[1]}@{start}, {record.coordinates} cannot be read: {error}"
    held = fresh.held(tp)
    if held:
        return (f"starting at {tp[0]}/{tp[1]}@{start}, {held} row event(s) still wait for their table's schema at the "
                "partition's end")
    return None


def partition_blind_spans(truth: Path) -> list[tuple[int, int]]:
    """(C, D) per partition DDL at commit ts D whose table was created at C: a consumer joining at a W
    with C <= W < D never saw the CREATE TABLE ... PARTITION BY that names its partitions (the snapshot
    holds rows, not definitions), so it cannot tell which rows that DDL removes or exchanges."""
    created: dict[tuple[str, str], int] = {}
    spans = []
    for event in read_history(Path(truth)):
        if not isinstance(event, DDL):
            continue
        name = (event.schema, event.table)
        if event.ddl_type is DDLType.CREATE_TABLE:
            created[name] = event.commit_ts
        elif event.ddl_type is DDLType.RENAME_TABLE and event.table_before is not None and event.table_after is not None:
            before, after = event.table_before, event.table_after
            created[(after.schema, after.table)] = created.pop((before.schema, before.table), 0)
        elif event.ddl_type in _PARTITION_DDLS:
            spans.append((created.get(name, 0), event.commit_ts))
    return spans


def choose_checkpoint(files: dict[TopicPartition, Path], classifier: Classifier, options: dict,
                      rng: random.Random, blind: list[tuple[int, int]] = ()) -> tuple[int, dict[TopicPartition, int]]:
    """A seeded W among the watermarks every partition cuts cleanly at (the middle half first), from
    which a consumer starting fresh can read every record after it, and each partition's first offset
    after it; ValueError naming why when there is none (after MAX_TRIES checkpoints tried)."""
    common: Optional[set[int]] = None
    cuts: dict[TopicPartition, dict[int, int]] = {}
    for tp in sorted(files):
        cuts[tp] = clean_cuts(files[tp], classifier)
        common = set(cuts[tp]) if common is None else common & set(cuts[tp])
    candidates = sorted(common or ())
    if not candidates:
        raise LateJoinRefused("no watermark ts is carried by every partition after all the row events "
                              "and DDL at or below it, so no partition can start from a checkpoint without loss")
    seeing = [w for w in candidates if not any(c <= w < d for c, d in blind)]
    if not seeing:
        raise LateJoinRefused(f"each of the {len(candidates)} checkpoints every partition cuts cleanly at "
                              "comes before a partition DDL (DROP/TRUNCATE/EXCHANGE/ADD PARTITION) of a table created "
                              "before it, whose partitions a snapshot cannot convey")
    # The highest common cut is no join point: every partition must carry a watermark above W after
    # its start, or the joined consumer never reaches a checkpoint and shows nothing but its end.
    top = candidates[-1]
    candidates = [w for w in seeing if w < top]
    if not candidates:
        raise LateJoinRefused("no checkpoint every partition cuts cleanly at is followed by a later one "
                              "on every partition, so a consumer joining there would never reach a checkpoint")
    n = len(candidates)
    # The middle half first (partway: something before it and after it), in seeded order, then the rest.
    low, high = n // 4, max(n // 4 + 1, (3 * n) // 4)
    middle, rest = candidates[low:high], candidates[:low] + candidates[high:]
    rng.shuffle(middle)
    rng.shuffle(rest)
    reasons = []
    for w in (middle + rest)[:MAX_TRIES]:
        offsets = {tp: cuts[tp][w] for tp in files}
        reason = next((r for tp in sorted(files) if (r := undecodable_from(
            tp, files[tp], offsets[tp], classifier.spec.name, options)) is not None), None)
        if reason is None:
            return w, offsets
        reasons.append(f"at {w}: {reason}")
    raise LateJoinRefused(f"no checkpoint from which a consumer starting afresh can read the rest of the "
                          f"stream ({len(reasons)} of {n} tried; {'; '.join(reasons[:2])})")


def snapshot(truth: Path, checkpoint_ts: int, protocol: str, options: dict) -> Iterator[SnapshotRow]:
    """Upstream's tables at `checkpoint_ts`, each row projected onto the protocol's fidelity for the
    columns its consumer receives; a table without rows once, with row None. Tables in name order."""
    states = TableStates(keep_history=False)
    for event in read_history(Path(truth)):
        if event.commit_ts > checkpoint_ts:
            break
        states.apply(event)
    chosen = selectors(options)
    for name in sorted(states.schemas):
        schema = states.schemas[name]
        view = consumer_table(schema, chosen)
        columns = [c.name for c in view.columns if not c.is_virtual]
        rows = states.rows.get(name, {})
        if not rows:
            yield name[0], name[1], columns, None
            continue
        for row in rows.values():
            yield name[0], name[1], columns, project_truth_row(view, row_to_json(schema, row), protocol, options)
