"""The checkpoint check: at every global watermark a consumer recorded, its tables equal upstream.

A consumer that writes the applied log and the temporal states of docs/consumer-protocol.md
("Output") is held against the ground truth at every checkpoint W of its applied log:
- CONSUMER-CHECKPOINT-1: its tables at W equal the upstream tables at commit ts W, projected onto
  the protocol's fidelity (the projection of checks/differential.py);
- CONSUMER-DDL-1: every upstream DDL up to the last checkpoint is applied exactly once;
  CONSUMER-DDL-2: in commit-ts order, as a barrier (row events before it first, after it later);
- CONSUMER-DEDUP-1: no row event and no transaction is applied twice;
- CONSUMER-LOSS-1: every row event of every upstream transaction up to the last checkpoint is applied;
- CONSUMER-ORDER-1: transactions are applied in commit-ts order;
- CONSUMER-WATERMARK-1: nothing is applied before the global watermark reaches it, and checkpoints
  only move forward;
- CONSUMER-OUTPUT-1: the state lines name checkpoints of the applied log.
A consumer that joined late (`start_ts`, docs/delivery-schedules.md "late join") started from a
snapshot of upstream at start_ts: upstream up to it is its starting tables, not events it owes, so
only what comes after is matched, and start_ts stands for the checkpoint before its first one.

It scales with what changes, not with the tables' size: upstream is replayed once, event by event
(read from the case's truth/ files, ticdc_contract.truth.read_history),
the consumer's state lines are indexed by checkpoint in a SQLite file, and at each checkpoint only
the rows that changed since the previous one, on either side, are compared. Memory holds both sides'
current tables and one checkpoint interval of the applied log.
"""
from __future__ import annotations

import heapq
import sqlite3
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

from ticdc_conformance.consumers.adapters.interface import Capabilities, shown_by_output
from ticdc_conformance.findings.finding import Finding
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.common.projection import projection_options
from ticdc_conformance.protocols.common.wire import compact, is_json_int64
from ticdc_conformance.protocols.common.wire import is_json_int as _is_int
from ticdc_conformance.young_collections import fewer_young_collections
from ticdc_contract.model import DDL, Op, TableSchema, Transaction

from .causes import foreign_table
from .checkpoint_causes import SinceGood, explain_rows
from .differential import compare_table, extra_columns
from .projected_truth import Name, ProjectedTruth, comparable, unjudged_by_table
from .selection import consumer_table
from .upstream_history import TableFates, Upcoming, history_events
from .upstream_process import CheckpointMark, MirroredTxn, UpstreamMirror, UpstreamProcess, worth_a_process
from .value_forms import StateForms

MAX_FINDINGS_PER_RULE = 20


@dataclass
class CheckpointVerdict:
    checked: bool
    checkpoints: int = 0
    note: str = ""
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0  # findings beyond MAX_FINDINGS_PER_RULE, counted only
    # (checkpoint ts, row images that differ there) for every checkpoint whose tables were compared
    # (the consumer wrote states/): missing rows plus surplus rows, the HTML report's plot.
    divergence: list[tuple[int, int]] = field(default_factory=list)

    def to_json(self, encoding: Optional[str] = None) -> dict:
        return {"checked": self.checked, "checkpoints": self.checkpoints, "note": self.note,
                "suppressed_findings": self.suppressed,
                "findings": [f.to_json(encoding) for f in self.findings],
                "divergence": [list(point) for point in self.divergence]}


class ConsumerOutputError(ValueError):
    """The consumer's applied log or state lines are not in the documented form; `table` is the
    table whose states/ file holds the line, or None for the applied log."""

    def __init__(self, message: str, table: Optional[str] = None) -> None:
        super().__init__(message)
        self.table = table


# --- the consumer's states ---------------------------------------------------------------------
def _table_of(path: Path) -> Name:
    schema, _, table = path.name[: -len(".ndjson")].partition(".")
    return schema, table


