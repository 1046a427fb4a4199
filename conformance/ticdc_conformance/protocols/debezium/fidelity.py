"""What a perfect Debezium consumer can know of a column value.

project_value(t, v, options) = what DebeziumDecoder outputs for a message TiCDC encoded from v:
the TiCDC encoding (encoding.py) followed by the decoder's own value decoding (values.py), so the
two cannot drift apart. describe_fidelity classifies the type: "exact" when the projection is
the identity for every value TiDB can store (permissive sql_modes and every upstream time zone
included: tests/conformance/fidelity/test_fidelity_roundtrip.py holds each class against the encoder and the
decoder), "lossy" otherwise; Debezium carries every column, so nothing is "absent".
"""
from __future__ import annotations

import base64
from binascii import b2a_base64
from typing import Any, Callable, Optional

from ticdc_conformance.protocols.common.wire import Malformed, bounded_put, is_json_int
from ticdc_contract.model import Column
from ticdc_contract.tidb_types import TiDBType

from . import temporal
from .encoding import field_spec, go_json_float, spec_or_none, value_writer, wire_value
from .message import FieldSpec
from .options import DebeziumOptions, parse_options
from .values import BINARY_TIDB_TYPES, INT_RANGES, INT_TEMPORALS, decode_untyped, decode_value

_TEXT_LIKE = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json")
_BINARY = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
# What a consumer without the schema makes of a float64 on the wire: the JSON number as printed.
_RAW_NUMBER = ("without the schema (debezium-disable-schema) the JSON number is all a consumer has: Go prints "
               "an integral float64 without a fraction, its shortest digits padded with zeros "
               "(9.223372036854776e18 arrives as the integer 9223372036854776000)")

_ZERO_TIME = "00:00:00"


def project_value(t: TiDBType, value: Any, options: Optional[dict] = None) -> Any:
    opts = parse_options(options)
    return _projected(t, spec_or_none(t, opts), value, opts)


def _projected(t: TiDBType, spec: Optional[FieldSpec], value: Any, opts: DebeziumOptions) -> Any:
    try:
        return decode_value(spec, wire_value(t, value, opts), opts, "projection")
    except Malformed as exc:
        # Only a value TiDB cannot hold gets here (e.g. a TIME beyond 838:59:59).
        raise ValueError(f"{t.sql()} value {value!r} cannot be encoded: {exc}") from None


def project_column(column: Column, value: Any, options: Optional[dict] = None) -> Any:
    """A column's value as a Debezium consumer sees it: TiCDC writes a NULL of a column that has a
    DEFAULT as that default (TiCDC pkg/sink/codec/debezium/codec.go writeDebeziumFieldValue:
    `if datum.IsNull() { ... getValueFromDefault(defaultVal, ft) }`), so NULL and the default
    cannot be told apart downstream (`null_as_default`)."""
    if value is None and column.has_default and column.default is not None:
        value = null_as_default(column, options)
    return project_value(column.type, value, options)


# How many round-trip results a column projector keeps. An UPDATE mostly writes a row's other
# columns back as they were, so the same DATETIME or base64 value is projected again soon after;
# a bound keeps the memory flat whatever the stream holds.
REMEMBERED = 4096


def column_projector(column: Column, options: Optional[dict] = None, model_values: bool = False,
                     remembered: int = REMEMBERED) -> Callable[[Any], Any]:
    """`project_column` of one column, its field spec and its NULL's projection worked out once.
    A value that takes the round trip and is a string or an integer (nearly every one: temporal
    text, DECIMAL text, base64, BIT) keeps its projection for the next time it comes, up to
    `remembered` values: the round trip is a function of the value alone once the column and the
    options are fixed. The exact type is checked, as 1, 1.0 and True are one dict key; a float is
    not kept, as 0.0 and -0.0 are one key too.
    `model_values`: the values are the model's, a binary column's bytes rather than the truth
    files' base64 (ticdc_contract.canonical); they are projected as their truth-file form is."""
    t, opts = column.type, parse_options(options)
    spec = spec_or_none(t, opts)
    null: list = []  # the projection of NULL, once a NULL came (a default may not encode)
    unchanged = _unchanged(t, spec)
    round_trip = _round_trip(t, spec, opts)
    memo: dict[Any, Any] = {}

    def project(value: Any) -> Any:
        if value is not None:
            if unchanged(value):
                return value
            kind = type(value)
            if kind is not str and kind is not int:
                return round_trip(value)
            out = memo.get(value, memo)  # the memo itself stands for a miss: no projection is it
            if out is memo:
                out = round_trip(value)
                bounded_put(memo, value, out, remembered)  # starts over when full: cheaper than an LRU
            return out
        if not null:
            null.append(project_column(column, None, options))
        return null[0]

    def project_bytes(value: Any) -> Any:
        # The truth-file form of bytes is their canonical base64, which TiCDC writes as it is
        # (wire_value) and the decoder gives back as it is: without the descriptor or tidb_type
        # it keeps the text, with them it re-encodes what it decodes, the same canonical text.
        return project(None) if value is None else b2a_base64(value, newline=False).decode("ascii")
    return project_bytes if model_values and t.is_binary else project


