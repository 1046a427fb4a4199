"""The lines of the testee protocol (docs/testee-protocol.md): what the suite writes, and reading
and checking what a consumer writes.

Every consumer line is checked against docs/testee-protocol/consumer-to-suite.schema.json. The
check here is a hand-written transcription of that schema (tests/conformance/consumers/streaming
hold it against the schema through `jsonschema` on valid and invalid lines): the schema library is a
test dependency only, and a session reads one line per applied transaction and per table row, where
a generic validator costs several times the consumer's own work. Its answer is the reason a line
does not validate, in the schema's words (the field and what it must be), or None.
"""
from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any, Optional

import orjson

from ticdc_conformance.protocols.common import exact_json
from ticdc_contract.record import KafkaRecord

PROTOCOL_VERSION = 1
SCHEMA_FOLDER = Path(__file__).resolve().parents[4] / "docs" / "testee-protocol"
CONSUMER_SCHEMA = SCHEMA_FOLDER / "consumer-to-suite.schema.json"
SUITE_SCHEMA = SCHEMA_FOLDER / "suite-to-consumer.schema.json"
SHOWN_CHARS = 300  # of a line quoted in an error

# Consumer line types (the schema's enum).
READY, UNSUPPORTED, TXN, DDL, CHECKPOINT = "ready", "unsupported", "txn", "ddl", "checkpoint"
SYNCED, ROW, TABLES, COMMITTED, ENDED = "synced", "row", "tables", "committed", "ended"
APPLIED_LOG_TYPES = frozenset({TXN, DDL, CHECKPOINT})
OPS = frozenset({"insert", "update", "delete"})
# Requests the suite writes, and the answer each waits for.
ANSWERS = {"sync": SYNCED, "tables": TABLES, "commit": COMMITTED, "end": ENDED}


class LineError(ValueError):
    """A consumer line that is not JSON or does not validate: why."""


def shown(text: "bytes | str") -> str:
    """A line as an error quotes it: decoded, cut at SHOWN_CHARS."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.rstrip("\n")
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"… ({len(text)} characters)"


def parse_line(raw: bytes) -> dict:
    """A consumer line as a JSON object, checked against the schema; LineError says why not. Its
    numbers keep every digit they were written with (exact_json: a DECIMAL printed as a number,
    an integer beyond 64 bits), which orjson would round to a float64."""
    try:
        obj = exact_json.loads(raw)
    except exact_json.NotJSON as e:
        raise LineError(f"not JSON: {e}") from None
    reason = line_problem(obj)
    if reason is not None:
        raise LineError(reason)
    return obj


# --- the schema, transcribed -------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    """JSON Schema's integer: a number with no fractional part (never a boolean)."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v) and v.is_integer())


