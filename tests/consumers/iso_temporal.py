"""A correct consumer that prints temporal values as Java's and Go's time types do: a DATETIME as
ISO 8601 (a T between date and time, as LocalDateTime and Jackson's JavaTimeModule print it), a
TIMESTAMP as its instant in UTC with a Z (Go's time.Time, Java's Instant). The wall clock and the
instant are upstream's, spelled another standard way, so the check must accept them; without the Z
the UTC wall clock is another TIMESTAMP (timestamp_in_utc.py).
"""
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from _outsider import run_rewriting


def iso(zone: ZoneInfo):
    def convert(value, column_type):
        text = str(value)
        if column_type.name == "DATETIME" or text.startswith("0000-00-00"):  # the zero TIMESTAMP has no instant
            return text.replace(" ", "T", 1)
        whole, dot, fraction = text.partition(".")
        local = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone)
        return local.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + dot + fraction + "Z"
    return convert


if __name__ == "__main__":
    run_rewriting({"DATETIME", "TIMESTAMP"}, lambda manifest: iso(ZoneInfo(manifest["sink"].get("time-zone") or "UTC")))
