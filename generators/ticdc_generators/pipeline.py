"""generate: scenario + seed + sink config -> record files, manifest and ground truth, streaming."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Optional, Protocol

from ticdc_contract.model import DDL, Transaction
from ticdc_contract.protocols import CANAL_JSON, DEBEZIUM, OPEN_PROTOCOL, SIMPLE, SIMPLE_AVRO, SIMPLE_JSON
from ticdc_contract.record_files import RecordFileWriter
from ticdc_contract.truth import TruthWriter

from .history_process import HistoryProcess, worth_a_process
from .scenarios import get_scenario
from .simulator import Observer as Observer
from .simulator import Sent as Sent
from .simulator import SinkSimulator
from .sink.claim_check import ClaimCheckStorage
from .sink.config import SinkConfig
from .sink.events import BootstrapEvent as BootstrapEvent
from .sink.events import DDLEvent as DDLEvent
from .sink.events import RowEvent as RowEvent
from .sink.events import WatermarkEvent as WatermarkEvent

# Observer, Sent, SinkSimulator and the event types are the simulator's observation API, public
# for a tool that must know which record carries which event (the golden corpus):
# `SinkSimulator(config, seed, observer=...)` calls the observer with one `Sent` per event.

MANIFEST_FORMAT = "ticdc-conformance/records-v1"
GENERATOR_VERSION = "0.1.0"

# The five encodings of the default matrix. Canal-JSON and Debezium carry commit ts and
# watermarks only with the TiDB extension, so the default matrix enables it.
DEFAULT_MATRIX: dict[str, dict] = {
    OPEN_PROTOCOL: {"protocol": OPEN_PROTOCOL},
    CANAL_JSON: {"protocol": CANAL_JSON, "enable_tidb_extension": True},
    DEBEZIUM: {"protocol": DEBEZIUM, "enable_tidb_extension": True},
    SIMPLE_JSON: {"protocol": SIMPLE, "encoding_format": "json"},
    SIMPLE_AVRO: {"protocol": SIMPLE, "encoding_format": "avro"},
}


def encoding_names() -> list[str]:
    return list(DEFAULT_MATRIX)


def config_for(scenario_name: str, encoding: str, **overrides) -> SinkConfig:
    """The sink config of one encoding of the default matrix for a scenario."""
    if encoding not in DEFAULT_MATRIX:
        raise ValueError(f"unknown encoding {encoding!r}; expected one of {', '.join(DEFAULT_MATRIX)}")
    scenario = get_scenario(scenario_name)
    base = SinkConfig(topic=f"ticdc-{scenario.name}", partition_num=scenario.partition_num,
                      dispatchers=scenario.dispatchers, **DEFAULT_MATRIX[encoding])
    overrides = {**scenario.sink_overrides, **overrides}
    return replace(base, **overrides) if overrides else base


def configure(scenario_name: str, encoding: str, time_zone: str = "UTC", changefeed: Path | None = None,
              sink_uri: str | None = None, version_profile: str = "ticdc",
              delivery: dict | None = None) -> SinkConfig:
    """An encoding's config with a changefeed TOML and/or a sink URI applied on top (TiCDC's names).

    `delivery` overrides the scenario's simulator settings (failovers, failover_spacing,
    checkpoint_lag, interleave_tables)."""
    from .sink.changefeed import ChangefeedConfigError, load_changefeed, parse_sink_uri

    config = config_for(scenario_name, encoding, time_zone=time_zone, version_profile=version_profile,
                        **(delivery or {}))
    if changefeed is not None:
        config = load_changefeed(changefeed, config).sink
    if sink_uri is not None:
        config = parse_sink_uri(sink_uri, config).sink
    if config.encoding != encoding:
        raise ChangefeedConfigError(f"the changefeed configuration selects {config.encoding}, "
                                    f"but the run asks for {encoding}")
    return config


def generate(scenario_name: str, seed: int, config: SinkConfig, out: Path, events: int | None = None,
             processes: int | None = None) -> dict:
    """Writes DIR/records/, DIR/manifest.json and DIR/truth/ (and DIR/claim-check/ under
    large-message-handle-option = claim-check); returns the manifest.

    `processes`: 2 draws the history and writes truth/ in a child process while this one simulates
    the changefeed (history_process.py), 1 does both here; by default a sized scenario of at least
    TWO_PROCESSES_FROM row events takes two when this process has two cores. The files are the same."""
    scenario = get_scenario(scenario_name)
    # Only a sized scenario's length follows `events`; the others ignore it.
    size = (events if events is not None else scenario.default_events) if scenario.sized else None
    two = worth_a_process(size) if processes is None else processes >= 2
    if not two:
        truth = TruthWriter(Path(out) / "truth")
        return _write_case(truth.tee(scenario.history(seed, events, config.time_zone)), truth,
                           scenario_name, seed, config, out, events)
    with HistoryProcess(scenario_name, seed, events, config.time_zone, Path(out) / "truth") as history:
        return _write_case(history, history, scenario_name, seed, config, out, events)


def generate_history(history: Iterable[DDL | Transaction], config: SinkConfig, out: Path, seed: int = 0,
                     scenario_name: str = "history") -> dict:
    """`generate` for a history given as the model's events (one a Hypothesis strategy drew, or
    `ticdc_contract.truth.read_history` of a case's truth): the same files, byte for byte the same
    for the same history, config and seed; `seed` drives the simulator's delivery choices and
    `scenario_name` is what the manifest calls the history."""
    truth = TruthWriter(Path(out) / "truth")
    return _write_case(truth.tee(iter(history)), truth, scenario_name, seed, config, out, None)


class _Truth(Protocol):
    """Who writes truth/: a TruthWriter this process tees the history through, or the
    HistoryProcess whose child does; `close` is called once every event has been simulated."""

    last_commit_ts: Optional[int]

    def close(self) -> None: ...


def _write_case(history: Iterable[DDL | Transaction], truth: _Truth, scenario_name: str, seed: int,
                config: SinkConfig, out: Path, events: int | None) -> dict:
    out = Path(out)
    claim_check = ClaimCheckStorage.for_run(config, out)
    simulator = SinkSimulator(config, seed=seed)
    # The encoders the simulator makes write their too-large messages to this run's storage.
    simulator.module = simulator.module.with_claim_check(claim_check)
    with RecordFileWriter(out / "records") as writer:
        simulator.run_into(history, writer.write_fields)
    truth.close()
    partitions = {f"{t}-{p}": part.next_offset for (t, p), part in sorted(simulator.partitions.items())}
    manifest = {
        "format": MANIFEST_FORMAT,
        "scenario": scenario_name,
        "seed": seed,
        "events": events,
        "protocol": config.protocol,
        "encoding": config.encoding,
        "encoding_format": config.encoding_format,
        "sink": config.ticdc_options(),
        "topics": simulator.topics(),
        "records": writer.count,
        "records_per_partition": partitions,
        "last_commit_ts": truth.last_commit_ts,
        "generator": {
            "version": GENERATOR_VERSION,
            "version_profile": config.version_profile,
            "watermark_interval_ms": config.watermark_interval_ms,
            "interleave_tables": config.interleave_tables,
            "failovers": config.failovers,
            "failover_spacing": config.failover_spacing,
            "checkpoint_lag": config.checkpoint_lag,
            "restarts": [r.checkpoint_ts for r in simulator.restarts],
        },
    }
    if claim_check is not None:
        manifest["claim_check"] = claim_check.manifest()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest

