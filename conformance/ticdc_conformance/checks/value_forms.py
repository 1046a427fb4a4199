"""A consumer's value in the form the comparison uses, whichever faithful representation it wrote.

The checks compare a consumer's rows with the ground truth projected onto the protocol's fidelity
(`protocols/<p>/fidelity.py` project_value / project_column). A consumer may spell a value
differently and still be right, so before the comparison each of its values is mapped onto the
projected form when it is an accepted representation, and left as it is otherwise (so a wrong
value still differs):
- the carried number by value: an integral double for an integer (5.0 = 5), any digits a JSON
  writer chose for a DOUBLE or FLOAT (Go's encoding/json writes 2^63 as 9223372036854776000 and
  1e21 as 1e+21), read as the float64 the protocol carries and put in the projection's form;
- where the projection loses information, the exact upstream value the consumer could know from
  the message, the DDL/schema messages in the stream or the table schema a user declares, spelled
  as one of the forms the protocol accepts (`accepted_forms` of its fidelity.py; the temporal digits
  and the decimal value are accepted by every protocol): such a value is read as the upstream value
  and projected like the truth is;
- an integer as its decimal digits in a string (protobuf's JSON mapping of int64 and uint64);
- bytes in any spelling that names them alone (base64 unpadded or URL-safe, bytea hex, a byte array);
- Java's time types as Jackson's JavaTimeModule prints them (arrays of fields, a TIMESTAMP's epoch
  seconds, milliseconds or microseconds);
- a JSON column's document in any print, or held in the row as a JSON value (every protocol
  carries TiDB's text of it, and the document is the value).
When the upstream value under the row's key is known (`upstream`), an upstream-value form is
accepted only when it equals it: a projection that loses information maps more than one value onto
one form, and only the value upstream holds is faithful (a DECIMAL off in its 30th digit projects to
the same float64). Where the suite knows no upstream row under that key (an extra row, a table
without a key), the form is read through the projection alone.

Rejected on purpose: a FLOAT widened from float32 (0.10000000149011612 where the protocol carries
0.1), a TIMESTAMP printed in another zone, digits beyond the carried precision, an ENUM name that
is not the member upstream holds, a fractional number for an integer, a number for a text, a JSON
document whose data differs (a member dropped, an integer through a float64).
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Context, Decimal, InvalidOperation
from functools import partial
from typing import Any, Callable, Iterable, Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.common.exact_json import ExactNumber
from ticdc_conformance.protocols.common.wire import is_json_int
from ticdc_contract import json_document
from ticdc_contract.canonical import key_order_token, row_to_json, value_from_json
from ticdc_contract.model import Column, TableSchema
from ticdc_contract.temporal import days_in_month
from ticdc_contract.tidb_types import TiDBType

from ..protocols import protocol as protocol_spec

NOT = object()  # not a spelling of the form asked for
UNKNOWN = object()  # no upstream value under the row's key is known

# --- numbers ----------------------------------------------------------------------------------


def as_integer(value: Any) -> Any:
    """A JSON integer, or a number with an integral value; else NOT. A number is read with every
    digit it is written with (protocols/common/exact_json.py): a plain float is one whose text has
    exactly its value, so 9007199254740994.0 is that integer, and 9007199254740993.0 (no float64)
    keeps its digits; only the comparison with upstream tells whether it is upstream's."""
    n = exact_json.integer_of(value)
    return NOT if n is None else n


def as_float(value: Any) -> Any:
    """The float64 a JSON number stands for, whatever its spelling; else NOT."""
    if is_json_int(value) or isinstance(value, float):
        try:
            return float(value)
        except OverflowError:
            return NOT
    return NOT


# --- the upstream-value forms -----------------------------------------------------------------


def _integer(t: TiDBType, value: Any) -> Any:
    """An integer upstream can hold in the column (an unsigned BIGINT above 2^63-1 included)."""
    n = as_integer(value)
    if n is NOT:
        return NOT
    if t.is_integer:
        lo, hi = t.int_range
    elif t.base == "bit":
        lo, hi = 0, 2**t.effective_flen - 1
    elif t.base == "year":
        lo, hi = 0, 2155
    else:
        return NOT
    return n if lo <= n <= hi else NOT


