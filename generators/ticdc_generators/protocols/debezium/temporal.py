"""TiDB temporal values turned into Debezium's time encodings, the way TiCDC's Go code does it.

TiCDC pkg/sink/codec/debezium/codec.go converts TiDB's time values through Go's `time` package:
DATE via time.Parse, DATETIME/TIMESTAMP via types.Time.GoTime (which fails for zero months or
days), two-digit-looking years (< 70, < 100) shifted into 20xx / 19xx, TIMESTAMP placed in the
changefeed time zone with Go's time.Date rules. Python's datetime cannot hold year 0 (which Go
and TiDB accept), so the calendar arithmetic here is done on plain integers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Optional
from zoneinfo import ZoneInfo

from ticdc_contract.temporal import civil_from_days, days_from_civil, days_in_month  # the proleptic calendar, once

_DT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?$")
_TIME = re.compile(r"^(-)?(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")

# types.MinTimestamp: TIMESTAMP values below it (the zero value) are written as the epoch.
MIN_TIMESTAMP = (1970, 1, 1, 0, 0, 1, 0)


class TemporalError(ValueError):
    """A value TiCDC's codec fails on (it returns ErrDebeziumEncodeFailed or panics)."""


@dataclass(frozen=True)
class Civil:
    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    micro: int = 0

    def as_tuple(self) -> tuple:
        return (self.year, self.month, self.day, self.hour, self.minute, self.second, self.micro)


def parse_datetime(s: str) -> Civil:
    """TiDB's print of a DATE/DATETIME/TIMESTAMP ("2023-11-30 12:34:56.120")."""
    return Civil(*_datetime_fields(s))


def _datetime_fields(s: str) -> tuple[int, int, int, int, int, int, int]:
    """parse_datetime's fields as a tuple: datetime_epoch runs once per DATETIME value and needs
    no Civil (a frozen dataclass costs more to make than the arithmetic on it)."""
    m = _DT.match(s.strip())
    if not m:
        raise TemporalError(f"not a TiDB date/time value: {s!r}")
    y, mo, d, h, mi, sec, frac = m.groups()
    micro = int(frac.ljust(6, "0")) if frac else 0
    return int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(sec or 0), micro


def time_to_micros(s: str) -> int:
    """TIME ("-838:59:59.000000") as signed microseconds (Duration.Microseconds())."""
    m = _TIME.match(s.strip())
    if not m:
        raise TemporalError(f"not a TiDB TIME value: {s!r}")
    neg, h, mi, sec, frac = m.groups()
    micro = int(frac.ljust(6, "0")) if frac else 0
    total = ((int(h) * 60 + int(mi)) * 60 + int(sec)) * 1_000_000 + micro
    return -total if neg else total


def is_go_valid(c: Civil) -> bool:
    """Whether Go's time.Date keeps the fields as given (GoTime / time.Parse would not fail)."""
    return _go_valid_date(c.year, c.month, c.day)


