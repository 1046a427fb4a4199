"""The golden corpus: language-agnostic case folders, regenerated only on request and reviewed as a diff.

`golden/<scenario>/<variant>/` (the cases are matrix.cases(); format: docs/golden-format.md):
- `case.json`                   what the case is: scenario, seed, size, variant and its TiCDC options,
                                the rules it covers, its level and fidelity notes; also a manifest of
                                the consumer protocol (protocol, encoding, sink, topics, scenario, seed);
- `records.ndjson`              one Kafka record per line (topic, partition, offset, timestamp in ms,
                                timestampType, key and value as base64 or null, headers);
- `expected/applied.ndjson`     the applied log a conformant consumer writes (expected.py);
- `expected/final/<schema>.<table>.ndjson`
                                the final table states it writes.
`golden/index.json` lists the cases; `golden/schema/` holds the JSON Schemas of these files (written
by hand, kept across updates). `check` rebuilds every case in a scratch folder and compares; a
difference names the file, the record (topic/partition@offset) or line, and the field. `update`
builds beside the corpus and swaps it in (swap.py).
"""
from __future__ import annotations

import base64
import binascii
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

import orjson
from deepdiff import DeepDiff

from ticdc_conformance.checks.checkpoints import unjudged_by_table
from ticdc_conformance.consumers.output import final_file_name, project_row
from ticdc_conformance.golden.cap import largest_value
from ticdc_conformance.golden.expected import READ_ORDER, Expected, expected_output, ordering_note, value_fidelity
from ticdc_conformance.golden.matrix import Case, cases, level_of
from ticdc_conformance.golden.swap import new_staging, recover, signals_held, sigterm_as_interrupt, swap_in, sweep
from ticdc_conformance.golden.trace import Trace, simulate
from ticdc_conformance.golden.verify import field_changes
from ticdc_conformance.protocols.common.projection import with_version_profile
from ticdc_contract.canonical import dumps_line
from ticdc_generators.pipeline import GENERATOR_VERSION
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.sink.config import SinkConfig

CASE_FORMAT = "ticdc-conformance/golden-case-v1"
INDEX = "index.json"
# Parts of the corpus that an update keeps as they are: the hand-written ones, and the regression
# cases `fuzz` saved (regressions/<encoding>/<case>/, docs/fuzz.md), which no matrix rebuilds.
KEPT = ("schema", "README.md", "regressions")
MAX_DIFFS_SHOWN = 25


def record_line(r) -> dict[str, Any]:
    def b64(b: Optional[bytes]) -> Optional[str]:
        return None if b is None else base64.b64encode(b).decode("ascii")

    return {
        "topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp_ms,
        "timestampType": r.timestamp_type, "key": b64(r.key), "value": b64(r.value),
        "headers": [{"key": k, "value": b64(v)} for k, v in r.headers],
    }


def build_case(case: Case, target: Path, scratch: Optional[Path] = None) -> dict:
    """Writes one golden case folder from scratch; returns its case.json content. The ground truth
    goes to a temporary folder under `scratch` (the system's temporary folder when None)."""
    config = case.config()
    options = with_version_profile(config.ticdc_options(), config.version_profile)
    with tempfile.TemporaryDirectory(prefix="ticdc-golden-", dir=scratch) as tmp:
        trace = simulate(case.scenario, case.seed, case.events, config, Path(tmp) / "truth", case.max_value_bytes)
        hidden = unjudged_by_table(Path(tmp) / "truth", options)
    expected = expected_output(trace, config.protocol, options, hidden)
    finals = write_case_files(target, trace, expected)
    doc = case_document(case, config, trace, expected, hidden, finals)
    (target / "case.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


def write_case_files(target: Path, trace: Trace, expected: Expected) -> list[str]:
    """records.ndjson and expected/; returns the final-state files written."""
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "records.ndjson", "wb") as f:
        for r in sorted(trace.records, key=lambda r: (r.topic, r.partition, r.offset)):
            f.write(dumps_line(record_line(r)))
    (target / "expected" / "final").mkdir(parents=True, exist_ok=True)
    with open(target / "expected" / "applied.ndjson", "wb") as f:
        for entry in expected.applied:
            f.write(dumps_line(entry))
    finals = []
    for (schema, table), (columns, rows) in expected.final.items():
        name = final_file_name(schema, table)
        with open(target / "expected" / "final" / name, "wb") as f:
            for row in rows:
                f.write(project_row(row, columns))
        finals.append(f"expected/final/{name}")
    return finals


