"""msgspec types for the DML messages TiCDC sends, so that the fast path (_fast/decoder.py) parses them in C.

What msgspec reads here it reads as strictly as orjson, which the reference path uses: it rejects
invalid UTF-8 (UnicodeDecodeError), lone surrogate escapes, numbers beyond a double (1e400), NaN and
every other syntax fault, and a field given twice keeps its last value as orjson does. Where msgspec is
more lenient it is kept from seeing the bytes:
- it checks neither UTF-8 nor number ranges in what it skips, and its depth limit is not orjson's, so
  no struct here skips anything (`forbid_unknown_fields`) and every field is typed down to scalars;
- `msgspec.Raw` is only used for the envelope's two halves, which are then read in full: the payload
  by its typed decoder, the schema by orjson (a schema is only ever used through a plan built from
  orjson's reading of exactly those bytes, plans.py);
- integers: msgspec reads a JSON integer of any size into an int where orjson reads one beyond 64
  bits as a double (and rejects one too large for a double), so every integer is bounded to int64.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

import msgspec

from ticdc_conformance.protocols.debezium.columns import CONVERTED_SEMANTICS
from ticdc_conformance.protocols.debezium.message import FieldSpec
from ticdc_conformance.protocols.debezium.values import BINARY_TIDB_TYPES, INT_RANGES

_INTS = {t: Annotated[int, msgspec.Meta(ge=lo, le=hi)] for t, (lo, hi) in INT_RANGES.items()}
# Within the double range: a number beyond it (1e400) is infinity to msgspec and an error to orjson.
# A JSON integer read as a float is float(the integer), what the reference path makes of it.
_FLOAT_MAX = 1.7976931348623157e308
Double = Annotated[float, msgspec.Meta(ge=-_FLOAT_MAX, le=_FLOAT_MAX)]
# A JSON scalar, for fields the decoder does not use but which must still be valid JSON to orjson. Its
# integers are bounded too: orjson rejects one of 309 digits or more (an infinite double), msgspec not.
Scalar = Union[_INTS["int64"], Double, str, bool, None]
# A row image without schema: the values the reference passes through unchanged (values.decode_untyped),
# so the image is the event's as it is. A BIT(1) boolean, which becomes 0/1, is left to the reference.
UntypedImage = dict[str, Union[_INTS["int64"], Double, str, None]]
RowOp = Literal["c", "r", "u", "d"]  # DML only: watermarks ("m") and DDL are left to the reference
# A uint64 TSO; msgspec bounds go no higher than int64's, and TSOs stay below 2**63 until the year 3084,
# so one above is left to the reference path.
_CommitTs = Optional[Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]]

_OPTIONS = {"forbid_unknown_fields": True, "gc": False}  # gc: these hold scalars and structs only


class Source(msgspec.Struct, **_OPTIONS):
    """payload.source as TiCDC writes it (TiCDC pkg/sink/codec/debezium/codec.go EncodeValue); the decoder
    uses db, table and commit_ts, the others are only checked to be JSON scalars."""

    db: str
    table: str
    commit_ts: _CommitTs = None
    version: Scalar = None
    connector: Scalar = None
    name: Scalar = None
    ts_ms: Scalar = None
    snapshot: Scalar = None
    server_id: Scalar = None
    gtid: Scalar = None
    file: Scalar = None
    pos: Scalar = None
    row: Scalar = None
    thread: Scalar = None
    query: Scalar = None
    cluster_id: Scalar = None
    start_ts: Scalar = None  # debezium-include-start-ts


def payload_type(before: Any, after: Any) -> type:
    """A DML payload whose before/after images are read as `before`/`after` (a row type, or None
    for an image the schema does not describe). Missing means null, as payload.get does."""
    return msgspec.defstruct("Payload", [
        ("source", Source), ("op", RowOp), ("before", Optional[before], None), ("after", Optional[after], None),
        ("ts_ms", Scalar, None), ("transaction", Scalar, None)], **_OPTIONS)


class RawEnvelope(msgspec.Struct, **_OPTIONS):
    """A key or value with schema, its halves left unparsed."""

    payload: msgspec.Raw
    schema: msgspec.Raw


# The length of `{"payload":P,"schema":S}` beyond P and S: a document of exactly that length has no
# other field, no field twice (msgspec would skip the first without checking it) and no whitespace.
RAW_ENVELOPE_OVERHEAD = len(b'{"payload":,"schema":}')


class UntypedValueEnvelope(msgspec.Struct, **_OPTIONS):
    payload: payload_type(UntypedImage, UntypedImage)  # type: ignore[valid-type]


class UntypedKeyEnvelope(msgspec.Struct, **_OPTIONS):
    payload: dict[str, Scalar]  # only the names are used; reference: any scalar


def column_type(spec: FieldSpec) -> tuple[Any, bool]:
    """The type msgspec reads column `spec` as, and whether the value it gives is the canonical one
    already (else the column's converter, columns.converter, finishes it)."""
    t = spec.type
    if t in _INTS:
        kind: Any = _INTS[t]
        # columns._int: TiCDC's int64 wrap of a BIGINT UNSIGNED is undone by the converter.
        final = spec.semantic not in CONVERTED_SEMANTICS and not (t == "int64" and spec.tidb_type == "bigint unsigned")
    elif t in ("float", "double"):
        kind, final = Double, True
    elif t == "boolean":
        kind, final = bool, False  # BIT(1): the converter makes it 0/1
    else:  # string, bytes
        kind = str
        final = t == "string" and spec.semantic not in CONVERTED_SEMANTICS and spec.tidb_type not in BINARY_TIDB_TYPES
    return (Optional[kind] if spec.optional else kind), final


def row_type(specs: tuple[FieldSpec, ...]) -> type:
    """A struct of one row image, fields in schema order, each one required: a missing column (which
    the reference leaves out of the row when optional) or an extra one fails to validate."""
    fields = [(f"c{i}", column_type(spec)[0]) for i, spec in enumerate(specs)]
    # Column names need not be identifiers; the struct's own are positional, renamed to the columns.
    rename = {f"c{i}": spec.column for i, spec in enumerate(specs)}
    return msgspec.defstruct("Row", fields, rename=rename, **_OPTIONS)
