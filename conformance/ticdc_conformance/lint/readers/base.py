"""What a protocol reader hands the lint for one record: its decoded events and the rules it breaks.

A reader checks what one message says about itself (type codes, flags, sqlType and mysqlType,
Debezium field types, values against their declared types) on the raw message, where the rule a
fault breaks is still known, then decodes it with the project's decoder. A record the decoder
rejects for a reason no message check named becomes one problem under the protocol's decode rule,
with the decoder's reason: hostile bytes are a finding, never a crash. Where the decoder already
validates something (a value against its declared type), the reader repeats the check only for a
record the decoder rejected, to name the rule; what no decoder checks runs on every record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...events import DecodedEvent
from ...rules import checks_rules
from ..profile import DECODE_RULES


@dataclass(frozen=True)
class Problem:
    rule: str
    message: str
    info: bool = False  # something the rule allows, reported for the reader's attention only
    # The offset of an earlier record of the partition the problem is about, when it is only found
    # later (a timing rule judged once the next watermark shows whether a restart came between).
    offset: Optional[int] = None


@dataclass
class Read:
    events: list[DecodedEvent] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def decode(decoder: Any, record: KafkaRecord) -> tuple[list[DecodedEvent], Optional[str]]:
    """The decoder's events for `record`, or none and the reason it rejected the record.

    Any exception counts as a rejection: the lint reads streams from anywhere and must finish them,
    and the reason (with the exception's type) still says what the decoder met."""
    try:
        return decoder.decode(record), None
    except DecodeError as e:
        # Events decoded along with the error still count; an error about another (held) record names it.
        reasons = [err.reason if (err.topic, err.partition, err.offset) == (record.topic, record.partition,
                                                                            record.offset)
                   else f"{err.topic}/{err.partition}@{err.offset}: {err.reason}" for err in e.every_error()]
        return e.events, "; ".join(reasons)
    except Exception as e:  # noqa: BLE001 - see the docstring
        return [], f"the decoder failed ({type(e).__name__}: {e})"


@checks_rules(*DECODE_RULES, name="lint.decode",
              description="every record is a message of its protocol; a rejected one is a finding naming it")
def rejected(problems: list[Problem], rule: str, reason: Optional[str]) -> None:
    """A decoder's rejection as a problem of its own, unless a message check already named the fault."""
    if reason is not None and not any(not p.info for p in problems):
        problems.append(Problem(rule, f"undecodable record: {reason}"))
