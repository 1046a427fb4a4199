"""The one decode-side interface every protocol package implements.

A protocol package `protocols/<p>/` exposes `PROTOCOL`, a `ProtocolSpec`: how to make its decoder,
its value and event fidelity, and its lint rules. Callers find a protocol through
`ticdc_conformance.protocols.protocol(name)`, never by looking attributes up on a module.

A Decoder is stateful per topic-partition (Simple keeps a schema cache) and is fed that
partition's records in offset order. `read` does the work of `decode` and also hands back the
protocol's parse of the record, so the lint rules judge the message the decoder read instead of
parsing the bytes a second time.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol

from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...events import DecodedEvent
from .wire import decode_errors

if TYPE_CHECKING:
    from .lint import LintContext, Problem
    from .stream_rules import StreamRules


@dataclass
class Read:
    """One record as a decoder read it."""

    events: list[DecodedEvent]  # what decode() returns (with an error: the good ones before it)
    # The protocol's parsed message(s) of this record, as its own wire/message module produced them
    # (a list for batch frames); None when the bytes did not parse that far.
    message: Any
    error: Optional[DecodeError] = None  # set instead of raising


def failed_read(record: KafkaRecord, error: Exception, message: Any, unexpected: Optional[str]) -> Read:
    """The Read of a record whose decoding raised `error`: the DecodeError decode() raises
    (common.wire.decode_errors: a Malformed names its reason, anything else is labelled
    `unexpected`, or propagates when that is None), with the events decoded along with it."""
    try:
        with decode_errors(record, unexpected=unexpected):
            raise error
    except DecodeError as e:
        return Read(e.events, message, e)


class Decoder(Protocol):
    @property
    def held_count(self) -> int:
        """Row events read but held back until a later record (Simple: a DML waiting for its
        table's schema); 0 where the protocol never holds. A consumer must not advance its
        watermark past held rows."""

    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        """All events of one record (a batch frame may hold several); raises DecodeError."""

    def read(self, record: KafkaRecord) -> Read:
        """The same work as decode, keeping the parsed message; a DecodeError is returned in
        `Read.error`, never raised."""


class ProtocolLint(Protocol):
    """The lint rules of one protocol for one topic-partition (made by ProtocolSpec.new_lint)."""

    # The decoder whose reads check() judges, made with the lint: a protocol may read differently
    # for it (Simple shares a topic's schema cache and reports, not holds, a DML without schema).
    # Read-only here, so that each protocol's lint may declare its own decoder class.
    @property
    def decoder(self) -> Decoder: ...

    def check(self, record: KafkaRecord, read: Read) -> list[Problem]:
        """The rules the record's message breaks, judged on `read.message`."""

    def finish(self) -> list[Problem]:
        """What only the stream's end decides."""


def imported_when_called(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported at its first call: a protocol's lint rules (and with them the rule
    catalogue, some 60 ms) load only in a command that runs the lint, not in every consumer and
    check that loads the protocol for its decoder."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return call


def by_column_type(by_type: Callable[..., Any]) -> Callable[..., Any]:
    """A (Column, value, options) function of a protocol whose rule needs only the column's type."""
    def by_column(column: Any, value: Any, options: Any) -> Any:
        return by_type(column.type, value, options)
    return by_column


@dataclass(frozen=True)
class ProtocolSpec:
    name: str  # the contract's protocol name, e.g. "canal-json"
    new_decoder: Callable[[Mapping[str, Any]], Decoder]
    # Value fidelity: a ground-truth value as the protocol lets a consumer read it back.
    project_value: Callable[..., Any]  # (TiDBType, value, options)
    # Where the projection needs the whole column (Debezium reads its column's charset and default).
    project_column: Optional[Callable[..., Any]]  # (Column, value, options)
    describe_fidelity: Callable[..., tuple[str, str]]  # (TiDBType, options) -> (level, why)
    accepted_forms: Callable[..., tuple[tuple[str, str], ...]]  # (TiDBType, options) -> ((form, why), ...)
    carried_number: Callable[..., Optional[str]]  # (TiDBType, options) -> "integer" | "float" | None
    # Lowering to the common fidelity several encodings agree on (cross-encoding check).
    lower_column: Callable[..., Any]  # (Column, value, options)
    type_rule: Callable[..., str]  # (TiDBType) -> the spec rule its type mapping follows
    row_rule: str  # the rule a row event breaks when no type rule names the difference
    # Event fidelity: whether a stream with these sink options carries watermarks.
    carries_watermarks: Callable[[Mapping[str, Any]], bool]
    new_lint: Callable[[LintContext], ProtocolLint]
    stream_rules: StreamRules  # the stream rules its spec states (lint/stream.py)
    # Optional refinements of the value forms (checks/value_forms.py).
    number_form: Optional[Callable[..., Any]] = None  # (TiDBType, float, options) -> the carried number
    carried_as_upstream: Optional[Callable[..., Any]] = None  # (TiDBType, carried value, options)
    # `project_value` for one type, resolved once: (TiDBType, options) -> a function of a non-NULL
    # value, or None where every value is read back as it is (a NULL stays NULL). The checkpoint
    # check projects every row version upstream writes (checks/projection.py); without this it asks
    # `project_value` per value.
    value_projector: Optional[Callable[..., Optional[Callable[[Any], Any]]]] = None
    # `project_column` of one column, resolved once: (Column, options, model_values=False) -> a
    # function of any value; `model_values`: a binary column's values come as the model's bytes.
    column_projector: Optional[Callable[..., Callable[[Any], Any]]] = None
