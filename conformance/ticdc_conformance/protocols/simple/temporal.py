"""TIMESTAMP values: Simple sends `{"location", "value"}`, the canonical form wants the upstream time zone.

TiCDC pkg/sink/codec/simple/message.go (encodeValue, encodeValue4Avro) pairs the printed time with the
changefeed's time zone name; the canonical form (docs/architecture.md) prints TIMESTAMP in the upstream
`time-zone`. When the two names agree the printed value is taken as is; otherwise it is moved between zones.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from ticdc_conformance.protocols.common.wire import Malformed

_TIME_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?\Z", re.ASCII)
_OFFSET_RE = re.compile(r"([+-])(\d{2}):(\d{2})\Z", re.ASCII)


def load_zone(name: str) -> tzinfo:
    """A zone by Go's location name (IANA or "UTC"), or a fixed "+08:00" offset."""
    if name == "UTC":
        return timezone.utc
    m = _OFFSET_RE.match(name)
    if m:
        delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        if delta >= timedelta(hours=24):
            raise Malformed(f"time zone offset {name!r} out of range")
        return timezone(-delta if m.group(1) == "-" else delta)
    try:
        # ZoneInfo keeps its own cache of loaded zones, so repeated names cost a lookup only.
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError) as e:  # ZoneInfoNotFoundError is a KeyError
        raise Malformed(f"unknown time zone {name!r}: {type(e).__name__}") from None


def render_timestamp(value: str, location: str, target: str) -> str:
    m = _TIME_RE.match(value)
    if m is None:
        raise Malformed(f"TIMESTAMP value {value!r} is not 'YYYY-MM-DD HH:MM:SS[.fraction]'")
    parts = [int(g) for g in m.groups()[:6]]
    frac = m.group(7) or ""
    # TiDB's zero TIMESTAMP is zero in every zone.
    if not any(parts):
        return value
    year, month, day, hour, minute, second = parts
    try:
        local = datetime(year, month, day, hour, minute, second)
    except ValueError as e:
        raise Malformed(f"TIMESTAMP value {value!r}: {e}") from None
    if location == target:
        return value
    try:
        moved = local.replace(tzinfo=load_zone(location)).astimezone(load_zone(target))
    except (OverflowError, ValueError) as e:
        raise Malformed(f"TIMESTAMP value {value!r} cannot move from {location} to {target}: {e}") from None
    return (f"{moved.year:04d}-{moved.month:02d}-{moved.day:02d} "
            f"{moved.hour:02d}:{moved.minute:02d}:{moved.second:02d}{frac}")