def case_document(case: Case, config: SinkConfig, trace: Trace, expected: Expected, hidden: dict,
                  finals: list[str]) -> dict:
    """case.json (golden/schema/case.schema.json)."""
    rules = case.rules(expected.ordering)
    size = "" if case.events is None else f", {case.events} events"
    return {
        "format": CASE_FORMAT,
        "case": case.path,
        "description": f"{case.variant.feature}; scenario {case.scenario} (seed {case.seed}{size}). A conformant "
                       "consumer reading records.ndjson writes expected/applied.ndjson and the tables under "
                       "expected/final/.",
        "scenario": case.scenario,
        "scenario_description": get_scenario(case.scenario).description,
        "seed": case.seed,
        "events": case.events,
        "size": {"max_value_bytes": case.max_value_bytes, "rows_left_out": trace.rows_left_out,
                 "largest_value_bytes": largest_value(trace.history)},
        "variant": case.variant.name,
        "feature": case.variant.feature,
        "encoding": config.encoding,
        "protocol": config.protocol,
        "options": dict(case.variant.options),
        "sink": config.ticdc_options(),
        "generator": {"version": GENERATOR_VERSION, "version_profile": config.version_profile,
                      "watermark_interval_ms": config.watermark_interval_ms,
                      "interleave_tables": config.interleave_tables, "failovers": config.failovers,
                      "failover_spacing": config.failover_spacing, "checkpoint_lag": config.checkpoint_lag,
                      "restarts": trace.restarts},
        "level": level_of(rules),
        "rules": rules,
        "topics": trace.topics,
        "records": len(trace.records),
        "expected": {"ordering": expected.ordering, "read_order": READ_ORDER, **expected.counts()},
        "fidelity": {
            "notes": list(case.variant.notes) + ordering_note(expected, trace.restarts)
                     + ([case.note] if case.note else []),
            "values": value_fidelity(trace, config.protocol, config.ticdc_options()),
            "undetermined_tables": expected.undetermined,
            "unjudged_columns": {f"{schema}.{table}": sorted(cols) for (schema, table), cols in sorted(hidden.items())
                                 if cols},
        },
        "files": {"records": "records.ndjson", "applied": "expected/applied.ndjson", "final": finals},
    }


def index_entry(doc: dict) -> dict:
    return {k: doc[k] for k in ("case", "scenario", "variant", "encoding", "protocol", "level", "records")}


def write_index(root: Path, docs: list[dict]) -> None:
    body = {"format": "ticdc-conformance/golden-index-v1", "cases": [index_entry(d) for d in docs]}
    (Path(root) / INDEX).write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n")


def select(only: Optional[Iterable[str]] = None) -> list[Case]:
    """The matrix's cases, or those of them whose `scenario/variant` path is in `only`."""
    every = list(cases())
    if only is None:
        return every
    wanted = set(only)
    unknown = wanted - {c.path for c in every}
    if unknown:
        raise ValueError(f"no golden case {', '.join(sorted(unknown))} in the matrix (golden_matrix.py)")
    return [c for c in every if c.path in wanted]


def build_all(root: Path, chosen: list[Case]) -> list[dict]:
    """The cases under `root`, their scratch folders inside it too (removed by whoever removes `root`)."""
    docs = [build_case(case, Path(root) / case.path, scratch=Path(root)) for case in chosen]
    write_index(root, docs)
    return docs


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


