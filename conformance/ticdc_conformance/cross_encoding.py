"""The encodings against each other, at the fidelity they all share.

One scenario and seed give one upstream history; every encoding of the default matrix carries
the same row events. Each encoding's records are decoded with the reference decoders, every value
is lowered to the meet of the encodings' fidelities (per column type, at the schema version in
force at the event's commit ts: a value an encoding keeps exactly goes through the projection of
each other encoding that loses something of it, `lower_value`/`lower_column` in
protocols/<p>/fidelity.py), and the events are compared pairwise by (commit ts, table, op, key).
The ground truth plays no part: two encodings that disagree on what they all can know point at
an encoder or a decoder bug, whichever consumer reads them. A finding names the rule of each
side's type mapping, the column and its type, the key, the commit ts and every side's record.
docs/checks.md describes the check and its findings.

It sits with the entry points, not in checks/: it runs the generator once per encoding before it
judges, and the verdict layer never runs generators.
"""
from __future__ import annotations

import bisect
import hashlib
import shlex
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import orjson

from ticdc_conformance.checks.locate import decoded_rows
from ticdc_conformance.fidelity.roundtrip import same_value
from ticdc_conformance.findings.finding import Finding, RunContext, row_diff
from ticdc_conformance.folders import case_folder, recreate
from ticdc_conformance.protocols import ProtocolSpec, protocol
from ticdc_conformance.protocols.common.projection import projection_options
from ticdc_conformance.rules.catalogue import default_catalogue
from ticdc_contract.canonical import key_order_token
from ticdc_contract.model import Column, TableSchema
from ticdc_contract.schema_json import table_from_json
from ticdc_contract.tidb_types import TiDBType
from ticdc_generators.pipeline import config_for, encoding_names, generate

MAX_FINDINGS = 50
Lowering = Callable[[Column, Any], Any]


class SchemaTimeline:
    """The table schema in force at a commit ts, from truth/tables.ndjson."""

    def __init__(self, truth: Path) -> None:
        self._versions: dict[str, list[tuple[int, TableSchema]]] = defaultdict(list)
        with open(Path(truth) / "tables.ndjson", "rb") as f:
            for line in f:
                t = table_from_json(orjson.loads(line))
                self._versions[t.qualified_name].append((t.schema_version, t))
        for versions in self._versions.values():
            versions.sort(key=lambda v: v[0])

    def at(self, name: str, commit_ts: Optional[int]) -> Optional[TableSchema]:
        versions = self._versions.get(name)
        if not versions:
            return None
        if commit_ts is None:
            return versions[-1][1]
        i = bisect.bisect_left([v for v, _ in versions], commit_ts)
        return versions[i - 1][1] if i else None


def lowering(name: str, options: dict) -> Lowering:
    """One encoding's lowering of a column value to its fidelity."""
    lower = protocol(name).lower_column
    return lambda column, value: lower(column, value, options)


@dataclass
class _Seen:
    """One event of one encoding: its images at the meet, and the records that carried it."""

    after: Optional[dict]
    before: Optional[dict]
    records: list[str] = field(default_factory=list)


@dataclass
class CrossVerdict:
    scenario: str
    seed: int
    encodings: list[str]
    time_zone: str = "UTC"
    events: dict[str, int] = field(default_factory=dict)  # distinct row events per encoding
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0

    @property
    def agree(self) -> bool:
        return not self.findings and not self.suppressed

    @property
    def context(self) -> RunContext:
        zone = f" --time-zone {shlex.quote(self.time_zone)}" if self.time_zone != "UTC" else ""
        return RunContext(self.scenario, self.seed,
                          f"ticdc-conformance differential --scenario {self.scenario} --seed {self.seed}{zone}")

    def render(self) -> str:
        head = (f"encodings {'agree' if self.agree else 'DISAGREE'} at their common fidelity (scenario "
                f"{self.scenario}, seed {self.seed}): " + ", ".join(f"{e} {n} row events" for e, n in self.events.items()))
        lines = [head] + ["\n".join("  " + line for line in f.render(self.context).splitlines()) for f in self.findings]
        if self.suppressed:
            lines.append(f"  … and {self.suppressed} more finding(s)")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"scenario": self.scenario, "seed": self.seed, "encodings": self.encodings, "events": self.events,
                "agree": self.agree, "replay": self.context.replay, "suppressed_findings": self.suppressed,
                "findings": [f.to_json() for f in self.findings]}


