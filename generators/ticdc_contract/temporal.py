"""TiDB's calendar and clock as the contract prints them: the proleptic Gregorian calendar (any
year, year 0 included), the printed forms of DATE, DATETIME and TIME with fsp fraction digits, and
the upstream time zone a TIMESTAMP is printed in (an IANA name, 'UTC', or a fixed offset '+HH:MM').
Both the value domains of the generators and TiDB's row checksum use these; written by hand because
TiDB's ranges (year 0, TIME up to 838 hours) are outside what `datetime` represents."""
from __future__ import annotations

import re
from datetime import datetime as _dt
from functools import lru_cache
from typing import Optional
from zoneinfo import ZoneInfo


# --- civil calendar (proleptic Gregorian, any year, year 0 included) -----------------------------
def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if is_leap(y) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01."""
    y -= m <= 2
    era = y // 400  # floor division: exact for negative years too
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


DAY_MIN = days_from_civil(0, 1, 1)
DAY_MAX = days_from_civil(9999, 12, 31)
DAY_2000 = days_from_civil(2000, 1, 1)


def format_date(days: int) -> str:
    y, m, d = civil_from_days(days)
    return f"{y:04d}-{m:02d}-{d:02d}"


def format_clock(secs: int, micro: int, fsp: int) -> str:
    h, rem = divmod(secs, 3600)
    out = f"{h:02d}:{rem // 60:02d}:{rem % 60:02d}"
    return out + (f".{micro:06d}"[: fsp + 1] if fsp else "")


def format_datetime(local_seconds: int, micro: int, fsp: int) -> str:
    days, secs = divmod(local_seconds, 86400)
    return f"{format_date(days)} {format_clock(secs, micro, fsp)}"


def max_fraction(fsp: int) -> int:
    """The largest microsecond value with fsp digits (999000 for fsp 3)."""
    return (10 ** fsp - 1) * 10 ** (6 - fsp) if fsp else 0


# --- time zones -------------------------------------------------------------------------------------
_FIXED = re.compile(r"([+-])(\d{2}):(\d{2})")


class Zone:
    """An upstream time zone: an IANA name, 'UTC', or a fixed offset '+HH:MM'."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fixed: Optional[int] = None
        self.zi: Optional[ZoneInfo] = None
        m = _FIXED.fullmatch(name)
        if name in ("UTC", "Etc/UTC", "Z"):
            self.fixed = 0
        elif m:
            self.fixed = (1 if m.group(1) == "+" else -1) * (int(m.group(2)) * 3600 + int(m.group(3)) * 60)
        else:
            try:
                self.zi = ZoneInfo(name)
            except Exception:
                raise ValueError(f"unknown time zone {name!r}") from None

    def offset_at(self, unix: int) -> int:
        if self.fixed is not None:
            return self.fixed
        offset = _dt.fromtimestamp(unix, self.zi).utcoffset()
        assert offset is not None  # an aware datetime always has one
        return int(offset.total_seconds())

    def local_seconds(self, unix: int) -> int:
        """The wall clock at `unix`, as seconds since 1970-01-01 00:00 of that wall clock."""
        return unix + self.offset_at(unix)

    def instants(self, local: int) -> list[int]:
        """Every instant whose wall clock here reads `local` (none in a DST gap, two in an overlap)."""
        if self.fixed is not None:
            return [local - self.fixed]
        offsets = {self.offset_at(local - 86400), self.offset_at(local), self.offset_at(local + 86400)}
        return sorted(local - o for o in offsets if self.offset_at(local - o) == o)

    @property
    def transitions(self) -> list[tuple[int, int, int]]:
        """(instant, offset before, offset after) of every offset change within TIMESTAMP's range."""
        return [] if self.fixed is not None else _transitions(self.name)


@lru_cache(maxsize=None)
def zone(name: str) -> Zone:
    return Zone(name)


@lru_cache(maxsize=None)
def _transitions(name: str) -> list[tuple[int, int, int]]:
    z = zone(name)
    out = []
    step = 86400
    prev_u, prev = TS_MIN_UNIX, z.offset_at(TS_MIN_UNIX)
    u = TS_MIN_UNIX + step
    while prev_u < TS_MAX_UNIX:
        u = min(u, TS_MAX_UNIX)
        o = z.offset_at(u)
        if o != prev:
            lo, hi = prev_u, u  # offset(lo) == prev, offset(hi) != prev
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if z.offset_at(mid) == prev:
                    lo = mid
                else:
                    hi = mid
            out.append((hi, prev, z.offset_at(hi)))
            prev = z.offset_at(hi)
            prev_u, u = hi, hi + step
            continue
        prev_u, u = u, u + step
    return out


# TIMESTAMP's range as Unix seconds (the fraction may run to .999999 at the top).
TS_MIN_UNIX = 1
TS_MAX_UNIX = 2**31 - 1
TS_2000 = 946684800


def format_time(micros: int, fsp: int) -> str:
    sign = "-" if micros < 0 else ""
    secs, micro = divmod(abs(micros), 1_000_000)
    return sign + format_clock(secs, micro, fsp)
