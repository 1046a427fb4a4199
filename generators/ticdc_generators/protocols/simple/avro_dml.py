"""The Avro bytes of a DML Message written field by field, for the one message every row makes.

fastavro's writer resolves each union branch of a datum by name against the schema's candidates
and looks each record field up by name, per value: for a DML message with two row maps that is
most of a row's encoding cost. The DML record's layout is fixed (avro_schema.build_schema), so this
writes the same Avro binary encoding (zigzag varint longs, length-prefixed UTF-8 and bytes,
little-endian IEEE floats, a map as one block of its entries then an empty block) straight from
message.avro_dml's body; tests/generators/protocols/test_fast_paths.py compares it with
`encode_avro`. A value it does not know how to write (a branch name outside the row value union, a
long beyond 64 bits, a value of another type) makes it return None, and the caller takes
`encode_avro`, which writes or refuses it as before.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Optional

from .avro_schema import (
    DML_TYPE_SYMBOLS,
    MESSAGE_TYPE_SYMBOLS,
    MESSAGE_UNION_INDEX,
    NAMESPACE,
    PAYLOAD_BRANCHES,
    value_union,
)

_INT64_MIN, _INT64_END = -(2**63), 2**63
_FLOAT = struct.Struct("<f").pack
_DOUBLE = struct.Struct("<d").pack
_CHECKSUM = f"{NAMESPACE}.Checksum"


class _Unwritable(Exception):
    """A value outside what this writer handles: the caller takes fastavro."""


def _long(out: bytearray, n: int) -> None:
    if type(n) is not int or not _INT64_MIN <= n < _INT64_END:
        raise _Unwritable(n)
    if 0 <= n < 64:  # one byte, 2n: most lengths, flags and branch indexes
        out.append(n << 1)
        return
    n = (n << 1) ^ (n >> 63)
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _text(out: bytearray, s: Any) -> None:
    if type(s) is not str:
        raise _Unwritable(s)
    data = s.encode()
    n = len(data)
    if n < 64:  # _long's one-byte case without its checks: a length is an int in range
        out.append(n << 1)
    else:
        _long(out, n)
    out += data


# Column names as written in a row map (length, then UTF-8), kept: every row of a table writes the
# same names. Bounded, as the table versions are.
_NAMES: dict[str, bytes] = {}
_NAMES_KEPT = 65536


def _name(s: Any) -> bytes:
    written = _NAMES.get(s) if type(s) is str else None
    if written is None:
        out = bytearray()
        _text(out, s)
        written = bytes(out)
        if len(_NAMES) >= _NAMES_KEPT:
            _NAMES.clear()
        _NAMES[s] = written
    return written


def _bytes(out: bytearray, b: Any) -> None:
    if type(b) is not bytes:
        raise _Unwritable(b)
    _long(out, len(b))
    out += b


def _timestamp(out: bytearray, v: Any) -> None:
    _text(out, v["location"])
    _text(out, v["value"])


def _unsigned_bigint(out: bytearray, v: Any) -> None:
    _long(out, v["value"])


def _float(out: bytearray, v: Any) -> None:
    if type(v) is not float:
        raise _Unwritable(v)
    out += _FLOAT(v)


def _double(out: bytearray, v: Any) -> None:
    if type(v) is not float:
        raise _Unwritable(v)
    out += _DOUBLE(v)


def _null(out: bytearray, v: Any) -> None:
    if v is not None:
        raise _Unwritable(v)


_VALUE_WRITERS = {"null": _null, "long": _long, "float": _float, "double": _double, "string": _text,
                  "bytes": _bytes, f"{NAMESPACE}.Timestamp": _timestamp,
                  f"{NAMESPACE}.UnsignedBigint": _unsigned_bigint}
# (union index as its varint byte, writer) of each branch of the row value union, by branch name.
_BRANCHES = {name: (i << 1, _VALUE_WRITERS[name]) for i, name in enumerate(value_union())}


def _row_map(out: bytearray, row: Optional[Any]) -> None:
    """A ["null", map] union; the map is {column: (branch name, value)}."""
    if row is None:
        out.append(0)
        return
    if type(row) is not dict:
        raise _Unwritable(row)
    out.append(2)
    if row:
        _long(out, len(row))
        names = _NAMES
        for column, (branch, value) in row.items():
            written = names.get(column) if type(column) is str else None
            out += written if written is not None else _name(column)
            index, write = _BRANCHES[branch]
            out.append(index)
            write(out, value)
    out.append(0)


def _optional(out: bytearray, v: Any, write: Callable[[bytearray, Any], None]) -> None:
    if v is None:
        out.append(0)
    else:
        out.append(2)
        write(out, v)


def _boolean(out: bytearray, v: Any) -> None:
    if type(v) is not bool:
        raise _Unwritable(v)
    out.append(1 if v else 0)


def _checksum(out: bytearray, v: Any) -> None:
    name, c = v
    if name != _CHECKSUM:
        raise _Unwritable(v)
    _long(out, c["version"])
    _boolean(out, c["corrupted"])
    _long(out, c["current"])
    _long(out, c["previous"])


def _head() -> bytes:
    out = bytearray()
    _long(out, MESSAGE_UNION_INDEX)
    _long(out, MESSAGE_TYPE_SYMBOLS.index("DML"))
    _long(out, PAYLOAD_BRANCHES.index("DML"))
    return bytes(out)


_HEAD = _head()


def encode_dml(message: dict) -> Optional[bytes]:
    """`encode_avro(message)` of message.avro_dml's Message, or None where this writer declines."""
    try:
        kind, payload = message["type"], message["payload"]
        if kind != "DML" or payload[0] != f"{NAMESPACE}.DML":
            return None
        p = payload[1]
        out = bytearray(_HEAD)
        _long(out, p["version"])
        _text(out, p["database"])
        _text(out, p["table"])
        _long(out, p["tableID"])
        _long(out, DML_TYPE_SYMBOLS.index(p["type"]))
        _long(out, p["commitTs"])
        _long(out, p["buildTs"])
        _long(out, p["schemaVersion"])
        _optional(out, p["claimCheckLocation"], _text)
        _optional(out, p["handleKeyOnly"], _boolean)
        _optional(out, p["checksum"], _checksum)
        _row_map(out, p["data"])
        _row_map(out, p["old"])
    except (_Unwritable, KeyError, ValueError, TypeError, OverflowError):  # UnicodeEncodeError is a ValueError
        return None
    return bytes(out)
