"""What a protocol's lint rules report, and what they are given.

The lint (ticdc_conformance/lint/) drives one `ProtocolLint` per topic-partition, made by the
protocol's `ProtocolSpec.new_lint(LintContext)`; the rules live with the protocol so they read the
message its decoder parsed, and the lint package stays protocol-independent.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol

from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...rules import checks_rules

# The rules a record breaks that is no message of its protocol at all, by protocol: Open Protocol's
# framing, Canal-JSON's events, Debezium's message (key, value, envelope), Simple's format.
DECODE_RULES = ("OPEN-FRAMING-1", "CANAL-EVENTS-1", "DBZ-MESSAGE-1", "DBZ-MESSAGE-2", "DBZ-MESSAGE-3",
                "SIMPLE-FORMAT-1")


@dataclass(frozen=True)
class Problem:
    rule: str
    message: str
    info: bool = False  # something the rule allows, reported for the reader's attention only
    # The offset of an earlier record of the partition the problem is about, when it is only found
    # later (a timing rule judged once the next watermark shows whether a restart came between).
    offset: Optional[int] = None


# query -> its StatedColumns (`columns` by name, `table_charset`); see LintContext.stated_columns.
StatedColumnsReader = Callable[[str], Any]


class TopicCheck(Protocol):
    """A rule judged over all partitions of one topic (shared through LintContext.topic_checks)."""

    def finish(self) -> list[tuple[int, Problem]]:
        """(partition, problem) of what the stream's end decides, in a fixed order."""


@dataclass
class LintContext:
    """The lint settings a protocol's rules need for one topic-partition."""

    options: Mapping[str, Any]  # TiCDC's sink options by TiCDC's names, and resources
    topic: str
    partition: int
    decode_rule: str  # the rule a record the decoder rejects is reported under
    watermark_interval_ms: int  # how often watermarks are sent
    # State shared by the lints of one topic's partitions, and by every lint of the stream; a
    # protocol keys its own entries (e.g. a schema cache shared across partitions).
    topic_state: dict[str, Any] = field(default_factory=dict)
    stream_state: dict[str, Any] = field(default_factory=dict)
    # Checks over the topic's partitions, by the protocol's key; the lint finishes each once at the
    # stream's end, after every partition's ProtocolLint.finish, topic by topic.
    topic_checks: dict[str, TopicCheck] = field(default_factory=dict)
    # Made only to have the decoder refuse bad options before any record is read.
    probe: bool = False
    # The column definitions a DDL statement states (lint/ddl_columns.py stated_columns): SQL is read
    # above the protocol layer, so the lint hands its reader down (Debezium's tableChanges checks).
    stated_columns: Optional[StatedColumnsReader] = None


def rejection(record: KafkaRecord, error: Optional[DecodeError]) -> Optional[str]:
    """Why the decoder rejected `record` (None when it did not): every error of the call, one
    about another (held) record naming it."""
    if error is None:
        return None
    return "; ".join(err.reason if (err.topic, err.partition, err.offset) == (record.topic, record.partition,
                                                                           record.offset)
                     else f"{err.topic}/{err.partition}@{err.offset}: {err.reason}" for err in error.every_error())


@checks_rules(*DECODE_RULES, name="lint.decode",
              description="every record is a message of its protocol; a rejected one is a finding naming it")
def rejected(problems: list[Problem], rule: str, reason: Optional[str]) -> None:
    """A decoder's rejection as a problem of its own, unless a message check already named the fault."""
    if reason is not None and not any(not p.info for p in problems):
        problems.append(Problem(rule, f"undecodable record: {reason}"))
