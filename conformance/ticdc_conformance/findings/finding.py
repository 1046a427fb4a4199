"""A finding of the run, differential and checkpoint checks, and the one way it is shown.

Every finding names the rule it breaks (its id and the first line the catalogue quotes for it),
the table, the row key, the commit ts, the record that last wrote the row (topic/partition@offset,
where known; for a finding about a DDL, the first record that carried the DDL), and, for a row
that differs, the minimal difference between the expected and the actual row as DeepDiff computes
it. Shown with its run's context (`RunContext`), it also names the seed and the command that
replays the case, so a failure read in a CI log can be reproduced as is.
docs/checks.md describes the format.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any, Optional

import orjson

from ticdc_conformance.protocols.common import exact_json

ABSENT_TEXT = "<absent>"
# The words of a CONSUMER-DEDUP-1 finding whose cause is known from the consumer's table alone (the
# same image twice); checks/causes.py looks up the history for the others.
APPLIED_TWICE = "a row event applied more than once"
QUOTE_CHARS = 160
# Rules the suite itself states for a consumer's output (docs/consumer-rules.md); the specs say
# nothing of these files, so the catalogue cannot quote them.
SUITE_RULES = {
    "CONSUMER-OUTPUT-1": ("docs/consumer-protocol.md, Output",
                          "final/, applied.ndjson and states/ follow the documented form; a state line spans "
                          "checkpoints of the applied log"),
}


def row_diff(expected: dict, actual: dict) -> dict[str, dict[str, Any]]:
    """The minimal difference of two rows, path -> {"expected", "actual"}, as DeepDiff finds it
    (a changed value, a value of another type, a column only one side has)."""
    return _deep_diff(expected, actual)


def _deep_diff(expected: Any, actual: Any) -> dict[str, dict[str, Any]]:
    # Imported here: DeepDiff pulls in pandas (about a second), which a conformant run never needs.
    from deepdiff import DeepDiff

    dd = DeepDiff(expected, actual, verbose_level=2)
    changes: dict[str, dict[str, Any]] = {}
    for kind in ("values_changed", "type_changes"):
        for path, ch in dd.get(kind, {}).items():
            changes[path] = {"expected": ch["old_value"], "actual": ch["new_value"]}
    for kind, side in (("dictionary_item_removed", "expected"), ("iterable_item_removed", "expected"),
                       ("dictionary_item_added", "actual"), ("iterable_item_added", "actual")):
        for path, v in dd.get(kind, {}).items():
            changes[path] = {"expected": v, "actual": ABSENT_TEXT} if side == "expected" else \
                {"expected": ABSENT_TEXT, "actual": v}
    return dict(sorted(changes.items()))


DOCUMENT_PATHS = 5  # the differences inside a JSON document a finding shows


def document_diff(expected: Any, actual: Any) -> list[tuple[str, Any, Any]]:
    """Where two JSON documents differ, when a differing value is one: upstream's JSON text of an
    object or array against the consumer's text or value of one. (path inside the document,
    expected, actual), at most DOCUMENT_PATHS of them; [] when either is no such document. A
    16 KiB document that differs in one member is found by that member's path."""
    def document(v: Any) -> Any:
        if isinstance(v, str) and v[:1] in ("{", "["):
            try:
                v = exact_json.loads(v)
            except ValueError:
                return None
        return v if isinstance(v, (dict, list)) else None

    def by_value(v: Any) -> Any:  # a whole double as its integer: 1.0 and 1 are one number in a document
        if isinstance(v, float):
            n = exact_json.integer_of(v)
            return v if n is None else n
        if isinstance(v, list):
            return [by_value(x) for x in v]
        if isinstance(v, dict):
            return {k: by_value(x) for k, x in v.items()}
        return v

    e, a = document(expected), document(actual)
    if e is None or a is None or not isinstance(expected, str):
        return []
    changes = _deep_diff(by_value(e), by_value(a))
    return [(path[len("root"):], c["expected"], c["actual"]) for path, c in list(changes.items())[:DOCUMENT_PATHS]]


