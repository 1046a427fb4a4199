"""A sequential, pure-Python consumer that follows TiCDC's consumer rules event by event.

It reads all partitions merged by Kafka timestamp (as one consumer subscribed to every partition
would) and applies the rules of docs/consumer-rules.md, which follow the specs and TiCDC's own
Kafka consumer (cmd/kafka-consumer):
- each partition's watermark only moves forward, a regression is tolerated and logged; the global
  watermark is the minimum over all partitions (consumers/rules/watermarks.py);
- row events wait per partition and table and are applied in commit-ts order, one transaction per
  commit ts, once the global watermark reaches them; a row event at or below the watermark already
  applied is a re-send and is dropped; a re-sent copy of one still waiting is dropped; a re-sent
  event that was never applied is kept (consumers/rules/ordering.py);
- DDL is decoded from every partition but applied once, when the global watermark reaches its
  commit ts, after the row events before it and before those after it; what it does to rows
  (rename, truncate, drop, partitions, columns) is derived from the message (consumers/rules/ddl_semantics.py);
- Simple row events wait in the decoder for their BOOTSTRAP or DDL; the partition's watermark
  waits with them, so a consumer that joined mid-stream starts applying after the next BOOTSTRAP.
Events without a commit ts (Canal-JSON without the TiDB extension) apply in arrival order, and the
output says so. Outputs: consumers/output.py. The test consumers (tests/consumers/) derive from this class.
"""
from __future__ import annotations

import json
import shutil
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ticdc_conformance.consumers.output import AppliedLog, StatesWriter, parse_columns, write_final
from ticdc_conformance.consumers.rules.ddl_semantics import AddColumn, NotUnderstood, PartitionsUnknown, effects_of
from ticdc_conformance.consumers.rules.decode_stage import PartitionDecoders
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.rules.ordering import DDLQueue, DMLBuffer, arrival_copy
from ticdc_conformance.consumers.rules.tables import ConsumerTables
from ticdc_conformance.consumers.rules.watermarks import WatermarkTracker
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.transport.record_files import RecordFiles
from ticdc_conformance.young_collections import fewer_young_collections
from ticdc_contract.record import KafkaRecord

MAX_NOTES = 50
READ_BATCH = 4096  # records read ahead per record file
NO_WATERMARK_NOTE = ("the stream carries no watermark: row events and DDL were applied at the end of input in "
                     "commit-ts order, with no checkpoint")
_OP_RANK = {"delete": 0, "update": 1, "insert": 2}


def _apply_order(ev: dict) -> tuple:
    """The order of a transaction's rows: by table, key and op (docs/consumer-protocol.md)."""
    return ev["schema"], ev["table"], ev["key_order"] or "", _OP_RANK.get(ev["op"], 3)


def merged_records(records_dir: Path) -> Iterator[KafkaRecord]:
    """All record files merged by (timestamp, topic, partition), each in offset order, streaming;
    a file that is not a record file, or whose rows are not one partition's contiguous offsets,
    stops the reading with a RecordFileError (a ConsumerError) naming the file and the record."""
    return iter(RecordFiles(records_dir, READ_BATCH, contiguous=True))


