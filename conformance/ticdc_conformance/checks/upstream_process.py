"""Upstream replayed for the checkpoint check in a process of its own.

The checkpoint check (checks/checkpoints.py) has two halves: replaying upstream from the case's
truth/ (reading the history, projecting every row, making its comparable image: about half its
time) and judging the consumer's output against it (its applied log, its state lines, the
comparison at every checkpoint). The first half needs nothing from the second but the checkpoints,
so for a large case it runs here, in a child process
(`python -m ticdc_conformance.checks.upstream_process`), and streams what the second half reads of
it; on two cores the two halves overlap.

The child finds the checkpoints itself (the checkpoint entries of the consumer's applied log that
the check accepts: each later than the one before, `accepted_checkpoints`). What it streams is
small next to the replay:
- per transaction: its commit ts and the row events TiCDC sends for it (`ProjectedTruth.expected`),
  many transactions to a record;
- per DDL: the DDL, which the parent applies to tables that hold no rows there, for the schemas;
- per checkpoint: the comparable images whose count changed since the last one, with their counts
  now; the parent's counts are then upstream's, and its changed images the ones to compare.
`UpstreamMirror` follows the stream, so the parent's `counts`, `dirty`, `expected` and `schemas` are
what the replay in one process has at every checkpoint, and the verdict is the same
(tests/conformance/checks/test_upstream_process.py). The one thing it does not hold is upstream's
rows by key, which only a state line in a form other than upstream's asks for (value_forms.py
`StateForms.state_row`): the first such question replays upstream here as well, alongside.

Records (ticdc_contract/child_stream.py), each payload a pickle but the first kind's:
- t (txns): [(commit ts, expected), ...], the transactions since the last record, at most
  TXNS_PER_RECORD of them (one pickle per transaction cost the two sides a tenth of the child's
  time), in marshal's format: plain values only, which it writes and reads in less time than
  pickle, and both ends are the same interpreter;
- d (ddl): the DDL;
- i (images): (table, {image: count}, [images no longer held]), images whose count changed since
  the last checkpoint, in parts of at most MARK_IMAGES;
- c (checkpoint): the checkpoint ts, after its images;
- e (end): the number of checkpoints streamed.
"""
from __future__ import annotations

import marshal
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Iterator, Optional

import ticdc_conformance
import ticdc_contract
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.common.wire import is_json_int, is_json_int64
from ticdc_contract import child_stream
from ticdc_contract.child_stream import PROTOCOL, ChildStream, ChildStreamError, RecordSender, serve
from ticdc_contract.model import DDL, Row, Transaction
from ticdc_contract.truth import read_history

from .projected_truth import Name, ProjectedTruth, unjudged_by_table
from .upstream_history import Upcoming

# A check replays upstream in a second process from this many row events (the child's start-up,
# about half a second, costs more below it) when the machine gives this process two cores.
TWO_PROCESSES_FROM = 20_000
_TXNS, _DDL, _CHANGED, _CHECKPOINT = b"t", b"d", b"i", b"c"
TXNS_PER_RECORD = 1_000  # transactions per record: the parent reads the first of them this much later
MARK_IMAGES = 100_000  # images per record of a checkpoint's changed images
_SCAN_BYTES = 1 << 22  # read at a time when looking for the checkpoints of an applied log


class UpstreamProcessError(ChildStreamError):
    """The child process replaying upstream failed or ended without finishing its stream."""


def worth_a_process(events: Optional[int]) -> bool:
    """Whether a case of `events` row events has its upstream replayed in a process of its own."""
    return is_json_int(events) and events >= TWO_PROCESSES_FROM and child_stream.usable_cores() >= 2


def accepted_checkpoints(applied_log: Path, start_ts: Optional[int]) -> Iterator[int]:
    """The checkpoints of an applied log the checkpoint check judges, in order: each later than the
    last one accepted (and than a late join's start_ts). A line the check refuses stops the check
    there, so what is listed after it is never asked for; such a line is passed over here."""
    last = start_ts
    for line in _checkpoint_lines(applied_log):
        try:
            entry = exact_json.loads(line)
        except exact_json.NotJSON:
            continue
        # The checkpoints entry_problem (checkpoints.py) lets pass, read as it reads them.
        if type(entry) is dict and entry.get("kind") == "checkpoint" and is_json_int64(entry.get("ts")):
            ts = int(entry["ts"])
            if last is None or ts > last:
                last = ts
                yield ts