def _where(ref: dict, i: int, records: bool) -> str:
    if records:
        return f"record {ref['topic']}/{ref['partition']}@{ref['offset']}"
    if ref.get("kind") == "checkpoint":
        return f"line {i + 1} (checkpoint {ref.get('ts')})"
    if ref.get("kind") in ("txn", "ddl"):
        return f"line {i + 1} ({ref['kind']} at commit ts {ref.get('commit_ts')})"
    return f"line {i + 1}"


def _diff_lines(name: str, expected: list[bytes], actual: list[bytes], records: bool) -> list[GoldenDiff]:
    out: list[GoldenDiff] = []
    for i in range(max(len(expected), len(actual))):
        try:
            e = orjson.loads(expected[i]) if i < len(expected) else None
        except orjson.JSONDecodeError as err:
            out.append(GoldenDiff(name, f"line {i + 1}", f"the golden line is not JSON ({err})"))
            continue
        a = orjson.loads(actual[i]) if i < len(actual) else None
        if e == a:
            continue
        where = _where(e or a, i, records)
        if e is None or a is None:
            out.append(GoldenDiff(name, where, "only in the " + ("regenerated output" if e is None else "golden file")))
            continue
        changes = field_changes(_readable(e) if records else e, _readable(a) if records else a,
                                "golden", "now", "gone", "new")
        out += [GoldenDiff(name, where, c) for c in changes]
    return out


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def compare_case(golden: Path, fresh: Path, label: str) -> list[GoldenDiff]:
    diffs: list[GoldenDiff] = []
    g_files, f_files = _files(golden), _files(fresh)
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
            try:
                dd = DeepDiff(json.loads(gb), json.loads(fb), verbose_level=2)
            except json.JSONDecodeError as err:
                diffs.append(GoldenDiff(f"{label}/{rel}", "content", f"the golden file is not JSON ({err})"))
                continue
            diffs.append(GoldenDiff(f"{label}/{rel}", "content", dd.pretty() or "bytes differ"))
    return diffs


def _case_dirs(root: Path) -> set[str]:
    """`scenario/variant` of every folder holding a case.json."""
    return {p.parent.relative_to(root).as_posix() for p in Path(root).glob("*/*/case.json")}


def check(golden_root: Path, only: Optional[Iterable[str]] = None) -> list[GoldenDiff]:
    """Every difference between the corpus and a fresh build. `only` (case paths) checks those
    cases alone, without the index and without looking for cases or files no longer generated.
    A corpus that an interrupted update left as `<corpus>.old` is put back first (swap.py)."""
    golden_root = Path(golden_root)
    diffs: list[GoldenDiff] = []
    wanted = select(only)
    with sigterm_as_interrupt(), tempfile.TemporaryDirectory(prefix="ticdc-golden-check-") as tmp:
        recover(golden_root)
        docs = []
        for case in wanted:
            fresh = Path(tmp) / case.path
            docs.append(build_case(case, fresh, scratch=Path(tmp)))
            case_dir = golden_root / case.path
            if not case_dir.exists():
                diffs.append(GoldenDiff(case.path, "case", "missing from the golden corpus "
                                                           "(run `ticdc-conformance golden --update`)"))
                continue
            diffs.extend(compare_case(case_dir, fresh, case.path))
        if only is None:
            diffs.extend(stale_cases(golden_root))
            diffs.extend(stray_files(golden_root))
            write_index(Path(tmp), docs)
            diffs.extend(_compare_index(golden_root, Path(tmp)))
    return diffs


def stale_cases(golden_root: Path) -> list[GoldenDiff]:
    """Case folders of the corpus that the matrix no longer has."""
    return [GoldenDiff(stale, "case", "no longer in the golden matrix (golden_matrix.py)")
            for stale in sorted(_case_dirs(Path(golden_root)) - {c.path for c in cases()})]


