"""What the lint knows about the stream before reading it: protocol, sink options, topology.

All of it may come from a run's manifest (docs/consumer-protocol.md: `protocol`, `sink` with TiCDC's
option names, `topics` with partition counts); a stream captured from a real changefeed has none,
so the protocol is named on the command line and sink options that differ from TiCDC's defaults are
given as `--sink-option NAME=VALUE`, TiCDC's spelling.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from ticdc_conformance.protocols.common.claim_check import claim_check_options
from ticdc_contract import protocols as protocol_names
from ticdc_contract.table_filter import TableFilter

from .seen import DEFAULT_CAPACITY, DEFAULT_HORIZON

PROTOCOLS = protocol_names.PROTOCOLS
# spec 004, WATERMARK: "目前的周期为 1 秒钟" (the period is currently 1 second); a generated run's manifest
# names the simulator's period (`generator.watermark_interval_ms`).
DEFAULT_WATERMARK_INTERVAL_MS = 1000
# spec 004: send-bootstrap-interval-in-sec defaults to 120 seconds.
DEFAULT_BOOTSTRAP_INTERVAL_SEC = 120
# Dispatchers under which one row's changes may land in different partitions: `ts` spreads by
# commit ts, `columns` and `index-value` with a named index hash columns an update may change
# (TiCDC downstreamadapter/sink/eventrouter/partition/). Tables under them skip the same-row check.
_MOVING_DISPATCHERS = ("ts", "columns")


class SettingsError(ValueError):
    """Contradicting or unreadable lint settings (a manifest naming another protocol, a bad option)."""


@dataclass(frozen=True)
class _Dispatcher:
    matcher: TableFilter
    keeps_rows: bool


@dataclass(frozen=True)
class LintSettings:
    protocol: str  # open-protocol | canal-json | debezium | simple
    options: Mapping[str, Any]  # decoder options: TiCDC sink options by TiCDC's names, and resources
    topics: Mapping[str, int] = field(default_factory=dict)  # partition counts, when known
    horizon: int = DEFAULT_HORIZON
    capacity: int = DEFAULT_CAPACITY
    dispatchers: tuple[_Dispatcher, ...] = ()
    watermark_interval_ms: int = DEFAULT_WATERMARK_INTERVAL_MS  # how often watermarks are sent

    @property
    def bootstrap_interval_ms(self) -> int:
        """send-bootstrap-interval-in-sec, in ms."""
        return self.option_int("send-bootstrap-interval-in-sec", DEFAULT_BOOTSTRAP_INTERVAL_SEC) * 1000

    @property
    def encoding(self) -> str:
        if self.protocol == "simple":
            return f"simple-{self.options.get('encoding-format') or 'json'}"
        return self.protocol

    def keeps_rows_in_place(self, schema: str, table: str) -> bool:
        """Whether the table's dispatcher sends every change of a row to one partition (the first
        matching dispatcher rule decides, as TiCDC's event router does; none matching is the default
        dispatcher, which does)."""
        for d in self.dispatchers:
            if d.matcher.match(schema, table):
                return d.keeps_rows
        return True

    def option_bool(self, name: str, default: bool) -> bool:
        value = self.options.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise SettingsError(f"sink option {name} must be true or false, got {value!r}")
        return text == "true"

    def option_int(self, name: str, default: int) -> int:
        value = self.options.get(name)
        if value is None:
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            raise SettingsError(f"sink option {name} must be an integer, got {value!r}") from None


def protocol_and_format(protocol: str, encoding: Optional[str]) -> tuple[str, Optional[str]]:
    """`simple-avro` or `simple` + `avro` -> ("simple", "avro"); other protocols take no encoding."""
    if protocol in ("simple-json", "simple-avro"):
        name, fmt = "simple", protocol.split("-", 1)[1]
        if encoding and encoding != fmt:
            raise SettingsError(f"--protocol {protocol} contradicts --encoding {encoding}")
        return name, fmt
    if protocol not in PROTOCOLS:
        raise SettingsError(f"unknown protocol {protocol!r}; expected one of "
                            f"{', '.join(PROTOCOLS)}, simple-json or simple-avro")
    if encoding and protocol != "simple":
        raise SettingsError(f"--encoding applies to the simple protocol only, not {protocol}")
    return protocol, encoding


def _dispatchers(sink: Mapping[str, Any]) -> tuple[_Dispatcher, ...]:
    case_sensitive = str(sink.get("case-sensitive", False)).lower() == "true"
    out = []
    for rule in sink.get("dispatchers") or ():
        kind = str(rule.get("partition") or "default").lower()
        moving = kind in _MOVING_DISPATCHERS or (kind == "index-value" and bool(rule.get("index")))
        out.append(_Dispatcher(TableFilter.parse(tuple(rule.get("matcher") or ("*.*",)), case_sensitive),
                               keeps_rows=not moving))
    return tuple(out)


def _resources(manifest: Mapping[str, Any], run_dir: Path, sink: Mapping[str, Any]) -> dict[str, Any]:
    """Claim-check files and the upstream snapshot of a generated run, so large-message placeholders
    read as TiCDC's consumer reads them (docs/consumer-protocol.md, "Large messages")."""
    out: dict[str, Any] = dict(claim_check_options(manifest, run_dir))
    if sink.get("large-message-handle-option") == "handle-key-only" and (run_dir / "truth").is_dir():
        from ticdc_conformance.protocols.common.snapshot import SNAPSHOT_LOOKUP, TruthSnapshot
        out[SNAPSHOT_LOOKUP] = TruthSnapshot.for_run(run_dir)
    return out


