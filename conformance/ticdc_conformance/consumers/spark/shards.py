"""The tables of the Spark consumer: the sequential consumer's table logic replayed in shards.

What a consumer's tables hold at every checkpoint is path-dependent: a DDL renames, truncates,
exchanges or reshapes the rows that exist when it runs; a table whose messages change their key
columns is re-keyed; a table without any key is a multiset. Rather than re-derive all of that as
window functions, the Spark consumer runs the sequential consumer's own table logic (consumers/rules/tables.py,
through sequential/consumer.py LocalConsumer.apply_rows / apply_ddl) on shards of the rows, in parallel:

- the rows of the tables linked by RENAME, EXCHANGE PARTITION or CREATE TABLE ... LIKE form a
  component (rows move only inside one); a shard is a component's rows with one hash of the row
  key, where rows of different keys never meet: every shard of a component gets every metadata
  step of the component (its DDLs, the BOOTSTRAPs, and the first row event naming a table's
  columns, `intros`), so all shards keep the same columns and partitions, and its own rows.
  A component whose row events change their key columns (ADD/DROP PRIMARY KEY, a key-less table
  whose image gains a column) is re-keyed by consumers/rules/tables.py, which moves rows between keys: it is
  replayed as one shard;
- an UPDATE that moves a row to another key is split into its removal (under the old key) and its
  insertion (under the new one), each in its key's shard, both inside the same transaction; a
  transaction's removals all come before its insertions anyway (consumers/rules/tables.py apply_txn);
- row events of one transaction are deduplicated in their shard: every copy of an event has the
  same key, so the copies meet there (consumers/rules/ordering.py: keep the first; in a table without key, also the
  copies from the first one's partition and epoch);
- the shard records its tables at every checkpoint where it applied something (consumers/rules/tables.py
  checkpoint, the temporal state lines), and at the end its open lines and final rows.
The driver replays the metadata steps alone once (`MetadataReplay`) for what belongs to the
stream as a whole: the tables that exist at the end and their columns, and the notes.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

import pyarrow as pa

from ticdc_conformance.consumers.output import parse_columns, project_row
from ticdc_conformance.consumers.rules.ddl_semantics import DropSchema, Name, effects_of
from ticdc_conformance.consumers.rules.decode_stage import rows_to_batch
from ticdc_conformance.consumers.sequential.consumer import NO_WATERMARK_NOTE, LocalConsumer
from ticdc_conformance.consumers.spark.plan import APPLY_KEY, INTRO_PIECE, PHASE_FLUSH, txn_bound
from ticdc_conformance.consumers.spark.write import LOG_INPUT

PIECE_WHOLE, PIECE_REMOVE, PIECE_INSERT = 0, 1, 2
Step = tuple[tuple, str, dict]  # (apply key, "ddl" | "columns", payload)

REPLAY_SCHEMA = pa.schema([
    pa.field("what", pa.string()),  # log | state | final | problem | figure
    pa.field("k", pa.int32()), pa.field("phase", pa.int32()), pa.field("ts0", pa.int64()),
    pa.field("kind_rank", pa.int32()), pa.field("s_schema", pa.string()), pa.field("s_table", pa.string()),
    pa.field("s_key_order", pa.string()), pa.field("op_rank", pa.int32()), pa.field("pos_ts", pa.int64()),
    pa.field("topic", pa.string()), pa.field("partition", pa.int32()), pa.field("pos_offset", pa.int64()),
    pa.field("offset", pa.int64()), pa.field("seq", pa.int32()), pa.field("piece", pa.int32()),
    pa.field("schema", pa.string()), pa.field("table", pa.string()),
    pa.field("commit_ts", pa.int64()), pa.field("op", pa.string()),
    pa.field("before", pa.string()), pa.field("after", pa.string()),
    pa.field("from", pa.int64()), pa.field("to", pa.int64()),
    pa.field("row", pa.string()),  # a state's or final row; a problem's text
    pa.field("copies", pa.int64()),  # a state line's or final row's copies; a figure's value (name in `schema`)
])


# --- components ----------------------------------------------------------------------------------
def _names_of(effect: Any) -> list[Name]:
    """Every table an effect names (RENAME old and new, EXCHANGE both tables, CREATE ... LIKE both)."""
    return [v for k in ("name", "old", "new", "other", "like") if isinstance(v := getattr(effect, k, None), tuple)]


@dataclass
class Components:
    of: dict[Name, int]  # table -> component
    shards: dict[int, int]  # component -> number of shards
    schemas: dict[int, set[str]]

    @classmethod
    def build(cls, tables: Iterable[Name], ddls: list[tuple[tuple, dict]], key_shapes: dict[Name, set[str]],
              shards: int) -> "Components":
        parent: dict[Name, Name] = {}

        def find(n: Name) -> Name:
            parent.setdefault(n, n)
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for name in tables:
            find(name)
        for _, ddl in ddls:
            if ddl["table"]:
                find((ddl["schema"], ddl["table"]))
            for effect in effects_of(ddl["query"], ddl["schema"], ddl["table"]):
                names = _names_of(effect)
                for other in names[1:]:
                    parent[find(other)] = find(names[0])
                for n in names:
                    find(n)
        roots = sorted({find(n) for n in parent})
        index = {root: i for i, root in enumerate(roots)}
        of = {n: index[find(n)] for n in parent}
        shapes: dict[int, set[str]] = defaultdict(set)
        schemas: dict[int, set[str]] = defaultdict(set)
        for n, c in of.items():
            shapes[c] |= key_shapes.get(n, set())
            schemas[c].add(n[0])
        return cls(of, {c: shards if len(shapes[c]) <= 1 else 1 for c in index.values()}, dict(schemas))

    def touched_by(self, ddl: dict) -> set[int]:
        """The components a DDL may change: those of the tables it names, every one with a table
        in a schema it drops."""
        out = set()
        if ddl["table"]:
            out.add(self.of[(ddl["schema"], ddl["table"])])
        for effect in effects_of(ddl["query"], ddl["schema"], ddl["table"]):
            out |= {self.of[n] for n in _names_of(effect)}
            if isinstance(effect, DropSchema):
                out |= {c for c, schemas in self.schemas.items() if effect.schema in schemas}
        return out


def metadata_steps(ddls: list[tuple[tuple, dict]], intros: list[tuple[tuple, dict]]) -> list[Step]:
    """Every metadata step of the stream in apply order (a BOOTSTRAP is none: it tells the decoder a
    schema, sequential/consumer.py feed)."""
    steps = [(key, "ddl", d) for key, d in ddls]
    steps += [(key, "columns", i) for key, i in intros]
    steps.sort(key=lambda s: s[0])
    return steps


def steps_by_component(steps: list[Step], comps: Components) -> dict[int, list[Step]]:
    out: dict[int, list[Step]] = defaultdict(list)
    for step in steps:
        key, kind, payload = step
        targets = comps.touched_by(payload) if kind == "ddl" else {comps.of[(payload["schema"], payload["table"])]}
        for c in targets:
            out[c].append(step)
    return dict(out)


def apply_step(consumer: LocalConsumer, kind: str, payload: dict) -> None:
    if kind == "ddl":
        consumer.apply_ddl(payload)
    else:  # a row event naming the table's columns (consumers/rules/tables.py ConsumerTables.table)
        consumer.tables.table((payload["schema"], payload["table"]), parse_columns(payload["columns"]) or None)


# --- the driver's replay -------------------------------------------------------------------------
class MetadataReplay:
    """The metadata steps alone, in apply order, on a consumer without rows: the tables at the end,
    their columns, the notes and the count of DDLs without a known row effect."""

    def __init__(self, protocol: str, steps: list[Step], flushed_at_end: bool) -> None:
        self.consumer = LocalConsumer(protocol, {}, [])
        self._noted = not flushed_at_end
        for key, kind, payload in steps:
            if key[1] == PHASE_FLUSH and not self._noted:
                self._note_end()
            apply_step(self.consumer, kind, payload)
        if not self._noted:
            self._note_end()

    def _note_end(self) -> None:
        # sequential/consumer.py finish(): said when the end-of-stream flush starts
        self._noted = True
        self.consumer.note(NO_WATERMARK_NOTE)

    def final_tables(self) -> list[Name]:
        """The tables that exist at the end (each has a final/ file, empty without rows)."""
        return sorted(self.consumer.tables.rows)


# --- the shards ----------------------------------------------------------------------------------
@dataclass
class ReplayPlan:
    protocol: str
    checkpoints: list[int]  # W per checkpoint index
    steps: dict[int, list[Step]] = field(default_factory=dict)


class _Shard:
    def __init__(self, plan: ReplayPlan, component: int, out: list[dict]) -> None:
        self.plan, self.out = plan, out
        self.consumer = LocalConsumer(plan.protocol, {}, [])
        self.steps = plan.steps.get(component, [])
        self.next_step = 0
        self.k: Optional[int] = None  # the checkpoint index of what was applied last
        self.problems = 0
        self.copies_dropped = 0
        self.waiting = 0

    def _at(self, k: int) -> None:
        """Moves on to checkpoint index k, recording the tables at the checkpoint left behind."""
        if self.k is not None and k != self.k and self.k < len(self.plan.checkpoints):
            self.consumer.tables.checkpoint(self.plan.checkpoints[self.k], self._state)
        self.k = k

    def _state(self, name: Name, since: int, to: Optional[int], row: bytes, copies: int) -> None:
        self.out.append({"what": "state", "schema": name[0], "table": name[1], "s_schema": name[0], "s_table": name[1],
                         "from": since, "to": to, "row": row.decode(), "copies": copies})

    def _steps_before(self, bound: Optional[tuple]) -> None:
        while self.next_step < len(self.steps) and (bound is None or self.steps[self.next_step][0] < bound):
            key, kind, payload = self.steps[self.next_step]
            self.next_step += 1
            self._at(key[0])
            apply_step(self.consumer, kind, payload)
            self._problems()

    def _problems(self) -> None:
        for text in self.consumer.problems[self.problems:]:
            self.out.append({"what": "problem", "row": text})
        self.problems = len(self.consumer.problems)

    def txn(self, rows: list[dict]) -> None:
        """The rows of one transaction in this shard (all `applied` or all `waiting`)."""
        kept = _dedup(rows) if len(rows) > 1 and rows[0]["phase"] == PHASE_FLUSH else rows
        if len(kept) != len(rows):
            self.copies_dropped += _events(rows) - _events(kept)
        if rows[0]["state"] == "waiting":
            self.waiting += _events(kept)
            return
        first = rows[0]
        if self.next_step < len(self.steps):
            self._steps_before(txn_bound(tuple(first[c] for c in APPLY_KEY)))
        self._at(first["k"])
        self.consumer.apply_rows(first["commit_ts"], [_piece_event(r) for r in kept])
        for r in kept:
            if r["piece"] != PIECE_INSERT:  # the log shows each event once, as it arrived
                log = {c: r[c] for c in LOG_INPUT}
                log["what"], log["piece"] = "log", 0
                self.out.append(log)

    def finish(self) -> None:
        self._steps_before(None)
        self._at(len(self.plan.checkpoints))
        tables = self.consumer.tables
        tables.finish(self._state)
        for name in sorted(tables.rows):
            columns = tables.metas[name].columns if name in tables.metas else []
            for e in tables.rows[name].rows.values():
                self.out.append({"what": "final", "schema": name[0], "table": name[1], "s_schema": name[0],
                                 "s_table": name[1], "s_key_order": e.order,
                                 "row": project_row(e.image, columns)[:-1].decode(), "copies": e.count})


def _dedup(rows: list[dict]) -> list[dict]:
    """consumers/rules/ordering.py DMLBuffer.add over one transaction's rows in arrival order: a copy is dropped
    unless its table has no key and it came from the first one's partition and epoch."""
    first: dict[tuple, dict] = {}
    kept = []
    for r in sorted(rows, key=_arrival):
        ident = (r["piece"], r["schema"], r["table"], r["commit_ts"], r["op"], r["before"], r["after"])
        f = first.get(ident)
        if f is None:
            first[ident] = r
        elif not (r["image_keyed"] and (r["topic"], r["partition"], r["epoch"]) == (f["topic"], f["partition"], f["epoch"])):
            continue
        kept.append(r)
    return sorted(kept, key=lambda r: tuple(r[c] for c in APPLY_KEY))


