"""Row checksums of TiCDC's integrity check (`[integrity] integrity-check-level = "correctness"`).

What TiCDC sends is TiDB's *column-level* row checksum, computed by TiCDC when it mounts a row
(TiCDC pkg/common/event/checksum.go calculateColumnChecksum -> TiDB pkg/util/rowcodec/common.go
RowData.Checksum); the raw-bytes checksum TiDB stores in the row (versions 1 and 2) is only
checked there, never sent. The algorithm, from TiDB's appendDatumForChecksum:

    checksum = 0
    for each column:  checksum = crc32.Update(checksum, IEEE, encode(column))

- NULL contributes nothing (no bytes), and so does a virtual generated column, which TiCDC's
  chunk decoder fills with NULL (TiDB rowcodec ChunkDecoder: VirtualGenCol -> AppendNull);
- integer types and YEAR: the value as a uint64 (two's complement for negatives), little-endian;
- FLOAT and DOUBLE: the float64 (a FLOAT widened from its float32) as IEEE-754 bits, little-endian;
  NaN and +-Inf count as 0;
- ENUM: its 1-based member index, SET: its member bitmask, BIT: its unsigned value, each a
  little-endian uint64;
- strings (CHAR/VARCHAR/TEXT and the binary types): a little-endian uint32 byte length, then the
  bytes;
- DECIMAL, DATE, DATETIME, TIME, JSON: TiDB's print (MyDecimal.String, Time.String,
  Duration.String, BinaryJSON.String) as a length-prefixed string;
- TIMESTAMP: TiDB's print after Time.ConvertTimeZone(changefeed time zone -> UTC).

Column order: new TiCDC walks TiDB's TableInfo.Columns, i.e. table order (checksum.go above);
classic tiflow sorts by column ID first (tiflow cdc/entry/mounter.go calculateColumnChecksum).
Canonical values already are TiDB's prints (canonical.py), so only TIMESTAMP needs a conversion;
strings are UTF-8, the bytes TiDB keeps for every non-binary charset (TiDB converts even GBK to
utf8mb4 internally, TiDB docs character-set-gbk.md).
"""
from __future__ import annotations

import math
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ticdc_contract.canonical import to_float32
from ticdc_contract.enum_set import enum_index, set_bits
from ticdc_contract.model import Row, RowChange, TableSchema
from ticdc_contract.temporal import days_from_civil, format_datetime, zone
from ticdc_contract.tidb_types import BINARY_TYPES, INTEGER_TYPES, STRING_TYPES, TiDBType

# The checksum version TiDB writes into the row and TiCDC copies into the message: 2 ("raw
# bytes and the row handle") since TiDB v8.4.0, the default of every cluster created on or
# upgraded to it (TiDB pkg/util/rowcodec/row.go, checksum header; rowcodec_test.go
# TestEncodeDecodeRowWithChecksum expects 2). Older clusters write 1 (v8.3) or 0 (legacy).
TIDB_CHECKSUM_VERSION = 2
MASK64 = 2**64 - 1

# The value kinds the checksum tells apart; the Simple decoder's ColumnInfo.kind uses the same names.
UINT64_KINDS = frozenset({"integer", "year", "bit"})
TEXT_KINDS = frozenset({"text", "decimal", "date", "datetime", "time", "json"})
KINDS = UINT64_KINDS | TEXT_KINDS | {"float", "double", "binary", "timestamp", "enum", "set"}


@dataclass(frozen=True)
class RowChecksum:
    """The `checksum` object of a Simple DML message (TiCDC pkg/integrity/checksum.go Checksum):
    `current` covers the row after the change (0 for DELETE), `previous` the row before (0 for
    INSERT); both are uint32."""

    version: int
    corrupted: bool
    current: int
    previous: int


def kind_of(t: TiDBType) -> str:
    """How a column's values enter the checksum (TiDB switches on the column's MySQL type)."""
    base = t.base
    if base in INTEGER_TYPES:
        return "integer"
    if base in BINARY_TYPES or (base in STRING_TYPES and t.charset == "binary"):
        return "binary"
    if base in STRING_TYPES:
        return "text"
    return base  # float, double, decimal, date, datetime, timestamp, time, year, enum, set, bit, json


def _uint64(v: int) -> bytes:
    # binary.LittleEndian.AppendUint64(buf, datum.GetUint64()): a signed value's bits as they are
    return struct.pack("<Q", v & MASK64)


