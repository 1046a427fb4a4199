"""What the stream lint reports: one finding per violation, naming its rule, level and Kafka record.

A finding's level is its rule's level in the catalogue (`required` or `recommended`); what a rule
allows but a reader should know about (a watermark falling back after a changefeed restart) is
`info`. Only `required` findings fail a lint run.

A badly broken stream can break a rule at every record, so the collector keeps the first `limit`
findings and counts the rest per rule: memory stays bounded whatever the stream's length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ticdc_contract.record import KafkaRecord

from ..rules import Catalogue, default_catalogue

INFO = "info"
REQUIRED = "required"
DEFAULT_LIMIT = 1000
_MESSAGE_WIDTH = 400
NO_OFFSET = -1  # a finding about a partition that holds no record to point at


@dataclass(frozen=True)
class Finding:
    rule: str
    level: str  # required | recommended | info
    topic: str
    partition: int
    offset: int  # NO_OFFSET when the finding names a partition but no record of it
    message: str  # one line

    @property
    def coordinates(self) -> str:
        return f"{self.topic}/{self.partition}@{self.offset}"

    def line(self) -> str:
        return f"{self.level:<11}  {self.rule:<22}  {self.coordinates}: {self.message}"

    def to_json(self) -> dict:
        return {"rule": self.rule, "level": self.level, "topic": self.topic, "partition": self.partition,
                "offset": self.offset, "message": self.message}


def one_line(text: str) -> str:
    """Reasons quote values that may hold newlines; a finding stays on one line of bounded width."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _MESSAGE_WIDTH else flat[:_MESSAGE_WIDTH - 1] + "…"


class Findings:
    """Collects findings in the order the lint meets them; `on_finding` sees each one as it comes."""

    def __init__(self, catalogue: Optional[Catalogue] = None, limit: int = DEFAULT_LIMIT,
                 on_finding: Optional[Callable[[Finding], None]] = None) -> None:
        self.catalogue = catalogue or default_catalogue()
        self.limit = limit
        self.on_finding = on_finding
        self.kept: list[Finding] = []
        self.counts: dict[tuple[str, str], int] = {}

    def violation(self, rule: str, topic: str, partition: int, offset: int, message: str) -> Finding:
        """A breach of `rule`, at the level the catalogue gives it (an unknown id fails here)."""
        return self._add(Finding(rule, self.catalogue.get(rule).level, topic, partition, offset, one_line(message)))

    def info(self, rule: str, topic: str, partition: int, offset: int, message: str) -> Finding:
        """Something `rule` allows that the reader should see (not a violation)."""
        self.catalogue.get(rule)
        return self._add(Finding(rule, INFO, topic, partition, offset, one_line(message)))

    def at(self, record: KafkaRecord, rule: str, message: str) -> Finding:
        return self.violation(rule, record.topic, record.partition, record.offset, message)

    def _add(self, finding: Finding) -> Finding:
        key = (finding.rule, finding.level)
        self.counts[key] = self.counts.get(key, 0) + 1
        if len(self.kept) < self.limit:
            self.kept.append(finding)
        if self.on_finding is not None:
            self.on_finding(finding)
        return finding

    def count(self, level: Optional[str] = None, rule: Optional[str] = None) -> int:
        return sum(n for (r, lv), n in self.counts.items()
                   if (level is None or lv == level) and (rule is None or r == rule))

    @property
    def failed(self) -> bool:
        return self.count(REQUIRED) > 0

    def by_rule(self) -> dict[str, dict[str, int]]:
        """{rule: {level: count}}, rules sorted."""
        out: dict[str, dict[str, int]] = {}
        for (rule, level), n in sorted(self.counts.items()):
            out.setdefault(rule, {})[level] = n
        return out
