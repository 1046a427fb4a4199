"""A consumer's output held against a golden case's expected files (docs/golden-format.md, "Comparing").

What is compared, and what is not significant:
- `final/<schema>.<table>.ndjson`: the rows of each expected table as a multiset (row and key order
  free); a missing file is an empty table; a table the case lists under
  `fidelity.undetermined_tables` is not compared (the stream does not determine it);
- `applied.ndjson` with checkpoints or commit ts: line by line, except that the rows of one `txn`
  line form a multiset, and so do DDL lines sharing one commit ts (one multi-table DDL job);
- `applied.ndjson` in arrival order (`expected.ordering` = arrival): the lines as a multiset, since
  the order across partitions is the reading's, not the stream's.
Every difference names the file, the line (with its kind and commit ts) and the field.
"""
from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Optional

import orjson
from deepdiff import DeepDiff

from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter

_SORTED = orjson.OPT_SORT_KEYS
MAX_REPORTED = 25


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=_SORTED)


class GoldenFileError(ValueError):
    """A golden or consumer file that is not in its documented form; names the file and line."""


def read_ndjson(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(orjson.loads(line))
                except orjson.JSONDecodeError as e:
                    raise GoldenFileError(f"{path} line {n}: not JSON ({e})") from None
    return out


def case_records(case_dir: Path) -> Iterator[KafkaRecord]:
    """The records of a case, decoded from records.ndjson."""
    path = Path(case_dir) / "records.ndjson"

    def raw(text: Optional[str]) -> Optional[bytes]:
        return None if text is None else base64.b64decode(text, validate=True)

    for n, line in enumerate(read_ndjson(path), 1):
        try:
            yield KafkaRecord(topic=line["topic"], partition=line["partition"], offset=line["offset"],
                              key=raw(line["key"]), value=raw(line["value"]), timestamp_ms=line["timestamp"],
                              headers=tuple((h["key"], raw(h["value"])) for h in line["headers"]),
                              timestamp_type=line["timestampType"])
        except (KeyError, TypeError, ValueError) as e:
            where = f"{line.get('topic')}/{line.get('partition')}@{line.get('offset')}" if isinstance(line, dict) else "?"
            raise GoldenFileError(f"{path} line {n} (record {where}): not a record line ({e!r})") from None


def write_record_files(case_dir: Path, out: Path) -> int:
    """The case's records as record files (docs/consumer-protocol.md), for a consumer under test."""
    with RecordFileWriter(out) as writer:
        writer.write_all(case_records(case_dir))
        return writer.count


def _judged(row: Optional[dict], hidden: list[str]) -> Optional[dict]:
    return row if row is None or not hidden else {k: v for k, v in row.items() if k not in hidden}


def _normalized(entry: dict, unjudged: dict[str, list[str]]) -> dict:
    if entry.get("kind") != "txn":
        return entry
    rows = []
    for r in entry.get("rows") or []:
        hidden = unjudged.get(f"{r.get('schema')}.{r.get('table')}", [])
        rows.append(dict(r, before=_judged(r.get("before"), hidden), after=_judged(r.get("after"), hidden)))
    return dict(entry, rows=sorted(rows, key=_canon))


def _normalized_log(entries: list[dict], unjudged: dict[str, list[str]]) -> list[dict]:
    """Unjudged columns dropped, rows of a transaction sorted, consecutive DDL of one commit ts sorted."""
    out = [_normalized(e, unjudged) for e in entries]
    i = 0
    while i < len(out):
        j = i
        while (j + 1 < len(out) and out[i].get("kind") == "ddl" and out[j + 1].get("kind") == "ddl"
               and out[j + 1].get("commit_ts") == out[i].get("commit_ts")):
            j += 1
        out[i:j + 1] = sorted(out[i:j + 1], key=_canon)
        i = j + 1
    return out


def _label(entry: dict) -> str:
    kind = entry.get("kind")
    if kind == "checkpoint":
        return f"checkpoint {entry.get('ts')}"
    return f"{kind} at commit ts {entry.get('commit_ts')}"


def field_changes(old: Any, new: Any, was: str = "expected", now: str = "got", removed: str = "missing",
                  added: str = "unexpected") -> list[str]:
    """Every changed, removed and added field between two JSON documents, by path."""
    dd = DeepDiff(old, new, verbose_level=2)
    out = []
    for kind in ("values_changed", "type_changes"):
        for path, ch in dd.get(kind, {}).items():
            out.append(f"field {path.replace('root', '', 1)}: {was} {ch['old_value']!r}, {now} {ch['new_value']!r}")
    for kind, label in (("dictionary_item_removed", removed), ("dictionary_item_added", added),
                        ("iterable_item_removed", removed), ("iterable_item_added", added)):
        for path, v in dd.get(kind, {}).items():
            out.append(f"field {path.replace('root', '', 1)} {label}: {v!r}")
    return out


def compare_applied(case: dict, expected: list[dict], actual: list[dict]) -> list[str]:
    name = "applied.ndjson"
    unjudged = case["fidelity"]["unjudged_columns"]
    e, a = _normalized_log(expected, unjudged), _normalized_log(actual, unjudged)
    if case["expected"]["ordering"] == "arrival":
        want, got = Counter(map(_canon, e)), Counter(map(_canon, a))
        out = [f"{name}: missing {n} time(s): {k.decode()[:300]}" for k, n in sorted((want - got).items())]
        out += [f"{name}: unexpected {n} time(s): {k.decode()[:300]}" for k, n in sorted((got - want).items())]
        return out[:MAX_REPORTED]
    out: list[str] = []
    for i in range(max(len(e), len(a))):
        if i < len(e) and i < len(a):
            if e[i] != a[i]:
                where = f"{name} line {i + 1} ({_label(e[i])})"
                out += [f"{where}: {c}" for c in field_changes(e[i], a[i])] or [f"{where}: differs"]
        elif i < len(e):
            out.append(f"{name} line {i + 1} ({_label(e[i])}): missing from the consumer's log")
        else:
            out.append(f"{name} line {i + 1} ({_label(a[i])}): beyond the expected log")
        if len(out) >= MAX_REPORTED:
            break
    return out


def compare_final(case_dir: Path, case: dict, actual_final: Path) -> list[str]:
    skipped = set(case["fidelity"]["undetermined_tables"])
    expected_names = {Path(f).name for f in case["files"]["final"]}
    actual_names = {p.name for p in Path(actual_final).glob("*.ndjson")} if Path(actual_final).is_dir() else set()
    out: list[str] = []
    for file_name in sorted(expected_names | actual_names):
        table = file_name[: -len(".ndjson")]
        if table in skipped:
            continue
        hidden = case["fidelity"]["unjudged_columns"].get(table, [])
        e = Counter(map(_canon, read_ndjson(Path(case_dir) / "expected" / "final" / file_name)))
        a = Counter(_canon(_judged(r, hidden)) for r in read_ndjson(Path(actual_final) / file_name))
        if file_name not in expected_names and a:
            out.append(f"final/{file_name}: a table that does not exist at the end holds {sum(a.values())} row(s)")
            continue
        out += [f"final/{file_name}: missing row ({n}x): {k.decode()[:300]}" for k, n in sorted((e - a).items())]
        out += [f"final/{file_name}: unexpected row ({n}x): {k.decode()[:300]}" for k, n in sorted((a - e).items())]
    return out[:MAX_REPORTED] + ([f"… {len(out) - MAX_REPORTED} more"] if len(out) > MAX_REPORTED else [])


def verify_output(case_dir: Path, out: Path, applied: bool = True) -> list[str]:
    """Differences between a consumer's output folder and the case's expected files (none: equal).
    `applied=False` compares the final state only (a consumer that writes final/ only)."""
    case = json.loads((Path(case_dir) / "case.json").read_text())
    problems = compare_final(case_dir, case, Path(out) / "final")
    if applied:
        actual_log = Path(out) / "applied.ndjson"
        if not actual_log.exists():
            problems.append("applied.ndjson: the consumer wrote none")
        else:
            problems += compare_applied(case, read_ndjson(Path(case_dir) / case["files"]["applied"]),
                                        read_ndjson(actual_log))
    return problems
