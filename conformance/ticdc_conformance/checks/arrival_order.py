"""What a consumer without commit ts can know of the order of events, and the rows it cannot.

Canal-JSON without `enable-tidb-extension` carries no commit ts (spec 003: the TiDB extension
exists because the protocol "does not contain important fields such as the TiDB-specific unique
identifier for the CommitTS transaction"). What such a consumer knows of the order of events:
- the time the event happened, in milliseconds (spec 003: `es`, "13-bit (millisecond) timestamp
  when the event that generated the message happened"; the record's Kafka timestamp carries the
  same millisecond in the suite's delivery): an event of an earlier millisecond committed first;
- within one millisecond, the row events of one row in offset order: they go to one partition
  (spec 002, Restrictions: "Multiple Row Changed Events of a row are sent to the same MQ
  Partition"; "On the same table, the Row Changed Events ... are incremented in the order of
  timestamps");
- nothing between a DDL and the row events of the same millisecond: spec 003 says only that "The
  DDL Event is sent to the MQ Partition with the index being 0"; the guarantee that a DDL is sent
  after every earlier transaction is stated for Simple (spec 004) only, and Simple carries commit ts.

So two events tie when they carry the same millisecond and either one is a DDL that touches the
other's table, or both are row events of one row on different partitions. A row whose final value
depends on such a tie is undecidable: it is reported with the two events and left out of the
findings. A tie decides nothing once a later millisecond writes the row again under that name; a
later RENAME carries the undecided row to the new name. Everything else is judged as usual, so a
consumer wrong for another reason (one ignoring a RENAME still misplaces every other row) fails.

Memory: one pass keeps the DDLs, and per row the millisecond and partition of its last event; a
second pass decodes only the records of a millisecond that carries a DDL.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.consumers.rules.ddl_semantics import (
    DropSchema,
    NotUnderstood,
    RenameTable,
    effects_of,
    tables_touched,
)
from ticdc_conformance.consumers.rules.decode_stage import PartitionDecoders
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.findings.finding import Finding
from ticdc_conformance.transport.record_files import batch_records
from ticdc_contract.canonical import key_order_token
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import parquet_batches

PHYSICAL_SHIFT = 18  # a TSO is physical_ms << 18 | logical
# Findings no order of events explains: output not in the documented form, a column the table never
# has, one key held twice (a keyed table holds a key once whatever the order).
NEVER_AN_ORDER = ("CONSUMER-OUTPUT-1", "CONSUMER-COLUMN-1", "CONSUMER-DEDUP-1")


@dataclass(frozen=True)
class _Event:
    """A decoded row event or DDL, as far as ties need it."""
    ms: int
    record: str  # topic/partition/offset
    partition: tuple[str, int]
    kind: str  # row | ddl
    table: str  # schema.table ("schema." for a schema-level DDL)
    op: str = ""
    keys: tuple[tuple[str, str], ...] = ()  # (key_order token, canonical JSON of the key)
    key_columns: tuple[str, ...] = ()
    images: tuple[str, ...] = ()  # canonical JSON of before/after, for rows of tables without key
    query: str = ""
    touched: tuple[str, ...] = ()  # DDL: the tables whose rows it may change or move
    renames: tuple[tuple[str, str], ...] = ()  # DDL: (old, new) table names

    def describe(self) -> str:
        if self.kind == "ddl":
            return f"DDL `{self.query}`"
        return f"the {self.op.upper()} of this key in {self.table}"


@dataclass
class Undecidable:
    """A row whose final value depends on an order the stream does not convey."""
    table: str
    key: Optional[list]
    reason: str
    key_columns: tuple[str, ...] = ()
    image: Optional[dict] = None  # a table without key: the row image the tie concerns
    ms: int = 0

    def to_json(self) -> dict:
        return {"table": self.table, "key": self.key, "reason": self.reason}


@dataclass
class _Tie:
    first: _Event
    second: _Event
    names: tuple[str, ...]
    row: _Event  # the row event whose keys are affected


@dataclass
class _Scan:
    ddls: dict[int, list[_Event]] = field(default_factory=dict)
    last: dict[tuple[str, str], tuple[int, tuple[str, int], _Event]] = field(default_factory=dict)
    latest_ms: dict[tuple[str, str], int] = field(default_factory=dict)
    ties: list[_Tie] = field(default_factory=list)
    tables: set[str] = field(default_factory=set)


def _records(records_dir: Path) -> Iterator[KafkaRecord]:
    """Every record, file by file (one topic-partition per file, in offset order).

    In small batches, read on this thread: most streams carry commit ts, which their first records
    tell, and a batch of 4,096 read by pyarrow's threads raised the check's peak by 40 MiB for
    them (256: under 30 MiB); a whole stream reads no slower so (0.47 s, 0.55 s at 4,096)."""
    for path in sorted(Path(records_dir).glob("*.parquet")):
        for batch in parquet_batches(pq.ParquetFile(path), 256, use_threads=False):
            # batch_records, not records_from_batch: the same records, and no cast of the timestamps,
            # which imports pyarrow.compute (a tenth of a second) where the first record already
            # tells that the stream carries commit ts.
            yield from batch_records(batch)[0]


def _event(record: KafkaRecord, row: dict, known: set[str]) -> Optional[_Event]:
    coords = f"{record.topic}/{record.partition}/{record.offset}"
    tp = (record.topic, record.partition)
    ms = record.timestamp_ms
    if row["kind"] == "row":
        keys = [(row["key_order"], row["key"])]
        if row.get("old_key_order"):
            keys.append((row["old_key_order"], row["old_key"]))
        cols = tuple(orjson.loads(row["key_columns"] or "[]"))
        images = tuple(i for i in (row["before"], row["after"]) if i is not None)
        return _Event(ms, coords, tp, "row", f"{row['schema']}.{row['table']}", row["op"], tuple(keys), cols,
                      images if not cols else ())
    if row["kind"] == "ddl":
        touched: set[str] = set()
        renames = []
        for eff in effects_of(row["query"] or "", row["schema"] or "", row["table"] or ""):
            if isinstance(eff, NotUnderstood):
                # What it does is not known: it may touch the table it names, or its whole schema.
                touched.update(n for n in known if n.split(".", 1)[0] == row["schema"]) if not row["table"] \
                    else touched.add(f"{row['schema']}.{row['table']}")
                continue
            if isinstance(eff, RenameTable):
                renames.append((".".join(eff.old), ".".join(eff.new)))
            names = tables_touched(eff, [tuple(n.split(".", 1)) for n in known])
            touched.update(".".join(n) for n in names)
            if isinstance(eff, DropSchema):
                touched.update(n for n in known if n.split(".", 1)[0] == eff.schema)
        return _Event(ms, coords, tp, "ddl", f"{row['schema']}.{row['table']}", row["op"] or "",
                      query=row["query"] or "", touched=tuple(sorted(touched)), renames=tuple(renames))
    return None


def _decoded(records: Iterator[KafkaRecord], protocol: str, options: dict, known: set[str]):
    decoders = PartitionDecoders(protocol, options)
    for record in records:
        for row in decoders.decode(record):
            ev = _event(record, row, known)
            if ev is not None:
                yield ev, row


def _first_pass(case: Path, protocol: str, options: dict) -> Optional[_Scan]:
    """None when the stream carries commit ts: its consumer can know every order."""
    scan = _Scan()
    for ev, row in _decoded(_records(case / "records"), protocol, options, scan.tables):
        if row["commit_ts"] is not None:
            return None
        if ev.kind == "ddl":
            scan.ddls.setdefault(ev.ms, []).append(ev)
            continue
        scan.tables.add(ev.table)
        for token, _ in ev.keys:
            k = (ev.table, token)
            seen = scan.last.get(k)
            if seen is not None and seen[0] == ev.ms and seen[1] != ev.partition:
                scan.ties.append(_Tie(seen[2], ev, (ev.table,), ev))
                scan.ties.append(_Tie(ev, seen[2], (ev.table,), seen[2]))
            scan.last[k] = (ev.ms, ev.partition, ev)
            scan.latest_ms[k] = max(scan.latest_ms.get(k, ev.ms), ev.ms)
    return scan


def _ddl_ties(case: Path, protocol: str, options: dict, scan: _Scan) -> None:
    """Second pass: the row events of every millisecond that carries a DDL touching their table."""
    if not scan.ddls:
        return
    wanted = (r for r in _records(case / "records") if r.timestamp_ms in scan.ddls)
    for ev, _ in _decoded(wanted, protocol, options, scan.tables):
        if ev.kind != "row":
            continue
        for ddl in scan.ddls[ev.ms]:
            if ev.table in ddl.touched:
                names = tuple(sorted(set(ddl.touched) | {ev.table}))
                scan.ties.append(_Tie(ddl, ev, names, ev))


def _commit_ts_of(truth: Path, ties: list[_Tie]) -> dict[tuple, int]:
    """The upstream commit ts of the tied events (for the reason), from one pass over the history."""
    wanted_ddl = {(t.first.ms, t.first.query) for t in ties if t.first.kind == "ddl"}
    wanted_row: dict[tuple[int, str], set[tuple[tuple[str, ...], str]]] = {}
    for t in ties:
        for e in (t.first, t.second):
            if e.kind == "row" and e.key_columns:
                wanted_row.setdefault((e.ms, e.table), set()).update((e.key_columns, tok) for tok, _ in e.keys)
    found: dict[tuple, int] = {}
    with open(Path(truth) / "history.ndjson", "rb") as f:
        for line in f:
            ev = orjson.loads(line)
            ms = ev["commit_ts"] >> PHYSICAL_SHIFT
            if ev["kind"] == "ddl":
                if (ms, ev["query"]) in wanted_ddl:
                    found.setdefault((ms, ev["query"]), ev["commit_ts"])
                continue
            for ch in ev["changes"]:
                for cols, token in wanted_row.get((ms, ch["table"]), ()):
                    for image in (ch["before"], ch["after"]):
                        if image is not None and all(c in image for c in cols) \
                                and key_order_token([image[c] for c in cols]) == token:
                            found.setdefault((ms, ch["table"], token), ev["commit_ts"])
    return found


def _at(ev: _Event, commit: dict[tuple, int]) -> str:
    ts = commit.get((ev.ms, ev.query)) if ev.kind == "ddl" else next(
        (commit[(ev.ms, ev.table, t)] for t, _ in ev.keys if (ev.ms, ev.table, t) in commit), None)
    return f"commit ts {ts}, record {ev.record}" if ts is not None else f"record {ev.record}"


def _reason(tie: _Tie, commit: dict[tuple, int]) -> str:
    a, b = tie.first, tie.second
    where = (f"partitions {a.partition[1]} and {b.partition[1]}" if a.partition != b.partition
             else f"partition {a.partition[1]}")
    return (f"its final value depends on the order of {a.describe()} ({_at(a, commit)}) and {b.describe()} "
            f"({_at(b, commit)}): both carry Kafka timestamp {a.ms} ms, on {where}, and without commit ts "
            f"the stream does not order them")


def undecidable_rows(truth: Path, protocol: str, options: dict) -> list[Undecidable]:
    """The rows of CASE (the folder holding truth/ and records/) whose final value depends on an
    order no consumer of this stream can know; [] when the stream carries commit ts."""
    case = Path(truth).parent
    if not (case / "records").is_dir():
        return []
    manifest_path = case / "manifest.json"
    manifest = orjson.loads(manifest_path.read_bytes()) if manifest_path.exists() else {"sink": options}
    options = decoder_options(manifest, case)
    scan = _first_pass(case, protocol, options)
    # What the read freed goes back to the system, not kept in pyarrow's pool for reads to come: the
    # checkpoint check that follows would otherwise add its own memory on top of it.
    pa.default_memory_pool().release_unused()
    if scan is None:
        return []
    _ddl_ties(case, protocol, options, scan)
    if not scan.ties:
        return []
    commit = _commit_ts_of(truth, scan.ties)
    entries: dict[tuple[str, str], Undecidable] = {}
    for tie in scan.ties:
        reason = _reason(tie, commit)
        row = tie.row
        for name in tie.names:
            if row.key_columns:
                for token, key in row.keys:
                    entries.setdefault((name, token), Undecidable(name, orjson.loads(key), reason, row.key_columns,
                                                                  None, row.ms))
            else:  # a table without key: the row is its image
                for image in row.images:
                    entries.setdefault((name, image), Undecidable(name, None, reason, (), orjson.loads(image), row.ms))
    _follow_renames(entries, scan)
    # A later millisecond that writes the row again under that name decides it.
    kept = [u for (name, token), u in entries.items()
            if not u.key_columns or scan.latest_ms.get((name, token), u.ms) <= u.ms]
    return sorted(kept, key=lambda u: (u.table, orjson.dumps(u.key), u.reason))


def _follow_renames(entries: dict[tuple[str, str], Undecidable], scan: _Scan) -> None:
    """A RENAME in a later millisecond carries an undecided row to the new name."""
    renames = sorted((ms, old, new) for ms, ddls in scan.ddls.items() for d in ddls for old, new in d.renames)
    for ms, old, new in renames:
        for (name, token), u in list(entries.items()):
            if name == old and u.ms < ms and (new, token) not in entries:
                entries[(new, token)] = Undecidable(new, u.key, u.reason, u.key_columns, u.image, ms)


def excuse(findings: list[Finding], table: str, undecided: list[Undecidable],
           foreign_rows: Optional[list[dict]] = None) -> list[Finding]:
    """`findings` of `table` without those about an undecidable row. A finding about the whole
    table (no key) is excused only where the table is one upstream does not hold at the end
    (`foreign_rows`: the consumer's rows in it) and a tie touched it and every row in it."""
    mine = [u for u in undecided if u.table == table]
    if not mine:
        return findings
    tokens = {key_order_token(u.key) for u in mine if u.key is not None}
    images = [u.image for u in mine if u.image is not None]
    columns = next((u.key_columns for u in mine if u.key_columns), ())

    def undecided_row(row: Optional[dict]) -> bool:
        if row is None:
            return False
        if columns and all(c in row for c in columns):
            return key_order_token([row[c] for c in columns]) in tokens
        return any(row == image for image in images)

    kept = []
    for f in findings:
        if f.rule in NEVER_AN_ORDER:
            kept.append(f)
        elif f.key is not None:
            if key_order_token(list(f.key)) not in tokens:
                kept.append(f)
        elif f.expected is not None or f.actual is not None:
            if not (undecided_row(f.expected) or undecided_row(f.actual)):
                kept.append(f)
        elif foreign_rows is None or not all(undecided_row(r) for r in foreign_rows):
            # A table upstream does not hold, every row of it (none: a tied DELETE created it)
            # undecidable, is an outcome of the tie.
            kept.append(f)
    return kept


def undecidable_json(entries: list[Undecidable]) -> list[dict[str, Any]]:
    return [u.to_json() for u in entries]


def excuse_undecidable(verdicts: list, foreign: list[tuple[str, list[dict]]], truth: Path, protocol: str,
                       options: dict) -> list[tuple[str, list[dict]]]:
    """Takes the findings about undecidable rows out of check_final_state's `verdicts` (before
    their causes are looked up, which groups rows), and returns the `foreign` tables (upstream
    holds none of that name at the end) still to be judged: one whose every row is undecidable is
    an outcome of the tie. Each verdict carries in `undecidable` the entries of its table (those of
    a table without a verdict go with the first one), so that the run reports them."""
    undecided = undecidable_rows(truth, protocol, options)
    if not undecided:
        return foreign
    for v in verdicts:
        v.findings = excuse(v.findings, v.table, undecided)
    still = [(name, rows) for name, rows in foreign
             if excuse([Finding("CONSUMER-TABLE-1", name, None, "")], name, undecided, rows)]
    by_table = {v.table: v for v in verdicts}
    for u in undecided:
        holder = by_table.get(u.table) or (verdicts[0] if verdicts else None)
        if holder is not None:
            holder.undecidable.append(u.to_json())
    return still
