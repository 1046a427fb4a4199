"""Debezium's temporal encodings (io.debezium.time.*) against TiDB's printed forms, both ways.

Decoding (wire -> TiDB print) is what the decoder does; encoding (TiDB print -> wire) replays
TiCDC's rules (TiCDC pkg/sink/codec/debezium/codec.go, writeDebeziumFieldValue) so the fidelity
projection can say exactly what reaches a consumer. Spec 000 (Debezium), "Data type mapping":
values follow Debezium's MySQL mapping: DATE as epoch days, DATETIME as epoch milli- or
microseconds in UTC, TIMESTAMP as a UTC ISO-8601 string, TIME as microseconds.
"""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Optional

from ticdc_conformance.protocols.common.wire import Malformed

_EPOCH_DATE = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1)
# TiDB's smallest TIMESTAMP; TiCDC sends anything below it (the zero value) as the epoch.
_MIN_TIMESTAMP = datetime(1970, 1, 1, 0, 0, 1)
_EPOCH_ZONED = "1970-01-01T00:00:00Z"
# TiDB's TIME range is +-838:59:59.000000 (fsp 6 rounding can reach .999999 only below it).
_MAX_TIME_MICROS = (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999

# re.ASCII: without it \d also matches other scripts' digits ("٢٠٢٤"), which int() then reads.
_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_DATETIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?", re.ASCII)
_TIME_RE = re.compile(r"(-?)(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?", re.ASCII)
# TiCDC always writes "Z"; Debezium's ZonedTimestamp is ISO-8601 with an offset, so accept one.
_ZONED_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})", re.ASCII)


# --- rendering TiDB's print -----------------------------------------------------------

def render_date(d: date) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


# datetime.isoformat prints the same text for these digit counts: a four-digit zero-padded year and
# the fraction truncated, not rounded. Only a naive datetime, which gets no UTC offset appended.
_ISO_TIMESPEC = {0: "seconds", 3: "milliseconds", 6: "microseconds"}


def render_datetime(dt: datetime, digits: int) -> str:
    timespec = _ISO_TIMESPEC.get(digits)
    if timespec is not None and dt.tzinfo is None:
        return dt.isoformat(" ", timespec)
    text = f"{render_date(dt)} {dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    if digits:
        text += "." + f"{dt.microsecond:06d}"[:digits]
    return text


def _fraction_micros(frac: Optional[str]) -> int:
    return int((frac or "").ljust(6, "0"))


# --- wire -> TiDB print (decoder) ------------------------------------------------------

def days_to_text(days: int) -> str:
    """io.debezium.time.Date: days since the epoch."""
    try:
        return render_date(_EPOCH_DATE + timedelta(days=days))
    except OverflowError:
        raise Malformed(f"Date value {days} days is outside the years 0001-9999") from None


def epoch_to_text(value: int, unit_micros: int, digits: int) -> str:
    """io.debezium.time.Timestamp (ms, 3 digits) / MicroTimestamp (us, 6 digits) in UTC.

    The column's fsp is not carried (spec 000 sends no type details for values), so the
    digits are the unit's: TiCDC picks Timestamp for fsp <= 3 and MicroTimestamp above.
    """
    try:
        return render_datetime(_EPOCH + timedelta(microseconds=value * unit_micros), digits)
    except OverflowError:
        raise Malformed(f"timestamp value {value} is outside the years 0001-9999") from None


def micros_to_time_text(value: int) -> str:
    """io.debezium.time.MicroTime: a signed duration in microseconds, printed like TiDB's TIME(6)."""
    if abs(value) > _MAX_TIME_MICROS:
        raise Malformed(f"MicroTime value {value} is outside TiDB's TIME range")
    sign = "-" if value < 0 else ""
    rest = abs(value)
    seconds, micros = divmod(rest, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"{sign}{hours:02d}:{minute:02d}:{second:02d}.{micros:06d}"


def zoned_to_text(text: str, zone: tzinfo) -> str:
    """io.debezium.time.ZonedTimestamp -> TiDB's TIMESTAMP print in the upstream time zone.

    TiCDC writes exactly fsp fraction digits (codec.go, TypeTimestamp), so the digits present are
    the column's fsp and are kept.
    """
    m = _ZONED_RE.fullmatch(text)
    if m is None:
        raise Malformed(f"ZonedTimestamp {text!r} is not YYYY-MM-DDTHH:MM:SS[.ffffff]Z")
    y, mo, d, h, mi, s, frac, offset = m.groups()
    try:
        if offset == "Z":
            zone_of_text = timezone.utc
        else:
            # ISO-8601 offsets stay below 24 hours; timezone() raises ValueError for more.
            sign = 1 if offset[0] == "+" else -1
            zone_of_text = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
        instant = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), _fraction_micros(frac),
                           tzinfo=zone_of_text)
        local = instant.astimezone(zone)
    except (ValueError, OverflowError):
        raise Malformed(f"ZonedTimestamp {text!r} is not a valid instant") from None
    return render_datetime(local, len(frac or ""))


