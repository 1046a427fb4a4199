"""The spec example corpus read as what it is: one example message per file (README.md).

Encoder tests take an example's events and its expected message; decoder tests take the message
and its events. A decoder test needs the whole message: an example that shows a fragment
(`select`), elides parts (`...`) or prints a value in an older TiCDC's rendering (`legacy`) is for
the encoder only.
"""
from __future__ import annotations

import copy
import json
import re
import struct
from functools import cache
from pathlib import Path
from typing import Any, Optional

import orjson

EXAMPLES = Path(__file__).resolve().parent / "examples"
FILES = sorted(EXAMPLES.glob("*.json"))
LEVELS = ("required", "optional")
OPEN_PROTOCOL_VERSION = 1  # spec 002, "The version of the current protocol is 1."


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _example(example_id: str) -> dict:
    return load(EXAMPLES / f"{example_id}.json")


def example(example_id: str) -> dict:
    """The example file `example_id` (a fresh copy: tests may change what they get)."""
    return copy.deepcopy(_example(example_id))


def spec_message(example_id: str, part: str = "value") -> Any:
    """The message part the spec prints in example `example_id`, as JSON data."""
    return example(example_id)["expected"][part]


def spec_message_text(example_id: str, part: str = "value") -> str:
    """The message part as the spec prints it (its `spec_text`, comments and all)."""
    [entry] = [e for e in _example(example_id)["spec_text"] if e["part"] == part][:1]
    return entry["text"]


def _elided(doc: Any) -> bool:
    if isinstance(doc, dict):
        return "..." in doc or any(_elided(v) for v in doc.values())
    if isinstance(doc, list):
        return (bool(doc) and doc[-1] == "...") or any(_elided(v) for v in doc)
    return False


def is_decodable(ex: dict) -> bool:
    """The example prints whole messages in today's rendering, so a decoder can read them back
    to the example's events: no fragment, no elision, no value in an older TiCDC's rendering."""
    return "select" not in ex and not _elided(ex["expected"]) and not ex.get("legacy")


def _log_text(text: str) -> str:
    # spec 002's logs print each part inside double quotes with \" for ".
    return re.sub(r'\\(["\\])', r"\1", text)


def _part_bytes(ex: dict, part: str) -> Optional[bytes]:
    if part in ex.get("compare_bytes", []):
        [entry] = [e for e in ex["spec_text"] if e["part"] == part]
        return _log_text(entry["text"]).encode("utf-8") if entry.get("quoting") == "log" else entry["text"].encode()
    if part not in ex["expected"]:
        return None
    expected = ex["expected"][part]
    return b"" if expected == "" else orjson.dumps(expected)


def spec_bytes(example_id: str, part: str = "value") -> Optional[bytes]:
    """The message part's bytes: as the spec prints them where it prints them exactly
    (`compare_bytes`), else the expected JSON serialised."""
    return _part_bytes(_example(example_id), part)


def _frame(parts: list[bytes]) -> bytes:
    return b"".join(struct.pack(">Q", len(p)) + p for p in parts)


def message_parts(ex: dict) -> tuple[Optional[bytes], Optional[bytes]]:
    """The Kafka key and value carrying the example's message. Open Protocol's spec prints one
    event's key and value; a Kafka message holds them framed as a batch of one (spec 002,
    "Message format")."""
    key, value = _part_bytes(ex, "key"), _part_bytes(ex, "value")
    if ex["protocol"] == "open-protocol":
        return struct.pack(">Q", OPEN_PROTOCOL_VERSION) + _frame([key or b""]), _frame([value or b""])
    return key, value
