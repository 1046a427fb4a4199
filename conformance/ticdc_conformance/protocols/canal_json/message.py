"""A Canal-JSON message as the decoder read it (spec 003, "Definitions of message formats").

One JSON object per Kafka record. The object is kept with its JSON text: how a binary value was
escaped (spec 003, "Binary and Blob types") shows only in the text, so the lint reads it there
rather than parsing the record again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WATERMARK_TYPE = "TIDB_WATERMARK"
# Canal's EventType names TiCDC gives DDLs (pkg/sink/codec/canal/helper.go, convertDdlEventType).
DDL_TYPES = frozenset({"CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX"})
DML_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class CanalMessage:
    fields: dict[str, Any]  # the JSON object
    text: bytes  # its JSON text (decompressed)
