"""The expected output of a golden case, computed from the ground truth at the protocol's fidelity.

Nothing here decodes a record or runs a consumer. The applied log (docs/consumer-protocol.md,
"Output") follows from the upstream history and where the simulator put the watermarks:

- `watermark` ordering (the stream carries watermarks): the checkpoints are the successive values
  of the global watermark, the minimum over all partitions of each partition's highest watermark.
  Every partition receives the same broadcast sequence, so a consumer reaches every one of them
  whatever order it reads the partitions in (checked: the sequence is computed for two read
  orders and must agree). Between checkpoints W' and W come the upstream transactions and DDL with
  W' < commit ts <= W, once each, in commit-ts order: re-sent events are not applied twice.
- `commit-ts` ordering (commit ts but no watermark): everything in commit-ts order, no checkpoint.
- `arrival` ordering (no commit ts, Canal-JSON without the TiDB extension): every row event and
  DDL as it arrives, re-sent copies too (nothing tells them apart), in the documented read order:
  records merged by (Kafka timestamp, topic, partition, offset); one row event per `txn` line.

Row images are the truth projected onto the protocol's fidelity (protocols/common/projection.py)
under the event fidelity of events.py. The final state is the ground truth's at the last
checkpoint (the end of the stream without watermarks) as checks/checkpoints.py keeps it: each row
projected when it was written, so a later schema change does not rewrite what a consumer received.
A table whose state the stream does not determine is named with the reason.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Iterator, Optional

import orjson

from ticdc_contract.canonical import key_order_token, row_to_json
from ticdc_contract.model import DDL, RowChange, TableSchema, Transaction
from ticdc_contract.record import KafkaRecord
from ticdc_generators.pipeline import DDLEvent, RowEvent
from ticdc_contract.state import TableStates

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.checks.projected_truth import ProjectedTruth  # the checkpoint check's ground-truth interpreter
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_conformance.checks.key_updates import delivered_changes
from ticdc_conformance.fidelity.matrix import type_label
from ticdc_conformance.golden.events import carries_commit_ts, ddl_names, row_event
from ticdc_conformance.golden.trace import TP, Carried, Trace
from ticdc_conformance.checks.selection import consumer_table, selectors

READ_ORDER = "(timestamp, topic, partition, offset)"
_OP_RANK = {"delete": 0, "update": 1, "insert": 2}
Name = tuple[str, str]


class GoldenExpectationError(ValueError):
    """The stream does not allow a single expected output (e.g. checkpoints that depend on read order)."""


def read_order(record: KafkaRecord) -> tuple:
    return record.timestamp_ms, record.topic, record.partition, record.offset


def partition_order(record: KafkaRecord) -> tuple:
    return record.topic, record.partition, record.offset


def global_checkpoints(watermarks: list[tuple[KafkaRecord, int]], partitions: list[TP],
                       order: Callable[[KafkaRecord], tuple]) -> list[int]:
    """The global watermark's successive values for a consumer reading the records in `order`:
    each partition's watermark never moves back (a restarted changefeed's lower one is ignored),
    the global one is their minimum once every partition has one."""
    marks: dict[TP, Optional[int]] = dict.fromkeys(partitions)
    out: list[int] = []
    for record, ts in sorted(watermarks, key=lambda w: order(w[0])):
        tp = (record.topic, record.partition)
        if marks.get(tp) is None or ts > marks[tp]:
            marks[tp] = ts
        if all(v is not None for v in marks.values()):
            low = min(marks.values())
            if not out or low > out[-1]:
                out.append(low)
    return out


@dataclass
class Expected:
    ordering: str  # watermark | commit-ts | arrival
    applied: list[dict]
    final: dict[Name, tuple[list[str], list[dict]]]  # table -> (columns, rows)
    undetermined: dict[str, str] = field(default_factory=dict)  # table -> why its state is not derivable
    waiting: int = 0  # upstream events above the last checkpoint (never applied)

    def counts(self) -> dict[str, int]:
        kinds = [e["kind"] for e in self.applied]
        return {"checkpoints": kinds.count("checkpoint"), "transactions": kinds.count("txn"),
                "row_events": sum(len(e["rows"]) for e in self.applied if e["kind"] == "txn"),
                "ddl": kinds.count("ddl"), "tables": len(self.final)}


class _Rows:
    """Row events of the applied log: images projected, op and before as the protocol carries them."""

    def __init__(self, protocol: str, options: dict) -> None:
        self.protocol, self.options, self.chosen = protocol, options, selectors(options)
        self.undetermined: dict[str, str] = {}

    def entry(self, change: RowChange) -> dict:
        t = change.table
        view = consumer_table(t, self.chosen)

        def image(row: Optional[dict]) -> Optional[dict]:
            return None if row is None else project_truth_row(view, row_to_json(t, row), self.protocol, self.options)

        op, before, after = row_event(self.protocol, self.options, change.op, image(change.before), image(change.after))
        if op == "update" and before is None and not view.handle_key:
            self.undetermined[t.qualified_name] = (
                "an UPDATE arrives without the row it replaces and the table has no handle key, so no consumer can "
                "tell which row it changes")
        return {"schema": t.schema, "table": t.table, "op": op, "before": before, "after": after,
                "_order": (t.schema, t.table, _key_token(view, after if after is not None else before), _OP_RANK[op])}

    def txn(self, txn: Transaction, commit_ts: Optional[int]) -> dict:
        """A transaction's row events as TiCDC sends them: a key-changing UPDATE is a DELETE and an
        INSERT unless output-raw-change-event (checks/key_updates.py)."""
        raw = bool(self.options.get("output-raw-change-event"))
        rows = [self.entry(part) for change in txn.changes for part in delivered_changes(change, raw)]
        return {"kind": "txn", "commit_ts": commit_ts,
                "rows": [_public(r) for r in sorted(rows, key=lambda r: r["_order"])]}


def _public(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "_order"}


def _key_token(view: TableSchema, image: Optional[dict]) -> str:
    image = image or {}
    if view.handle_key and all(c in image for c in view.handle_key):
        return key_order_token([image[c] for c in view.handle_key])
    return orjson.dumps(image, option=orjson.OPT_SORT_KEYS).decode()


def ddl_entry(protocol: str, ddl: DDL, commit_ts: Optional[int]) -> dict:
    schema, table = ddl_names(protocol, ddl)
    return {"kind": "ddl", "commit_ts": commit_ts, "schema": schema, "table": table, "query": ddl.query}


def _final(truth: ProjectedTruth) -> dict[Name, tuple[list[str], list[dict]]]:
    out = {}
    for name in sorted(truth.schemas):
        view = truth.view(name)
        columns = [c.name for c in view.columns if not c.is_virtual]
        rows = [proj for _, proj, _ in truth.proj.get(name, {}).values()]
        out[name] = (columns, sorted(rows, key=lambda r: _key_token(view, r)))
    return out


def expected_output(trace: Trace, protocol: str, options: dict, hidden: dict) -> Expected:
    rows = _Rows(protocol, options)
    truth = ProjectedTruth(protocol, options, hidden)
    if not carries_commit_ts(protocol, options):
        applied = _arrival_log(trace, rows)
        for event in trace.history:
            truth.apply(event)
        undetermined = {**_arrival_undetermined(trace, protocol), **rows.undetermined}
        return Expected("arrival", applied, _final(truth), undetermined)
    checkpoints = global_checkpoints(trace.watermarks, trace.partitions, read_order)
    if checkpoints != global_checkpoints(trace.watermarks, trace.partitions, partition_order):
        raise GoldenExpectationError("the global watermark's values depend on the order the partitions are read in "
                                     "(a partition missed a broadcast watermark); no single applied log is expected")
    applied: list[dict] = []
    pending = list(reversed(trace.history))
    for mark in checkpoints or [None]:
        while pending and (mark is None or pending[-1].commit_ts <= mark):
            event = pending.pop()
            applied.append(rows.txn(event, event.commit_ts) if isinstance(event, Transaction)
                           else ddl_entry(protocol, event, event.commit_ts))
            truth.apply(event)
        if mark is not None:
            applied.append({"kind": "checkpoint", "ts": mark})
    return Expected("watermark" if checkpoints else "commit-ts", applied, _final(truth), dict(rows.undetermined),
                    waiting=len(pending))


def _arrivals(trace: Trace, protocol: str) -> Iterator[Carried]:
    """The carried events in the order a consumer reads them, less the copies of a DDL: a DDL
    whose record timestamp (the millisecond it happened), schema, table and query repeat one that
    arrived before is a copy a restarted changefeed sent again, and applying it again would, for a
    CREATE TABLE, empty a table later rows filled (docs/consumer-rules.md, "Without commit ts").
    Row events have no such mark: every arriving row event applies, re-sent copies too."""
    seen: set[tuple] = set()
    for item in sorted(trace.carried, key=lambda c: read_order(c.record)):
        if isinstance(item.event, DDLEvent):
            ident = (item.record.timestamp_ms, *ddl_names(protocol, item.event.ddl), item.event.ddl.query)
            if ident in seen:
                continue
            seen.add(ident)
        yield item


def _arrival_log(trace: Trace, rows: _Rows) -> list[dict]:
    if not trace.one_record_per_event:
        raise GoldenExpectationError("the stream has no commit ts and its encoder batches events: the order of "
                                     "events within a record is not traced")
    out = []
    for item in _arrivals(trace, rows.protocol):
        if isinstance(item.event, RowEvent):
            out.append({"kind": "txn", "commit_ts": None, "rows": [_public(rows.entry(item.event.change))]})
        else:
            out.append(ddl_entry(rows.protocol, item.event.ddl, None))
    return out


def _arrival_undetermined(trace: Trace, protocol: str) -> dict[str, str]:
    """Tables an arrival-order consumer does not bring to upstream's final state: the events
    replayed as they arrive (TableStates, the generators' one interpreter of DDL and DML) against
    the history replayed in commit order. Without commit ts nothing orders events of different
    partitions (Kafka orders a partition only) and a re-sent row event cannot be told from a new one."""
    upstream, arrived = TableStates(), TableStates()
    for event in trace.history:
        upstream.apply(event)
    lost: set[str] = set()
    for item in _arrivals(trace, protocol):
        try:
            if isinstance(item.event, RowEvent):
                change = item.raw or item.event.change
                arrived.apply(Transaction(item.event.start_ts, item.event.commit_ts, (change,)))
            else:
                arrived.apply(item.event.ddl)
        except (ValueError, KeyError):
            # The table is gone (renamed, dropped) or not there yet when the event arrives.
            lost.add(item.event.change.table.qualified_name if isinstance(item.event, RowEvent)
                     else f"{item.event.ddl.schema}.{item.event.ddl.table}")
    names = sorted(set(upstream.schemas) | set(arrived.schemas))
    out = {f"{s}.{t}": ("applied in arrival order (the only order a stream without commit ts gives), the events leave "
                        "this table unlike upstream: its rows' events or its DDL arrive on different partitions in "
                        "another order than upstream committed them, or are re-sent")
           for s, t in names if upstream.rows.get((s, t)) != arrived.rows.get((s, t))}
    for name in sorted(lost - set(out)):
        out[name] = ("a row event or DDL of this table arrives when the table does not exist (already renamed or "
                     "dropped, or not yet created): without commit ts nothing orders it against the DDL")
    return dict(sorted(out.items()))


def value_fidelity(trace: Trace, protocol: str, options: dict) -> dict[str, str]:
    """The column types of the case a consumer cannot read back exactly: type -> level and why
    (the protocol's describe_fidelity, as docs/fidelity.md)."""
    spec = protocol_spec(protocol)
    out: dict[str, str] = {}
    for event in trace.history:
        if isinstance(event, DDL) and event.table_after is not None:
            for c in event.table_after.columns:
                level, why = spec.describe_fidelity(c.type, options)
                if level != "exact":
                    out.setdefault(type_label(c.type), f"{level}: {why}")
    return dict(sorted(out.items()))


def ordering_note(expected: Expected, restarts: list[int]) -> list[str]:
    notes = {
        "watermark": f"applied at {expected.counts()['checkpoints']} checkpoints: the global watermark's successive "
                     "values, the same for any order of reading the partitions",
        "commit-ts": "the stream carries commit ts but no watermark: everything applies in commit-ts order at the end "
                     "of input, with no checkpoint",
        "arrival": f"no commit ts: events apply as they arrive, one row event per txn line, listed in the read order "
                   f"{READ_ORDER}; the order across partitions is that reading's, not the stream's, so a consumer's "
                   "log is compared as a multiset of lines (docs/golden-format.md)",
    }
    out = [notes[expected.ordering]]
    if restarts:
        out.append(f"the changefeed restarts {len(restarts)} time(s) and re-sends everything above checkpoints "
                   f"{restarts}; a re-sent event applies once" if expected.ordering == "watermark" else
                   f"the changefeed restarts {len(restarts)} time(s); without commit ts re-sent events apply again")
    if expected.waiting:
        out.append(f"{expected.waiting} upstream event(s) above the last watermark are never applied")
    return out
