"""DATE, DATETIME, TIMESTAMP and TIME domains, in TiDB's printed form.

- DATE 'YYYY-MM-DD'; TiDB documents '1000-01-01'..'9999-12-31' but accepts years 0000..0999 too
  (TiDB pkg/types/time.go checkDateType). Zero dates ('0000-00-00') and dates with a zero month or
  day exist only under a permissive sql_mode (opt-in "zero-dates").
- DATETIME(fsp) 'YYYY-MM-DD HH:MM:SS[.f]' with exactly fsp fraction digits.
- TIMESTAMP(fsp) is stored as an instant in '1970-01-01 00:00:01.000000'..'2038-01-19 03:14:07.999999'
  UTC and printed in the upstream time zone; wall-clock times inside a DST gap do not exist
  there (TiDB refuses them: ErrTimestampInDSTTransition), times in a DST overlap do (twice).
- TIME(fsp) '[-]HH:MM:SS[.f]', hours of two or three digits, '-838:59:59'..'838:59:59' (no
  fraction beyond those ends), never '-00:00:00'.
"""
from __future__ import annotations

import re

from ticdc_contract.temporal import (
    DAY_2000,
    DAY_MAX,
    DAY_MIN,
    TS_2000,
    TS_MAX_UNIX,
    TS_MIN_UNIX,
    days_from_civil,
    days_in_month,
    format_clock,
    format_date,
    format_datetime,
    format_time,
    max_fraction,
    zone,
)
from ticdc_contract.tidb_types import TiDBType

from . import gen as g
from .domain import Edge, Family

ZERO_DATES = frozenset({"zero-dates"})


_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def _frac_re(fsp: int) -> str:
    return rf"\.(\d{{{fsp}}})" if fsp else "()"


def _check_date_parts(y: int, m: int, d: int, allow: frozenset[str]) -> None:
    if m == 0 or d == 0:
        if "zero-dates" not in allow:
            raise ValueError("zero date or zero month/day: needs sql_mode without NO_ZERO_DATE/NO_ZERO_IN_DATE")
        if m > 12 or d > 31:
            raise ValueError("month or day out of range")
        return
    if not 1 <= m <= 12 or not 1 <= d <= days_in_month(y, m):
        raise ValueError(f"no such date {y:04d}-{m:02d}-{d:02d}")


# --- DATE ---------------------------------------------------------------------------------------------
def date_family(t: TiDBType, allow: frozenset[str]) -> Family:
    pairs = [("2000-01-01", "2000-01-01"), ("1000-01-01", "documented minimum"), ("9999-12-31", "maximum"),
             ("1970-01-01", "Unix epoch"), ("1969-12-31", "the day before the epoch"),
             ("2000-02-29", "leap day of a 400-year"), ("2024-02-29", "leap day"), ("1900-02-28", "1900: no leap day"),
             ("2038-01-19", "32-bit time_t end"), ("1582-10-10", "inside the Julian-Gregorian switch"),
             ("0001-01-01", "earliest year TiDB accepts without a zero part"), ("0000-01-01", "year zero"),
             ("0069-12-31", "year 69: two-digit-year readers shift it to 2069"),
             ("0070-01-01", "year 70: two-digit-year readers shift it to 1970"),
             ("0099-12-31", "year 99"), ("0100-01-01", "year 100"), ("0999-12-31", "below the documented range")]
    edges = [Edge(v, why) for v, why in pairs]
    edges += [Edge("0000-00-00", "zero date", ZERO_DATES), Edge("2024-00-15", "zero month", ZERO_DATES),
              Edge("2024-03-00", "zero day", ZERO_DATES), Edge("2024-00-00", "zero month and day", ZERO_DATES)]
    days = g.integers(DAY_MIN, DAY_MAX, typical=(days_from_civil(1950, 1, 1), days_from_civil(2030, 12, 31)),
                      shrink_to=DAY_2000)
    gen = days.map(format_date)

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        m = _DATE_RE.fullmatch(v)
        if not m:
            raise ValueError(f"{v!r} is not 'YYYY-MM-DD'")
        _check_date_parts(int(m.group(1)), int(m.group(2)), int(m.group(3)), allow)

    defaults = ["2000-01-01", "1970-01-01", "1000-01-01", "9999-12-31", "0000-00-00"]
    return Family(gen, edges, check, defaults)


