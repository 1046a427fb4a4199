"""A correct consumer that holds temporal values in Java's time types and prints its rows with
Jackson's JavaTimeModule at its defaults (WRITE_DATES_AS_TIMESTAMPS): a DATE is a LocalDate printed
[2016, 10, 23], a DATETIME a LocalDateTime printed [2016, 10, 23, 20, 47, 24, 911000000] (the
second and nanosecond left out when zero), a TIME a LocalTime printed [20, 47, 24], a TIMESTAMP an
Instant printed as epoch seconds with nine fraction digits (1477226844.911000000). Values java.time
cannot hold (a zero date, a TIME outside one day) stay TiDB's text. Every value is upstream's, so
the check must accept them.
"""
from datetime import date, datetime, time
from decimal import Decimal
from zoneinfo import ZoneInfo

import simplejson
from _outsider import run_rewriting


def nanos_of(text: str) -> int:
    return int(text.partition(".")[2].ljust(9, "0"))


def clock_fields(t: time, nanos: int) -> list:
    return [t.hour, t.minute] + ([t.second] if t.second or nanos else []) + ([nanos] if nanos else [])


def java_time(zone: ZoneInfo):
    def convert(value, column_type):
        text = str(value)
        try:
            if column_type.name == "DATE":
                d = date.fromisoformat(text)
                return [d.year, d.month, d.day]
            if column_type.name == "TIME":
                return clock_fields(time.fromisoformat(text.partition(".")[0]), nanos_of(text))
            local = datetime.strptime(text.partition(".")[0], "%Y-%m-%d %H:%M:%S")
        except ValueError:  # no java.time value: a zero date, a TIME beyond 23:59:59 or below zero
            return value
        if column_type.name == "TIMESTAMP":
            seconds = int(local.replace(tzinfo=zone).timestamp())
            return Decimal(f"{seconds}.{nanos_of(text):09d}")
        return [local.year, local.month, local.day] + clock_fields(local.time(), nanos_of(text))
    return convert


def write(obj) -> str:
    return simplejson.dumps(obj, ensure_ascii=False, separators=(",", ":"), use_decimal=True)


if __name__ == "__main__":
    run_rewriting({"DATE", "DATETIME", "TIME", "TIMESTAMP"},
                  lambda manifest: java_time(ZoneInfo(manifest["sink"].get("time-zone") or "UTC")), write)
