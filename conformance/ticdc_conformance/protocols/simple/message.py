"""One Simple message, read from either encoding into the same shape (spec 004, "Message format":
"For Avro format messages, their fields and meanings are the same as those in JSON format messages").

Row values stay in their wire form here: DML messages carry no types, so they can only be read once the
table schema of their `schemaVersion` is known: the TableInfo a BOOTSTRAP or DDL message carries (spec 004,
"TableSchema definition"), whose column descriptions say how each wire value is parsed. wire/ reads the
bytes into these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ticdc_contract.checksum import RowChecksum

# spec 004, "mysqlType 参考表格": every mysqlType a TableSchema may name, grouped by how its value is read.
INTEGER_RANGES = {
    "tinyint": (-(2**7), 2**7 - 1, 2**8 - 1),
    "bool": (-(2**7), 2**7 - 1, 2**8 - 1),
    "smallint": (-(2**15), 2**15 - 1, 2**16 - 1),
    "mediumint": (-(2**23), 2**23 - 1, 2**24 - 1),
    "int": (-(2**31), 2**31 - 1, 2**32 - 1),
    "bigint": (-(2**63), 2**63 - 1, 2**64 - 1),
}
KIND_OF = {
    "float": "float", "double": "double", "decimal": "decimal",
    "char": "text", "varchar": "text", "tinytext": "text", "text": "text", "mediumtext": "text", "longtext": "text",
    "binary": "binary", "varbinary": "binary",
    "tinyblob": "binary", "blob": "binary", "mediumblob": "binary", "longblob": "binary",
    "date": "date", "datetime": "datetime", "timestamp": "timestamp", "time": "time",
    "year": "year", "enum": "enum", "set": "set", "bit": "bit", "json": "json",
}
KIND_OF.update({name: "integer" for name in INTEGER_RANGES})


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    mysql_type: str
    kind: str  # integer | float | double | decimal | text | binary | date | datetime | timestamp | time | year | enum | set | bit | json
    charset: str
    unsigned: bool
    length: int
    decimal: int
    elements: tuple[str, ...]
    nullable: bool

    @property
    def int_range(self) -> tuple[int, int]:
        lo, hi, uhi = INTEGER_RANGES[self.mysql_type]
        return (0, uhi) if self.unsigned else (lo, hi)


@dataclass(frozen=True)
class TableInfo:
    schema: str
    table: str
    table_id: int
    version: int
    columns: tuple[ColumnInfo, ...]
    # The keys a row may be identified by, best first: the primary key, then the NOT NULL unique
    # keys in the order TiCDC picks its handle key from them (`_key_candidates`).
    keys: tuple[tuple[str, ...], ...]
    by_name: dict[str, ColumnInfo] = field(compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.schema, self.table, self.version)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


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
    # `[integrity]` row checksums (message.go `checksum`, omitempty), checked by protocols/common/checksum.py
    checksum: Optional[RowChecksum] = None
    build_ts: Optional[int] = None

    @property
    def schema_key(self) -> tuple[str, str, int]:
        return (self.schema, self.table, self.schema_version)


Message = WatermarkMessage | BootstrapMessage | DDLMessage | DMLMessage