# --- DATETIME -------------------------------------------------------------------------------------------
def _fraction_gen(fsp: int) -> g.Gen:
    unit = 10 ** (6 - fsp)
    return g.integers(0, 10 ** fsp - 1).map(lambda k: k * unit) if fsp else g.just(0)


def _dt_re(fsp: int) -> re.Pattern:
    return re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})" + _frac_re(fsp))


def _match_datetime(v, pattern: re.Pattern, fsp: int) -> re.Match:
    """The DATETIME/TIMESTAMP text form: a string 'YYYY-MM-DD HH:MM:SS' with exactly fsp digits."""
    if not isinstance(v, str):
        raise ValueError(f"expected str, got {type(v).__name__}")
    m = pattern.fullmatch(v)
    if not m:
        raise ValueError(f"{v!r} is not 'YYYY-MM-DD HH:MM:SS' with exactly {fsp} fraction digits")
    return m


def datetime_family(t: TiDBType, allow: frozenset[str]) -> Family:
    fsp = t.decimal or 0
    top = max_fraction(fsp)
    f = lambda days, secs, micro=0: f"{format_date(days)} {format_clock(secs, micro, fsp)}"  # noqa: E731
    c = days_from_civil
    pairs = [(f(DAY_2000, 0), "2000-01-01 midnight"), (f(c(1000, 1, 1), 0), "documented minimum"),
             (f(DAY_MAX, 86399, top), "maximum"), (f(0, 0), "Unix epoch"), (f(0, 1), "TIMESTAMP's minimum, as a DATETIME"),
             (f(-1, 86399, top), "the instant before the epoch"), (f(c(2038, 1, 19), 11647, top), "TIMESTAMP's maximum"),
             (f(c(2038, 1, 19), 11648), "just beyond TIMESTAMP's range"), (f(c(2024, 2, 29), 43200), "leap day noon"),
             (f(c(2023, 12, 31), 86399, top), "the last instant of a year"), (f(c(1, 1, 1), 0), "year 1"),
             (f(c(0, 1, 1), 0), "year zero"), (f(c(69, 12, 31), 86399, top), "year 69 (two-digit-year readers: 2069)"),
             (f(c(70, 1, 1), 0), "year 70 (two-digit-year readers: 1970)"), (f(c(999, 12, 31), 86399), "below the documented range")]
    if fsp:
        unit = 10 ** (6 - fsp)
        pairs += [(f(DAY_2000, 0, unit), "smallest fraction"), (f(DAY_2000, 0, 500000), "half a second"),
                  (f(DAY_2000, 0, top), "largest fraction")]
    zero_clock = format_clock(0, 0, fsp)
    edges = [Edge(v, why) for v, why in pairs]
    edges += [Edge(f"0000-00-00 {zero_clock}", "zero datetime", ZERO_DATES),
              Edge(f"2024-00-15 {format_clock(3600, 0, fsp)}", "zero month", ZERO_DATES),
              Edge(f"2024-03-00 {zero_clock}", "zero day", ZERO_DATES)]
    days = g.integers(DAY_MIN, DAY_MAX, typical=(days_from_civil(2000, 1, 1), days_from_civil(2030, 12, 31)),
                      shrink_to=DAY_2000)
    gen = g.tuples(days, g.integers(0, 86399), _fraction_gen(fsp)).map(lambda x: f(*x))
    pattern = _dt_re(fsp)

    def check(v) -> None:
        m = _match_datetime(v, pattern, fsp)
        y, mo, d, hh, mi, ss = (int(x) for x in m.groups()[:6])
        _check_date_parts(y, mo, d, allow)
        if hh > 23 or mi > 59 or ss > 59:
            raise ValueError(f"{v!r}: no such time of day")

    defaults = [f(DAY_2000, 0), f(0, 0), f(c(1000, 1, 1), 0), f(DAY_MAX, 86399, top), f"0000-00-00 {zero_clock}"]
    return Family(gen, edges, check, defaults)