_INTEGER_TEXT = re.compile(r"-?(?:0|[1-9][0-9]{0,19})", re.ASCII)  # at most 20 digits: 2^64-1 has 20


def _integer_text(t: TiDBType, value: Any) -> Any:
    """An integer printed as its decimal digits in a string, as protobuf's JSON mapping prints an
    int64 or uint64 and as consumers feeding JavaScript keep 64-bit integers exact."""
    if not isinstance(value, str) or not _INTEGER_TEXT.fullmatch(value):
        return NOT
    return _integer(t, int(value))


def _boolean(t: TiDBType, value: Any) -> Any:
    """BIT(1) as the JSON boolean a protocol writes for it."""
    if isinstance(value, bool) and t.base == "bit" and t.effective_flen == 1:
        return int(value)
    return NOT


_DECIMAL_TEXT = re.compile(r"-?\d+(?:\.\d+)?", re.ASCII)
# Java's BigDecimal.toString() writes an exponent where the plain digits would be long: 1E-7, 0E-10.
_DECIMAL_STRING = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d{1,4})?", re.ASCII)
_WIDE = Context(prec=200)  # DECIMAL(65, 30) needs 65 digits; the default context keeps 28


def _decimal(t: TiDBType, value: Any) -> Any:
    """TiDB's print of a DECIMAL(p, s) (s fraction digits) equal in value to a decimal string or
    number; NOT when it has nonzero digits beyond the scale."""
    if isinstance(value, str):
        if not _DECIMAL_STRING.fullmatch(value):
            return NOT
        d = Decimal(value)
    else:
        exact = exact_json.value_of(value)  # every digit the consumer printed, not a binary expansion
        if exact is None:
            return NOT
        d = exact
    try:
        printed = d.quantize(Decimal(1).scaleb(-t.scale), context=_WIDE)
    except InvalidOperation:
        return NOT
    if printed != d:
        return NOT
    return format(abs(printed) if printed == 0 else printed, "f")


# TiDB's print, or ISO 8601's (a T between date and time: Java's LocalDateTime, Jackson's
# JavaTimeModule); a TIMESTAMP may also carry the offset of the instant it prints (Z or ±hh:mm: Go's
# time.Time, Java's Instant and OffsetDateTime). A DATETIME is a wall clock of no zone: it may carry
# a Z only, as Go's time.Time prints one it read in UTC, and is then that same wall clock.
_DATE, _CLOCK, _FRACTION = r"(?P<date>\d{4}-\d{2}-\d{2})", r"(?P<clock>\d{2}:\d{2}:\d{2})", r"(?:\.(?P<fraction>\d+))?"
_TEMPORAL_TEXT = {
    "date": re.compile(_DATE, re.ASCII),
    "datetime": re.compile(_DATE + "[ T]" + _CLOCK + _FRACTION + "Z?", re.ASCII),
    "timestamp": re.compile(_DATE + "[ T]" + _CLOCK + _FRACTION + r"(?P<offset>Z|[+-]\d{2}:\d{2})?", re.ASCII),
    "time": re.compile(r"(?P<clock>-?\d{2,3}:\d{2}:\d{2})" + _FRACTION, re.ASCII),
}


def _temporal(t: TiDBType, value: Any, zone: str = "UTC") -> Any:
    """TiDB's print with exactly the column's fsp digits, from a print with any number of fraction
    digits whose digits beyond the fsp are zero (the protocol's 3 or 6, none for a zero fraction);
    a TIMESTAMP with an offset is the instant's print in `zone`, the changefeed's time-zone."""
    pattern = _TEMPORAL_TEXT.get(t.base)
    if pattern is None or not isinstance(value, str):
        return NOT
    m = pattern.fullmatch(value)
    if m is None:
        return NOT
    parts = m.groupdict()
    fraction = parts.get("fraction") or ""
    if fraction[t.fsp:].strip("0"):
        return NOT
    whole = " ".join(p for p in (parts.get("date"), parts.get("clock")) if p)
    if parts.get("offset"):
        whole = _in_zone(whole, parts["offset"], zone)
        if whole is NOT:
            return NOT
    return whole + ("." + fraction[:t.fsp].ljust(t.fsp, "0") if t.fsp else "")


