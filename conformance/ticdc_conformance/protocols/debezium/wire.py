"""One Debezium key or value on the wire -> its JSON document (spec 000, "Message format").

TiCDC writes each key and each value as one JSON object, `{"schema": ..., "payload": ...}`
(without the schema when debezium-disable-schema is on), compressed as a whole with
large-message-handle-compression. What the document's fields must hold is the decoder's to judge.
"""
from __future__ import annotations

from typing import Any

from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.wire import Malformed, json_object


def document(data: Any, what: str, compression: str) -> dict:
    """The JSON object a record's key or value (`what`) holds."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise Malformed(f"{what}: expected bytes, got {type(data).__name__}")
    return json_object(decompress(compression, bytes(data)), what)