def _count(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _image(v: Any) -> bool:
    return v is None or isinstance(v, dict)


def _ts_or_null(v: Any) -> bool:
    return v is None or _count(v)


def _short(v: Any) -> str:
    text = json.dumps(v, default=str)
    return text if len(text) <= 60 else text[:60] + "…"


_INT, _TS_NULL, _IMAGE = "a non-negative integer", "a non-negative integer or null", "an object or null"
_FIELDS = {  # type -> {field: (check, what it must be)}; the rest of a line's rules in _DEEP
    READY: {"protocol_version": (lambda v: _is_int(v) and v >= 1, "an integer from 1"),
            "supports": (lambda v: isinstance(v, list) and all(_str(s) for s in v), "a list of strings")},
    UNSUPPORTED: {"reason": (lambda v: _str(v) and len(v) > 0, "a non-empty string")},
    TXN: {"commit_ts": (_ts_or_null, _TS_NULL), "rows": (lambda v: isinstance(v, list), "a list")},
    DDL: {"commit_ts": (_ts_or_null, _TS_NULL), "schema": (lambda v: v is None or _str(v), "a string or null"),
          "table": (lambda v: v is None or _str(v), "a string or null"), "query": (_str, "a string")},
    CHECKPOINT: {"ts": (_count, _INT)},
    SYNCED: {"id": (_count, _INT)},
    ENDED: {"id": (_count, _INT)},
    ROW: {"schema": (_str, "a string"), "table": (_str, "a string"), "row": (_image, _IMAGE)},
    TABLES: {"id": (_count, _INT), "checkpoint": (_ts_or_null, _TS_NULL)},
    COMMITTED: {"id": (_count, _INT), "offsets": (lambda v: isinstance(v, dict), "an object of topics")},
}
_ROW_FIELDS = {"schema": (_str, "a string"), "table": (_str, "a string"),
               "op": (lambda v: isinstance(v, str) and v in OPS, "insert, update or delete"),
               "before": (_image, _IMAGE), "after": (_image, _IMAGE)}


def line_problem(obj: Any) -> Optional[str]:
    """Why `obj` does not validate against consumer-to-suite.schema.json, or None."""
    if not isinstance(obj, dict):
        return f"a line must be a JSON object, not {_short(obj)}"
    kind = obj.get("type")
    if "type" not in obj:
        return "a line needs 'type'"
    if not isinstance(kind, str) or kind not in _FIELDS:
        return f"unknown line type {_short(kind)} (one of {', '.join(sorted(_FIELDS))})"
    problem = _fields(obj, _FIELDS[kind])
    if problem is None and kind in _DEEP:
        problem = _DEEP[kind](obj)
    return problem


def _fields(obj: dict, spec: dict) -> Optional[str]:
    for name, (check, what) in spec.items():
        if name not in obj:
            return f"a {obj['type']} line needs {name!r}"
        if not check(obj[name]):
            return f"{obj['type']}.{name} must be {what}, not {_short(obj[name])}"
    return None


def _ready(obj: dict) -> Optional[str]:
    supports = obj["supports"]
    if len(set(supports)) != len(supports):
        return f"ready.supports names something twice: {_short(supports)}"
    return None


def _txn(obj: dict) -> Optional[str]:
    for i, row in enumerate(obj["rows"]):
        if not isinstance(row, dict):
            return f"txn.rows[{i}] must be an object, not {_short(row)}"
        for name, (check, what) in _ROW_FIELDS.items():
            if name not in row:
                return f"txn.rows[{i}] needs {name!r}"
            if not check(row[name]):
                return f"txn.rows[{i}].{name} must be {what}, not {_short(row[name])}"
    return None


def _committed(obj: dict) -> Optional[str]:
    for topic, partitions in obj["offsets"].items():
        if not isinstance(partitions, dict):
            return f"committed.offsets[{topic!r}] must be an object of partitions, not {_short(partitions)}"
        for partition, offset in partitions.items():
            if not (partition.isascii() and partition.isdigit() and (partition == "0" or partition[0] != "0")):
                return f"committed.offsets[{topic!r}] names partition {partition!r}: partitions are decimal numbers"
            if not _count(offset):
                return f"committed.offsets[{topic!r}][{partition!r}] must be {_INT}, not {_short(offset)}"
    return None


_DEEP = {READY: _ready, TXN: _txn, COMMITTED: _committed}


# --- what the suite writes ---------------------------------------------------------------------
def dumps(obj: Any, sort_keys: bool = False) -> bytes:
    """Compact JSON of a parsed line or row, every number with the digits it was read with."""
    return exact_json.dumps(obj, orjson.OPT_SORT_KEYS if sort_keys else 0)


def loads(raw: bytes) -> Any:
    """A line the session already checked, read again (from its journal)."""
    return exact_json.loads(raw)


def record_message(record: KafkaRecord) -> dict:
    """A `record` line as a dict, its key, value and header values as bytes (python: consumers get
    them so; `wire` writes them base64 for a program)."""
    return {"type": "record", "topic": record.topic, "partition": record.partition, "offset": record.offset,
            "timestamp": record.timestamp_ms, "timestampType": record.timestamp_type,
            "key": record.key, "value": record.value,
            "headers": [{"key": k, "value": v} for k, v in record.headers]}


def _base64(v: Any) -> str:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(v).decode("ascii")
    raise TypeError(f"{type(v).__name__} is not JSON")


def wire(message: dict) -> bytes:
    """A suite line as a program reads it: JSON, bytes as standard padded base64, `\\n` ended."""
    return orjson.dumps(message, default=_base64) + b"\n"


def offsets_json(offsets: dict[tuple[str, int], int]) -> dict[str, dict[str, int]]:
    """{(topic, partition): offset} as the protocol writes it: {topic: {"partition": offset}}."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def offsets_of(obj: dict[str, dict[str, Any]]) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in obj.items() for p, o in parts.items()}