@dataclass(frozen=True)
class Finding:
    rule: str  # the rule the difference breaks (catalogue id)
    table: str
    key: Optional[list]  # the row's handle-key values, None for a table-wide finding
    message: str
    diff: dict = field(default_factory=dict)  # row_diff(expected, actual) of a row that differs
    commit_ts: Optional[int] = None  # of the event at fault, or of the last change to the row
    record: Optional[str] = None  # topic/partition@offset of the record that last wrote the row
    checkpoint: Optional[int] = None  # the checkpoint whose tables were compared
    expected: Optional[dict] = None  # the row upstream (projected), when there is one
    actual: Optional[dict] = None  # the consumer's row, when there is one
    ddl: Optional[str] = None  # the query of the DDL the finding is about (its record is the DDL's)
    unlocated: Optional[str] = None  # why no commit ts or record can be named, where none is

    def located(self, commit_ts: Optional[int], record: Optional[str], why: Optional[str] = None) -> "Finding":
        """With commit ts and record filled in where they were not; `why` says what keeps one unknown."""
        f = replace(self, commit_ts=self.commit_ts if self.commit_ts is not None else commit_ts,
                    record=self.record or record)
        return f if f.commit_ts is not None and f.record else replace(f, unlocated=why or self.unlocated)

    def to_json(self, encoding: Optional[str] = None) -> dict:
        return ({k: v for k, v in asdict(self).items() if v is not None and v != {}}
                | {"rule_quote": rule_quote(self.rule, encoding)})

    def render(self, context: Optional["RunContext"] = None) -> str:
        return render_finding(self, context)


@dataclass(frozen=True)
class RunContext:
    """What a finding's run adds to it: the seed and the command that replays the case."""

    scenario: str
    seed: int
    replay: str
    encoding: Optional[str] = None  # the run's encoding: a cross-protocol rule also quotes its spec


@lru_cache(maxsize=256)
def rule_quote(rule_id: str, encoding: Optional[str] = None) -> str:
    """`ID (level, source): "first line of the quote"`, or where the suite states the rule.

    A consumer or delivery rule holds for every encoding but quotes one spec; given the encoding
    of the run, the quote is followed by the first rule it refers to (see_also) that the
    encoding's own spec states, so a Canal-JSON user reads Canal-JSON's sentence too."""
    if rule_id in SUITE_RULES:
        where, text = SUITE_RULES[rule_id]
        return f'{rule_id} ({where}): "{text}"'
    from ticdc_conformance.rules import default_catalogue
    from ticdc_conformance.rules.model import CROSS_PROTOCOL_PREFIXES

    catalogue = default_catalogue()
    ids = [r for r in rule_id.split(" / ") if r in catalogue]
    if not ids:
        return f"{rule_id} (not in the rule catalogue)"
    parts = []
    for rid in ids:
        r = catalogue.get(rid)
        parts.append(_quoted(r))
        if encoding is not None and r.prefix in CROSS_PROTOCOL_PREFIXES:
            own = next((o for o in (catalogue.get(s) for s in r.see_also)
                        if o.prefix not in CROSS_PROTOCOL_PREFIXES and encoding in o.protocols
                        and o.source != r.source), None)
            if own is not None:
                parts.append(f"in {encoding}'s spec: {_quoted(own)}")
    return "; ".join(parts)


def _quoted(r) -> str:
    quote = r.first_line if len(r.first_line) <= QUOTE_CHARS else r.first_line[: QUOTE_CHARS - 1] + "…"
    return f'{r.id} ({r.level}, {r.source}): "{quote}"'


def _json(v: Any) -> str:
    return exact_json.dumps(v, orjson.OPT_SORT_KEYS).decode()


def _value(v: Any) -> str:
    return v if v == ABSENT_TEXT else _json(v)


def render_finding(f: Finding, context: Optional[RunContext] = None) -> str:
    where = f"{f.table} key={_json(f.key)}" if f.key is not None else f.table
    encoding = context.encoding if context is not None else None
    lines = [f"[{f.rule}] {where}: {f.message}", f"    rule: {rule_quote(f.rule, encoding)}"]
    at = [f"commit ts {f.commit_ts}"] if f.commit_ts is not None else []
    if f.checkpoint is not None:
        at.append(f"checkpoint {f.checkpoint}")
    if f.record:
        at.append(f"record {f.record}")
    if f.commit_ts is None or not f.record:
        missing = "record" if f.commit_ts is not None else "commit ts" if f.record else "commit ts and record"
        at.append(f"{missing} not named: {f.unlocated or 'not looked up in the stream (the finding was not located)'}")
    if context is not None:
        at.append(f"seed {context.seed}")
    lines.append("    at: " + ", ".join(at))
    if f.diff:
        lines.append("    deepdiff (expected -> actual):")
        for path, c in f.diff.items():
            lines.append(f"      {path}: {_value(c['expected'])} -> {_value(c['actual'])}")
            lines += [f"        in the document, {inner}: {_value(e)} -> {_value(a)}"
                      for inner, e, a in document_diff(c["expected"], c["actual"])]
    elif f.expected is not None and f.actual is None:
        lines.append(f"    expected row: {_json(f.expected)}; the consumer has none")
    elif f.actual is not None and f.expected is None:
        lines.append(f"    actual row: {_json(f.actual)}; upstream has none")
    if context is not None:
        lines.append(f"    replay: {context.replay}")
    return "\n".join(lines)