def _checkpoint_lines(path: Path) -> Iterator[bytearray]:
    """The lines of a file that may be a checkpoint entry, in order: those that spell "checkpoint",
    or that escape a letter (a backslash). Found by searching blocks of whole lines rather than
    reading line by line, which took a thirtieth of the child's time over an applied log of 1M
    events (a mapped file would count the whole log in the process's resident memory)."""
    block = bytearray()
    with open(path, "rb") as f:
        while True:
            read = f.read(_SCAN_BYTES)
            block += read
            # Whole lines only: a line longer than what was read yet waits for the rest of it.
            end = block.rfind(b"\n", len(block) - len(read)) + 1 if read else len(block)
            at = 0
            while at < end:
                hit = block.find(b"checkpoint", at, end)
                slash = block.find(b"\\", at, end if hit < 0 else hit)
                hit = hit if slash < 0 else slash
                if hit < 0:
                    break
                start = block.rfind(b"\n", at, hit) + 1 or at
                stop = block.find(b"\n", hit, end)
                stop = end if stop < 0 else stop
                yield block[start:stop]
                at = stop + 1
            if not read:
                return
            del block[:end]


# --- the child ---------------------------------------------------------------------------------
class _Sender(RecordSender):
    AHEAD_BYTES = 64 << 20  # many checkpoints' records: the child replays on while the parent judges


def _child(args: dict, fd: int) -> int:
    from ticdc_conformance.young_collections import fewer_young_collections

    def replay(sender: _Sender) -> int:
        truth_dir, options, start_ts = Path(args["truth"]), args["options"], args["start_ts"]
        per_record = args["mark_images"]
        truth = ProjectedTruth(args["protocol"], options, unjudged_by_table(truth_dir, options))
        history = Upcoming(read_history(truth_dir))
        n = 0
        txns: list[tuple[int, dict]] = []

        def send_txns() -> None:
            if txns:
                sender.record(_TXNS, marshal.dumps(txns))
                txns.clear()

        with fewer_young_collections():
            for w in accepted_checkpoints(Path(args["applied_log"]), start_ts):
                # As the check does: a late join's first checkpoint compares every row loaded too.
                if n or start_ts is None:
                    truth.dirty = defaultdict(set)
                for event in history.up_to(w):
                    truth.apply(event)
                    if type(event) is Transaction:
                        txns.append((event.commit_ts, truth.expected))
                        if len(txns) >= TXNS_PER_RECORD:
                            send_txns()
                    else:
                        send_txns()
                        sender.record(_DDL, pickle.dumps(event, protocol=PROTOCOL))
                send_txns()
                for name, images in truth.dirty.items():
                    count, changed = truth.counts[name].get, list(images)
                    # In parts: a long interval changes many images, and a record is at most 4 GiB.
                    for at in range(0, len(changed), per_record):
                        part = changed[at:at + per_record]
                        held = {image: now for image in part if (now := count(image)) is not None}
                        gone = [image for image in part if image not in held]
                        sender.record(_CHANGED, pickle.dumps((name, held, gone), protocol=PROTOCOL))
                    if not changed:  # a table touched with nothing changed is still compared, as in one process
                        sender.record(_CHANGED, pickle.dumps((name, {}, []), protocol=PROTOCOL))
                sender.record(_CHECKPOINT, pickle.dumps(w, protocol=PROTOCOL))
                n += 1
        return n

    return serve(fd, _Sender, replay)


# --- the parent --------------------------------------------------------------------------------
class MirroredTxn:
    """An upstream transaction as the parent reads it: its commit ts and its row events."""

    __slots__ = ("commit_ts", "expected")

    def __init__(self, commit_ts: int, expected: dict[tuple[Name, bytes], int]) -> None:
        self.commit_ts, self.expected = commit_ts, expected