# Java's time types as Jackson's JavaTimeModule writes them by default (WRITE_DATES_AS_TIMESTAMPS):
# a LocalDate as [year, month, day], a LocalDateTime as [year, month, day, hour, minute] with the
# second and then the nanosecond added when not zero, a LocalTime as [hour, minute, ...] the same
# way; an Instant as its epoch seconds with nine fraction digits, a java.sql.Timestamp as its epoch
# milliseconds. Each names one value: a TIMESTAMP's instant is printed in the changefeed's zone.
_FIELDS = {"date": (3, 3), "datetime": (5, 7), "timestamp": (5, 7), "time": (2, 4)}


def _temporal_fields(t: TiDBType, value: Any) -> Any:
    """TiDB's print of the value a JavaTimeModule array of fields names."""
    sizes = _FIELDS.get(t.base)
    if sizes is None or not isinstance(value, list) or not sizes[0] <= len(value) <= sizes[1] \
            or not all(type(x) is int for x in value):
        return NOT
    date, clock = value[:3] if t.base != "time" else [], value[3:] if t.base != "time" else value
    if date:
        y, m, d = date
        if not (0 <= y <= 9999 and 1 <= m <= 12 and 1 <= d <= days_in_month(y, m)):
            return NOT
    text = f"{date[0]:04d}-{date[1]:02d}-{date[2]:02d}" if date else ""
    if clock:
        h, mi, sec, nano = (clock + [0, 0])[:4]
        if not (0 <= h <= 23 and 0 <= mi <= 59 and 0 <= sec <= 59 and 0 <= nano < 10**9):
            return NOT
        text = (text + " " if text else "") + f"{h:02d}:{mi:02d}:{sec:02d}" + (f".{nano:09d}" if nano else "")
    return _temporal(t, text)


_TIMESTAMP_SECONDS = (1, 2**31 - 1)  # TiDB's TIMESTAMP: 1970-01-01 00:00:01 to 2038-01-19 03:14:07 UTC


def _epoch(digits: int) -> Callable[..., Any]:
    """A TIMESTAMP as a number of seconds (digits 0: an Instant's, any fraction), milliseconds (3)
    or microseconds (6) since the epoch, within the range a TIMESTAMP holds."""
    def read(t: TiDBType, value: Any, zone: str = "UTC") -> Any:
        exact = exact_json.value_of(value) if t.base == "timestamp" else None
        # Milliseconds and microseconds are whole numbers; seconds may have a fraction (an Instant's).
        if exact is None or digits and not is_json_int(value) or not -30 <= exact.adjusted() <= 20:
            return NOT
        seconds = exact.scaleb(-digits)
        whole = int(seconds.to_integral_value(rounding="ROUND_FLOOR"))
        if not _TIMESTAMP_SECONDS[0] <= whole <= _TIMESTAMP_SECONDS[1]:
            return NOT
        fraction = format(seconds - whole, "f").partition(".")[2].rstrip("0")
        try:
            wall = datetime.fromtimestamp(whole, timezone.utc).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
        except ZoneInfoNotFoundError:
            return NOT
        return _temporal(t, wall + ("." + fraction if fraction else ""), zone)
    return read


def _in_zone(wall: str, offset: str, zone: str) -> Any:
    """The wall clock `wall` at UTC `offset`, as the same instant's wall clock in `zone`."""
    try:
        at = datetime.strptime(wall, "%Y-%m-%d %H:%M:%S").replace(
            tzinfo=timezone.utc if offset == "Z" else datetime.strptime(offset, "%z").tzinfo)
        return at.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, OverflowError, ZoneInfoNotFoundError):  # no such instant (year 0, month 13), no such zone
        return NOT


def _members(t: TiDBType, value: Any) -> Any:
    """ENUM/SET member names (a SET's in any order, printed in member order as TiDB does; a SET
    may also be a JSON array of its names, as a consumer holding it as a list prints it)."""
    if t.base == "set" and isinstance(value, list) and all(type(n) is str for n in value):
        names = value
    elif not isinstance(value, str):
        return NOT
    elif t.base == "enum":
        return value if value in t.elements or value == "" else NOT
    elif t.base != "set":
        return NOT
    else:
        names = value.split(",") if value else []
    if len(set(names)) != len(names) or any(n not in t.elements for n in names):
        return NOT
    return ",".join(sorted(names, key=t.elements.index))