def _round_trip(t: TiDBType, spec: Optional[FieldSpec], opts: DebeziumOptions) -> Callable[[Any], Any]:
    """`_projected` of a non-NULL value of the column, the encoding and the decoding folded into
    one step for the types whose values most often take it, when the descriptor is written:
    - DECIMAL and DOUBLE travel as go_json_float(float(v)) and read back as float() of that, which
      is float(v) itself (Go's shortest digits read back to the same double, an integral one as an
      integer that float() makes the same double again) but for -0.0, written as 0;
    - DATETIME travels as epoch ms or us and reads back printed (temporal.datetime_read_back).
    Without the descriptor the decoder keeps what is on the wire (decode_untyped; only BIT(1)'s
    boolean becomes 0 or 1), so the round trip is TiCDC's wire value itself (value_writer).
    A value these cannot take (not a number, not a DATETIME text) takes `_projected`, which says
    why. tests/conformance/checks/test_projection.py holds them to `_projected`."""
    if spec is None:
        write = value_writer(t, opts)

        def as_written(value: Any) -> Any:
            try:
                return decode_untyped(write(value), "projection")
            except Exception:
                return _projected(t, spec, value, opts)  # raises what the plain path raises
        return as_written
    if spec is not None and spec.type == "double" and t.base in ("double", "decimal"):
        def as_double(value: Any) -> Any:
            try:
                number = float(value)
            except (TypeError, ValueError):
                return _projected(t, spec, value, opts)
            return number if number else 0.0  # -0.0 goes out as 0
        return as_double
    if spec is not None and t.base == "datetime" and spec.semantic in INT_TEMPORALS:
        fsp = t.fsp

        def as_datetime(value: Any) -> Any:
            if type(value) is not str:
                return _projected(t, spec, value, opts)
            return temporal.datetime_read_back(value, fsp)
        return as_datetime
    return lambda value: _projected(t, spec, value, opts)


def _never(value: Any) -> bool:
    return False


def _is_str(value: Any) -> bool:
    return type(value) is str


def _unchanged(t: TiDBType, spec: Optional[FieldSpec]) -> Callable[[Any], bool]:
    """A test of the values that `_projected` gives back as they are, for the column types where the
    value's Python type and range decide it, so that the projector skips the encoding and decoding
    for them (most values of most columns):
    - a string of a text, ENUM or SET column: wire_value writes it as it is, and the decoder reads a
      string field without a time zone, a JSON check or base64 (or an untyped value) as it is;
    - an integer within the field's range (int64 without the schema) of an integer column other than
      BIT whose field is no temporal and no unsigned BIGINT the extension unwraps: within int64
      wire_value writes it as it is, and _decode_int (decode_untyped) gives it back;
    - without the schema, a string of a binary column: its base64 goes out as it is, and the
      decoder keeps it.
    Any other value, and every value of the other types, takes the round trip."""
    base = t.base
    if t.is_binary and spec is None:
        return _is_str  # base64 text goes out as it is, and nothing without a descriptor decodes it
    if base == "bit" or t.is_binary:
        return _never
    if t.is_integer:
        if spec is None:
            lo, hi = INT_RANGES["int64"]
        elif spec.type in INT_RANGES and spec.semantic not in INT_TEMPORALS and spec.tidb_type != "bigint unsigned":
            lo, hi = INT_RANGES[spec.type]
        else:
            return _never
        return lambda value: type(value) is int and lo <= value <= hi
    written_as_is = base not in ("float", "double", "decimal", "date", "datetime", "timestamp", "time")
    if written_as_is and (spec is None or (spec.type == "string" and spec.tidb_type not in BINARY_TIDB_TYPES and
                                           spec.semantic not in ("io.debezium.time.ZonedTimestamp",
                                                                 "io.debezium.data.Json"))):
        return _is_str
    return _never


def null_as_default(column: Column, options: Optional[dict] = None) -> Any:
    """The upstream value whose encoding TiCDC sends for a NULL of `column` (which has a DEFAULT).
    TiCDC (helper.go getValueFromDefault) turns the default's text into a value of the column's
    type and keeps the text where that fails; a text datum then read as a number or a duration is 0:
    - an integer or YEAR default outside int64 (BIGINT UNSIGNED above 2^63-1) fails
      strconv.ParseInt: 0;
    - new TiCDC does not convert a TIME default at all: 0 (00:00:00); TiCDC's classic generation
      ("version-profile": "tiflow") parses it and sends the default."""
    t, default = column.type, column.default
    if (t.is_integer or t.base == "year") and not isinstance(default, bool):
        try:
            number = int(str(default))
        except ValueError:
            return 0
        return number if -(2**63) <= number < 2**63 else 0
    if t.base == "time" and (options or {}).get("version-profile", "ticdc") == "ticdc":
        return _ZERO_TIME
    return default


