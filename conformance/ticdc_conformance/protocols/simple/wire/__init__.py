"""A Simple message's bytes -> message.py's types (spec 004, "Message format").

One datum per Kafka value, JSON (json.py) or plain Avro (avro.py), read into the same message types;
fields.py holds the typed field access both use, table.py the TableSchema a BOOTSTRAP or DDL carries.
"""
from __future__ import annotations

from typing import Callable

from ..message import Message
from .avro import parse_avro
from .json import parse_json

__all__ = ["parse_avro", "parse_json", "parser"]


def parser(encoding: str) -> Callable[[bytes], Message]:
    """The reader of an encoding-format (options.ENCODINGS)."""
    return parse_avro if encoding == "avro" else parse_json
