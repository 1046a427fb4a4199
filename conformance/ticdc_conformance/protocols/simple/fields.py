"""Typed field access for decoded Simple messages, failing with `Malformed` instead of KeyError/TypeError.

JSON and Avro both end up as Python dicts; Go's `omitempty` (TiCDC pkg/sink/codec/simple/message.go, the
`message` struct tags) means an absent JSON key and an Avro null union both stand for "not set", so
optional fields treat a missing key and None alike.
"""
from __future__ import annotations

from typing import Any, Optional

from ..common import Malformed

MAX_U64 = 2**64 - 1


def _get(obj: dict, key: str, where: str, optional: bool) -> Any:
    value = obj.get(key)
    if value is None and not optional:
        raise Malformed(f"{where}: missing field {key!r}")
    return value


def get_str(obj: dict, key: str, where: str, optional: bool = False) -> Optional[str]:
    value = _get(obj, key, where, optional)
    if value is not None and not isinstance(value, str):
        raise Malformed(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def get_int(obj: dict, key: str, where: str, optional: bool = False,
            lo: int = -(2**63), hi: int = MAX_U64) -> Optional[int]:
    value = _get(obj, key, where, optional)
    if value is None:
        return None
    # bool is an int subclass in Python; JSON true is never a number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{where}: field {key!r} must be an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise Malformed(f"{where}: field {key!r} = {value} outside [{lo}, {hi}]")
    return value


def get_bool(obj: dict, key: str, where: str, optional: bool = False) -> Optional[bool]:
    value = _get(obj, key, where, optional)
    if value is not None and not isinstance(value, bool):
        raise Malformed(f"{where}: field {key!r} must be a boolean, got {type(value).__name__}")
    return value


def get_dict(obj: dict, key: str, where: str, optional: bool = False) -> Optional[dict]:
    value = _get(obj, key, where, optional)
    if value is not None and not isinstance(value, dict):
        raise Malformed(f"{where}: field {key!r} must be an object, got {type(value).__name__}")
    return value


def get_list(obj: dict, key: str, where: str, optional: bool = False) -> Optional[list]:
    value = _get(obj, key, where, optional)
    if value is not None and not isinstance(value, list):
        raise Malformed(f"{where}: field {key!r} must be an array, got {type(value).__name__}")
    return value


def get_str_list(obj: dict, key: str, where: str, optional: bool = False) -> Optional[tuple[str, ...]]:
    items = get_list(obj, key, where, optional)
    if items is None:
        return None
    for item in items:
        if not isinstance(item, str):
            raise Malformed(f"{where}: field {key!r} must hold strings, got {type(item).__name__}")
    return tuple(items)