class _States:
    """The consumer's state lines in a SQLite file, indexed by the checkpoints they start and end
    at, and its tables at the current checkpoint as counts of comparable row images.

    The lines are stored in batches, one SQLite row per (from, to) pair and batch: a row per line
    cost more than reading the line itself (the statement's binding and its two index entries,
    every line), and a checkpoint reads every line that starts or ends there anyway. A batch is a
    bounded buffer (BATCH_BYTES), so memory does not grow with the states; a record in it is
    `seq tbl image` and a newline (an orjson image holds no raw newline), `seq` its line's place in
    the order the files were read."""

    BATCH_BYTES = 4 << 20

    def __init__(self, states_dir: Path, db_path: Path, hidden: dict[Name, frozenset[str]]) -> None:
        self.db = sqlite3.connect(db_path)
        # A scratch file read back within this check only: no journal, no waiting for the disk.
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        # A line names its table by its place in `names` (one per states/ file): an integer is stored
        # and read back without making the table's two strings again for every line.
        self.db.execute("CREATE TABLE lines (frm INTEGER, upto INTEGER, batch BLOB)")
        self.names: list[Name] = []
        batches: dict[tuple[int, Optional[int]], bytearray] = {}
        size = seq = 0
        for path in sorted(states_dir.glob("*.ndjson")):
            name = _table_of(path)
            self.names.append(name)
            for table, frm, upto, image in self._lines(path, name, len(self.names) - 1,
                                                       hidden.get(name, frozenset())):
                batch = batches.get((frm, upto))
                if batch is None:
                    batch = batches[(frm, upto)] = bytearray()
                batch += b"%d %d %b\n" % (seq, table, image)
                seq += 1
                size += len(image)
                if size > self.BATCH_BYTES:
                    self._store(batches)
                    batches, size = {}, 0
        self._store(batches)
        self.db.execute("CREATE INDEX by_from ON lines (frm)")
        self.db.execute("CREATE INDEX by_to ON lines (upto)")
        self.db.execute("CREATE TABLE arrived (ts INTEGER PRIMARY KEY)")  # the checkpoints advanced to
        # Per checkpoint: the lines that arrived before it and leave there, as (table, compared image):
        # every line's image is read from the file once, and these are lines of the current tables.
        self.leaving: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
        self.counts: dict[Name, Counter] = defaultdict(Counter)
        self.dirty: dict[Name, set[bytes]] = defaultdict(set)  # per table: the images whose count changed

    def _store(self, batches: dict[tuple[int, Optional[int]], bytearray]) -> None:
        self.db.executemany("INSERT INTO lines VALUES (?,?,?)",
                            ((frm, upto, bytes(batch)) for (frm, upto), batch in batches.items()))

    @staticmethod
    def _records(batch: bytes) -> list[list[bytes]]:
        """A batch's lines, as [seq, table, image] as written (both numbers still text): one list
        made by a comprehension, not a generator's step per line."""
        return [record.split(b" ", 2) for record in batch.split(b"\n")[:-1]]

    @staticmethod
    def _lines(path: Path, name: Name, table: int, hidden: frozenset[str]) -> Iterator[tuple]:
        with open(path, "rb") as f:
            for n, line in enumerate(f, 1):
                if line.isspace():  # what strip() would leave empty, told without a copy of every line
                    continue
                try:
                    doc = exact_json.loads(line)
                    frm, upto, row = doc["from"], doc["to"], doc["row"]
                    # JSON integers are read as int (true and false as bool): _is_int by type alone
                    if type(frm) is not int or not (upto is None or type(upto) is int) or type(row) is not dict:
                        raise ValueError('"from" an integer, "to" an integer or null, "row" an object')
                    if not is_json_int64(frm) or not (upto is None or is_json_int64(upto)):
                        raise ValueError('"from" and "to" name checkpoints, which are below 2^63')
                    yield table, frm, upto, comparable(row, hidden)
                except (KeyError, TypeError, ValueError) as e:  # NotJSON is a ValueError
                    raise ConsumerOutputError(f"states/{path.name} line {n}: not a state line ({e})",
                                              _qualified(name)) from None

    def advance(self, ts: int, forms: Optional[StateForms] = None) -> None:
        """Lines ending at `ts` leave, lines starting there arrive. An arriving line's image is put in
        the compared form (`forms.state_row`, checks/value_forms.py: upstream's schema and rows at
        `ts`) and kept so until its `to` checkpoint, so that its removal takes away the same image.
        A line ending at `ts` that never arrived (its `from` is no earlier checkpoint) leaves with its
        image as written."""
        self.dirty = defaultdict(set)
        leave = self.leaving.pop(ts, [])
        for (batch,) in self.db.execute("SELECT batch FROM lines WHERE upto = ? AND frm NOT IN "
                                        "(SELECT ts FROM arrived)", (ts,)):
            leave += [(int(table), image) for _, table, image in self._records(batch)]
        self._count(leave, -1)
        self.db.execute("INSERT INTO arrived VALUES (?)", (ts,))
        arrive = []
        current = -1
        for upto, table, image in self._arriving(ts):
            # A table's lines mostly come together (read file by file): its lookups are made once a run.
            if table != current:
                current, name = table, self.names[table]
                as_it_is = forms.as_it_is_test(name) if forms is not None else None
            if as_it_is is not None and not as_it_is(image):
                assert forms is not None  # as_it_is is made from it
                row = exact_json.loads(image)
                normalised = forms.state_row(name, row, image)
                # The same object back: nothing restated (the image of `row` is `image`).
                image = image if normalised is row else compact(comparable(normalised, frozenset()))
            arrive.append((table, image))
            if upto is not None and upto > ts:
                self.leaving[upto].append((table, image))
        self._count(arrive, +1)

    def _arriving(self, ts: int) -> Iterator[tuple[Optional[int], int, bytes]]:
        """The lines starting at checkpoint `ts`, as (to, table, image)."""
        for upto, batch in self.db.execute("SELECT upto, batch FROM lines WHERE frm = ?", (ts,)):
            for _, table, image in self._records(batch):
                yield upto, int(table), image

    def _count(self, lines: list[tuple[int, bytes]], delta: int) -> None:
        current = -1
        for table, image in lines:
            if table != current:
                current, name = table, self.names[table]
                counts, changed = self.counts[name], self.dirty[name]
            n = counts.get(image, 0) + delta  # bump_count in line: every state line comes here twice
            if n:
                counts[image] = n
            else:
                counts.pop(image, None)
            changed.add(image)

    def stray(self, checkpoints: list[int]) -> list[tuple[Name, int, Optional[int]]]:
        """Lines whose from/to are no checkpoint of the applied log, or that end before they start."""
        self.db.execute("CREATE TEMP TABLE cps (ts INTEGER PRIMARY KEY)")
        self.db.executemany("INSERT OR IGNORE INTO cps VALUES (?)", ((t,) for t in checkpoints))
        found = ((int(seq), int(table), frm, upto) for frm, upto, batch in self.db.execute(
            "SELECT frm, upto, batch FROM lines WHERE frm NOT IN (SELECT ts FROM cps) "
            "OR (upto IS NOT NULL AND (upto NOT IN (SELECT ts FROM cps) OR upto <= frm))")
            for seq, table, _ in self._records(batch))
        # The first five in the order the lines were read, as a scan of one row per line gave them.
        return [(self.names[table], frm, upto) for _, table, frm, upto in heapq.nsmallest(5, found)]

    def close(self) -> None:
        self.db.close()