def _go_valid_date(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= days_in_month(year, month)


def _shift_two_digit_year(c: Civil) -> Civil:
    year = _shifted_year(c.year)
    return c if year == c.year else Civil(year, c.month, c.day, c.hour, c.minute, c.second, c.micro)


def _shifted_year(year: int) -> int:
    # TiCDC codec.go: years below 70 are read as 20xx and below 100 as 19xx (AddDate).
    return year + (2000 if year < 70 else 1900 if year < 100 else 0)


def _unix_seconds(c: Civil) -> int:
    return days_from_civil(c.year, c.month, c.day) * 86400 + c.hour * 3600 + c.minute * 60 + c.second


def date_days(s: str) -> Optional[int]:
    """io.debezium.time.Date: days since the epoch; None when Go's time.Parse rejects the date."""
    c = parse_datetime(s)
    if not is_go_valid(c):
        return None
    c = _shift_two_digit_year(c)
    return days_from_civil(c.year, c.month, c.day)


_FROM_ISO = datetime.fromisoformat
_ORDINAL_1970 = 719163  # date(1970, 1, 1).toordinal()


def datetime_epoch(s: str, fsp: int) -> Optional[int]:
    """Timestamp (fsp <= 3, ms) or MicroTimestamp (µs) of a DATETIME read as UTC; None when
    GoTime fails (zero month or day).

    TiDB's print of a valid DATETIME from year 100 on ("2023-11-30 12:34:56.120") is parsed by
    datetime.fromisoformat, in C; the regular expression and seven int() calls of the general path
    were most of a Debezium DATETIME value's cost. The separators and the fraction's digits are
    checked first, since fromisoformat also takes forms the pattern refuses (a comma before the
    fraction, more than six digits, a time zone, which leaves tzinfo set); a date Go refuses, a
    year below 100 (shifted) and any other text take the general path
    (tests/generators/protocols/test_fast_paths.py)."""
    n = len(s)
    if (19 <= n <= 26 and n != 20 and s[4] == "-" and s[7] == "-" and s[10] == " " and s[13] == ":"
            and s[16] == ":" and s.isascii() and (n == 19 or (s[19] == "." and s[20:].isdigit()))):
        try:
            dt = _FROM_ISO(s)
        except ValueError:
            dt = None
        if dt is not None and dt.tzinfo is None and dt.year >= 100:
            secs = (dt.toordinal() - _ORDINAL_1970) * 86400 + dt.hour * 3600 + dt.minute * 60 + dt.second
            return secs * 1000 + dt.microsecond // 1000 if fsp <= 3 else secs * 1_000_000 + dt.microsecond
    return _datetime_epoch_parsed(s, fsp)


def _datetime_epoch_parsed(s: str, fsp: int) -> Optional[int]:
    """datetime_epoch by the pattern of parse_datetime and the proleptic calendar arithmetic."""
    year, month, day, hour, minute, second, micro = _datetime_fields(s)
    if not _go_valid_date(year, month, day):
        return None
    secs = days_from_civil(_shifted_year(year), month, day) * 86400 + hour * 3600 + minute * 60 + second
    if fsp <= 3:
        return secs * 1000 + micro // 1000
    return secs * 1_000_000 + micro


@lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _offset_at(unix: int, zone: ZoneInfo) -> int:
    return int(datetime.fromtimestamp(unix, zone).utcoffset().total_seconds())


def local_to_unix(c: Civil, tz: str) -> int:
    """Go's time.Date(..., loc).Unix(): the wall clock is first read as UTC to find a zone
    period, and re-looked-up only when the corrected instant leaves that period (so DST
    overlaps and gaps resolve exactly as in Go, not as Python's fold rules would)."""
    unix = _unix_seconds(c)
    if tz in ("UTC", "Etc/UTC"):
        return unix
    zone = _zone(tz)
    offset = _offset_at(unix, zone)
    if offset != 0:
        offset = _offset_at(unix - offset, zone)
    return unix - offset


def _utc_civil(unix: int, micro: int) -> Civil:
    days, rem = divmod(unix, 86400)
    y, m, d = civil_from_days(days)
    return Civil(y, m, d, rem // 3600, rem % 3600 // 60, rem % 60, micro)


def zoned_timestamp(s: str, fsp: int, tz: str) -> str:
    """io.debezium.time.ZonedTimestamp of a TIMESTAMP printed in the changefeed time zone.

    Values below TiDB's minimum TIMESTAMP (the zero value) become the epoch; GoTime's check
    that the wall clock survives time.Date makes TiCDC fail on anything else it cannot place.
    """
    c = parse_datetime(s)
    if c.as_tuple() < MIN_TIMESTAMP:
        return "1970-01-01T00:00:00Z"
    if not is_go_valid(c):
        raise TemporalError(f"TiCDC cannot place TIMESTAMP {s!r} in time zone {tz}")
    unix = local_to_unix(c, tz)
    back = _utc_civil(unix + (0 if tz in ("UTC", "Etc/UTC") else _offset_at(unix, _zone(tz))), c.micro)
    if back.as_tuple() != c.as_tuple():
        raise TemporalError(f"TIMESTAMP {s!r} does not exist in time zone {tz}")
    return format_zoned(_utc_civil(unix, c.micro), fsp)


def format_zoned(u: Civil, fsp: int) -> str:
    # Go layout "2006-01-02T15:04:05" then ".%06d" cut to fsp digits, then "Z".
    out = f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    if fsp > 0:
        out += f".{u.micro:06d}"[: 1 + fsp]
    return out + "Z"


def timestamp_default_in_utc(s: str, tz: str) -> str:
    """TiDB keeps a TIMESTAMP column's DEFAULT converted to UTC (ColumnInfo.DefaultValue);
    the same digits, re-printed after the conversion."""
    c = parse_datetime(s)
    if c.as_tuple() < MIN_TIMESTAMP or not is_go_valid(c):
        return s
    u = _utc_civil(local_to_unix(c, tz), c.micro)
    frac = s.partition(".")[2]
    out = f"{u.year:04d}-{u.month:02d}-{u.day:02d} {u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    return out + (f".{u.micro:06d}"[: 1 + len(frac)] if frac else "")
