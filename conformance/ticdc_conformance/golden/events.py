"""What a perfect consumer knows of one row event, per protocol and sink options.

The value projection (`protocols/common/projection.py`, i.e. each protocol's `fidelity.py`) says
what survives of a value; this module says what survives of the event around it: its op, whether
the row before the change travels, and whether the event carries its commit ts. The golden
corpus writes the expected applied log (docs/consumer-protocol.md, "Output") from it.

- Commit ts: Canal-JSON carries it only in the TiDB extension field (spec 003, "_tidb ... exists
  only if you set enable-tidb-extension to true"); Open Protocol (event key "ts"), Simple
  (`commitTs`) and Debezium (`payload.source.commit_ts`, which TiCDC always writes) carry it.
- Open Protocol writes the row before an UPDATE ("p") only with output-old-value (spec 002,
  Row Changed Event); without it an INSERT and an UPDATE are the same "u" event, which a consumer
  applies as an upsert: op `update`, no before image.
- Every other protocol marks INSERT, UPDATE and DELETE apart and carries the whole row before an
  UPDATE or DELETE (Canal-JSON `old` overlaid on `data` when only the changed columns travel,
  spec 003 "Event of Update Type"; Debezium `before`, spec 000; Simple `old`, spec 004).
- A DELETE carries the whole deleted row in every protocol (TiCDC's codecs write every column of
  the old row unless delete-only-output-handle-key-columns, which the corpus does not use).
- A DDL names its schema and table, except a Simple message of a schema-level DDL (CREATE/DROP
  DATABASE): it has neither tableSchema nor preTableSchema (spec 004, DDL event fields; TiCDC
  pkg/sink/codec/simple/message.go newDDLMessage fills them from the DDL's table info only), so the
  names are in its SQL text alone.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ticdc_contract.model import DDL, Op

OPS = {Op.INSERT: "insert", Op.UPDATE: "update", Op.DELETE: "delete"}


class EventFidelityError(ValueError):
    """A sink option whose effect on row events this module does not describe."""


def carries_commit_ts(protocol: str, options: Mapping[str, Any]) -> bool:
    if protocol == "canal-json":
        return bool(options.get("enable-tidb-extension"))
    return True


def _check_options(options: Mapping[str, Any]) -> None:
    if options.get("delete-only-output-handle-key-columns"):
        raise EventFidelityError("delete-only-output-handle-key-columns = true cuts DELETE images to the handle key; "
                                 "the expected applied log does not describe that yet")


def row_event(protocol: str, options: Mapping[str, Any], op: Op, before: Optional[dict],
              after: Optional[dict]) -> tuple[str, Optional[dict], Optional[dict]]:
    """(op, before, after) as the consumer's applied log holds them, from the projected images."""
    _check_options(options)
    if op is Op.DELETE:
        return "delete", before, None
    if protocol == "open-protocol" and not options.get("output-old-value", True):
        return "update", None, after
    return OPS[op], (before if op is Op.UPDATE else None), after


def ddl_names(protocol: str, ddl: DDL) -> tuple[str, str]:
    """(schema, table) as the DDL message names them."""
    if protocol == "simple" and ddl.table_after is None and ddl.table_before is None:
        return "", ""
    return ddl.schema, ddl.table
