"""The sink options that change what a Debezium message looks like, under TiCDC's names.

Missing keys take TiCDC's defaults (TiCDC pkg/sink/codec/common/config.go: schema on, old value
on, TiDB extension off, no compression), except the time zone: TiCDC defaults to the capture's
local zone, which is not reproducible, so a missing "time-zone" means UTC like the suite's
SinkConfig.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, Mapping, Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ticdc_conformance.protocols.common.compression import codec_option
from ticdc_conformance.protocols.common.wire import bool_option, remembers_last


@dataclass(frozen=True)
class DebeziumOptions:
    disable_schema: bool
    tidb_extension: bool
    output_old_value: bool
    time_zone_name: str
    time_zone: tzinfo
    compression: str
    # Not a TiCDC option: false decodes every message by the reference path alone (decoder.py).
    fast_path: bool = True


def _zone(name: Any) -> tuple[str, tzinfo]:
    if name in (None, ""):
        name = "UTC"
    if not isinstance(name, str):
        raise ValueError(f"option 'time-zone' must be a zone name, got {name!r}")
    if name.lower() in ("local", "system"):
        # The host's zone would make decoding depend on the machine it runs on.
        raise ValueError("option 'time-zone' must name a zone explicitly, not the local zone")
    try:
        return name, ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


@remembers_last
def parse_options(options: Optional[Mapping[str, Any]]) -> DebeziumOptions:
    options = options or {}
    compression = codec_option(options)
    zone_name, zone = _zone(options.get("time-zone"))
    return DebeziumOptions(
        disable_schema=bool_option(options, "debezium-disable-schema", False),
        tidb_extension=bool_option(options, "enable-tidb-extension", False),
        output_old_value=bool_option(options, "output-old-value", True),
        time_zone_name=zone_name,
        time_zone=zone,
        compression=compression,
        fast_path=bool_option(options, "fast-path", True),
    )
