"""A deliberately broken consumer: it writes TIMESTAMP values in UTC, whatever the changefeed's
time zone. TiDB prints a TIMESTAMP in the session time zone, and the canonical form is the upstream
time zone (docs/architecture.md, "Canonical values"); in a run with --time-zone Asia/Shanghai every
TIMESTAMP this consumer writes is 8 hours off, so the check must report CONSUMER-STATE-1.
"""
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from _outsider import run_rewriting


def in_utc(zone: ZoneInfo):
    def convert(value, column_type):
        text = str(value)
        if text.startswith("0000-00-00"):
            return text  # the zero TIMESTAMP has no instant to convert
        whole, dot, fraction = text.partition(".")
        local = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone)
        return local.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S") + dot + fraction
    return convert


if __name__ == "__main__":
    run_rewriting({"TIMESTAMP"}, lambda manifest: in_utc(ZoneInfo(manifest["sink"].get("time-zone") or "UTC")))
