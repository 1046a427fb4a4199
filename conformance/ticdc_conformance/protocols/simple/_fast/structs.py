"""msgspec types of the Simple JSON DML message, read in C by the decoder's fast path (_fast/decoder.py).

A DML message (spec 004, "DML event"; field names per TiCDC pkg/sink/codec/simple/message.go) is
read in one step when its table's schema version is among those the fast path has seen: a tagged
union of one Struct per version (`message_struct`, tagged by `table`) checks the envelope and reads
the row images at once. Otherwise it is read in two: `DMLEnvelope` checks every field but the row
images, which it keeps as raw JSON, and the Struct of the version it names reads them. A row
Struct's fields are the table's columns in table order, so `msgspec.to_builtins` gives the row in
the order the reference path gives it, under the columns' names.

The types only ever accept what the reference path (wire/json.py, rows.py) accepts too; anything
else fails in msgspec, and the fast path leaves the message to the reference path:
- `forbid_unknown_fields`: a field the fast path does not read (`handleKeyOnly`, `claimCheckLocation`,
  `checksum`, a column the schema version lacks) is left to the reference path;
- no defaults on row fields: a row Struct holds exactly the columns a row carries (every column,
  or those a row of virtual columns or a column selector carries: plans.py), and a row that
  carries others fails;
- integers are held to a signed 64-bit range in C (msgspec bounds must fit an int64): orjson reads a
  wider number as a float, which the reference rejects, while msgspec would read it exactly;
- every column takes JSON null (the reference reads null in every column, whatever its nullability).

Structs hold no reference cycles (strings, bytes, string dicts, Raw), so they skip the garbage
collector (gc=False).
"""
from __future__ import annotations

from typing import Annotated, Any, Callable, Literal, Optional

import msgspec
from msgspec import Meta, Raw, Struct

from ticdc_conformance.protocols.simple.message import ColumnInfo

_I64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
# A TSO or a schema version: unsigned on the wire; above 2**63 - 1 (no TiDB TSO gets there) the
# reference path reads it.
_U63 = Annotated[int, Meta(ge=0, le=2**63 - 1)]

# A missing image and a null one both mean "no image" (wire/json.py reads them with get_dict optional).
MISSING_IMAGE = Raw(b"")
NO_IMAGE = (MISSING_IMAGE, Raw(b"null"))


class DMLEnvelope(Struct, forbid_unknown_fields=True, gc=False):
    version: Literal[1]
    type: Literal["INSERT", "UPDATE", "DELETE"]
    database: str
    table: str
    commitTs: _U63
    buildTs: _I64
    tableID: Optional[_I64] = None
    # omitempty in TiCDC's message struct: absent (or null, for the reference path) means version 0.
    schemaVersion: Optional[_U63] = None
    # Raw: read by the table's own row Struct once the envelope names the table.
    data: Raw = MISSING_IMAGE
    old: Raw = MISSING_IMAGE


ENVELOPE = msgspec.json.Decoder(DMLEnvelope)


def _field_type(col: ColumnInfo) -> Any:
    """The type msgspec reads a column's JSON value as (TiCDC message.go encodeValue)."""
    if col.kind == "binary":
        # base64 text, decoded in C; msgspec accepts no text that base64.b64decode(validate=True)
        # (values.from_json) refuses, and reads the same bytes from what it accepts. to_builtins
        # prints them in canonical base64, as values.from_json does.
        return Optional[bytes]
    if col.kind == "timestamp":
        return Optional[dict[str, str]]  # {"location", "value"}, checked by values.from_json
    return Optional[str]


def field_name(index: int) -> str:
    """The Struct field of a table's `index`th column: a column's name need not be an identifier, so
    fields are positional and renamed to the columns' names in JSON and in to_builtins."""
    return f"c{index}"


def row_struct(columns: tuple[ColumnInfo, ...]) -> type[Struct]:
    return msgspec.defstruct("SimpleRow", [(field_name(i), _field_type(c)) for i, c in enumerate(columns)],
                             rename={field_name(i): c.name for i, c in enumerate(columns)},
                             forbid_unknown_fields=True, gc=False)


def message_struct(schema: str, table: str, version: int, row: type[Struct],
                   event: Callable[[Any], Any]) -> type[Struct]:
    """The DML messages of one table schema version, as a member of a union tagged by `table`: the
    Literals make a message of another database or version fail, so it takes the two-step read.
    `event` (rowcode.py) becomes its method: a message read by the union is its own dispatch."""
    fields = [("version", Literal[1]), ("type", Literal["INSERT", "UPDATE", "DELETE"]),
              ("database", Literal[schema]), ("commitTs", _U63), ("buildTs", _I64),
              ("tableID", Optional[_I64], None), ("schemaVersion", Literal[version]),
              ("data", Optional[row], None), ("old", Optional[row], None)]
    return msgspec.defstruct("SimpleDML", fields, tag_field="table", tag=table, kw_only=True,
                             forbid_unknown_fields=True, gc=False, namespace={"event": event})
