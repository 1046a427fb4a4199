"""One rule of the catalogue: a normative statement of a spec, quoted, with an id that never changes.

The fields and the values they may take are fixed here, so the loader, the CLI filters and the
generated docs/rules.md agree on them.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ticdc_contract import protocols as protocol_names

LEVELS = ("required", "recommended")
# What a rule is about: a single message's bytes (encoding), the order and placement of records
# across a stream (stream), or what a consumer has to do with them (consumer).
APPLIES_TO = ("encoding", "stream", "consumer")
# The encodings of the default matrix (ticdc_generators.pipeline.encoding_names); spelled out here so
# the catalogue loads without the generators.
ENCODINGS = protocol_names.ENCODINGS
# Which encodings a prefix may name: a protocol's own prefix stays within it; CONSUMER and KAFKA
# rules are the cross-protocol consumer and delivery rules.
PREFIX_ENCODINGS = {
    "OPEN": ("open-protocol",),
    "CANAL": ("canal-json",),
    "DBZ": ("debezium",),
    "SIMPLE": ("simple-json", "simple-avro"),
    "CONSUMER": ENCODINGS,
    "KAFKA": ENCODINGS,
}
# The prefixes of rules that hold for every protocol while quoting one protocol's spec.
CROSS_PROTOCOL_PREFIXES = tuple(p for p, encodings in PREFIX_ENCODINGS.items() if encodings == ENCODINGS)
ID_PATTERN = re.compile(r"^(?P<prefix>[A-Z]+)-(?P<topic>[A-Z][A-Z0-9]*)-(?P<number>[1-9][0-9]*)$")
TOPIC_PATTERN = re.compile(r"^[a-z][a-z0-9]*$")
# A section names the heading path in the spec, outermost first.
SECTION_SEPARATOR = " > "


class CatalogueError(ValueError):
    """A catalogue entry that breaks the format (docs/rules.md); names the file and the rule."""


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    protocols: tuple[str, ...]
    topic: str
    source: str  # spec file name under shared/specs/
    section: str
    quote: str  # verbatim spec text (whitespace may differ)
    applies_to: str
    note: str = ""
    see_also: tuple[str, ...] = field(default_factory=tuple)

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def number(self) -> int:
        return int(self.id.rsplit("-", 1)[1])

    @property
    def first_line(self) -> str:
        return normalize_ws(self.quote.strip().split("\n", 1)[0])

    @property
    def sections(self) -> tuple[str, ...]:
        return tuple(self.section.split(SECTION_SEPARATOR))

    def to_json(self) -> dict:
        out = asdict(self)
        out["protocols"] = list(self.protocols)
        out["see_also"] = list(self.see_also)
        return out


def normalize_ws(text: str) -> str:
    """Runs of whitespace (line breaks of the spec's tables and lists included) as one space."""
    return " ".join(text.split())


def validate(rule: Rule) -> list[str]:
    """What is wrong with one rule on its own (cross-rule checks are the loader's)."""
    problems = []
    m = ID_PATTERN.match(rule.id)
    if not m:
        problems.append("id is not PREFIX-TOPIC-N")
    elif m["prefix"] not in PREFIX_ENCODINGS:
        problems.append(f"prefix {m['prefix']} is not one of {', '.join(PREFIX_ENCODINGS)}")
    if not TOPIC_PATTERN.match(rule.topic):
        problems.append(f"topic {rule.topic!r} is not one lower-case word")
    elif m and m["topic"] != rule.topic.upper():
        problems.append(f"id topic {m['topic']} differs from topic {rule.topic!r}")
    if rule.level not in LEVELS:
        problems.append(f"level {rule.level!r} is not one of {', '.join(LEVELS)}")
    if rule.applies_to not in APPLIES_TO:
        problems.append(f"applies_to {rule.applies_to!r} is not one of {', '.join(APPLIES_TO)}")
    if not rule.protocols:
        problems.append("names no protocol")
    unknown = [p for p in rule.protocols if p not in ENCODINGS]
    if unknown:
        problems.append(f"unknown protocol(s) {unknown}; expected {', '.join(ENCODINGS)}")
    elif m and m["prefix"] in PREFIX_ENCODINGS:
        outside = [p for p in rule.protocols if p not in PREFIX_ENCODINGS[m["prefix"]]]
        if outside:
            problems.append(f"a {m['prefix']} rule cannot apply to {outside}")
    if len(set(rule.protocols)) != len(rule.protocols):
        problems.append("lists a protocol twice")
    if not rule.quote.strip():
        problems.append("has no quote")
    if not rule.section.strip():
        problems.append("has no section")
    return problems
