"""One Simple message, read from either encoding into the same shape (spec 004, "Message format":
"For Avro format messages, their fields and meanings are the same as those in JSON format messages").

Row values stay in their wire form here: DML messages carry no types, so they can only be read once the
table schema of their `schemaVersion` is known.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..common import Malformed
from .table import TableInfo

# spec 004, "Message types".
DDL_TYPES = frozenset({"CREATE", "RENAME", "CINDEX", "DINDEX", "ERASE", "TRUNCATE", "ALTER", "QUERY"})
DML_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class WatermarkMessage:
    commit_ts: int


@dataclass(frozen=True)
class BootstrapMessage:
    table: TableInfo


@dataclass(frozen=True)
class DDLMessage:
    ddl_type: str
    sql: str
    commit_ts: int
    table: Optional[TableInfo]  # absent for DDLs without a table (e.g. DROP DATABASE)
    pre_table: Optional[TableInfo]  # absent for CREATE


@dataclass(frozen=True)
class DMLMessage:
    op: str  # insert | update | delete
    schema: str
    table: str
    commit_ts: int
    schema_version: int
    data: Optional[dict[str, Any]]  # wire values, keyed by column name
    old: Optional[dict[str, Any]]

    @property
    def schema_key(self) -> tuple[str, str, int]:
        return (self.schema, self.table, self.schema_version)


Message = WatermarkMessage | BootstrapMessage | DDLMessage | DMLMessage


def row_maps(op: str, data: Optional[dict], old: Optional[dict]) -> None:
    """Spec 004, DML: INSERT has only `data`, UPDATE both `data` and `old`, DELETE only `old`."""
    wants_data = op in ("insert", "update")
    wants_old = op in ("update", "delete")
    for name, value, wanted in (("data", data, wants_data), ("old", old, wants_old)):
        if wanted and value is None:
            raise Malformed(f"{op.upper()} message without {name!r}")
        if not wanted and value is not None:
            raise Malformed(f"{op.upper()} message must not carry {name!r}")