class CrossCheck:
    def __init__(self, scenario: str, seed: int, cases: dict[str, tuple[Path, dict]], time_zone: str = "UTC") -> None:
        self.scenario, self.seed, self.cases = scenario, seed, cases
        self.encodings = list(cases)
        first = next(iter(cases.values()))[0]
        self.timeline = SchemaTimeline(first / "truth")
        self.lowerings = {enc: lowering(m["protocol"], projection_options(m)) for enc, (_, m) in cases.items()}
        self.rules: dict[str, ProtocolSpec] = {enc: protocol(m["protocol"]) for enc, (_, m) in cases.items()}
        self.catalogue = default_catalogue()
        self.verdict = CrossVerdict(scenario, seed, self.encodings, time_zone)

    # --- one encoding ----------------------------------------------------------------------------
    def _meet(self, enc: str, table: Optional[TableSchema], image: Optional[dict]) -> Optional[dict]:
        """The image at the common fidelity: every other encoding's lowering applied."""
        if image is None:
            return None
        columns = {c.name: c for c in table.columns} if table is not None else {}
        out = {}
        for name, value in image.items():
            column = columns.get(name)
            if column is not None:
                for other in self.encodings:
                    if other != enc:
                        value = self.lowerings[other](column, value)
            out[name] = value
        return out

    def _identity(self, ev: dict, table: Optional[TableSchema], after: Optional[dict],
                  before: Optional[dict]) -> tuple:
        image = after if ev["op"] != "delete" else before
        keys = table.handle_key if table is not None else ()
        if keys and image is not None and all(k in image for k in keys):
            key: Any = [image[k] for k in keys]
        else:  # no handle key: the row is its image
            key = image
        return (ev["commit_ts"], f"{ev['schema']}.{ev['table']}", ev["op"],
                key_order_token(key) if isinstance(key, list) else orjson.dumps(key, option=orjson.OPT_SORT_KEYS))

    def read(self, enc: str) -> dict[tuple, _Seen]:
        case, manifest = self.cases[enc]
        seen: dict[tuple, _Seen] = {}
        for ev in decoded_rows(case, manifest):
            table = self.timeline.at(f"{ev['schema']}.{ev['table']}", ev["commit_ts"])
            after, before = self._meet(enc, table, ev["after"]), self._meet(enc, table, ev["before"])
            ident = self._identity(ev, table, after, before)
            where = f"{ev['topic']}/{ev['partition']}@{ev['offset']}"
            known = seen.get(ident)
            if known is None:
                seen[ident] = _Seen(after, before, [where])
                continue
            known.records.append(where)
            if known.after != after or known.before != before:
                self._add(self._finding(ident, table, f"re-sent copies of one row event differ in {enc}",
                                        self._image(known, ident[2]), self._image(_Seen(after, before), ident[2]),
                                        {enc: [known.records[0]], f"{enc} copy": [where]}, [enc]))
        self.verdict.events[enc] = len(seen)
        return seen

    # --- comparing -------------------------------------------------------------------------------
    def _add(self, f: Finding) -> None:
        if len(self.verdict.findings) >= MAX_FINDINGS:
            self.verdict.suppressed += 1
        else:
            self.verdict.findings.append(f)

    def _type_rules(self, table: Optional[TableSchema], columns: list[str], encs: list[str]) -> str:
        types = {c.name: c.type for c in table.columns} if table is not None else {}
        rules = [self._type_rule(e, types[c]) for e in encs for c in columns if c in types]
        rules = rules or [self.rules[e].row_rule for e in encs]
        return " / ".join(dict.fromkeys(rules))

    def _type_rule(self, enc: str, t: TiDBType) -> str:
        # A protocol's type rule may hold for one of its encodings only (Simple's mysqlType table
        # gives Avro types): the other encodings answer to the protocol's row rule.
        rule = self.rules[enc].type_rule(t)
        return rule if enc in self.catalogue.get(rule).protocols else self.rules[enc].row_rule

    def _finding(self, ident: tuple, table: Optional[TableSchema], message: str, expected: Optional[dict],
                 actual: Optional[dict], records: dict[str, list[str]], blamed: list[str],
                 columns: Optional[list[str]] = None) -> Finding:
        """`expected` is the image most encodings read, `actual` the one `blamed` read."""
        ts, name, op, _ = ident
        keys = table.handle_key if table is not None else ()
        image = expected or actual or {}
        key = [image.get(k) for k in keys] if keys else None
        rule = (self._type_rules(table, columns, blamed) if columns
                else " / ".join(dict.fromkeys(self.rules[b].row_rule for b in blamed)))
        diff = row_diff(expected, actual) if expected is not None and actual is not None else {}
        return Finding(rule, name, key, f"{op}: {message}", diff, commit_ts=ts,
                       record="; ".join(f"{enc} {where[0]}" for enc, where in records.items()),
                       expected=expected, actual=actual)

    @staticmethod
    def _image(seen: _Seen, op: str) -> Optional[dict]:
        return seen.after if op != "delete" else seen.before

    def compare(self, seen: dict[str, dict[tuple, _Seen]]) -> None:
        idents = sorted(set().union(*(s.keys() for s in seen.values())), key=lambda i: (i[0] or 0, i[1:]))
        for ident in idents:
            have = {enc: seen[enc][ident] for enc in self.encodings if ident in seen[enc]}
            table = self.timeline.at(ident[1], ident[0])
            missing = [enc for enc in self.encodings if enc not in have]
            if missing:
                self._add(self._finding(ident, table, f"row event carried by {', '.join(have)} but read from none "
                                        f"of {', '.join(missing)}'s records", self._image(next(iter(have.values())),
                                                                                          ident[2]),
                                        None, {e: s.records for e, s in have.items()}, missing))
                continue
            for side in ("after", "before"):
                self._compare_side(ident, table, side, have)

    def _compare_side(self, ident: tuple, table: Optional[TableSchema], side: str, have: dict[str, _Seen]) -> None:
        images = {enc: getattr(s, side) for enc, s in have.items()}
        columns = sorted(set().union(*(img.keys() for img in images.values() if img is not None)))
        by_column: dict[tuple, list[str]] = defaultdict(list)  # (column, minority encodings) -> columns
        for column in columns:
            groups = _groups({enc: (img.get(column, _MISSING) if img is not None else _MISSING)
                              for enc, img in images.items()})
            if len(groups) > 1:
                majority = max(groups, key=len)
                for g in groups:
                    if g is not majority:
                        by_column[(tuple(majority), tuple(g))].append(column)
        types = {c.name: c.type for c in table.columns} if table is not None else {}
        for (majority, minority), cols in by_column.items():
            shown = "; ".join(f"{c} {types[c].sql() if c in types else '(type unknown)'}: "
                              + ", ".join(majority) + f" read {_text(images[majority[0]], c)}, "
                              + ", ".join(minority) + f" read {_text(images[minority[0]], c)}" for c in cols)
            records = {e: have[e].records for e in majority + minority}
            self._add(self._finding(ident, table, f"{side} image disagrees at the common fidelity — {shown}",
                                    images[majority[0]], images[minority[0]], records, list(minority), cols))

    def run(self) -> CrossVerdict:
        seen = {enc: self.read(enc) for enc in self.encodings}
        self.compare(seen)
        return self.verdict


