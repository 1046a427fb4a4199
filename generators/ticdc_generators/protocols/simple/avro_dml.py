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

`dml_bytes` writes the same message straight from a row change, for a message of whole rows
without a checksum: the bytes before commitTs and after buildTs are fixed per table version and
DML type, and each column's union branch is fixed by its type (values.avro_branch), so each
column's name and branch index are written once per table version and a row writes its values
only. A value it declines sends the message back to message.avro_dml and `encode_dml`.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Optional

from ticdc_contract.model import Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType

from .avro_schema import (
    DML_TYPE_SYMBOLS,
    MESSAGE_TYPE_SYMBOLS,
    MESSAGE_UNION_INDEX,
    NAMESPACE,
    PAYLOAD_BRANCHES,
    value_union,
)
from .message import VERSION, Style
from .values import avro_branch

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


_DML_TYPE_INDEX = {Op.INSERT: DML_TYPE_SYMBOLS.index("INSERT"), Op.UPDATE: DML_TYPE_SYMBOLS.index("UPDATE"),
                   Op.DELETE: DML_TYPE_SYMBOLS.index("DELETE")}
_NULL_BRANCH = bytes((_BRANCHES["null"][0],))
ColumnWriter = Callable[[bytearray, Any], None]


def _column_writer(name: str, column_type: TiDBType, location: str, bit_as_long: bool) -> ColumnWriter:
    """Writes one column's map entry (name, branch index, value) of the model value: what
    `_row_map` writes for message.avro_dml's (branch, value) of it."""
    head = _name(name)
    null = head + _NULL_BRANCH
    branch, convert = avro_branch(column_type, location, bit_as_long)
    index, write = _BRANCHES[branch]
    lead = head + bytes((index,))

    def write_value(out: bytearray, v: Any) -> None:
        if v is None:
            out += null
        else:
            out += lead
            write(out, convert(v))
    return write_value


class _Frame:
    """A table version's fixed parts of its DML messages of one type."""

    __slots__ = ("table", "head", "tail", "count", "columns")

    def __init__(self, table: TableSchema, op: Op, location: str, bit_as_long: bool,
                 selected: Optional[frozenset[str]]) -> None:
        self.table = table
        out = bytearray(_HEAD)
        _long(out, VERSION)
        _text(out, table.schema)
        _text(out, table.table)
        _long(out, table.table_id)
        _long(out, _DML_TYPE_INDEX[op])
        self.head = bytes(out)
        out = bytearray()
        _long(out, table.schema_version)
        out += b"\0\0\0"  # claimCheckLocation, handleKeyOnly and checksum: null
        self.tail = bytes(out)
        sent = table.columns if selected is None else tuple(c for c in table.columns if c.name in selected)
        if len({c.name for c in sent}) != len(sent):  # a row map holds each name once
            raise _Unwritable(table)
        # a row map's block count; no columns is an empty map: its closing block only
        out = bytearray()
        if sent:
            _long(out, len(sent))
        self.count = bytes(out)
        self.columns = tuple((c.name, _column_writer(c.name, c.type, location, bit_as_long)) for c in sent)


_FRAMES: dict[tuple, _Frame] = {}
_FRAMES_KEPT = 4096
# the last commitTs and buildTs written: every row of a transaction has the same
_LAST_TS: list[Any] = [None, None, b""]


def _row(out: bytearray, frame: _Frame, image: Any) -> None:
    if type(image) is not dict:
        raise _Unwritable(image)
    out.append(2)
    out += frame.count
    get = image.get
    for name, write in frame.columns:
        write(out, get(name))
    out.append(0)


def dml_bytes(change: RowChange, commit_ts: int, build_ts: int, style: Style,
              selected: Optional[frozenset[str]] = None) -> Optional[bytes]:
    """`encode_dml(message.avro_dml(change, commit_ts, build_ts, style, selected=selected))` for a
    message of whole rows; None for a message with a checksum or a value this writer declines:
    the caller takes that path (tests/generators/protocols/test_fast_paths.py)."""
    if style.row_checksum:
        return None
    t, op = change.table, change.op
    try:
        key = (id(t), op, style.time_zone, style.tiflow, selected)
        frame = _FRAMES.get(key)
        if frame is None or frame.table is not t:
            if len(_FRAMES) >= _FRAMES_KEPT:
                _FRAMES.clear()
            # tiflow hands BIT to Avro as a long (values.avro_branch)
            frame = _FRAMES[key] = _Frame(t, op, style.time_zone, style.tiflow, selected)
        out = bytearray(frame.head)
        last = _LAST_TS
        if last[0] != commit_ts or last[1] != build_ts or type(commit_ts) is not int or type(build_ts) is not int:
            ts = bytearray()
            _long(ts, commit_ts)
            _long(ts, build_ts)
            last[:] = [commit_ts, build_ts, bytes(ts)]
        out += last[2]
        out += frame.tail
        # spec 004 DML: INSERT has only `data`, DELETE only `old`, UPDATE both; the other null
        if op is Op.INSERT:
            _row(out, frame, change.after)
            out.append(0)
        elif op is Op.DELETE:
            out.append(0)
            _row(out, frame, change.before)
        else:
            _row(out, frame, change.after)
            _row(out, frame, change.before)
    except (_Unwritable, KeyError, ValueError, TypeError, OverflowError):  # UnicodeEncodeError is a ValueError
        return None
    return bytes(out)
