"""The consumer output format shared by every consumer (docs/consumer-protocol.md).

`OUT/final/<schema>.<table>.ndjson`: one canonical JSON object per row, columns in table order,
rows sorted by `key_order_token` of the handle key.
"""
from __future__ import annotations

from typing import Any, Optional

import orjson


def project_row(image: dict[str, Any], columns: list[str]) -> bytes:
    """The output line of a row: exactly the table's columns, a column the row never carried is NULL."""
    return orjson.dumps({c: image.get(c) for c in columns}) + b"\n"


def final_file_name(schema: str, table: str) -> str:
    return f"{schema}.{table}.ndjson"


def parse_columns(text: Optional[str]) -> list[str]:
    return orjson.loads(text) if text else []
