"""What the sink simulator hands an encoder: the events of one topic-partition, in send order.

An encoder turns a sequence of these into Kafka messages (key, value, headers). It never
decides where an event goes; dispatch and broadcast are the simulator's job, driven by the
protocol's broadcast rules that the encoder module declares.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ticdc_contract.model import DDL, RowChange, TableSchema


@dataclass(frozen=True)
class RowEvent:
    change: RowChange
    commit_ts: int
    start_ts: int
    # The columns `sink.column-selectors` keeps (TiCDC RowEvent.ColumnSelector); None keeps all.
    # Only the values written lose the others; the change's table and images stay whole.
    selected: Optional[frozenset[str]] = None


@dataclass(frozen=True)
class DDLEvent:
    ddl: DDL


@dataclass(frozen=True)
class WatermarkEvent:
    """Open Protocol "resolved", Canal-JSON "TIDB_WATERMARK", Debezium op "m", Simple "WATERMARK"."""

    ts: int


@dataclass(frozen=True)
class BootstrapEvent:
    """Simple protocol only: the current schema of a table."""

    table: TableSchema
    # Sent at a changefeed's (re)start for send-all-bootstrap-at-start: TiCDC sends those the DDL
    # way, through the synchronous producer, not with the bootstrap worker's row messages.
    at_start: bool = False


SinkEvent = Union[RowEvent, DDLEvent, WatermarkEvent, BootstrapEvent]


@dataclass(frozen=True)
class Message:
    key: Optional[bytes]
    value: Optional[bytes]
    headers: tuple[tuple[str, Optional[bytes]], ...] = field(default=())
    # The TSO the record's Kafka timestamp is derived from (TiCDC sets the producer timestamp
    # from the event; a fake clock keeps output deterministic).
    ts: int = 0
