"""One Simple message, read from either encoding into the same shape (spec 004, "Message format":
"For Avro format messages, their fields and meanings are the same as those in JSON format messages").

Row values stay in their wire form here: DML messages carry no types, so they can only be read once the
table schema of their `schemaVersion` is known.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ticdc_contract.checksum import RowChecksum

from ticdc_conformance.protocols.common.wire import Malformed
from .fields import get_bool, get_int
from .table import TableInfo

# spec 004, "Message types".
DDL_TYPES = frozenset({"CREATE", "RENAME", "CINDEX", "DINDEX", "ERASE", "TRUNCATE", "ALTER", "QUERY"})
DML_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class WatermarkMessage:
    commit_ts: int
    build_ts: Optional[int] = None  # `buildTs`: when TiCDC built the message, wall-clock ms


@dataclass(frozen=True)
class BootstrapMessage:
    table: TableInfo
    build_ts: Optional[int] = None
    # The JSON message's commitTs (TiCDC generates BOOTSTRAPs internally, at 0); the Avro Bootstrap
    # record has none.
    commit_ts: Optional[int] = None


@dataclass(frozen=True)
class DDLMessage:
    ddl_type: str
    sql: str
    commit_ts: int
    table: Optional[TableInfo]  # absent for DDLs without a table (e.g. DROP DATABASE)
    pre_table: Optional[TableInfo]  # absent for CREATE
    build_ts: Optional[int] = None


# Not frozen: a frozen dataclass sets each of its fields through object.__setattr__, which costs about
# as much as parsing the message; slots keep the object small. Nothing changes a message once parsed.
@dataclass(slots=True)
class DMLMessage:
    op: str  # insert | update | delete
    schema: str
    table: str
    commit_ts: int
    schema_version: int
    data: Optional[dict[str, Any]]  # wire values, keyed by column name
    old: Optional[dict[str, Any]]
    # Large-message markers (TiCDC pkg/sink/codec/simple/message.go, omitempty): the message holds
    # the handle-key columns only, and/or the full message lies at a claim-check location.
    handle_key_only: bool = False
    claim_check_location: Optional[str] = None
    # `[integrity]` row checksums (message.go `checksum`, omitempty), checked by protocols/checksum.py
    checksum: Optional[RowChecksum] = None
    build_ts: Optional[int] = None

    @property
    def schema_key(self) -> tuple[str, str, int]:
        return (self.schema, self.table, self.schema_version)


Message = WatermarkMessage | BootstrapMessage | DDLMessage | DMLMessage


def checksum_from_wire(raw: Optional[dict], where: str) -> Optional[RowChecksum]:
    """TiCDC's `checksum` struct (JSON) / Checksum record (Avro): an int version, a bool and two uint32s
    (Avro longs holding int64(uint32))."""
    if raw is None:
        return None
    where = f"{where} checksum"
    return RowChecksum(version=get_int(raw, "version", where, lo=0, hi=2**31 - 1),
                       corrupted=get_bool(raw, "corrupted", where),
                       current=get_int(raw, "current", where, lo=0, hi=2**32 - 1),
                       previous=get_int(raw, "previous", where, lo=0, hi=2**32 - 1))


def row_maps(op: str, data: Optional[dict], old: Optional[dict]) -> None:
    """Spec 004, DML: INSERT has only `data`, UPDATE both `data` and `old`, DELETE only `old`."""
    wants_data = op in ("insert", "update")
    wants_old = op in ("update", "delete")
    for name, value, wanted in (("data", data, wants_data), ("old", old, wants_old)):
        if wanted and value is None:
            raise Malformed(f"{op.upper()} message without {name!r}")
        if not wanted and value is not None:
            raise Malformed(f"{op.upper()} message must not carry {name!r}")
