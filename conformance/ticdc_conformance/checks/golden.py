"""The golden corpus: language-agnostic case folders, regenerated only on request and reviewed as a diff.

`golden/<scenario>/<encoding>/`:
- `case.json`         what the case is: scenario, seed, protocol, sink options, topics, files;
- `records.ndjson`    one Kafka record per line (topic, partition, offset, timestamp in ms,
                      timestampType, key and value as base64 or null, headers with base64 values);
- `expected/final/<schema>.<table>.ndjson`
                      the final table states a conformant consumer writes (the ground truth projected
                      onto the protocol's fidelity), in the consumer output form.
`check` rebuilds every case in a scratch folder and compares; a difference names the file, the
record (topic/partition@offset) or row, and the field, with expected and actual values.
"""
from __future__ import annotations

import base64
import binascii
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import orjson
from deepdiff import DeepDiff

from ticdc_generators.canonical import dumps_line
from ticdc_generators.pipeline import config_for, encoding_names, generate
from ticdc_generators.sink.records import iter_record_files

from ..consumer.output import final_file_name, project_row
from .differential import load_truth_tables, project_truth_row, read_rows
from .selection import consumer_table, selectors

CASES: tuple[tuple[str, int], ...] = (("smoke", 1),)
MAX_DIFFS_SHOWN = 25


def record_line(r) -> dict[str, Any]:
    def b64(b: Optional[bytes]) -> Optional[str]:
        return None if b is None else base64.b64encode(b).decode("ascii")

    return {
        "topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp_ms,
        "timestampType": r.timestamp_type, "key": b64(r.key), "value": b64(r.value),
        "headers": [{"key": k, "value": b64(v)} for k, v in r.headers],
    }


def build_case(scenario: str, seed: int, encoding: str, target: Path) -> None:
    """Writes one golden case folder from scratch."""
    config = config_for(scenario, encoding)
    with tempfile.TemporaryDirectory(prefix="ticdc-golden-") as tmp:
        manifest = generate(scenario, seed, config, Path(tmp))
        target.mkdir(parents=True, exist_ok=True)
        records = sorted(iter_record_files(Path(tmp) / "records"), key=lambda r: (r.topic, r.partition, r.offset))
        with open(target / "records.ndjson", "wb") as f:
            for r in records:
                f.write(dumps_line(record_line(r)))
        tables = load_truth_tables(Path(tmp) / "truth")
        final = target / "expected" / "final"
        final.mkdir(parents=True, exist_ok=True)
        files = []
        chosen = selectors(manifest["sink"])
        for qname in sorted(tables):
            t = consumer_table(tables[qname], chosen)  # a consumer knows the selected columns only
            name = final_file_name(t.schema, t.table)
            rows = read_rows(Path(tmp) / "truth" / "final" / name)
            cols = [c.name for c in t.columns if not c.is_virtual]
            with open(final / name, "wb") as f:
                for row in rows:
                    f.write(project_row(project_truth_row(t, row, config.protocol, manifest["sink"]), cols))
            files.append(f"expected/final/{name}")
    case = {
        "description": f"scenario {scenario} (seed {seed}) encoded as {encoding}; a conformant consumer "
                       f"reading records.ndjson writes exactly the files under expected/",
        "scenario": scenario, "seed": seed, "encoding": encoding, "protocol": manifest["protocol"],
        "sink": manifest["sink"], "topics": manifest["topics"], "records": manifest["records"],
        "files": {"records": "records.ndjson", "expected_final": files},
    }
    (target / "case.json").write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")


def expected_cases() -> Iterator[tuple[str, int, str]]:
    for scenario, seed in CASES:
        for encoding in encoding_names():
            yield scenario, seed, encoding


@dataclass
class GoldenDiff:
    file: str
    where: str
    detail: str

    def render(self) -> str:
        return f"{self.file}: {self.where}: {self.detail}"


def _decode_payload(b64: Optional[str]) -> Any:
    """A key/value for diffing: parsed JSON when the bytes are JSON, else the base64 text."""
    if b64 is None:
        return None
    try:
        raw = base64.b64decode(b64)
        return orjson.loads(raw)
    except (binascii.Error, orjson.JSONDecodeError, ValueError):
        return b64


def _readable(record: dict) -> dict:
    return dict(record, key=_decode_payload(record.get("key")), value=_decode_payload(record.get("value")))