class CheckpointMark:
    """Upstream's image counts that changed up to a checkpoint (`changed`: parts of (table, the
    images held with their counts, the images no longer held))."""

    __slots__ = ("commit_ts", "changed")

    def __init__(self, commit_ts: int, changed: list[tuple[Name, dict[bytes, int], list[bytes]]]) -> None:
        self.commit_ts, self.changed = commit_ts, changed


class UpstreamMirror(ProjectedTruth):
    """ProjectedTruth's state as another process replays it: the schemas by applying each DDL here
    (to tables that hold no rows here), the image counts and the images changed at each checkpoint
    from its mark, the row events of each transaction as sent. Upstream's rows by key are replayed
    here too, the first time a row is asked for."""

    def __init__(self, truth_dir: Path, protocol: str, options: dict, hidden: dict[Name, frozenset[str]]) -> None:
        super().__init__(protocol, options, hidden)
        self.truth_dir = Path(truth_dir)
        self.at: Optional[int] = None  # the commit ts of the last event or checkpoint followed
        self._rows: Optional[ProjectedTruth] = None  # upstream replayed here, once a row is asked for
        self._rows_history = Upcoming(())

    def apply(self, event: DDL | Transaction | MirroredTxn | CheckpointMark) -> None:
        if type(event) is MirroredTxn:
            self.expected = event.expected
        elif type(event) is CheckpointMark:
            self._mark(event)
        elif isinstance(event, DDL):
            self._apply_ddl(event)
        else:
            raise TypeError(f"the upstream mirror follows what another process streams, not a {type(event).__name__}")
        self.at = event.commit_ts

    def _mark(self, mark: CheckpointMark) -> None:
        dirty: defaultdict[Name, set[bytes]] = defaultdict(set)
        for name, held, gone in mark.changed:
            counts = self.counts[name]
            dict.update(counts, held)  # counts now, not added to them (Counter.update adds)
            for image in gone:
                counts.pop(image, None)
            changed = dirty[name]
            changed.update(held)
            changed.update(gone)
        self.dirty = dirty

    def upstream_row(self, name: Name, key: tuple) -> Optional[tuple[Row, dict, bytes]]:
        if self._rows is None:
            self._rows = ProjectedTruth(self.protocol, self.options, self.hidden)
            self._rows_history = Upcoming(read_history(self.truth_dir))
        rows = self._rows
        if self.at is not None:
            for event in self._rows_history.up_to(self.at):
                rows.apply(event)
        return rows.upstream_row(name, key)


class UpstreamProcess(ChildStream):
    """Upstream of the case whose truth/ is `truth_dir`, replayed in a child process up to every
    checkpoint of `applied_log` it accepts: iterate it for the events in commit order (a DDL, a
    MirroredTxn, a CheckpointMark after the events up to its checkpoint), each to be applied to an
    UpstreamMirror. Use it as a context manager: leaving early stops the child."""

    error_type = UpstreamProcessError

    def __init__(self, truth_dir: Path, applied_log: Path, protocol: str, options: dict,
                 start_ts: Optional[int], mark_images: int = MARK_IMAGES) -> None:
        args = {"truth": str(Path(truth_dir).resolve()), "applied_log": str(Path(applied_log).resolve()),
                "protocol": protocol, "options": options, "start_ts": start_ts, "mark_images": mark_images}
        super().__init__(__name__, args, "replaying", f"upstream of {truth_dir}", (ticdc_conformance, ticdc_contract))

    def __enter__(self) -> "UpstreamProcess":
        return self

    def __iter__(self) -> Iterator[DDL | MirroredTxn | CheckpointMark]:
        loads = pickle.loads
        changed: list = []
        for kind, payload in self.records():
            if kind == _TXNS:
                for commit_ts, expected in marshal.loads(payload):
                    yield MirroredTxn(commit_ts, expected)
            elif kind == _CHANGED:
                changed.append(loads(payload))
            elif kind == _CHECKPOINT:
                yield CheckpointMark(loads(payload), changed)
                changed = []
            elif kind == _DDL:
                yield loads(payload)
            else:
                raise self.unknown(kind)


if __name__ == "__main__":
    child_stream.main(_child)