def _float64(v: float) -> bytes:
    if math.isnan(v) or math.isinf(v):
        v = 0.0  # TiDB: "because ticdc has such a transform"
    return struct.pack("<d", v)


def _length_value(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?")


def timestamp_in_utc(text: str, time_zone: str) -> str:
    """TiDB Time.ConvertTimeZone(loc, UTC) of a TIMESTAMP printed in `time_zone`: the zero value
    stays as it is; otherwise the wall clock is placed with Go's time.Date rules (the zone offset
    looked up at the wall clock read as UTC, then again at the corrected instant, which settles a
    DST overlap as Go does) and printed again in UTC with the same fraction digits. A wall clock in
    a DST gap fails, as GoTime does."""
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        raise ValueError(f"not a TiDB TIMESTAMP print: {text!r}")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac = m.group(7) or ""
    if not any((y, mo, d, h, mi, s)) and not frac.strip("0"):
        return text
    local = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s
    z = zone(time_zone)
    offset = z.offset_at(local)
    if offset:
        offset = z.offset_at(local - offset)
    unix = local - offset
    if z.local_seconds(unix) != local:
        # GoTime's check that time.Date kept the fields: TiDB fails the checksum (and TiCDC the row)
        raise ValueError(f"TIMESTAMP {text!r} does not exist in time zone {time_zone}")
    return format_datetime(unix, int(frac.ljust(6, "0")) if frac else 0, len(frac))


def value_bytes(kind: str, v: Any, elements: tuple[str, ...] = (), time_zone: str = "UTC") -> bytes:
    """The bytes one non-NULL value adds to the checksum; `v` is a canonical value (bytes for the
    binary kind), `elements` the ENUM/SET members, `time_zone` the zone TIMESTAMPs are printed in."""
    if kind in UINT64_KINDS:
        return _uint64(int(v))
    if kind == "float":
        # the float32 TiDB stores, widened: the canonical print's float64 may differ in low bits
        return _float64(to_float32(float(v)))
    if kind == "double":
        return _float64(float(v))
    if kind == "binary":
        return _length_value(bytes(v))
    if kind in TEXT_KINDS:
        return _length_value(v if isinstance(v, bytes) else str(v).encode("utf-8"))
    if kind == "timestamp":
        return _length_value(timestamp_in_utc(str(v), time_zone).encode("ascii"))
    if kind == "enum":
        return _uint64(enum_index(TiDBType("enum", elements=elements), v))
    if kind == "set":
        return _uint64(set_bits(TiDBType("set", elements=elements), v))
    raise ValueError(f"no checksum encoding for value kind {kind!r}")


def fold(parts: Iterable[bytes]) -> int:
    """crc32.Update over each column's bytes in turn (zlib.crc32 is the same IEEE polynomial)."""
    checksum = 0
    for part in parts:
        checksum = zlib.crc32(part, checksum)
    return checksum


def checksum_columns(table: TableSchema, by_column_id: bool) -> tuple:
    """The columns in checksum order, virtual generated ones left out (they are NULL to TiCDC)."""
    columns = [c for c in table.columns if not c.is_virtual]
    if by_column_id:
        columns.sort(key=lambda c: c.column_id)
    return tuple(columns)


def row_checksum(table: TableSchema, row: Row, time_zone: str, by_column_id: bool = False) -> int:
    """TiDB's column-level checksum of one row image in canonical values."""
    return fold(value_bytes(kind_of(c.type), row[c.name], c.type.elements, time_zone)
                for c in checksum_columns(table, by_column_id) if row.get(c.name) is not None)


def change_checksum(change: RowChange, time_zone: str, by_column_id: bool = False,
                    version: int = TIDB_CHECKSUM_VERSION) -> Optional[RowChecksum]:
    """The checksum TiCDC attaches to the message of one row change, or None when it attaches none.

    TiCDC's mounter (pkg/common/event/mounter.go DecodeToChunk) computes `previous` from the old
    value and `current` from the new one, and sends no checksum at all when both are 0.
    """
    def of(image: Optional[Row]) -> int:
        return 0 if image is None else row_checksum(change.table, image, time_zone, by_column_id)

    current, previous = of(change.after), of(change.before)
    if current == 0 and previous == 0:
        return None
    return RowChecksum(version=version, corrupted=False, current=current, previous=previous)
