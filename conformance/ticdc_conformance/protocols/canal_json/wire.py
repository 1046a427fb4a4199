"""A Canal-JSON record value -> its message (message.CanalMessage), and typed access to the fields of
the parsed message; a wrong or missing field is Malformed.

The field types are those of TiCDC pkg/sink/codec/canal/canal_json_message.go (JSONMessage and
tidbExtension), which are the fields of spec 003's "Definitions of message formats" table.
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.wire import Malformed, json_object
from ticdc_conformance.protocols.common.wire import is_json_int as _is_int

from .message import CanalMessage

_MISSING = object()
_UINT64_MAX = 2**64 - 1


def message_text(value: Optional[bytes], compression: str) -> bytes:
    """The JSON text of a record value (TiCDC compresses it only as a large message's claim-check copy)."""
    if not value:
        raise Malformed("empty record value: every Canal-JSON record holds one JSON object")
    return decompress(compression, value)


def read_message(value: Optional[bytes], compression: str) -> CanalMessage:
    """A record value -> its message: one JSON object (spec 003), kept with its text."""
    text = message_text(value, compression)
    return CanalMessage(json_object(text, "value"), text)


def _get(obj: dict, key: str, where: str) -> Any:
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise Malformed(f"{where}: missing field {key!r}")
    return value


def req_bool(obj: dict, key: str, where: str) -> bool:
    value = _get(obj, key, where)
    if not isinstance(value, bool):
        raise Malformed(f"{where}: field {key!r} must be a boolean, got {value!r}")
    return value


def req_str(obj: dict, key: str, where: str) -> str:
    value = _get(obj, key, where)
    if not isinstance(value, str):
        raise Malformed(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def req_object(obj: dict, key: str, where: str) -> dict:
    value = _get(obj, key, where)
    if not isinstance(value, dict):
        raise Malformed(f"{where}: field {key!r} must be an object, got {type(value).__name__}")
    return value


def req_uint64(obj: dict, key: str, where: str) -> int:
    value = _get(obj, key, where)
    if not _is_int(value) or not 0 <= value <= _UINT64_MAX:
        raise Malformed(f"{where}: field {key!r} must be an unsigned 64-bit integer, got {value!r}")
    return value


def req_list_or_null(obj: dict, key: str, where: str) -> list | None:
    value = _get(obj, key, where)
    if value is not None and not isinstance(value, list):
        raise Malformed(f"{where}: field {key!r} must be an array or null, got {type(value).__name__}")
    return value


def opt_int(obj: dict, key: str, where: str) -> None:
    """Check a field nobody reads (id, es, ts) still has the type TiCDC gives it."""
    value = obj.get(key)
    if value is not None and not _is_int(value):
        raise Malformed(f"{where}: field {key!r} must be an integer, got {value!r}")


def opt_typed(obj: dict, key: str, kind: type, where: str) -> None:
    value = obj.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))):
        raise Malformed(f"{where}: field {key!r} must be a {kind.__name__}, got {value!r}")


def is_sql_type_code(value: Any) -> bool:
    """java.sql.Types codes are Java ints (TiCDC declares them int32)."""
    return _is_int(value) and -(2**31) <= value < 2**31