# A binary value. The canonical form is standard base64 with padding (ticdc_contract.canonical);
# JSON writers spell bytes other ways that name the same bytes, each unambiguously: base64 without
# its padding (Java's Base64.getEncoder().withoutPadding(), Rust's STANDARD_NO_PAD) or in the URL
# alphabet (RFC 4648 §5), PostgreSQL's bytea hex (\x0a1b), and an array of byte numbers (serde's
# Vec<u8>). Hex without a prefix is not among them: "abcd" is base64 too, of other bytes.
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}", re.ASCII)
_BASE64_URL = re.compile(r"[A-Za-z0-9_-]*={0,2}", re.ASCII)
_BYTEA_HEX = re.compile(r"\\x((?:[0-9a-fA-F]{2})*)", re.ASCII)


def _bytes(t: TiDBType, value: Any) -> Any:
    """The canonical base64 of the bytes a binary spelling names."""
    if not t.is_binary:
        return NOT
    if isinstance(value, list):
        if not all(type(b) is int and 0 <= b <= 255 for b in value):
            return NOT
        raw = bytes(value)
    elif not isinstance(value, str):
        return NOT
    elif m := _BYTEA_HEX.fullmatch(value):
        raw = bytes.fromhex(m.group(1))
    else:
        url = _BASE64_URL.fullmatch(value) is not None and _BASE64.fullmatch(value) is None
        if not url and _BASE64.fullmatch(value) is None or len(value.rstrip("=")) % 4 == 1:
            return NOT
        padded = value.rstrip("=")
        padded += "=" * (-len(padded) % 4)
        if len(value) != len(value.rstrip("=")) and value != padded:  # padding, if any, must be whole
            return NOT
        try:
            raw = base64.b64decode(padded, altchars=b"-_" if url else None, validate=True)
        except binascii.Error:
            return NOT
    return base64.b64encode(raw).decode("ascii")


# A JSON column's document. The protocols carry TiDB's print of it (ticdc_contract.json_document:
# keys sorted bytewise, ", " and ": "); a consumer that parses it and writes it again prints the
# same document another way: compact (Go's encoding/json, Jackson), keys in its own order, 1.0 as 1
# (Go reads every number as a float64 and prints a whole one without a fraction), or embedded in
# its row as a JSON value instead of a string. Its value is the document: two documents are the same
# when their objects hold the same keys with the same values, their arrays the same elements in the
# same order, and their numbers the same value (an integer exactly, a double as the float64 it is).