def load_settings(protocol: Optional[str], encoding: Optional[str] = None, manifest: Optional[Path] = None,
                  sink_options: Optional[Mapping[str, str]] = None, horizon: int = DEFAULT_HORIZON,
                  capacity: int = DEFAULT_CAPACITY) -> LintSettings:
    """Settings from the command line and an optional manifest; the command line's sink options win."""
    data: dict[str, Any] = {}
    if manifest is not None:
        try:
            data = json.loads(Path(manifest).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SettingsError(f"manifest {manifest}: {e}") from None
        if not isinstance(data, dict):
            raise SettingsError(f"manifest {manifest}: not a JSON object")
    if protocol is None:
        protocol = data.get("encoding") or data.get("protocol")
        if not protocol:
            raise SettingsError("name the protocol (--protocol) or give a manifest that names it")
    name, fmt = protocol_and_format(protocol, encoding)
    if data.get("protocol") and data["protocol"] != name:
        raise SettingsError(f"the manifest is a {data['protocol']} run, not {name}")
    sink: dict[str, Any] = dict(data.get("sink") or {})
    sink.update(sink_options or {})
    if name == "simple":
        manifest_fmt = sink.get("encoding-format")
        if fmt and manifest_fmt and fmt != manifest_fmt and "encoding-format" not in (sink_options or {}):
            raise SettingsError(f"the manifest's encoding-format is {manifest_fmt}, not {fmt}")
        sink["encoding-format"] = fmt or manifest_fmt or "json"
    resources = _resources(data, Path(manifest).parent, sink) if manifest is not None else {}
    return make_settings(name, sink, data.get("topics") or {}, resources, horizon, capacity,
                         _watermark_interval(data))


def _watermark_interval(manifest: Mapping[str, Any]) -> int:
    generator = manifest.get("generator")
    value = generator.get("watermark_interval_ms") if isinstance(generator, dict) else None
    if value is None:
        return DEFAULT_WATERMARK_INTERVAL_MS
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise SettingsError(f"manifest generator.watermark_interval_ms must be a positive integer, got {value!r}")
    return value


def make_settings(protocol: str, sink: Mapping[str, Any], topics: Mapping[str, int],
                  resources: Optional[Mapping[str, Any]] = None, horizon: int = DEFAULT_HORIZON,
                  capacity: int = DEFAULT_CAPACITY,
                  watermark_interval_ms: int = DEFAULT_WATERMARK_INTERVAL_MS) -> LintSettings:
    """Settings from sink options under TiCDC's names (a manifest's `sink`), topics and their partition
    counts, and decoder resources (claim-check folder, snapshot lookup)."""
    try:
        dispatchers = _dispatchers(sink)
    except (ValueError, AttributeError, TypeError) as e:
        raise SettingsError(f"sink dispatchers: {e}") from None
    return LintSettings(protocol=protocol, options={**sink, **(resources or {})},
                        topics={str(t): int(n) for t, n in topics.items()}, horizon=horizon, capacity=capacity,
                        dispatchers=dispatchers, watermark_interval_ms=watermark_interval_ms)
