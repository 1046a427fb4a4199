"""Where a finding's row was last written: its commit ts and the Kafka record that carried it.

A check compares tables; the record a reader wants to look at is in the stream. After a run's
checks, the records are decoded once more with the reference decoders (only when a finding names
a row key, and keeping only the keys findings name) and each such finding gets the commit ts and
the topic/partition@offset of the last row event for its key: at or below the checkpoint the
finding compared at, or at the commit ts the finding is about. Re-sent copies of that event
(at-least-once replays) are named too. Where the stream carries no commit ts (Canal-JSON without
the TiDB extension), the commit ts comes from the upstream history (truth/history.ndjson).
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator, Optional

import orjson

from ticdc_generators.canonical import key_order_token

from ..consumer.decode_stage import PartitionDecoders
from ..consumer.decoder_options import decoder_options
from ..consumer.local import merged_records
from .differential import load_truth_tables, project_truth_row
from .finding import Finding
from .selection import consumer_table, selectors

MAX_COPIES_NAMED = 3
Name = str  # "schema.table"
Write = tuple[Optional[int], str]  # (commit ts, coordinates)


def decoded_rows(case: Path, manifest: dict) -> Iterator[dict[str, Any]]:
    """Every row event of a generated run as the reference decoders read it (decode_stage rows,
    with `after`/`before` parsed), in the merged arrival order a consumer sees."""
    decoders = PartitionDecoders(manifest["protocol"], decoder_options(manifest, Path(case)))
    for record in merged_records(Path(case) / "records"):
        for ev in decoders.decode(record):
            if ev["kind"] == "row":
                ev["after"] = orjson.loads(ev["after"]) if ev["after"] is not None else None
                ev["before"] = orjson.loads(ev["before"]) if ev["before"] is not None else None
                yield ev


def _key(image: Optional[dict], cols: tuple[str, ...]) -> Optional[str]:
    if image is None or not cols or any(c not in image for c in cols):
        return None
    return key_order_token([image[c] for c in cols])


def _record_writes(case: Path, manifest: dict, cols: dict[Name, tuple[str, ...]],
                   wanted: set[tuple[Name, str]]) -> dict[tuple[Name, str], list[Write]]:
    writes: dict[tuple[Name, str], list[Write]] = defaultdict(list)
    for ev in decoded_rows(case, manifest):
        name = f"{ev['schema']}.{ev['table']}"
        if name not in cols:
            continue
        where = f"{ev['topic']}/{ev['partition']}@{ev['offset']}"
        for image in (ev["after"], ev["before"]):
            token = _key(image, cols[name])
            if token is not None and (name, token) in wanted:
                writes[(name, token)].append((ev["commit_ts"], where))
                break
    return writes


def _upstream_writes(case: Path, manifest: dict, cols: dict[Name, tuple[str, ...]],
                     wanted: set[tuple[Name, str]]) -> dict[tuple[Name, str], list[int]]:
    """Commit ts of every upstream change to a wanted key, keys read at the protocol's fidelity."""
    tables = load_truth_tables(Path(case) / "truth")
    chosen = selectors(manifest["sink"])
    out: dict[tuple[Name, str], list[int]] = defaultdict(list)
    with open(Path(case) / "truth" / "history.ndjson", "rb") as f:
        for line in f:
            event = orjson.loads(line)
            if event["kind"] != "txn":
                continue
            for ch in event["changes"]:
                name = ch["table"]
                if name not in cols or name not in tables:
                    continue
                view = consumer_table(tables[name], chosen)
                for image in (ch["after"], ch["before"]):
                    if image is None:
                        continue
                    token = _key(project_truth_row(view, image, manifest["protocol"], manifest["sink"]), cols[name])
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


def _record_text(copies: list[Write]) -> Optional[str]:
    if not copies:
        return None
    text = copies[0][1]
    again = [c[1] for c in copies[1:]]
    if again:
        shown = ", ".join(again[:MAX_COPIES_NAMED]) + (f" and {len(again) - MAX_COPIES_NAMED} more"
                                                       if len(again) > MAX_COPIES_NAMED else "")
        text += f" (re-sent at {shown})"
    return text


def locate_findings(findings: list[Finding], case: Path, manifest: dict) -> list[Finding]:
    """`findings` with commit ts and record filled in where the stream (or upstream) tells them."""
    keyed = [f for f in findings if f.key is not None and (f.record is None or f.commit_ts is None)]
    if not keyed:
        return findings
    tables = load_truth_tables(Path(case) / "truth")
    chosen = selectors(manifest["sink"])
    cols = {f.table: consumer_table(tables[f.table], chosen).handle_key for f in keyed if f.table in tables}
    wanted = {(f.table, key_order_token(f.key)) for f in keyed if f.table in cols}
    if not wanted:
        return findings
    writes = _record_writes(Path(case), manifest, cols, wanted)
    upstream: Optional[dict] = None
    out = []
    for f in findings:
        slot = (f.table, key_order_token(f.key)) if f.key is not None else None
        if slot not in wanted:
            out.append(f)
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
    return out