def describe_fidelity(t: TiDBType, options: Optional[dict] = None) -> tuple[str, str]:
    opts = parse_options(options)
    base, schema = t.base, not opts.disable_schema
    if t.is_integer:
        if base == "bigint" and t.unsigned:
            if schema and opts.tidb_extension:
                return ("exact", "BIGINT UNSIGNED travels as int64(v) (TiCDC codec.go); the schema's "
                                 "tidb_type 'bigint unsigned' (spec 000, enable-tidb-extension) undoes the wrap")
            return ("lossy", "BIGINT UNSIGNED travels as int64(v) (TiCDC codec.go): values above 2^63-1 "
                             "arrive negative, and without tidb_type (spec 000) nothing marks the column unsigned")
        return ("exact", "integers travel as JSON integers within int16/int32/int64 (spec 000, Data type mapping)")
    if base == "float":
        return ("lossy", "FLOAT travels as the shortest float32 digits (spec 000: TiCDC does not widen FLOAT "
                         "like Debezium); a consumer reads that decimal, not the float32 bit pattern")
    if base == "double":
        if schema:
            return ("exact", "DOUBLE travels as shortest round-trip float64 digits (spec 000, Data type mapping)")
        return ("lossy", _RAW_NUMBER)
    if base == "decimal":
        return ("lossy", "spec 000: 'For the Decimal data type ... TiCDC uses the float64 type to represent it'; "
                         "scale and digits beyond float64 precision are lost" + ("" if schema else "; " + _RAW_NUMBER))
    if base in _TEXT_LIKE:
        return ("exact", "strings, ENUM/SET names and JSON text travel as JSON strings (spec 000, Data type mapping)")
    if base in _BINARY:
        return ("exact", "spec 000: binary columns are 'a String type after encoding it in Base64', which is "
                         "the canonical form; text and binary need no telling apart")
    if base == "year":
        return ("exact", "YEAR travels as io.debezium.time.Year, an integer")
    if base == "bit":
        if t.effective_flen == 1:
            return ("exact", "BIT(1) travels as a JSON boolean (Debezium mapping, TiCDC codec.go), only BIT(1) does")
        if schema:
            return ("exact", "BIT(n) travels as io.debezium.data.Bits, little-endian bytes in base64")
        return ("lossy", "BIT(n>1) travels as base64 little-endian bytes; without the schema "
                         "(debezium-disable-schema) it cannot be told from a string")
    if not schema:
        return ("lossy", f"{base.upper()} travels in Debezium's encoding (epoch days/ms/us, a UTC ISO string); "
                         "without the schema (debezium-disable-schema) its semantic type is unknown, the raw value is kept")
    if base == "date":
        return ("lossy", "io.debezium.time.Date (epoch days) is exact for years 0100-9999; TiCDC codec.go "
                         "shifts years below 100 (+2000 below 70, else +1900) and sends zero dates as null")
    if base == "datetime":
        digits = 3 if t.fsp <= 3 else 6
        return ("lossy", f"DATETIME travels as epoch {'milli' if digits == 3 else 'micro'}seconds "
                         f"(io.debezium.time.{'Timestamp' if digits == 3 else 'MicroTimestamp'}); the fsp is not "
                         f"carried, so {digits} fraction digits are printed; years below 100 are shifted and zero "
                         "dates become null (TiCDC codec.go)")
    if base == "timestamp":
        return ("lossy", "io.debezium.time.ZonedTimestamp in UTC with exactly fsp fraction digits, printed back "
                         "in the upstream time zone; but TiCDC codec.go compares the value's wall clock in the "
                         "changefeed time zone with types.MinTimestamp and sends anything below "
                         "1970-01-01 00:00:01 as 1970-01-01T00:00:00Z: the zero TIMESTAMP, and in a zone behind "
                         "UTC the first hours of 1970")
    if base == "time":
        if t.fsp == 6:
            return ("exact", "TIME(6) travels as io.debezium.time.MicroTime, microseconds")
        return ("lossy", "TIME travels as io.debezium.time.MicroTime; the fsp is not carried, so 6 fraction "
                         "digits are printed")
    raise ValueError(f"no Debezium mapping for {t.base}")