# --- the check ---------------------------------------------------------------------------------
class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []
        self.suppressed = 0
        self.reported: set[tuple] = set()
        self.per_rule: Counter = Counter()

    def add(self, rule: str, table: str, key: Optional[list], message: str, diff: Optional[dict] = None,
            once: Optional[tuple] = None, **where) -> None:
        """`where`: the Finding's commit_ts, checkpoint, expected and actual, where known."""
        if once is not None:
            if once in self.reported:
                return
            self.reported.add(once)
        self.per_rule[rule] += 1
        if self.per_rule[rule] > MAX_FINDINGS_PER_RULE:
            self.suppressed += 1
            return
        self.items.append(Finding(rule, table, key, message, diff or {}, **where))


LOG = "applied.ndjson"  # what a finding about the log as a whole names instead of a table


def _qualified(name: Name) -> str:
    return f"{name[0]}.{name[1]}" if name[1] else name[0]


def _key_list(key: bytes) -> Optional[list]:
    return exact_json.loads(key) if key.startswith(b"[") else None


# Two counts of positive integers are equal when they are equal dicts (a Counter's own == is a
# Python loop).
_same_counts = dict.__eq__

_OPS = tuple(op.value for op in Op)
_KNOWN_OPS = frozenset(_OPS)
_ABSENT = object()  # a side the row does not name


def _no_key(image: dict) -> bytes:
    return b""


def entry_problem(entry) -> Optional[str]:
    """What keeps a line of applied.ndjson from the documented form (docs/consumer-protocol.md,
    "Output"), or None. A consumer's output is input the suite does not control; an entry of an
    unknown kind is judged, not refused (CONSUMER-OUTPUT-1 at its place in the log)."""
    if not isinstance(entry, dict):
        return f"a JSON {type(entry).__name__}, not an object"
    kind = entry.get("kind")
    if kind == "checkpoint":
        ts = entry.get("ts")
        if not _is_int(ts):
            return f'checkpoint without an integer "ts": {ts!r}'
        return None if is_json_int64(ts) else f'checkpoint whose "ts" is beyond the TSOs, which are below 2^63: {ts}'
    if kind not in ("txn", "ddl"):
        return None
    ts = entry.get("commit_ts", "absent")
    if ts is not None and not _is_int(ts):
        return f'{kind} whose "commit_ts" is neither an integer nor null: {ts!r}'
    if kind == "ddl":
        if not isinstance(entry.get("query"), str):
            return f'ddl without a "query" string: {entry.get("query")!r}'
        if not isinstance(entry.get("schema"), (str, type(None))) or \
                not isinstance(entry.get("table"), (str, type(None))):
            return "ddl whose schema or table is not a string"
        return None
    rows = entry.get("rows")
    if not isinstance(rows, list):
        return f'txn without a "rows" list: {rows!r}'
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("schema"), str) or not isinstance(r.get("table"), str):
            return f"txn row {i} is not an object naming its schema and table"
        if r.get("op") not in _KNOWN_OPS:
            return f"txn row {i} has op {r.get('op')!r}, not one of {', '.join(_OPS)}"
        before, after = r.get("before", _ABSENT), r.get("after", _ABSENT)
        if not (before is None or type(before) is dict) or not (after is None or type(after) is dict):
            return f"txn row {i}: before and after are row objects or null"
    return None