def _diff_lines(name: str, expected: list[bytes], actual: list[bytes], records: bool) -> list[GoldenDiff]:
    out: list[GoldenDiff] = []
    for i in range(max(len(expected), len(actual))):
        e = orjson.loads(expected[i]) if i < len(expected) else None
        a = orjson.loads(actual[i]) if i < len(actual) else None
        if e == a:
            continue
        ref = e or a
        where = (f"record {ref['topic']}/{ref['partition']}@{ref['offset']}" if records else f"line {i + 1}")
        if e is None or a is None:
            out.append(GoldenDiff(name, where, "only in the " + ("regenerated output" if e is None else "golden file")))
            continue
        dd = DeepDiff(_readable(e) if records else e, _readable(a) if records else a, verbose_level=2)
        for kind in ("values_changed", "type_changes"):
            for path, ch in dd.get(kind, {}).items():
                out.append(GoldenDiff(name, where, f"field {path.replace('root', '', 1)}: golden "
                                                   f"{ch['old_value']!r}, now {ch['new_value']!r}"))
        for kind, label in (("dictionary_item_removed", "gone"), ("dictionary_item_added", "new"),
                            ("iterable_item_removed", "gone"), ("iterable_item_added", "new")):
            for path, v in dd.get(kind, {}).items():
                out.append(GoldenDiff(name, where, f"field {path.replace('root', '', 1)} {label}: {v!r}"))
    return out


def compare_case(golden: Path, fresh: Path, label: str) -> list[GoldenDiff]:
    diffs: list[GoldenDiff] = []
    g_files = {p.relative_to(golden).as_posix() for p in golden.rglob("*") if p.is_file()}
    f_files = {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
    for rel in sorted(g_files - f_files):
        diffs.append(GoldenDiff(f"{label}/{rel}", "file", "no longer generated"))
    for rel in sorted(f_files - g_files):
        diffs.append(GoldenDiff(f"{label}/{rel}", "file", "newly generated, not in the golden corpus"))
    for rel in sorted(g_files & f_files):
        gb, fb = (golden / rel).read_bytes(), (fresh / rel).read_bytes()
        if gb == fb:
            continue
        if rel.endswith(".ndjson"):
            found = _diff_lines(f"{label}/{rel}", gb.splitlines(), fb.splitlines(), rel == "records.ndjson")
            diffs.extend(found or [GoldenDiff(f"{label}/{rel}", "bytes", "same JSON, different bytes")])
        else:
            dd = DeepDiff(json.loads(gb), json.loads(fb), verbose_level=2)
            diffs.append(GoldenDiff(f"{label}/{rel}", "content", dd.pretty() or "bytes differ"))
    return diffs


def check(golden_root: Path) -> list[GoldenDiff]:
    diffs: list[GoldenDiff] = []
    with tempfile.TemporaryDirectory(prefix="ticdc-golden-check-") as tmp:
        for scenario, seed, encoding in expected_cases():
            label = f"{scenario}/{encoding}"
            case_dir = Path(golden_root) / scenario / encoding
            if not case_dir.exists():
                diffs.append(GoldenDiff(label, "case", "missing from the golden corpus (run `ticdc-conformance golden --update`)"))
                continue
            fresh = Path(tmp) / scenario / encoding
            build_case(scenario, seed, encoding, fresh)
            diffs.extend(compare_case(case_dir, fresh, label))
    return diffs


def update(golden_root: Path) -> dict[str, list[str]]:
    """Regenerates the corpus; the old one is replaced only once the new one is complete."""
    golden_root = Path(golden_root)
    golden_root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".golden-new-", dir=golden_root.parent))
    try:
        for scenario, seed, encoding in expected_cases():
            build_case(scenario, seed, encoding, staging / scenario / encoding)
        changes = _changes(golden_root, staging)
        backup = golden_root.with_name(golden_root.name + ".old")
        if backup.exists():
            shutil.rmtree(backup)
        if golden_root.exists():
            golden_root.rename(backup)
        staging.rename(golden_root)
        if backup.exists():
            shutil.rmtree(backup)
        return changes
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _changes(old: Path, new: Path) -> dict[str, list[str]]:
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()} \
            if root.exists() else {}

    o, n = files(old), files(new)
    return {
        "added": sorted(n.keys() - o.keys()),
        "changed": sorted(k for k in n.keys() & o.keys() if n[k] != o[k]),
        "removed": sorted(o.keys() - n.keys()),
    }