def _document_data(value: Any, depth: int = 1) -> Any:
    """A consumer's parsed document as json_document's Python data: an integer written with a
    fraction (every digit read, exact_json) within TiDB's integers is that integer."""
    if depth > json_document.MAX_DEPTH + 1:
        raise ValueError(f"JSON document nests deeper than {json_document.MAX_DEPTH}")
    if type(value) is ExactNumber:
        n = exact_json.integer_of(value)
        return n if n is not None and json_document.INT64_MIN <= n <= json_document.UINT64_MAX else float(value)
    if isinstance(value, list):
        return [_document_data(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _document_data(v, depth + 1) for k, v in value.items()}
    return value


def _document_print(document: Any) -> Any:
    try:
        return json_document.dumps(_document_data(document))
    except (ValueError, RecursionError):  # no document TiDB holds: NaN, infinity, too deep, a lone surrogate
        return NOT


def _document_text(t: TiDBType, value: Any) -> Any:
    """TiDB's print of the document a JSON text spells, in any layout."""
    if t.base != "json" or not isinstance(value, str):
        return NOT
    try:
        document = exact_json.loads(value)
    except ValueError:
        return NOT
    return _document_print(document)


def _document_value(t: TiDBType, value: Any) -> Any:
    """TiDB's print of a document written into the row as a JSON value (a JSON string is a string
    document)."""
    if t.base != "json" or value is None:
        return NOT
    return _document_print(value)


def _same_document(a: Any, b: Any) -> bool:
    """Documents (json_document's Python data) equal in value; a boolean is no number."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b  # Python compares an int and a float exactly
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_document(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_document(v, b[k]) for k, v in a.items())
    return False


@dataclass(frozen=True)
class Form:
    read: Callable[..., Any]  # (type, a consumer's value) -> the upstream canonical value, or NOT
    what: str  # how the consumer writes it, for docs/fidelity.md
    zoned: bool = False  # read takes zone=, the changefeed's time-zone, for a TIMESTAMP


FORMS: dict[str, Form] = {
    "integer": Form(_integer, "the column's integer upstream holds (an integral double included)"),
    "integer-text": Form(_integer_text, "the integer as its decimal digits in a string (\"9223372036854775807\")"),
    "boolean": Form(_boolean, "BIT(1) as a JSON boolean"),
    "decimal": Form(_decimal, "a decimal string or number equal in value, any trailing zeros, an exponent "
                              "(BigDecimal.toString's 1E-7)"),
    "fsp-digits": Form(_temporal, "TiDB's print with the column's fsp digits, or with zero digits added "
                                  "or dropped beyond them; ISO 8601's T between date and time; a TIMESTAMP "
                                  "with the offset of its instant (Z, ±hh:mm), a DATETIME with a Z", zoned=True),
    "fields": Form(_temporal_fields, "the fields Jackson's JavaTimeModule writes a LocalDate, LocalDateTime or "
                                     "LocalTime as ([2016, 10, 23, 20, 47, 24, 911000000])"),
    "epoch-seconds": Form(_epoch(0), "a TIMESTAMP's instant as seconds since the epoch, any fraction (Jackson's "
                                     "Instant: 1477226844.911000000)", zoned=True),
    "epoch-millis": Form(_epoch(3), "a TIMESTAMP's instant as milliseconds since the epoch (Jackson's "
                                    "java.sql.Timestamp)", zoned=True),
    "epoch-micros": Form(_epoch(6), "a TIMESTAMP's instant as microseconds since the epoch", zoned=True),
    "members": Form(_members, "the member names (a SET's in any order, or as a JSON array of them)"),
    "bytes": Form(_bytes, "the same bytes in base64 without padding or in the URL alphabet, as PostgreSQL's "
                          "bytea hex (\\x0a1b), or as an array of byte numbers"),
    "document": Form(_document_text, "the same document as JSON text in any layout: keys in any order, "
                                     "any whitespace, a number in any spelling of its value (1.0 as 1)"),
    "embedded": Form(_document_value, "the same document written into the row as a JSON value, not as a string"),
}
# Every protocol accepts these, each for the reason given: they name the value upstream holds with
# what every stream carries (the column's DDL: its fsp, scale, members, width, type) and nothing else.
_COMMON = {
    "fsp-digits": "the column's fsp is in its DDL; zero fraction digits beyond it, or a zero fraction "
                  "left out, do not change the value",
    "decimal": "the column's scale is in its DDL; trailing zeros do not change a decimal's value",
    "document": "a JSON document's value is its data, not the layout of its text (RFC 8259: object "
                "members are unordered, whitespace is insignificant)",
    "embedded": "a JSON document is a JSON value itself; a row may hold it as one",
    "bytes": "each spelling names one sequence of bytes: RFC 4648's base64 in either alphabet, padded or not "
             "(its §3.2), a hex string with bytea's \\x, a JSON array of the bytes' numbers",
    "fields": "each field of the date and the clock is there, none left out but a zero second or nanosecond",
    "epoch-seconds": "a TIMESTAMP is an instant; TiDB prints it in the time zone the changefeed names",
    "epoch-millis": "a TIMESTAMP is an instant; its range (1970 to 2038) tells the unit from the number",
    "epoch-micros": "a TIMESTAMP is an instant; its range (1970 to 2038) tells the unit from the number",
    "members": "ENUM and SET members are named in the column's DDL; a SET is a set of them, in any order",
    "boolean": "one bit is true or false: JDBC reads BIT(1) as a Boolean",
    "integer-text": "the digits are the integer's value: protobuf's JSON mapping prints every int64 and uint64 "
                    "so, and JSON readers that hold numbers as float64s need it to keep them exact",
}


def _common_forms(t: TiDBType) -> dict[str, str]:
    if t.base == "timestamp":
        return {f: _COMMON[f] for f in ("fsp-digits", "fields", "epoch-seconds", "epoch-millis", "epoch-micros")}
    if t.base in _TEMPORAL_TEXT:
        return {f: _COMMON[f] for f in ("fsp-digits", "fields")}
    if t.base == "decimal":
        return {"decimal": _COMMON["decimal"]}
    if t.base == "json":
        return {f: _COMMON[f] for f in ("document", "embedded")}
    if t.base == "bit" and t.effective_flen == 1:
        return {"integer-text": _COMMON["integer-text"], "boolean": _COMMON["boolean"]}
    if t.is_integer or t.base in ("year", "bit"):
        return {"integer-text": _COMMON["integer-text"]}
    if t.is_binary:
        return {"bytes": _COMMON["bytes"]}
    if t.base in ("enum", "set"):
        return {"members": _COMMON["members"]}
    return {}


def accepted_forms(t: TiDBType, protocol: str, options: dict) -> dict[str, str]:
    """Form id -> why, for the upstream-value forms a consumer of this protocol may write for `t`
    (the protocol's own reasons replace the common ones for the same form)."""
    return {**_common_forms(t), **dict(protocol_spec(protocol).accepted_forms(t, options))}


def carried_number(t: TiDBType, protocol: str, options: dict) -> Optional[str]:
    """"integer" or "float" when the protocol carries `t` as a JSON number, else None."""
    return protocol_spec(protocol).carried_number(t, options)


# --- one column -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnForms:
    """What one column accepts, resolved once per schema version."""

    column: Column
    number: Optional[str]
    number_form: Callable[[float], Any]
    forms: tuple[Form, ...]
    project: Callable[[Any], Any]
    back: Callable[[Any], Any]  # a carried value -> the upstream-form value it stands for

    @property
    def trivial(self) -> bool:
        return self.number is None and not self.forms

    def normalise(self, value: Any, upstream: Any = UNKNOWN) -> Any:
        if value is None:
            return None
        t = self.column.type
        carried = value
        if self.number == "integer":
            n = as_integer(value)
            carried = value if n is NOT else n
        elif self.number == "float":
            x = as_float(value)
            carried = value if x is NOT else self.number_form(x)
        for form in self.forms:
            exact = form.read(t, value)
            if exact is NOT:
                continue
            if upstream is not UNKNOWN:
                if _same(t, exact, upstream):
                    exact = upstream  # upstream's own spelling of the value (a document's layout, 1.0 for 1)
                elif not self._carried_upstream(form, exact, upstream):
                    continue
            try:
                return self.project(exact)
            except (ValueError, ArithmeticError):  # not a value TiDB can hold in the column
                continue
        return carried


    def _carried_upstream(self, form: Form, exact: Any, upstream: Any) -> bool:
        """Whether `exact` is what the protocol carries for `upstream`, converted back to the
        upstream form: the year a Debezium DATE shifted, the float a DECIMAL became, as a consumer
        reads them from the message."""
        try:
            back = form.read(self.column.type, self.back(self.project(upstream)))
        except (ValueError, ArithmeticError):
            return False
        return back is not NOT and _same(self.column.type, exact, back)


def _same(t: TiDBType, exact: Any, upstream: Any) -> bool:
    if t.base == "decimal" and isinstance(upstream, str) and _DECIMAL_TEXT.fullmatch(upstream):
        return Decimal(exact) == Decimal(upstream)
    if t.base == "json" and isinstance(exact, str) and isinstance(upstream, str):
        try:
            return exact == upstream or _same_document(json_document.loads(exact), json_document.loads(upstream))
        except (ValueError, RecursionError):
            return False
    return exact == upstream and type(exact) is type(upstream)


def column_forms(column: Column, protocol: str, options: dict) -> ColumnForms:
    spec = protocol_spec(protocol)
    t = column.type
    by_column = spec.project_column
    if by_column is not None:
        def project(v: Any) -> Any:
            return by_column(column, v, options)
    else:
        def project(v: Any) -> Any:
            return spec.project_value(t, v, options)
    shape = spec.number_form
    number_form = (lambda x: shape(t, x, options)) if shape is not None else float
    forms = tuple(FORMS[f] for f in accepted_forms(t, protocol, options))
    if t.base == "timestamp":  # an instant (an offset, an epoch number) is read in the changefeed's time-zone
        zone = str(options.get("time-zone") or "UTC")
        forms = tuple(Form(partial(f.read, zone=zone), f.what) if f.zoned else f for f in forms)
    unwrap = spec.carried_as_upstream
    back = (lambda v: unwrap(t, v, options)) if unwrap is not None else (lambda v: v)
    return ColumnForms(column, carried_number(t, protocol, options), number_form, forms, project, back)


# --- rows -------------------------------------------------------------------------------------


class RowForms:
    """A table's columns (one schema version, as the consumer knows it) and what each accepts."""

    def __init__(self, table: TableSchema, protocol: str, options: dict) -> None:
        self.table = table
        self.handle = tuple(table.handle_key)
        forms = (column_forms(c, protocol, options) for c in table.columns if not c.is_virtual)
        self.columns = {f.column.name: f for f in forms if not f.trivial}
        self.key_values = _key_values(self.handle, self.columns)

    def row(self, row: dict, upstream: Optional[dict | Callable[[], dict]] = None,
            projected: Optional[dict] = None) -> dict:
        """`row` with every value of a known column in the compared form; `upstream` is the truth
        row (canonical JSON, unprojected) under the same key where known, or what makes it when it
        is first needed, `projected` the same row projected: a value already in its projected form
        is left at once."""
        if not self.columns:
            return row
        out = dict(row)
        for name, forms in self.columns.items():
            if name not in out:
                continue
            value = out[name]
            if projected is not None:
                expected = projected.get(name, UNKNOWN)
                if value == expected and type(value) is type(expected):
                    continue
            if callable(upstream):
                upstream = upstream()
            out[name] = forms.normalise(value, upstream.get(name, UNKNOWN) if upstream is not None else UNKNOWN)
        return out

    def key_row(self, row: dict) -> dict:
        """`row` with its handle-key values in the compared form (all values in a table without a
        key, whose rows are told apart by their whole image)."""
        if not self.handle:
            return self.row(row)
        out = dict(row)
        for name in self.handle:
            if name in out and name in self.columns:
                out[name] = self.columns[name].normalise(out[name])
        return out

    def key_token(self, row: dict) -> Optional[str]:
        if not self.handle or any(c not in row for c in self.handle):
            return None
        return key_order_token([row[c] for c in self.handle])


def normalise_rows(table: TableSchema, actual: Iterable[dict], truth_rows: list[dict], projected: list[dict],
                   protocol: str, options: dict) -> list[dict]:
    """A consumer's final rows in the compared form, each checked against the truth row
    (`truth_rows`, unprojected, and `projected`, the same rows projected) under its key."""
    forms = RowForms(table, protocol, options)
    if not forms.columns:
        return list(actual)
    upstream: dict[str, tuple[dict, dict]] = {}
    for raw, proj in zip(truth_rows, projected):
        token = forms.key_token(proj)
        if token is not None:
            upstream[token] = (raw, proj)
    out = []
    for r in actual:
        token = forms.key_token(forms.key_row(r))
        raw, proj = upstream.get(token, (None, None)) if token is not None else (None, None)
        out.append(forms.row(r, raw, proj))
    return out


class StateForms:
    """The checkpoint check's normalisation: a consumer's row in the compared form under the
    upstream schema at the current checkpoint, checked against upstream's row under its key.

    `truth` is the checkpoint check's upstream interpreter (checks/projected_truth.py
    `ProjectedTruth`, or its copy fed by another process, checks/upstream_process.py): its `schemas`,
    `view(name)` (the table as the consumer knows it), `counts` (per table, its comparable images)
    and `upstream_row(name, key)` (the row under a key, as (row, projected row, image)). Upstream's
    row is found when every handle-key column is carried exactly, so its upstream value is the value
    the consumer wrote; otherwise the row is normalised through the projection alone."""

    def __init__(self, truth: Any, protocol: str, options: dict) -> None:
        self.truth, self.protocol, self.options = truth, protocol, options
        self._spec = protocol_spec(protocol)
        self._cache: dict[tuple[str, str], tuple[TableSchema, RowForms, bool]] = {}

    def _forms(self, name: tuple[str, str]) -> Optional[tuple[RowForms, bool]]:
        schema = self.truth.schemas.get(name)
        if schema is None:
            return None
        hit = self._cache.get(name)
        if hit is None or hit[0] is not schema:
            forms = RowForms(self.truth.view(name), self.protocol, self.options)
            exact_key = bool(forms.handle) and all(
                self._spec.describe_fidelity(forms.table.column(c).type, self.options)[0] == "exact"
                for c in forms.handle)
            hit = self._cache[name] = (schema, forms, exact_key)
        return hit[1], hit[2]

    def state_row(self, name: tuple[str, str], row: dict, image: Optional[bytes] = None) -> dict:
        """`image`: the row's comparable image (checks/checkpoints.py `comparable`), when known; a
        row whose image is upstream's under its key is in the compared form already and is given
        back as it is (the same object)."""
        if image is not None and self.as_it_is(name, image):
            return row
        found = self._forms(name)
        if found is None or not found[0].columns:
            return row
        forms, exact_key = found
        keyed = forms.key_row(row)
        entry = None
        if exact_key and all(c in keyed for c in forms.handle):
            try:
                key = tuple(value_from_json(forms.table.column(c).type, keyed[c]) for c in forms.handle)
                entry = self.truth.upstream_row(name, key)
            except (TypeError, ValueError):  # a key value of the wrong JSON type: no upstream row has it
                entry = None
        if entry is None:
            return forms.row(row)
        if image is not None and image == entry[2]:  # every value is upstream's projected value
            return row
        return forms.row(row, lambda: row_to_json(self.truth.schemas[name], entry[0]), entry[1])

    def as_it_is(self, name: tuple[str, str], image: bytes) -> bool:
        """Whether `state_row` gives the row of this comparable image back as it is, told without
        reading it: a table upstream does not hold, one without columns to normalise, or an image
        upstream holds now in a table whose key values are carried exactly (they lead to an
        upstream row with this image, so every value is that row's projected value)."""
        found = self._forms(name)
        if found is None or not found[0].columns:
            return True
        return found[1] and image in self.truth.counts.get(name, ())

    def as_it_is_test(self, name: tuple[str, str]) -> Callable[[bytes], bool]:
        """`as_it_is` for the images of one table, its forms looked up once."""
        found = self._forms(name)
        if found is None or not found[0].columns:
            return _always
        if not found[1]:
            return _never
        return self.truth.counts.get(name, {}).__contains__

    def key_row(self, name: tuple[str, str], row: dict) -> dict:
        found = self._forms(name)
        return row if found is None else found[0].key_row(row)

    def key_values(self, name: tuple[str, str], row: dict) -> Optional[list]:
        """The handle-key values of `key_row(name, row)`, in key order (a missing one None); None
        for a table without a handle key or one upstream does not hold."""
        values = self.key_reader(name)
        return None if values is None else values(row)

    def key_reader(self, name: tuple[str, str]) -> Optional[Callable[[dict], list]]:
        """`key_values` for the rows of one table under its current schema version (its forms
        looked up once): None for a table without a handle key or one upstream does not hold."""
        found = self._forms(name)
        return None if found is None else found[0].key_values


def _key_values(handle: tuple[str, ...], columns: dict[str, ColumnForms]) -> Optional[Callable[[dict], list]]:
    """A row's handle-key values in the compared form, in key order (a missing one None); None
    without a handle key. The key columns a protocol carries as they are (most keys) are read
    without a test per column, a single one without a loop: every applied row event asks."""
    if not handle:
        return None
    if len(handle) == 1:
        only = handle[0]
        if only not in columns:
            return lambda row: [row.get(only)]
        forms = columns[only]
        normalise = forms.normalise
        if forms.number == "integer" and not forms.forms:
            # An integer key carried as a JSON integer (most keys): normalise gives an int back as
            # it is (as_integer), so only another value is read through it.
            def integer_key(row: dict) -> list:
                if only not in row:
                    return [None]
                value = row[only]
                return [value if type(value) is int else normalise(value)]
            return integer_key
        return lambda row: [normalise(row[only])] if only in row else [None]
    if not any(c in columns for c in handle):
        return lambda row: [row.get(c) for c in handle]
    return lambda row: [columns[c].normalise(row[c]) if c in columns and c in row else row.get(c) for c in handle]


def _always(image: bytes) -> bool:
    return True


def _never(image: bytes) -> bool:
    return False