_MISSING = "<absent>"


def _text(image: Optional[dict], column: str) -> str:
    value = image.get(column, _MISSING) if image is not None else _MISSING
    return value if value == _MISSING else orjson.dumps(value).decode()


def _groups(values: dict[str, Any]) -> list[list[str]]:
    groups: list[tuple[Any, list[str]]] = []
    for enc, v in values.items():
        for rep, members in groups:
            if (v is _MISSING and rep is _MISSING) or (v is not _MISSING and rep is not _MISSING and same_value(v, rep)):
                members.append(enc)
                break
        else:
            groups.append((v, [enc]))
    return [members for _, members in groups]


def _same_history(cases: dict[str, tuple[Path, dict]]) -> None:
    digests = {enc: hashlib.sha256((case / "truth" / "history.ndjson").read_bytes()).hexdigest()
               for enc, (case, _) in cases.items()}
    if len(set(digests.values())) != 1:
        raise ValueError(f"the encodings were generated from different upstream histories: {digests}")


def check_encodings_agree(scenario: str, seed: int, work: Path, encodings: Optional[list[str]] = None,
                          time_zone: str = "UTC", config_overrides: Optional[dict] = None) -> CrossVerdict:
    """Generates `scenario` with `seed` in every encoding (default: the whole default matrix)
    under WORK/<scenario>-seed<N>/<encoding>, each emptied first (nothing of an earlier run is read),
    and compares their row events at the common fidelity."""
    cases: dict[str, tuple[Path, dict]] = {}
    for enc in encodings or encoding_names():
        config = config_for(scenario, enc, time_zone=time_zone, **(config_overrides or {}))
        case = recreate(case_folder(work, scenario, seed, enc, None))
        cases[enc] = (case, generate(scenario, seed, config, case))
    _same_history(cases)
    return CrossCheck(scenario, seed, cases, time_zone).run()
