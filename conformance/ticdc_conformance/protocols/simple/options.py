"""The sink options that change what a Simple stream looks like, under TiCDC's names.

Decoding needs the encoding (`encoding-format`, JSON or Avro), the compression of every value
(`large-message-handle-compression`), the `time-zone` TIMESTAMPs are printed in (missing: UTC, like
the suite's SinkConfig) and whether row checksums are checked (`integrity-check-level`). The
BOOTSTRAP settings (spec 004, "Message generation and sending rules") only say what the stream should
hold, so only the lint reads them (bootstrap_options).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ticdc_conformance.protocols.common.compression import codec_option
from ticdc_conformance.protocols.common.wire import Malformed, bool_option

from .temporal import load_zone

ENCODINGS = ("json", "avro")


@dataclass(frozen=True)
class SimpleOptions:
    encoding: str  # json | avro
    compression: str
    time_zone: str
    # TiCDC's consumer checks row checksums only with the integrity check on in its own config.
    check_checksums: bool
    # Not a TiCDC option: false decodes every message by the reference path alone (decoder.py).
    fast_path: bool


def parse_options(options: Mapping[str, Any]) -> SimpleOptions:
    encoding = options.get("encoding-format", "json")
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding-format {encoding!r}; expected json or avro")
    time_zone = options.get("time-zone") or "UTC"
    try:
        load_zone(time_zone)
    except Malformed as e:
        raise ValueError(f"time-zone: {e.reason}") from None
    return SimpleOptions(
        encoding=encoding,
        # TiCDC's Simple encoder compresses every value with large-message-handle-compression.
        compression=codec_option(options),
        time_zone=time_zone,
        check_checksums=options.get("integrity-check-level") == "correctness",
        fast_path=bool_option(options, "fast-path", True),
    )


@dataclass(frozen=True)
class BootstrapOptions:
    interval_sec: int  # send-bootstrap-interval-in-sec
    msg_count: int  # send-bootstrap-in-msg-count
    to_all_partitions: bool  # send-bootstrap-to-all-partition

    @property
    def sent(self) -> bool:
        """TiCDC pkg/config/sink.go ShouldSendBootstrapMsg: both settings above 0 (spec 004)."""
        return self.interval_sec > 0 and self.msg_count > 0


def _int_option(options: Mapping[str, Any], name: str, default: int) -> int:
    value = options.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"sink option {name} must be an integer, got {value!r}") from None


def _bool_option(options: Mapping[str, Any], name: str, default: bool) -> bool:
    value = options.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"sink option {name} must be true or false, got {value!r}")
    return text == "true"


def bootstrap_options(options: Mapping[str, Any]) -> BootstrapOptions:
    """TiCDC's defaults (pkg/config/sink.go): every 120 s or 10000 row changes, to every partition."""
    return BootstrapOptions(
        interval_sec=_int_option(options, "send-bootstrap-interval-in-sec", 120),
        msg_count=_int_option(options, "send-bootstrap-in-msg-count", 10000),
        to_all_partitions=_bool_option(options, "send-bootstrap-to-all-partition", True),
    )