def _events(rows: list[dict]) -> int:
    """How many events the rows are: a split event's insertion half does not count again."""
    return sum(1 for r in rows if r["piece"] != PIECE_INSERT)


def _arrival(r: dict) -> tuple:
    return (r["pos_ts"], r["topic"], r["partition"], r["pos_offset"], r["offset"], r["seq"])


def _piece_event(r: dict) -> dict:
    if r["piece"] == PIECE_REMOVE:
        return {**r, "op": "delete", "after": None, "key_order": r["old_key_order"]}
    if r["piece"] == PIECE_INSERT:
        return {**r, "op": "insert", "before": None}
    return r


SHARD_INPUT = ["component", "shard", "state", "commit_ts", "schema", "table", "op", "key_order", "old_key_order",
               "key_columns", "after", "before", "columns", "epoch", "image_keyed", *APPLY_KEY]
OUTPUT_ROWS = 4096


class _Task:
    """One task's rows: shard after shard, transaction after transaction."""

    def __init__(self, plan: ReplayPlan, out: list[dict]) -> None:
        self.plan, self.out = plan, out
        self.shard: Optional[_Shard] = None
        self.group: Optional[tuple] = None
        self.txn: list[dict] = []
        self.txn_id: Optional[tuple] = None
        self.figures = {"row_copies_dropped_while_waiting": 0, "rows_waiting_above_watermark": 0}

    def row(self, r: dict) -> None:
        group = (r["component"], r["shard"])
        if group != self.group:
            self._close_shard()
            self.shard, self.group = _Shard(self.plan, r["component"], self.out), group
        # A transaction: the rows of one commit ts in one flush; without commit ts, one event's pieces.
        txn_id = (r["state"], r["k"], r["phase"], r["ts0"] if r["phase"] == PHASE_FLUSH else _arrival(r))
        if txn_id != self.txn_id:
            self._close_txn()
            self.txn_id = txn_id
        self.txn.append(r)

    def _close_txn(self) -> None:
        if self.txn:
            self.shard.txn(self.txn)
            self.txn = []

    def _close_shard(self) -> None:
        if self.shard is not None:
            self._close_txn()
            self.shard.finish()
            self.figures["row_copies_dropped_while_waiting"] += self.shard.copies_dropped
            self.figures["rows_waiting_above_watermark"] += self.shard.waiting
            self.shard, self.txn_id = None, None

    def finish(self) -> None:
        self._close_shard()
        self.out.extend({"what": "figure", "schema": name, "copies": n} for name, n in self.figures.items())


def replayer(plan: ReplayPlan):
    """The function handed to DataFrame.mapInArrow: rows sorted by (component, shard, apply key)."""

    def replay(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        out: list[dict] = []
        task = _Task(plan, out)
        for batch in batches:
            d = batch.select(SHARD_INPUT).to_pydict()
            for i in range(batch.num_rows):
                task.row({c: d[c][i] for c in SHARD_INPUT})
            if len(out) >= OUTPUT_ROWS:
                yield rows_to_batch(out, REPLAY_SCHEMA)
                out.clear()
        task.finish()
        yield rows_to_batch(out, REPLAY_SCHEMA)

    return replay


def intro_rows(rows: Iterable[dict]) -> list[tuple[tuple, dict]]:
    """The collected first occurrences of (table, columns) per DDL segment, as steps placed just
    before the row event that named them."""
    return [(tuple(r["first"][c] for c in APPLY_KEY[:-1]) + (INTRO_PIECE,),
             {"schema": r["schema"], "table": r["table"], "columns": r["columns"]}) for r in rows]
