"""What a decoder returns: protocol-neutral events with values in the canonical JSON form.

Values are JSON values in the canonical form of docs/canonical-values.md as far as the protocol
carries them (a Debezium DECIMAL arrives as a float; the fidelity projection accounts for that).

The classes are slotted, not frozen: a decoder builds one per event, and a frozen dataclass costs
about four times as much to construct (every field set through object.__setattr__). Nothing
changes an event after its decoder returned it; `dataclasses.replace` makes a changed copy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union


@dataclass(slots=True)
class DecodedRow:
    schema: str
    table: str
    op: str  # "insert" | "update" | "delete"
    commit_ts: Optional[int]  # None when the protocol/config does not carry it
    after: Optional[dict[str, Any]]  # column -> canonical JSON value; None for delete
    before: Optional[dict[str, Any]]  # None for insert, or when the config sends no old value
    key_columns: tuple[str, ...]  # the handle key (PK or NOT NULL unique key) columns
    # Column names in table order, when the protocol tells them (schema-carrying protocols).
    columns: tuple[str, ...] = field(default=())


@dataclass(slots=True)
class DecodedDDL:
    commit_ts: Optional[int]
    schema: str
    table: str
    query: str
    ddl_type: str  # the protocol's own DDL type label (e.g. "3", "CREATE", "QUERY")
    # Column names in table order after the DDL, when the protocol carries the schema.
    columns: tuple[str, ...] = field(default=())


@dataclass(slots=True)
class DecodedWatermark:
    ts: int


@dataclass(slots=True)
class DecodedBootstrap:
    schema: str
    table: str
    schema_version: int
    columns: tuple[str, ...]


DecodedEvent = Union[DecodedRow, DecodedDDL, DecodedWatermark, DecodedBootstrap]