# --- TiDB print -> wire (TiCDC's encoding, for the fidelity projection) ----------------

def _debezium_year(year: int) -> int:
    # TiCDC codec.go (TypeDate/TypeDatetime): years below 70 gain 2000, below 100 gain 1900,
    # copying Debezium's two-digit-year handling. The shift keeps leap years leap.
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


def date_text_to_days(text: str) -> Optional[int]:
    """None when TiCDC sends null: dates Go cannot parse (zero month/day, the zero date)."""
    m = _DATE_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a TiDB DATE: {text!r}")
    y, mo, d = (int(g) for g in m.groups())
    try:
        return (date(_debezium_year(y), mo, d) - _EPOCH_DATE).days
    except ValueError:
        return None


def _parse_datetime(text: str) -> Optional[datetime]:
    m = _DATETIME_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a TiDB DATETIME/TIMESTAMP: {text!r}")
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        return datetime(_debezium_year(int(y)), int(mo), int(d), int(h), int(mi), int(s),
                        _fraction_micros(frac))
    except ValueError:
        return None


def _printed_datetime(text: str) -> Optional[datetime]:
    """The naive datetime of a text in TiDB's print, "YYYY-MM-DD HH:MM:SS" with no, 3 or 6 fraction
    digits and a year from 100 on (which no shift moves), read by datetime.fromisoformat in C; None
    for any other text, which _parse_datetime reads. fromisoformat takes more spellings than TiDB
    prints (a "T", a comma, an offset, week dates), so the length and every separator are checked
    first; it reads only ASCII digits between them, as the pattern does."""
    if type(text) is not str or len(text) not in _PRINTED_LENGTHS or text[10] != " " or text[4] != "-" or \
            text[7] != "-" or text[13] != ":" or text[16] != ":" or (len(text) > 19 and text[19] != "."):
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.year >= 100 and dt.tzinfo is None else None


# The lengths of "YYYY-MM-DD HH:MM:SS", with ".fff" and with ".ffffff".
_PRINTED_LENGTHS = frozenset((19, 23, 26))


def datetime_text_to_epoch(text: str, fsp: int) -> Optional[int]:
    """Epoch ms (fsp <= 3) or us (fsp > 3); None for dates Go cannot represent (zero parts)."""
    dt = _printed_datetime(text)
    if dt is None:
        dt = _parse_datetime(text)
        if dt is None:
            return None
    delta = dt - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    # Go's UnixMilli floors; Python's // floors too, also for instants before 1970.
    return micros // 1000 if fsp <= 3 else micros


def datetime_read_back(text: str, fsp: int) -> Optional[str]:
    """`epoch_to_text` of `datetime_text_to_epoch(text, fsp)` in the unit the fsp picks, without
    the epoch: the parsed DATETIME (its year shifted) printed with the unit's digits. The epoch and
    every second are whole milliseconds, so flooring the epoch to the millisecond cuts the
    microseconds below it, as the 3-digit print does; years 100-9999 (after the shift) never
    overflow. None for what TiCDC sends as null. A text that is already that print (most: TiDB
    prints a DATETIME(3) with 3 digits) is given back as it is."""
    dt = _printed_datetime(text)
    if dt is None:
        dt = _parse_datetime(text)
        if dt is None:
            return None
    printed = dt.isoformat(" ", "milliseconds" if fsp <= 3 else "microseconds")
    return text if printed == text else printed


def timestamp_text_to_zoned(text: str, fsp: int, zone: tzinfo) -> str:
    """The UTC string TiCDC writes for a TIMESTAMP printed in the upstream zone."""
    m = _DATETIME_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a TiDB TIMESTAMP: {text!r}")
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        local = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), _fraction_micros(frac))
    except ValueError:
        local = None
    if local is None or local < _MIN_TIMESTAMP:
        # TiCDC codec.go: a value below types.MinTimestamp (the zero TIMESTAMP) goes out as the
        # epoch, without fraction digits.
        return _EPOCH_ZONED
    utc = local.replace(tzinfo=zone).astimezone(timezone.utc)
    return render_datetime(utc, fsp).replace(" ", "T") + "Z"


def time_text_to_micros(text: str) -> int:
    m = _TIME_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a TiDB TIME: {text!r}")
    sign, h, mi, s, frac = m.groups()
    micros = ((int(h) * 60 + int(mi)) * 60 + int(s)) * 1_000_000 + _fraction_micros(frac)
    return -micros if sign else micros