def carried_number(t: TiDBType, options: Optional[dict] = None) -> Optional[str]:
    """The JSON number a consumer reads for `t` (spec 000, Data type mapping): integers, YEAR,
    BIT(1) (a boolean read as 0/1) and, with the schema, BIT(n) as integers; FLOAT, DOUBLE and
    DECIMAL as float64; without the schema also the raw epoch days / ms / us of DATE, DATETIME, TIME."""
    schema = not parse_options(options).disable_schema
    if t.is_integer or t.base == "year" or (t.base == "bit" and (schema or t.effective_flen == 1)):
        return "integer"
    if t.base in ("float", "double", "decimal"):
        return "float"
    if not schema and t.base in ("date", "datetime", "time"):
        return "integer"
    return None


def number_form(t: TiDBType, x: float, options: Optional[dict] = None) -> Any:
    """A float64 as the projection holds it: without the schema the JSON number as Go printed it
    (an integral value as an integer), with it the double."""
    return go_json_float(x, 64) if parse_options(options).disable_schema else x


def accepted_forms(t: TiDBType, options: Optional[dict] = None) -> tuple[tuple[str, str], ...]:
    """The upstream-value forms a consumer may write beside the carried one (checks/value_forms.py)."""
    opts = parse_options(options)
    schema = not opts.disable_schema
    base = t.base
    if base == "bigint" and t.unsigned and not (schema and opts.tidb_extension):
        return (("integer", "the unsigned value: the column's DDL (or a declared schema) says UNSIGNED, "
                            "which undoes TiCDC's int64(v)"),)
    if base == "bit":
        if t.effective_flen == 1:
            return (("boolean", "TiCDC writes BIT(1) as a JSON boolean (codec.go); 0/1 is the same bit"),)
        if not schema:
            return (("integer", "the BIT value the base64 little-endian bytes hold, read with the "
                                "column's width from its DDL"),)
        return ()
    if base == "decimal":
        return (("decimal", "spec 000 carries DECIMAL as float64; the exact decimal upstream holds "
                            "(any trailing zeros) is what a consumer declaring DECIMAL(p,s) keeps"),)
    if base in ("date", "datetime", "timestamp", "time") and not schema:
        return (("fsp-digits", "without the schema the raw Debezium value (epoch days, epoch ms/us, "
                               "microseconds, a UTC ISO ZonedTimestamp) converted with the column's declared "
                               "type: a DATE, DATETIME or TIME text, a TIMESTAMP printed in the upstream "
                               "time zone"),)
    if base in ("datetime", "time"):
        return (("fsp-digits", "the fsp is not carried, so 3 or 6 digits are printed; the column's "
                               "declared fsp digits (its DDL) are the same value"),)
    return ()


def carried_as_upstream(t: TiDBType, value: Any, options: Optional[dict] = None) -> Any:
    """A carried value converted back to the form of upstream's values with the column's type, as a
    consumer that declares the column does it. Only without the schema does the projection keep the
    raw value: epoch days, epoch ms/us and microseconds become DATE/DATETIME/TIME text (the unit's
    digits), a ZonedTimestamp the TIMESTAMP printed in the upstream time zone, BIT bytes the integer."""
    opts = parse_options(options)
    if value is None or not opts.disable_schema:
        return value
    try:
        if t.base == "timestamp" and isinstance(value, str):
            return temporal.zoned_to_text(value, opts.time_zone)
        if t.base == "bit" and isinstance(value, str):
            return int.from_bytes(base64.b64decode(value, validate=True), "little")
        convert = INT_TEMPORALS.get(field_spec(t, opts).semantic or "")
        if convert is not None and is_json_int(value):
            return convert(value)
    except (Malformed, ValueError):
        pass  # not what TiCDC writes for the column: stays as it is, and differs
    return value


# The catalogue rule that says how a row event travels, and which says how a type's value does
# (spec 000, "Data type mapping"): named by findings of the cross-encoding differential check.
ROW_RULE = "DBZ-MESSAGE-2"


def type_rule(t: TiDBType) -> str:
    if t.base == "decimal":
        return "DBZ-TYPEMAP-4"
    if t.base == "float":
        return "DBZ-TYPEMAP-7"
    if t.is_binary or t.is_text:
        return "DBZ-TYPEMAP-3"
    if t.base == "bigint" and t.unsigned:
        return "DBZ-EXTENSION-2"  # tidb_type 'bigint unsigned' is what undoes the int64 wrap
    return "DBZ-TYPEMAP-1"


def lower_column(column: Column, value: Any, options: Optional[dict] = None) -> Any:
    """A column's value at Debezium's fidelity, from any fidelity at least as fine: NULL becomes
    the DEFAULT as project_column does, a type this configuration keeps exactly stays as it is
    (an ENUM's member index another encoding gave included), and a lossy one goes through the
    projection, which is idempotent on its own output (a float for a DECIMAL, a shifted year,
    padded fraction digits, the epoch for a TIMESTAMP below the smallest)."""
    if value is None:
        return project_column(column, None, options)
    if describe_fidelity(column.type, options)[0] == "exact":
        return value
    return project_value(column.type, value, options)