class CheckpointCheck:
    """`processes`: 2 replays upstream in a process of its own (checks/upstream_process.py), 1 in
    this one; None chooses by the case's size (`manifest["events"]`) and the cores at hand. The
    verdict is the same either way. Call close() once done (CheckpointRun does): a check left
    early stops the other process."""

    def __init__(self, truth_dir: Path, consumer_out: Path, manifest: dict, shows_states: bool = True,
                 start_ts: Optional[int] = None, processes: Optional[int] = None) -> None:
        self.truth_dir, self.out, self.manifest = Path(truth_dir), Path(consumer_out), manifest
        self.shows_states = shows_states  # the consumer declares its tables at every checkpoint (states/)
        options = projection_options(manifest)
        self.hidden = unjudged_by_table(self.truth_dir, options)
        if processes not in (None, 1, 2):
            raise ValueError(f"processes is 1, 2 or None (by the case's size), not {processes!r}")
        two = processes == 2 or (processes is None and worth_a_process(manifest.get("events")))
        self.truth: ProjectedTruth = (UpstreamMirror(self.truth_dir, manifest["protocol"], options, self.hidden) if two
                                      else ProjectedTruth(manifest["protocol"], options, self.hidden))
        self.forms = StateForms(self.truth, manifest["protocol"], options)
        self.findings = _Findings()
        self.checkpoints: list[int] = []
        self.last_ts: Optional[int] = None
        self.last_kind = ""
        self.early_txns: dict[int, list[list[dict]]] = defaultdict(list)
        self.early_ddls: Counter = Counter()
        self.ddl_tables: dict[tuple[int, str], str] = {}  # (commit ts, query) -> the table the log names
        self.fates = TableFates()  # what upstream did to each table name, up to the current checkpoint
        self.gone_views: dict[Name, TableSchema] = {}  # the last view of a table upstream dropped or renamed
        self.since = SinceGood()
        self.since_at: dict[int, str] = {}  # per checkpoint with a finding: what was applied since the last good one
        # Row images whose count differs between upstream and the consumer, with the difference; kept
        # across checkpoints (a row wrong at one checkpoint stays wrong until a change rights it) and
        # updated for the images that changed, so the total is every row differing, not only new ones.
        self.off: dict[tuple[Name, bytes], int] = {}
        self.off_rows = 0
        self.divergence: list[tuple[int, int]] = []
        self._keys: dict[Name, tuple[TableSchema, Callable[[dict], bytes]]] = {}  # per table: _key_function's
        self.start_ts = start_ts
        # The other process starts last, once nothing else here can fail before close() is in reach.
        self.upstream: Optional[UpstreamProcess] = None
        if two:
            self.upstream = UpstreamProcess(self.truth_dir, self.out / "applied.ndjson", manifest["protocol"],
                                            options, start_ts)
        self.history = Upcoming(self.upstream if self.upstream is not None else history_events(self.truth_dir))
        if start_ts is not None:
            try:
                self._snapshot(start_ts)
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()

    def _snapshot(self, start_ts: int) -> None:
        """Upstream up to a late join's snapshot, applied without matching: the consumer loaded it.
        Its rows stay marked changed, so the first checkpoint compares every table, loaded rows too."""
        for _ in self._upstream_to(start_ts):
            pass

    def _upstream_to(self, ts: int) -> Iterator[DDL | Transaction | MirroredTxn]:
        """Upstream's next events up to commit ts `ts`, each applied before it is yielded."""
        for event in self.history.up_to(ts):
            if isinstance(event, DDL):
                self._note_ddl(event)
            else:
                self.truth.apply(event)
                if type(event) is CheckpointMark:  # upstream's counts at a checkpoint: no event of its own
                    continue
            yield event

    @property
    def last_checkpoint(self) -> Optional[int]:
        """The last checkpoint judged; before the first, a late join's snapshot ts (or None)."""
        return self.checkpoints[-1] if self.checkpoints else self.start_ts

    # the applied log --------------------------------------------------------------------------
    def _entries(self) -> Iterator[dict]:
        with open(self.out / "applied.ndjson", "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.isspace():
                    try:
                        entry = exact_json.loads(line)
                    except exact_json.NotJSON as e:
                        raise ConsumerOutputError(f"applied.ndjson line {n}: {e}") from None
                    problem = entry_problem(entry)
                    if problem:
                        raise ConsumerOutputError(f"applied.ndjson line {n}: {problem}")
                    yield entry

    def _order(self, entry: dict) -> None:
        ts, kind = entry.get("commit_ts"), entry["kind"]
        if ts is None or (self.last_checkpoint is not None and ts <= self.last_checkpoint):
            return  # late entries are judged as duplicates at the next checkpoint
        if self.last_ts is not None and (ts < self.last_ts or (ts == self.last_ts and kind != self.last_kind)):
            if "ddl" in (kind, self.last_kind) and kind != self.last_kind:
                where = self._ddl_table(entry) if kind == "ddl" else LOG
                self.findings.add("CONSUMER-DDL-2", where, None, f"{kind} at commit ts {ts} applied after the "
                                  f"{self.last_kind} at {self.last_ts}: a DDL is a barrier, the row events before it "
                                  "apply before it and those after it after it", commit_ts=ts,
                                  ddl=entry.get("query") if kind == "ddl" else None)
            elif ts < self.last_ts:
                self.findings.add("CONSUMER-ORDER-1", LOG, None, f"{kind} at commit ts {ts} applied after the one at "
                                  f"{self.last_ts}: changes apply in commit-ts order", commit_ts=ts)
        self.last_ts, self.last_kind = ts, kind

    def run(self) -> CheckpointVerdict:
        states_dir = self.out / "states"
        with tempfile.TemporaryDirectory(prefix="ticdc-checkpoints-") as tmp:
            states = _States(states_dir, Path(tmp) / "states.db", self.hidden) if self.shows_states else None
            try:
                txns: dict[int, list[list[dict]]] = defaultdict(list)
                ddls: Counter = Counter()
                for entry in self._entries():
                    kind = entry.get("kind")
                    if kind == "checkpoint":
                        if self._checkpoint(int(entry["ts"]), txns, ddls, states):
                            txns, ddls = defaultdict(list), Counter()
                    elif kind in ("txn", "ddl"):
                        self._order(entry)
                        ts = entry.get("commit_ts")
                        if ts is None:
                            continue
                        if kind == "txn":
                            txns[int(ts)].append(entry["rows"])
                            self.since.txn(int(ts), entry["rows"])
                        else:
                            self.since.ddl(int(ts), entry["query"])
                            ddls[(int(ts), entry["query"])] += 1
                            self.ddl_tables.setdefault((int(ts), entry["query"]), self._ddl_table(entry))
                    else:
                        self.findings.add("CONSUMER-OUTPUT-1", LOG, None, f"applied.ndjson holds an entry of "
                                          f"unknown kind {kind!r}")
                if states is not None and self.checkpoints:
                    for name, frm, upto in states.stray(self.checkpoints):
                        self.findings.add("CONSUMER-OUTPUT-1", _qualified(name), None,
                                          f"state line from {frm} to {upto} does not span checkpoints of "
                                          "applied.ndjson (from and to are checkpoints, from < to)")
            finally:
                if states is not None:
                    states.close()
        f = self.findings
        if not self.checkpoints:
            return CheckpointVerdict(False, 0, "applied.ndjson records no checkpoint (the stream carries no "
                                     "watermark, or the consumer applied in arrival order): checked on the final "
                                     "state only", f.items, f.suppressed)
        note = "" if states is not None else "the consumer wrote no states/: its tables were not compared at checkpoints"
        return CheckpointVerdict(True, len(self.checkpoints), note, f.items, f.suppressed, self.divergence)

    # one checkpoint ---------------------------------------------------------------------------
    def _checkpoint(self, w: int, txns: dict[int, list[list[dict]]], ddls: Counter,
                    states: Optional[_States]) -> bool:
        prev = self.last_checkpoint
        if prev is not None and w <= prev:
            what = f"checkpoint {prev}" if self.checkpoints else f"the late join's snapshot at {prev}"
            self.findings.add("CONSUMER-WATERMARK-1", LOG, None, f"checkpoint {w} follows {what}: "
                              "the global watermark never moves back", checkpoint=w)
            return False
        if self.checkpoints or self.start_ts is None:  # a late join's first checkpoint compares the snapshot too
            self.truth.dirty = defaultdict(set)
        for event in self._upstream_to(w):
            if not isinstance(event, DDL):
                applied = txns.pop(event.commit_ts, []) + self.early_txns.pop(event.commit_ts, [])
                self._match_txn(event.commit_ts, applied, w)
            else:
                self._match_ddl(event, ddls, w)
        self._leftovers(w, prev, txns, ddls)
        if states is not None:
            states.advance(w, self.forms)
            if self._compare(w, states):
                self.since.reset(w)
        self.checkpoints.append(w)
        return True

    def _note_ddl(self, ddl: DDL) -> None:
        """Applies a DDL upstream, noting what it did to table names and the last view of a table it removes."""
        before = dict(self.truth.schemas)
        self.fates.note(ddl, list(before))
        self.truth.apply(ddl)
        for name in before.keys() - self.truth.schemas.keys():
            self.gone_views[name] = consumer_table(before[name], self.truth.chosen)

    def _match_ddl(self, ddl: DDL, ddls: Counter, w: int) -> None:
        ident = (ddl.commit_ts, ddl.query)
        for pool in (ddls, self.early_ddls):
            if pool[ident] > 0:
                pool[ident] -= 1
                return
        self.findings.add("CONSUMER-DDL-1", _qualified((ddl.schema, ddl.table)), None,
                          f"DDL at commit ts {ddl.commit_ts} ({ddl.query}) was never applied, though checkpoint {w} "
                          "passed it", commit_ts=ddl.commit_ts, checkpoint=w, ddl=ddl.query)

    def _match_txn(self, ts: int, applied: list[list[dict]], w: int) -> None:
        got: dict[tuple[Name, bytes], int] = {}
        # _row_key in line, its key function looked up once per table of the transaction (no DDL
        # comes between its rows): every applied row event comes here.
        keys: dict[Name, Callable[[dict], bytes]] = {}
        for rows in applied:
            for r in rows:
                name = (r["schema"], r["table"])
                key_of = keys.get(name)
                if key_of is None:
                    key_of = keys[name] = self._row_key_function(name)
                image = r["after"] if r["after"] is not None and r["op"] != "delete" else r["before"]
                key = (name, key_of(image or {}))
                got[key] = got.get(key, 0) + 1  # not a Counter's got[key] += 1: its missing key is a Python call
        # Nearly every transaction is applied once and whole: then there is nothing to report, which
        # one comparison of the counts tells (both hold positive counts only, so equal counts are equal
        # dicts) without subtracting them both ways.
        if _same_counts(got, self.truth.expected):
            return
        self._txn_findings(ts, Counter(got), w)

    def _txn_findings(self, ts: int, got: Counter, w: int) -> None:
        """The findings of a transaction whose applied row events (`got`, per table and key) are not
        upstream's."""
        expected = Counter(self.truth.expected)
        surplus = got - expected
        # Row events filed under a table upstream does not hold at this commit ts (renamed away,
        # dropped, never created): the cause is what upstream did to that table, not a re-send, and
        # the same keys missing from the upstream table are that one mistake, not a loss.
        elsewhere = {key for (name, key) in surplus if name not in self.truth.schemas}
        for name in sorted({name for (name, _) in surplus if name not in self.truth.schemas}):
            first = next(key for (n, key) in sorted(surplus) if n == name)
            count = sum(c for (n, _), c in surplus.items() if n == name)
            self.findings.add("CONSUMER-TABLE-1", _qualified(name), _key_list(first),
                              f"{count} row event(s) of the transaction at commit ts {ts} applied to this table, "
                              f"which upstream does not hold then: {self.fates.describe(_qualified(name))}",
                              once=("applied-to", name), commit_ts=ts, checkpoint=w)
        for (name, key), n in sorted((expected - got).items()):
            if key in elsewhere:
                continue
            self.findings.add("CONSUMER-LOSS-1", _qualified(name), _key_list(key),
                              f"{n} row event(s) of the transaction at commit ts {ts} never applied, though "
                              f"checkpoint {w} passed it", commit_ts=ts, checkpoint=w)
        for (name, key), n in sorted(surplus.items()):
            if name not in self.truth.schemas:
                continue
            self.findings.add("CONSUMER-DEDUP-1", _qualified(name), _key_list(key),
                              f"{n} row event(s) applied at commit ts {ts} beyond the row events upstream "
                              "committed there for this key", commit_ts=ts, checkpoint=w)

    def _leftovers(self, w: int, prev: Optional[int], txns: dict[int, list], ddls: Counter) -> None:
        for ts in sorted(txns):
            for where, key, n in self._rows_by_table(txns[ts]):
                rows = f"{n} row event(s) of {where}, the first with this key" if n else "no row events"
                if ts > w:
                    self.findings.add("CONSUMER-WATERMARK-1", where, key, f"transaction at commit ts {ts} applied "
                                      f"before checkpoint {w}, which the global watermark had not yet reached ({rows})",
                                      commit_ts=ts, checkpoint=w)
                elif prev is not None and ts <= prev:
                    self.findings.add("CONSUMER-DEDUP-1", where, key, f"transaction at commit ts {ts} applied again "
                                      f"after checkpoint {prev} had passed it ({rows}; a re-send below the watermark "
                                      "is dropped)", commit_ts=ts, checkpoint=w)
                else:
                    self.findings.add("CONSUMER-DEDUP-1", where, key, f"transaction at commit ts {ts} applied, but "
                                      f"upstream committed none there ({rows})", commit_ts=ts, checkpoint=w)
            if ts > w:
                self.early_txns[ts].extend(txns[ts])
        for (ts, query), n in sorted(ddls.items()):
            if n <= 0:
                continue
            where = self.ddl_tables.get((ts, query), LOG)
            if ts > w:
                self.findings.add("CONSUMER-WATERMARK-1", where, None, f"DDL at commit ts {ts} ({query}) applied "
                                  f"before checkpoint {w}, which the global watermark had not yet reached",
                                  commit_ts=ts, checkpoint=w, ddl=query)
                self.early_ddls[(ts, query)] += n
            else:
                self.findings.add("CONSUMER-DDL-1", where, None, f"DDL at commit ts {ts} ({query}) applied {n} more "
                                  "time(s) than upstream ran it (a DDL applies once, whichever partitions carry it)",
                                  commit_ts=ts, checkpoint=w, ddl=query)

    @staticmethod
    def _ddl_table(entry: dict) -> str:
        """The table an applied DDL names (its schema for a database DDL); the log where it names none."""
        return _qualified((entry["schema"], entry.get("table") or "")) if entry.get("schema") else LOG

    def _rows_by_table(self, applied: list[list[dict]]) -> list[tuple[str, Optional[list], int]]:
        """Per table of an applied transaction (in name order): the table, the key of its first row
        and its number of row events, so that each finding names one table and a key of that table."""
        first: dict[Name, dict] = {}
        count: Counter = Counter()
        for r in (r for entry in applied for r in entry):
            name = (r["schema"], r["table"])
            first.setdefault(name, r)
            count[name] += 1
        if not first:
            return [(LOG, None, 0)]
        return [(_qualified(name), _key_list(self._row_key(first[name])[1]), count[name]) for name in sorted(first)]

    def _row_key(self, r: dict) -> tuple[Name, bytes]:
        """An applied row's table and its key upstream; for a table upstream no longer holds, its key
        by the table's last view (empty for a table upstream never had or one without key)."""
        name = (r["schema"], r["table"])
        image = r["after"] if r["after"] is not None and r["op"] != "delete" else r["before"]
        return name, self._row_key_function(name)(image or {})

    def _row_key_function(self, name: Name) -> Callable[[dict], bytes]:
        """`_row_key`'s key of an applied row image in table `name`, as upstream holds it now."""
        schema = self.truth.schemas.get(name)
        if schema is None:
            gone = self.gone_views.get(name)
            if gone is None or not gone.handle_key:
                return _no_key
            handle = gone.handle_key
            return lambda image: exact_json.dumps([image.get(c) for c in handle])
        hit = self._keys.get(name)
        if hit is None or hit[0] is not schema:
            hit = self._keys[name] = (schema, self._key_function(name))
        return hit[1]

    def _key_function(self, name: Name) -> Callable[[dict], bytes]:
        """An applied row image's key in a table upstream holds, under its current schema version:
        made once per version, as the views and forms it reads are."""
        values = self.forms.key_reader(name)  # a key 1.0 is the key 1
        if values is not None:  # the key truth.key_of makes of the key columns
            return lambda image: exact_json.dumps(values(image))
        truth, forms = self.truth, self.forms
        return lambda image: truth.key_of(name, forms.key_row(name, image))

    def _compare(self, w: int, states: _States) -> bool:
        """Compares the tables that changed at checkpoint W; True when they are all right."""
        listed = len(self.findings.items)
        by_table: dict[Name, tuple[list[dict], list[dict]]] = defaultdict(lambda: ([], []))
        upstream, consumer, off = self.truth.counts, states.counts, self.off
        differing = []
        off_rows = self.off_rows  # summed in a local: every image changed at W adds to it
        none: set[bytes] = set()
        for name in self.truth.dirty.keys() | states.dirty.keys():
            ours, theirs = upstream[name], consumer[name]  # a table's counts looked up once
            for image in self.truth.dirty.get(name, none) | states.dirty.get(name, none):
                diff = ours.get(image, 0) - theirs.get(image, 0)
                if off or diff:  # nearly always neither: no (table, image) pair to make
                    changed = (name, image)
                    off_rows += abs(diff) - abs(off.pop(changed, 0))
                    if diff:
                        off[changed] = diff
                        differing.append((changed, diff))
        self.off_rows = off_rows
        # In order: the rows of a table come out in one order whatever the hash seed, and a finding
        # that names the first of them (CONSUMER-COLUMN-1, a table upstream does not hold) names the same.
        for (name, image), diff in sorted(differing):
            by_table[name][0 if diff > 0 else 1].extend([exact_json.loads(image)] * abs(diff))
        self.divergence.append((w, self.off_rows))
        for name in sorted(by_table):
            expected, actual = by_table[name]
            if name not in self.truth.schemas:
                f = foreign_table(_qualified(name), actual, self.gone_views.get(name), self.fates, checkpoint=w)
                self.findings.add(f.rule, f.table, None, f.message, once=("table", name), checkpoint=w,
                                  commit_ts=f.commit_ts, ddl=f.ddl)
                continue
            view = self.truth.view(name)
            for column, f in extra_columns(view, actual):  # once per table and column; rows compare without it
                self.findings.add(f.rule, f.table, f.key, f"at checkpoint {w}: {f.message}",
                                  once=("column", name, column), checkpoint=w, actual=f.actual)
            for f in compare_table(view, expected, actual):
                self.findings.add("CONSUMER-CHECKPOINT-1", f.table, f.key, f"at checkpoint {w}: {f.message}", f.diff,
                                  once=(name, exact_json.dumps(f.key) if f.key is not None else f.message),
                                  checkpoint=w, expected=f.expected, actual=f.actual)
        if len(self.findings.items) > listed:  # kept for the checkpoints whose findings are listed only
            self.since_at[w] = self.since.text()
        return not by_table


class CheckpointRun:
    """A checkpoint check under way: for a large case its upstream replay starts at once in a
    process of its own (checks/upstream_process.py), so what the caller does before asking for the
    verdict (the final-state check) overlaps it. The arguments are check_checkpoints'. Use it as a
    context manager: leaving it stops the other process."""

    def __init__(self, truth_dir: Path, consumer_out: Path, manifest: dict, shows: Optional[Capabilities] = None,
                 *, start_ts: Optional[int] = None, processes: Optional[int] = None) -> None:
        self.truth_dir, self.manifest = Path(truth_dir), manifest
        self.shows = shows if shows is not None else shown_by_output(consumer_out)
        self.check: Optional[CheckpointCheck] = None
        if self.shows.applied_log:
            with fewer_young_collections():
                self.check = CheckpointCheck(truth_dir, consumer_out, manifest, self.shows.states, start_ts, processes)

    def __enter__(self) -> "CheckpointRun":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.check is not None:
            self.check.close()

    def verdict(self) -> CheckpointVerdict:
        """The verdict for the consumer run; `checked` is False when the consumer shows no applied
        log (a plugged-in consumer that writes final/ only), which the report then says."""
        check = self.check
        if check is None:
            return CheckpointVerdict(False, 0, "the consumer wrote no applied.ndjson: the checkpoint check was not "
                                     "possible, it is checked on its final state only")
        try:
            with fewer_young_collections():
                verdict = check.run()
            check.close()
            verdict.findings = explain_rows(verdict.findings, self.truth_dir, self.manifest, check.hidden,
                                            check.since_at, all_listed=not verdict.suppressed)
            return verdict
        except ConsumerOutputError as e:
            return CheckpointVerdict(False, 0, "the consumer's output could not be read",
                                     [Finding("CONSUMER-OUTPUT-1", e.table or LOG, None, str(e))])


def check_checkpoints(truth_dir: Path, consumer_out: Path, manifest: dict,
                      shows: Optional[Capabilities] = None, *, start_ts: Optional[int] = None,
                      processes: Optional[int] = None) -> CheckpointVerdict:
    """The verdict for one consumer run; `checked` is False when the consumer shows no applied log
    (a plugged-in consumer that writes final/ only), which the report then says. `shows` is what the
    consumer's adapter declares its output shows; by default what the output folder holds declares it.
    `start_ts`: a late join's snapshot ts (ConsumerRun.start_ts); upstream up to it is not judged.
    `processes`: CheckpointCheck's."""
    with CheckpointRun(truth_dir, consumer_out, manifest, shows, start_ts=start_ts, processes=processes) as run:
        return run.verdict()
