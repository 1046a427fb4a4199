"""Where a finding's row was last written: its commit ts and the Kafka record that carried it.

A check compares tables; the record a reader wants to look at is in the stream. After a run's
checks, the records are decoded once more with the reference decoders (only when a finding names
a row key or a DDL, and keeping only the keys findings name) and each such finding gets the commit
ts and the topic/partition@offset of the last row event for its key: at or below the checkpoint
the finding compared at, or at the commit ts the finding is about. Re-sent copies of that event
(at-least-once replays) are named too. Where the stream carries no commit ts (Canal-JSON without
the TiDB extension), the commit ts comes from the upstream history (truth/history.ndjson).

A finding about a DDL (its `ddl` query set) gets the first record, in arrival order, that carried
that DDL, and the other copies: TiCDC broadcasts a DDL to every partition of the topic for every
protocol but Canal (partition 0 only; TiCDC downstreamadapter/sink/helper/helper.go, the DDL
dispatch rule), and a restart may send it again. The same pass over the records finds both.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import orjson

from ticdc_conformance.consumers.rules.decode_stage import PartitionDecoders
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.sequential.consumer import merged_records
from ticdc_conformance.findings.finding import Finding
from ticdc_conformance.protocols.common.projection import projection_options
from ticdc_contract.canonical import key_order_token

from .differential import load_truth_tables
from .projection import row_projection
from .selection import consumer_table, selectors, unjudged_columns

MAX_COPIES_NAMED = 3
Name = str  # "schema.table"
Write = tuple[Optional[int], str]  # (commit ts, coordinates)


def decoded_events(case: Path, manifest: dict) -> Iterator[dict[str, Any]]:
    """Every event of a generated run as the reference decoders read it (decode_stage rows, a row
    event's `after`/`before` parsed), in the merged arrival order a consumer sees."""
    decoders = PartitionDecoders(manifest["protocol"], decoder_options(manifest, Path(case)))
    for record in merged_records(Path(case) / "records"):
        for ev in decoders.decode(record):
            if ev["kind"] == "row":
                ev["after"] = orjson.loads(ev["after"]) if ev["after"] is not None else None
                ev["before"] = orjson.loads(ev["before"]) if ev["before"] is not None else None
            yield ev


def decoded_rows(case: Path, manifest: dict) -> Iterator[dict[str, Any]]:
    """The row events of `decoded_events`."""
    return (ev for ev in decoded_events(case, manifest) if ev["kind"] == "row")


def _key(image: Optional[dict], cols: tuple[str, ...]) -> Optional[str]:
    if image is None or not cols or any(c not in image for c in cols):
        return None
    return key_order_token([image[c] for c in cols])


def _coordinates(ev: dict[str, Any]) -> str:
    return f"{ev['topic']}/{ev['partition']}@{ev['offset']}"


def _stream_writes(case: Path, manifest: dict, cols: dict[Name, tuple[str, ...]], wanted: set[tuple[Name, str]],
                   want_ddls: bool, wanted_ts: set[int] = frozenset()
                   ) -> tuple[dict[tuple[Name, str], list[Write]], list[dict[str, Any]], dict[tuple[int, str], str]]:
    """The writes of every wanted key, (when `want_ddls`) every DDL event with its coordinates, both
    in arrival order, and the first record of every wanted commit ts (per table, and under "" for
    any table); one pass over the records."""
    writes: dict[tuple[Name, str], list[Write]] = defaultdict(list)
    ddls: list[dict[str, Any]] = []
    first_at: dict[tuple[int, str], str] = {}
    for ev in decoded_events(case, manifest):
        if ev.get("commit_ts") in wanted_ts and ev["kind"] == "row":
            first_at.setdefault((ev["commit_ts"], f"{ev['schema']}.{ev['table']}"), _coordinates(ev))
            first_at.setdefault((ev["commit_ts"], ""), _coordinates(ev))
        if ev["kind"] == "ddl":
            if want_ddls:
                ddls.append({"commit_ts": ev["commit_ts"], "query": ev["query"], "where": _coordinates(ev),
                             "table": f"{ev['schema']}.{ev['table']}" if ev["table"] else ev["schema"]})
            continue
        if ev["kind"] != "row":
            continue
        name = f"{ev['schema']}.{ev['table']}"
        if name not in cols:
            continue
        for image in (ev["after"], ev["before"]):
            token = _key(image, cols[name])
            if token is not None and (name, token) in wanted:
                writes[(name, token)].append((ev["commit_ts"], _coordinates(ev)))
                break
    return writes, ddls, first_at


def _upstream_writes(case: Path, manifest: dict, cols: dict[Name, tuple[str, ...]],
                     wanted: set[tuple[Name, str]]) -> dict[tuple[Name, str], list[int]]:
    """Commit ts of every upstream change to a wanted key, keys read at the protocol's fidelity."""
    tables = load_truth_tables(Path(case) / "truth")
    chosen, options = selectors(manifest["sink"]), projection_options(manifest)
    out: dict[tuple[Name, str], list[int]] = defaultdict(list)
    # Per table: its view's projection, resolved once (checks/projection.py), not per image.
    projections: dict[Name, Callable[[dict], dict]] = {}
    with open(Path(case) / "truth" / "history.ndjson", "rb") as f:
        for line in f:
            event = orjson.loads(line)
            if event["kind"] != "txn":
                continue
            for ch in event["changes"]:
                name = ch["table"]
                if name not in cols or name not in tables:
                    continue
                project = projections.get(name)
                if project is None:
                    view = consumer_table(tables[name], chosen)
                    project = projections[name] = row_projection(view, manifest["protocol"], options)
                for image in (ch["after"], ch["before"]):
                    if image is None:
                        continue
                    token = _key(project(image), cols[name])
                    if (name, token) in wanted:
                        out[(name, token)].append(event["commit_ts"])
    return out


def _pick(writes: list[Write], f: Finding) -> list[Write]:
    """The copies of the last write the finding is about."""
    if f.commit_ts is not None:
        chosen = [w for w in writes if w[0] == f.commit_ts]
        if chosen:
            return chosen
    bound = f.checkpoint if f.checkpoint is not None else math.inf
    dated = [w for w in writes if w[0] is not None and w[0] <= bound]
    if dated:
        last = max(w[0] for w in dated)
        return [w for w in dated if w[0] == last]
    undated = [w for w in writes if w[0] is None]
    return undated[-1:]


def _ddl_copies(ddls: list[dict[str, Any]], f: Finding) -> list[Write]:
    """The records that carried the finding's DDL, in arrival order: matched on commit ts and query;
    on commit ts and table where the stream words the query otherwise (TiCDC splits a multi-table
    RENAME into events of one commit ts, so the table tells them apart); on the query where the
    stream carries no commit ts for DDLs."""
    for match in (lambda d: d["commit_ts"] == f.commit_ts and d["query"] == f.ddl,
                  lambda d: d["commit_ts"] is not None and d["commit_ts"] == f.commit_ts and d["table"] == f.table,
                  lambda d: d["commit_ts"] is None and d["query"] == f.ddl):
        copies = [(d["commit_ts"], d["where"]) for d in ddls if match(d)]
        if copies:
            return copies
    return []


def _record_text(copies: list[Write], again_label: str = "re-sent at") -> Optional[str]:
    if not copies:
        return None
    text = copies[0][1]
    again = [c[1] for c in copies[1:]]
    if again:
        shown = ", ".join(again[:MAX_COPIES_NAMED]) + (f" and {len(again) - MAX_COPIES_NAMED} more"
                                                       if len(again) > MAX_COPIES_NAMED else "")
        text += f" ({again_label} {shown})"
    return text


def record_coordinates(record: str) -> list[str]:
    """The coordinates a finding's record text names: the record itself, then the copies named."""
    return re.findall(r"[\w.-]+/\d+@\d+", record)


def locate_findings(findings: list[Finding], case: Path, manifest: dict) -> list[Finding]:
    """`findings` with commit ts and record filled in where the stream (or upstream) tells them, and
    where neither does, why (`Finding.unlocated`)."""
    keyed = [f for f in findings if f.key is not None and (f.record is None or f.commit_ts is None)]
    about_ddl = any(f.ddl is not None and f.record is None for f in findings)
    # A finding about a transaction as a whole (order, watermark) names the first record of its commit ts.
    wanted_ts = {f.commit_ts for f in findings if f.key is None and f.ddl is None and f.commit_ts is not None
                 and f.record is None}
    cols: dict[Name, tuple[str, ...]] = {}
    wanted: set[tuple[Name, str]] = set()
    tables = load_truth_tables(Path(case) / "truth")
    if keyed:
        chosen = selectors(manifest["sink"])
        cols = {f.table: consumer_table(tables[f.table], chosen).handle_key for f in keyed if f.table in tables}
        wanted = {(f.table, key_order_token(f.key)) for f in keyed if f.table in cols}
    keyless_rows = any(f.key is None and f.ddl is None and f.commit_ts is None
                       and (f.actual is not None or f.expected is not None) for f in findings)
    if not wanted and not about_ddl and not wanted_ts and not keyless_rows:
        return [f if f.commit_ts is not None and f.record else f.located(None, None, _why(f, tables)) for f in findings]
    writes, ddls, first_at = _stream_writes(Path(case), manifest, cols, wanted, True, wanted_ts)
    upstream: Optional[dict] = None
    out = []
    for f in findings:
        if f.ddl is not None and f.record is None:
            # A broadcast DDL has a copy in every partition: the others are named as copies, not re-sends.
            out.append(f.located(None, _record_text(_ddl_copies(ddls, f), "copies also at"),
                                 "no record of the stream carries this DDL"))
            continue
        slot = (f.table, key_order_token(f.key)) if f.key is not None else None
        if slot not in wanted:
            record = first_at.get((f.commit_ts, f.table)) or first_at.get((f.commit_ts, "")) \
                if f.commit_ts is not None else None
            out.append(f.located(None, record, _why(f, tables)))
            continue
        copies = _pick(writes.get(slot, []), f)
        ts = copies[0][0] if copies else None
        if ts is None and f.commit_ts is None:
            if upstream is None:
                upstream = _upstream_writes(Path(case), manifest, cols, wanted)
            bound = f.checkpoint if f.checkpoint is not None else math.inf
            earlier = [t for t in upstream.get(slot, []) if t <= bound]
            ts = max(earlier) if earlier else None
        out.append(f.located(ts, _record_text(copies)))
    return _by_upstream_history(out, case, manifest, tables, ddls)


def _by_upstream_history(findings: list[Finding], case: Path, manifest: dict, tables: dict,
                         ddls: list[dict[str, Any]]) -> list[Finding]:
    """Findings about a key no row event of the stream wrote (up to their checkpoint), and about a
    row of a table without a key, take the last upstream change to it from the history: a DDL
    (RENAME, EXCHANGE PARTITION, ADD COLUMN) that moved or rewrote the row names that DDL's record."""
    from .upstream_history import RowQuestions, trace

    chosen = selectors(manifest["sink"])
    views = {name: consumer_table(t, chosen) for name, t in tables.items()}
    lost = [i for i, f in enumerate(findings) if f.commit_ts is None and f.ddl is None and f.table in views
            and (f.key is not None or (not views[f.table].handle_key and (f.actual or f.expected) is not None))]
    if not lost:
        return findings
    questions = RowQuestions()
    asked = {i: questions.ask(findings[i].table, findings[i].key, findings[i].actual or findings[i].expected or {},
                              findings[i].checkpoint if findings[i].checkpoint is not None else math.inf)
             for i in lost}
    trace(questions, manifest, Path(case) / "truth", {name: v.handle_key for name, v in views.items()},
          {name: unjudged_columns(t, chosen) for name, t in tables.items()})
    out = list(findings)
    for i, q in asked.items():
        f, last = findings[i], questions.asked[q].last_change
        what = "this key" if f.key is not None else "this row"
        if last is None:
            out[i] = replace(f, unlocated=f"upstream never wrote {what}" + (
                " up to the checkpoint" if f.checkpoint is not None else ""))
            continue
        ts, query = last
        copies = _ddl_copies(ddls, replace(f, commit_ts=ts, ddl=query)) if query is not None else []
        why = f"upstream's last change to {what} is the DDL at ts {ts} ({query})" if query is not None else \
            "the row event that wrote this key is in no record of the stream" if f.key is not None else \
            "a row of a table without a key: its record is not told apart from the others of its transaction"
        out[i] = replace(f, commit_ts=ts, unlocated=None).located(ts, _record_text(copies, "copies also at"), why)
    return out


def _why(f: Finding, tables: dict) -> str:
    """Why a finding not about one key, DDL or transaction names no commit ts or record."""
    if f.rule == "CONSUMER-OUTPUT-1":
        return "a finding about the consumer's output files, not about an upstream change"
    if f.rule == "CONSUMER-TABLE-1":
        return "upstream never created this table: no record carries it"
    if f.key is None and (f.actual is not None or f.expected is not None):
        return "a row of a table without a key, known by its whole image only"
    if f.key is not None and f.table not in tables:
        return "a table upstream never had"
    if f.commit_ts is not None:
        return "no row event of the stream carries this commit ts"
    return "a finding about the whole table, not one change"
