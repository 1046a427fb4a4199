"""Compact identities of decoded events, so the lint remembers what it saw in 8 bytes an event.

An identity is a 64-bit digest of the event's defining parts: a re-sent copy of an event (TiCDC is
at-least-once, spec 003 "data might be sent repeatedly") has the same identity as the first copy,
whatever batch or offset carried it. A collision needs about 2**32 events held at once.
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional

import orjson

from ..events import DecodedDDL, DecodedRow


def digest(*parts: Any) -> int:
    try:
        data = orjson.dumps(parts)
    except TypeError:
        # orjson stops at 64-bit integers; repr is as deterministic for the values decoders return.
        data = repr(parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def row_key(row: DecodedRow) -> Optional[tuple[tuple[str, ...], tuple[Any, ...]]]:
    """(handle-key columns, their values) of the row the event changes: the new row for inserts and
    updates (TiCDC dispatches on it), the old row for deletes. None when the message names no key
    or lacks a key column's value."""
    image = row.after if row.after is not None else row.before
    if not row.key_columns or image is None or any(c not in image for c in row.key_columns):
        return None
    return tuple(row.key_columns), tuple(image[c] for c in row.key_columns)


def row_identity(row: DecodedRow) -> int:
    """One version of one row: table, operation, commit ts and key (the whole image for a row
    without a key, as row-based replication identifies such rows)."""
    key = row_key(row)
    if key is None:
        image = row.after if row.after is not None else row.before
        key = ((), tuple(sorted((image or {}).items())))
    return digest("row", row.schema, row.table, row.op, row.commit_ts, key)


def ddl_identity(ddl: DecodedDDL) -> int:
    return digest("ddl", ddl.schema, ddl.table, ddl.commit_ts, ddl.query)


def watermark_identity(ts: int) -> int:
    return digest("watermark", ts)