def stray_files(golden_root: Path) -> list[GoldenDiff]:
    """Files outside the case folders that an update would remove: anything but the index and the
    hand-written parts (KEPT), at the top level, in a scenario folder or deeper. Files inside a case
    folder are the case comparison's (compare_case) or the stale case's (stale_cases)."""
    root = Path(golden_root)
    case_dirs = _case_dirs(root) | {c.path for c in cases()}
    out = []
    for rel in sorted(_files(root)):
        parts = rel.split("/")
        if rel == INDEX or parts[0] in KEPT or (len(parts) > 2 and "/".join(parts[:2]) in case_dirs):
            continue
        out.append(GoldenDiff(rel, "file", "no longer generated"))
    return out + _empty_folders(root)


def _empty_folders(root: Path) -> list[GoldenDiff]:
    """Folders without a file in them, outside the hand-written parts: an update leaves them out,
    so a check names them too (the outermost of nested ones)."""
    holding = {parent.as_posix() for rel in _files(root) for parent in Path(rel).parents}
    out: list[GoldenDiff] = []
    for folder in sorted(p.relative_to(root) for p in root.rglob("*") if p.is_dir()):
        rel = folder.as_posix()
        if rel in holding or folder.parts[0] in KEPT or any(rel.startswith(d.file + "/") for d in out):
            continue
        out.append(GoldenDiff(rel, "folder", "empty; an update removes it"))
    return out


def _compare_index(golden_root: Path, fresh_root: Path) -> list[GoldenDiff]:
    old, new = golden_root / INDEX, fresh_root / INDEX
    if not old.exists():
        return [GoldenDiff(INDEX, "file", "missing from the golden corpus")]
    if old.read_bytes() == new.read_bytes():
        return []
    dd = DeepDiff(json.loads(old.read_bytes()), json.loads(new.read_bytes()), verbose_level=2)
    return [GoldenDiff(INDEX, "content", dd.pretty() or "bytes differ")]


def update(golden_root: Path, only: Optional[Iterable[str]] = None) -> dict[str, list[str]]:
    """Regenerates the corpus; the old one is replaced only once the new one is complete, in one
    swap (swap.py). The hand-written parts (KEPT) are carried over unchanged. A corpus left
    as `<corpus>.old` by an interrupted update is put back first, and the staging folders of
    interrupted updates are removed. SIGTERM stops it as Ctrl-C does (GoldenInterrupted), leaving
    a whole corpus (the old one; the new one if the signal came during the swap) and no scratch
    folder. With `only` (case paths) the new corpus holds those cases alone (for tests on a
    scratch copy)."""
    golden_root = Path(golden_root)
    chosen = select(only)
    golden_root.parent.mkdir(parents=True, exist_ok=True)
    with sigterm_as_interrupt():
        recover(golden_root)
        sweep(golden_root)
        staging = new_staging(golden_root)
        try:
            build_all(staging, chosen)
            for name in KEPT:
                src = golden_root / name
                if src.is_dir():
                    shutil.copytree(src, staging / name)
                elif src.is_file():
                    shutil.copy2(src, staging / name)
            changes = _changes(golden_root, staging)
            swap_in(staging, golden_root)
            return changes
        finally:
            with signals_held():  # after an exchange, staging holds the old corpus
                shutil.rmtree(staging, ignore_errors=True)


def render_changes(changes: dict[str, list[str]]) -> list[str]:
    """One line per file added, changed or removed, then a count."""
    lines = [f"{kind:8} {f}" for kind in ("added", "changed", "removed") for f in changes[kind]]
    counts = ", ".join(f"{len(changes[k])} {k}" for k in ("added", "changed", "removed"))
    return lines + [f"golden corpus updated: {counts}"]


def _changes(old: Path, new: Path) -> dict[str, list[str]]:
    o, n = _files(old), _files(new)
    return {
        "added": sorted(n - o),
        "changed": sorted(k for k in n & o if (new / k).read_bytes() != (old / k).read_bytes()),
        "removed": sorted(o - n),
    }


def iter_case_dirs(golden_root: Path) -> Iterator[Path]:
    """The case folders of a corpus, in path order."""
    for rel in sorted(_case_dirs(Path(golden_root))):
        yield Path(golden_root) / rel
