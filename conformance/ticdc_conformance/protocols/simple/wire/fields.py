"""Typed field access for decoded Simple messages, failing with `Malformed` instead of KeyError/TypeError,
and the DML's fields every encoding reads alike: its checksum and which row images it carries.

JSON and Avro both end up as Python dicts; Go's `omitempty` (TiCDC pkg/sink/codec/simple/message.go, the
`message` struct tags) means an absent JSON key and an Avro null union both stand for "not set", so
optional fields treat a missing key and None alike.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, overload

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_contract.checksum import RowChecksum

MAX_U64 = 2**64 - 1


# These run for every field of every message: each getter returns a well-typed value first and only
# then sorts out absence and the wrong types. A getter of a required field (optional=False) returns
# its value or raises; the overloads tell the type checker so.

def _absent(key: str, where: str, optional: bool) -> None:
    if not optional:
        raise Malformed(f"{where}: missing field {key!r}")
    return None


def _checked(value: Any, cls: type, label: str, key: str, where: str, optional: bool) -> Any:
    """What a getter makes of a value that is not plainly of its type: absent, of a subclass, or wrong."""
    if value is None:
        return _absent(key, where, optional)
    if not isinstance(value, cls):
        raise Malformed(f"{where}: field {key!r} must be {label}, got {type(value).__name__}")
    return value


@overload
def get_str(obj: dict, key: str, where: str, optional: Literal[False] = False) -> str: ...
@overload
def get_str(obj: dict, key: str, where: str, optional: bool) -> Optional[str]: ...
def get_str(obj: dict, key: str, where: str, optional: bool = False) -> Optional[str]:
    value = obj.get(key)
    return value if value.__class__ is str else _checked(value, str, "a string", key, where, optional)


@overload
def get_int(obj: dict, key: str, where: str, optional: Literal[False] = False,
            lo: int = ..., hi: int = ...) -> int: ...
@overload
def get_int(obj: dict, key: str, where: str, optional: bool, lo: int = ..., hi: int = ...) -> Optional[int]: ...
def get_int(obj: dict, key: str, where: str, optional: bool = False,
            lo: int = -(2**63), hi: int = MAX_U64) -> Optional[int]:
    value = obj.get(key)
    if value.__class__ is int and lo <= value <= hi:
        return value
    if value is None:
        _absent(key, where, optional)
        return None
    # bool is an int subclass in Python; JSON true is never a number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{where}: field {key!r} must be an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise Malformed(f"{where}: field {key!r} = {value} outside [{lo}, {hi}]")
    return value


@overload
def get_bool(obj: dict, key: str, where: str, optional: Literal[False] = False) -> bool: ...
@overload
def get_bool(obj: dict, key: str, where: str, optional: bool) -> Optional[bool]: ...
def get_bool(obj: dict, key: str, where: str, optional: bool = False) -> Optional[bool]:
    value = obj.get(key)
    return value if value.__class__ is bool else _checked(value, bool, "a boolean", key, where, optional)


@overload
def get_dict(obj: dict, key: str, where: str, optional: Literal[False] = False) -> dict: ...
@overload
def get_dict(obj: dict, key: str, where: str, optional: bool) -> Optional[dict]: ...
def get_dict(obj: dict, key: str, where: str, optional: bool = False) -> Optional[dict]:
    value = obj.get(key)
    return value if value.__class__ is dict else _checked(value, dict, "an object", key, where, optional)


@overload
def get_list(obj: dict, key: str, where: str, optional: Literal[False] = False) -> list: ...
@overload
def get_list(obj: dict, key: str, where: str, optional: bool) -> Optional[list]: ...
def get_list(obj: dict, key: str, where: str, optional: bool = False) -> Optional[list]:
    value = obj.get(key)
    return value if value.__class__ is list else _checked(value, list, "an array", key, where, optional)


@overload
def get_str_list(obj: dict, key: str, where: str, optional: Literal[False] = False) -> tuple[str, ...]: ...
@overload
def get_str_list(obj: dict, key: str, where: str, optional: bool) -> Optional[tuple[str, ...]]: ...
def get_str_list(obj: dict, key: str, where: str, optional: bool = False) -> Optional[tuple[str, ...]]:
    items = get_list(obj, key, where, optional)
    if items is None:
        return None
    for item in items:
        if not isinstance(item, str):
            raise Malformed(f"{where}: field {key!r} must hold strings, got {type(item).__name__}")
    return tuple(items)


def checksum_from_wire(raw: Optional[dict], where: str) -> Optional[RowChecksum]:
    """TiCDC's `checksum` struct (JSON) / Checksum record (Avro): an int version, a bool and two uint32s
    (Avro longs holding int64(uint32))."""
    if raw is None:
        return None
    where = f"{where} checksum"
    return RowChecksum(version=get_int(raw, "version", where, lo=0, hi=2**31 - 1),
                       corrupted=get_bool(raw, "corrupted", where),
                       current=get_int(raw, "current", where, lo=0, hi=2**32 - 1),
                       previous=get_int(raw, "previous", where, lo=0, hi=2**32 - 1))


def row_maps(op: str, data: Optional[dict], old: Optional[dict]) -> None:
    """Spec 004, DML: INSERT has only `data`, UPDATE both `data` and `old`, DELETE only `old`."""
    wants_data = op in ("insert", "update")
    wants_old = op in ("update", "delete")
    for name, value, wanted in (("data", data, wants_data), ("old", old, wants_old)):
        if wanted and value is None:
            raise Malformed(f"{op.upper()} message without {name!r}")
        if not wanted and value is not None:
            raise Malformed(f"{op.upper()} message must not carry {name!r}")