class LocalConsumer:
    def __init__(self, protocol: str, options: dict, partitions: Iterable[tuple[str, int]],
                 out: Optional[Path] = None) -> None:
        self.decoders = PartitionDecoders(protocol, options)
        self.watermarks = WatermarkTracker(partitions)
        self.buffer = DMLBuffer()
        self.ddl_queue = DDLQueue()
        self.ddl_on_arrival: set[tuple] = set()  # DDLs without commit ts applied (ordering.arrival_copy)
        self.tables = ConsumerTables()
        self.applied_wm = 0
        self.arrival = 0
        self.errors: list[str] = []
        self.problems: list[str] = []  # DDL the consumer could not apply
        self.notes: list[str] = []
        self.figures = {"checkpoints": 0, "transactions_applied": 0, "rows_applied": 0, "ddl_applied": 0,
                        "rows_dropped_below_watermark": 0, "ddl_dropped_below_watermark": 0,
                        "rows_in_arrival_order": 0, "ddl_in_arrival_order": 0, "ddl_without_row_effect_known": 0}
        self.log: Optional[AppliedLog] = None
        self.states: Optional[StatesWriter] = None
        if out is not None:
            self.open(Path(out))

    def open(self, out: Path) -> None:
        for stale in ("final", "states"):  # a previous run's tables must not survive into this one
            if (out / stale).is_dir():
                shutil.rmtree(out / stale)
        self.log = AppliedLog(out)
        self.states = StatesWriter(out)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)

    # --- input -------------------------------------------------------------------------------
    def feed(self, record: KafkaRecord) -> None:
        tp = (record.topic, record.partition)
        watermarks = self.watermarks
        if tp not in watermarks.marks:
            watermarks.know(tp)
        for ev in self.decoders.events(record):
            self.arrival += 1
            kind = ev["kind"]
            if kind == "row":
                self.on_row(tp, ev)
            elif kind == "watermark":
                self.on_watermark(tp, record.offset, ev["commit_ts"])
            elif kind == "error":
                self.errors.append(ev["error"])
            elif kind == "ddl":
                self.on_ddl(ev)
            # A "bootstrap" only told the decoder a schema. It changes no table: a restarted changefeed's
            # is of the tables at its checkpoint (a table renamed since under its old name), and one
            # sent ahead of its DDL names columns the tables have only once the DDL applies.
        held = self.decoders.decoders[tp].held_count > 0
        if held or tp in watermarks.frozen:
            watermarks.hold(tp, held)
        self.advance()

    def on_watermark(self, tp: tuple[str, int], offset: int, ts: int) -> None:
        if not self.watermarks.observe(tp, ts, offset):
            self.buffer.new_epoch(tp)  # what follows on this partition re-sends what came before

    def on_row(self, tp: tuple[str, int], ev: dict) -> None:
        ts = ev["commit_ts"]
        if ts is None:
            self.figures["rows_in_arrival_order"] += 1
            self.apply_rows(None, [ev])
        elif self.figures["checkpoints"] and ts <= self.applied_wm:
            self.figures["rows_dropped_below_watermark"] += 1
        else:
            self.buffer.add(tp, self.arrival, ev)

    def on_ddl(self, ev: dict) -> None:
        ts = ev["commit_ts"]
        if ts is None:
            if arrival_copy(ev, self.ddl_on_arrival):
                self.ddl_queue.copies_dropped += 1
                return
            self.figures["ddl_in_arrival_order"] += 1
            self.apply_ddl(ev)
        elif self.figures["checkpoints"] and ts <= self.applied_wm:
            self.figures["ddl_dropped_below_watermark"] += 1
        else:
            self.ddl_queue.add(self.arrival, ev)

    def advance(self) -> None:
        mark = self.watermarks.global_mark()
        if self.watermarks.seen and mark is not None and mark > self.applied_wm:
            self.flush(mark)

    # --- apply -------------------------------------------------------------------------------
    def flush(self, mark: Optional[int]) -> None:
        """Applies everything up to `mark` (None: everything, at the end of a stream without
        watermarks) in commit-ts order, DDL as a barrier; then records the checkpoint."""
        upto = mark if mark is not None else float("inf")
        rows = self.buffer.pop_ready(upto)
        ddls = self.ddl_queue.pop_ready(upto)
        i = 0
        for ts, group in groupby(rows, key=itemgetter(0)):
            while i < len(ddls) and ddls[i]["commit_ts"] < ts:
                self.apply_ddl(ddls[i])
                i += 1
            self.apply_rows(ts, [ev for _, _, ev, _ in group])
        for ddl in ddls[i:]:
            self.apply_ddl(ddl)
        if mark is not None:
            self.applied_wm = mark
            self.figures["checkpoints"] += 1
            if self.states is not None:
                self.tables.checkpoint(mark, self.states)
            if self.log is not None:
                self.log.checkpoint(mark)

    def apply_rows(self, commit_ts: Optional[int], events: list[dict]) -> None:
        if len(events) > 1:
            events = sorted(events, key=_apply_order)
        self.tables.apply_txn(events)
        self.figures["transactions_applied"] += 1
        self.figures["rows_applied"] += len(events)
        if self.log is not None:
            self.log.txn(commit_ts, events)

    def apply_ddl(self, ev: dict) -> None:
        effects = effects_of(ev["query"], ev["schema"], ev["table"])
        for effect in effects:
            if isinstance(effect, NotUnderstood):
                self.figures["ddl_without_row_effect_known"] += 1
                self.note(f"DDL at {ev['commit_ts']} applied as changing no row: {effect.reason}: {ev['query']}")
                continue
            if isinstance(effect, AddColumn) and effect.unknown:
                self.note(f"DDL at {ev['commit_ts']}: existing rows get NULL for {effect.column}: {effect.unknown}")
            try:
                self.tables.apply_effect(effect)
            except PartitionsUnknown as e:
                self.problems.append(f"DDL at commit ts {ev['commit_ts']} ({ev['query']}) cannot be applied: {e}")
        columns = parse_columns(ev["columns"])
        if columns and ev["table"]:
            self.tables.set_columns((ev["schema"], ev["table"]), columns)
        self.figures["ddl_applied"] += 1
        if self.log is not None:
            self.log.ddl(ev["commit_ts"], ev["schema"], ev["table"], ev["query"])

    # --- end ---------------------------------------------------------------------------------
    def finish(self) -> None:
        """End of input. A stream that never carried a watermark (but commit ts) is applied in
        commit-ts order now; rows above the last watermark stay unapplied, as they would wait in a
        live consumer."""
        if not self.watermarks.seen and (len(self.buffer) or len(self.ddl_queue)):
            self.note(NO_WATERMARK_NOTE)
            self.flush(None)
        if self.states is not None:
            self.tables.finish(self.states)

    def ordering(self) -> str:
        if self.watermarks.seen:
            return "watermark"
        if self.figures["rows_in_arrival_order"] or self.figures["ddl_in_arrival_order"]:
            return "arrival (the stream carries no commit ts)"
        return "commit ts at the end of input (the stream carries no watermark)"

    def write(self, out: Path) -> dict:
        out = Path(out)
        self.finish()
        if self.log is not None:
            self.log.close()
        if self.states is not None:
            self.states.close()
        write_final(out, self.tables.final_tables())
        held = sum(d.held_count for d in self.decoders.decoders.values())
        figures = {
            "ordering": self.ordering(),
            "applied_watermark": self.applied_wm,
            **self.figures,
            "row_copies_dropped_while_waiting": self.buffer.copies_dropped,
            "ddl_copies_dropped": self.ddl_queue.copies_dropped,
            "watermark_regressions": self.watermarks.regressions,
            "watermark_regression_log": [r.to_json() for r in self.watermarks.regression_log],
            "rows_waiting_above_watermark": len(self.buffer),
            "ddl_waiting_above_watermark": len(self.ddl_queue),
            "rows_waiting_for_schema": held,
            "notes": self.notes,
        }
        (out / "consumer.json").write_text(json.dumps(figures, indent=2) + "\n")
        return figures


def consume_local(records_dir: Path, manifest: dict, out: Path, consumer_cls: type = LocalConsumer) -> dict:
    partitions = [(t, p) for t, n in sorted(manifest["topics"].items()) for p in range(n)]
    options = decoder_options(manifest, Path(records_dir).parent)
    consumer = consumer_cls(manifest["protocol"], options, partitions, out=Path(out))
    with fewer_young_collections():
        for record in merged_records(records_dir):
            consumer.feed(record)
        figures = consumer.write(out)
    if consumer.errors:
        raise ConsumerError(f"{len(consumer.errors)} record(s) could not be decoded as {manifest['protocol']}:\n"
                            + "\n".join(f"  {e}" for e in consumer.errors[:20]))
    if consumer.problems:
        raise ConsumerError(f"{len(consumer.problems)} DDL(s) could not be applied:\n"
                            + "\n".join(f"  {p}" for p in consumer.problems[:20]))
    return figures