# --- TIMESTAMP --------------------------------------------------------------------------------------------
def timestamp_family(t: TiDBType, allow: frozenset[str], time_zone: str) -> Family:
    fsp = t.decimal or 0
    top = max_fraction(fsp)
    z = zone(time_zone)
    at = lambda unix, micro=0: format_datetime(z.local_seconds(unix), micro, fsp)  # noqa: E731
    pairs = [(at(TS_2000), "2000-01-01 00:00:00 UTC"), (at(TS_MIN_UNIX), "minimum: 1970-01-01 00:00:01 UTC"),
             (at(TS_MAX_UNIX, top), "maximum: 2038-01-19 03:14:07.999999 UTC"),
             (at(TS_MIN_UNIX + 1), "minimum + 1 s"), (at(TS_MAX_UNIX - 1), "maximum - 1 s"),
             (at(86400), "1970-01-02 UTC"), (at(10**9), "Unix time 1e9"), (at(2**30), "Unix time 2**30"),
             (at(951782400 + 43200), "2000-02-29 12:00 UTC"), (at(1709208000), "2024-02-29 12:00 UTC")]
    if fsp:
        unit = 10 ** (6 - fsp)
        pairs += [(at(TS_MIN_UNIX, unit), "minimum + smallest fraction"), (at(TS_2000, 500000), "half a second")]
    gap = next((tr for tr in z.transitions if tr[2] > tr[1] and tr[0] >= TS_2000), None) or \
        next((tr for tr in reversed(z.transitions) if tr[2] > tr[1]), None)
    if gap is not None:
        u = gap[0]
        pairs += [(at(u - 1, top), "the last wall-clock time before a DST gap"),
                  (at(u), "the first wall-clock time after a DST gap")]
    overlap = next((tr for tr in z.transitions if tr[2] < tr[1] and tr[0] >= TS_2000), None) or \
        next((tr for tr in reversed(z.transitions) if tr[2] < tr[1]), None)
    if overlap is not None:
        u, before, after = overlap
        pairs += [(at(u), "the first repeated wall-clock time of a DST overlap"),
                  (at(u + (before - after) // 2), "the middle of a DST overlap"),
                  (at(u - 1, top), "the last wall-clock time of a DST overlap, first pass"),
                  (at(u + before - after), "the first wall-clock time after a DST overlap")]
    zero = f"0000-00-00 {format_clock(0, 0, fsp)}"
    edges = [Edge(v, why) for v, why in pairs] + [Edge(zero, "zero timestamp", ZERO_DATES)]
    unix = g.integers(TS_MIN_UNIX, TS_MAX_UNIX, typical=(TS_2000, 1_893_456_000), shrink_to=TS_2000)
    gen = g.tuples(unix, _fraction_gen(fsp)).map(lambda x: at(*x))
    pattern = _dt_re(fsp)

    def check(v) -> None:
        m = _match_datetime(v, pattern, fsp)
        if v == zero:
            if "zero-dates" not in allow:
                raise ValueError("the zero TIMESTAMP needs sql_mode without NO_ZERO_DATE")
            return
        y, mo, d, hh, mi, ss = (int(x) for x in m.groups()[:6])
        if mo == 0 or d == 0 or not 1 <= mo <= 12 or d > days_in_month(y, mo):
            raise ValueError(f"{v!r}: no such date")
        if hh > 23 or mi > 59 or ss > 59:
            raise ValueError(f"{v!r}: no such time of day")
        local = days_from_civil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss
        instants = z.instants(local)
        if not instants:
            raise ValueError(f"{v!r} does not exist in time zone {z.name} (DST gap)")
        if not any(TS_MIN_UNIX <= u <= TS_MAX_UNIX for u in instants):
            raise ValueError(f"{v!r} in {z.name} is outside TIMESTAMP's range")

    defaults = [at(TS_MIN_UNIX), at(TS_2000), at(TS_MAX_UNIX, top), zero]
    return Family(gen, edges, check, defaults)


# --- TIME ----------------------------------------------------------------------------------------------------
TIME_MAX_MICROS = (838 * 3600 + 59 * 60 + 59) * 1_000_000


def time_family(t: TiDBType, allow: frozenset[str]) -> Family:
    fsp = t.decimal or 0
    unit = 10 ** (6 - fsp)
    s = 1_000_000
    top = max_fraction(fsp)
    pairs = [(0, "zero"), (TIME_MAX_MICROS, "maximum"), (-TIME_MAX_MICROS, "minimum"),
             (86399 * s + top, "the last instant of a day"), (86400 * s, "24 hours"), (-1 * s, "minus one second"),
             (100 * 3600 * s, "three-digit hours"), (-100 * 3600 * s, "negative three-digit hours"),
             (12 * 3600 * s + 34 * 60 * s + 56 * s, "12:34:56"), (TIME_MAX_MICROS - s + top, "just below the maximum"),
             (-(TIME_MAX_MICROS - s + top), "just above the minimum"), (99 * 3600 * s + 3599 * s, "99:59:59")]
    if fsp:
        pairs += [(unit, "smallest fraction"), (-unit, "minus the smallest fraction (prints -00:00:00.x)"),
                  (-500000, "minus half a second")]
    edges = [Edge(format_time(v, fsp), why) for v, why in pairs if v % unit == 0]
    n = TIME_MAX_MICROS // unit

    def realistic(rng, fk) -> str:
        r = rng.random()
        if r < 0.7:
            v = rng.randint(0, 86399) * s + rng.randint(0, 999_999)
        elif r < 0.9:
            v = rng.randint(0, 200 * 3600) * s + rng.randint(0, 999_999)
        else:
            v = -(rng.randint(0, 838 * 3600) * s + rng.randint(0, 999_999))
        v = max(-TIME_MAX_MICROS, min(TIME_MAX_MICROS, v - v % unit if v >= 0 else -((-v) - (-v) % unit)))
        return format_time(v, fsp)

    fallback = g.integers(-n, n).map(lambda k: format_time(k * unit, fsp))
    gen = g.weighted((0.8, g.realistic(realistic, fallback)), (0.2, fallback))
    pattern = re.compile(r"(-?)(\d{2,3}):(\d{2}):(\d{2})" + _frac_re(fsp))

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        m = pattern.fullmatch(v)
        if not m:
            raise ValueError(f"{v!r} is not '[-]HH:MM:SS' with exactly {fsp} fraction digits")
        sign, hh, mi, ss, frac = m.groups()
        if len(hh) == 3 and hh[0] == "0":
            raise ValueError(f"{v!r}: TiDB prints hours with two digits at least, no more leading zeros")
        if int(mi) > 59 or int(ss) > 59:
            raise ValueError(f"{v!r}: minutes and seconds run to 59")
        total = ((int(hh) * 60 + int(mi)) * 60 + int(ss)) * s + (int(frac.ljust(6, "0")) if frac else 0)
        if total > TIME_MAX_MICROS:
            raise ValueError(f"{v!r} outside -838:59:59..838:59:59")
        if sign and total == 0:
            raise ValueError(f"{v!r}: TiDB prints zero without a sign")

    defaults = [format_time(v, fsp) for v in (0, 12 * 3600 * s, -3600 * s, TIME_MAX_MICROS)]
    return Family(gen, edges, check, defaults)
