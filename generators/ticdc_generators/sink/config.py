"""The sink options in effect for one simulated changefeed, under TiCDC's own names.

Field names are TiCDC's option names with '-' turned into '_'; `ticdc_options()` gives them back
under TiCDC's spelling for the manifest.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

# The names a `protocol` and an `encoding-format` may take, shared with the decode side.
from ticdc_contract.protocols import ENCODING_FORMATS, PROTOCOLS, encoding_name

from .selector_rules import parsed_selectors, rule_key

# TiCDC pkg/config/large_message.go and pkg/compression.
LARGE_MESSAGE_OPTIONS = ("none", "handle-key-only", "claim-check")
COMPRESSIONS = ("none", "snappy", "lz4")
INTEGRITY_LEVELS = ("none", "correctness")
# [[sink.dispatchers]] partition (or dispatcher) values, matched case-insensitively as TiCDC does;
# rowid is index-value's older name.
PARTITION_DISPATCHERS = ("default", "table", "ts", "index-value", "rowid", "columns")
# The options that take one of a few words, by field: what a changefeed TOML or sink URI may say.
ENUMERATIONS = {"protocol": PROTOCOLS, "encoding_format": ENCODING_FORMATS,
                "large_message_handle_option": LARGE_MESSAGE_OPTIONS,
                "large_message_handle_compression": COMPRESSIONS, "integrity_check_level": INTEGRITY_LEVELS}
# Fields that steer the simulator and are no TiCDC option: kept out of `ticdc_options()`.
SIMULATOR_SETTINGS = ("watermark_interval_ms", "version_profile", "interleave_tables", "failovers",
                      "failover_spacing", "checkpoint_lag")
# The TiCDC generations whose differing behaviour is simulated (docs/version-profiles.md).
VERSION_PROFILES = ("ticdc", "tiflow")


@dataclass(frozen=True)
class DispatchRule:
    """One `[[sink.dispatchers]]` entry."""

    matcher: tuple[str, ...] = ("*.*",)
    partition: str = "table"  # default | table | index-value | ts | columns
    index: str = ""  # index-value with a named index
    columns: tuple[str, ...] = ()
    topic: str = ""  # topic expression, e.g. "{schema}_{table}"; empty = the default topic


@dataclass(frozen=True)
class ColumnSelector:
    """One `sink.column-selectors` entry: tables matched by `matcher` keep only the columns
    matched by `columns` (filter rules, `!` excludes; TiCDC pkg/config/sink.go ColumnSelector)."""

    matcher: tuple[str, ...] = ("*.*",)
    columns: tuple[str, ...] = ("*",)


@dataclass(frozen=True)
class SinkConfig:
    protocol: str
    encoding_format: str = "json"  # simple: json | avro
    enable_tidb_extension: bool = False  # canal-json, debezium
    # The default topic (the sink URI's path) and its partition count.
    topic: str = "ticdc-test"
    partition_num: int = 3
    dispatchers: tuple[DispatchRule, ...] = ()
    # Open Protocol batching.
    max_batch_size: int = 16
    max_message_bytes: int = 10 * 1024 * 1024
    output_old_value: bool = True
    delete_only_output_handle_key_columns: bool = False
    only_output_updated_columns: bool = False
    content_compatible: bool = False  # canal-json
    debezium_disable_schema: bool = False
    debezium_include_start_ts: bool = False  # [sink.debezium] include-start-ts (new TiCDC)
    # Simple protocol bootstrap.
    send_bootstrap_interval_in_sec: int = 120
    send_bootstrap_in_msg_count: int = 10000
    send_bootstrap_to_all_partition: bool = True
    send_all_bootstrap_at_start: bool = False
    output_raw_change_event: bool = False
    column_selectors: tuple[ColumnSelector, ...] = ()
    # The changefeed's top-level `case-sensitive` (TiCDC default false): how table matchers
    # of column selectors compare schema and table names.
    case_sensitive: bool = False
    # [sink.kafka-config.large-message-handle]
    large_message_handle_option: str = "none"
    large_message_handle_compression: str = "none"
    claim_check_storage_uri: str = ""
    claim_check_raw_value: bool = False
    # [integrity]: "correctness" makes TiCDC attach row checksums.
    integrity_check_level: str = "none"
    # The upstream TiDB's time zone (TIMESTAMP values, Debezium ZonedTimestamp).
    time_zone: str = "UTC"
    # TiDB cluster ID, as it appears in Debezium's `name`/`cluster_id` and schema names.
    cluster_id: str = "default"
    # Simulator settings that are not TiCDC options: how often (in upstream physical time) the
    # changefeed's resolved ts is broadcast, and which TiCDC generation is simulated.
    watermark_interval_ms: int = 1000
    version_profile: str = "ticdc"  # ticdc (new, v9 line) | tiflow (classic)
    # Delivery (simulator settings, not TiCDC options; sink/delivery.py, sink/failover.py):
    # reorder row events of different tables between two checkpoints, as TiCDC's per-table
    # pipelines may; restart the changefeed `failovers` times, about every `failover_spacing`
    # history events, from a checkpoint `checkpoint_lag` checkpoints behind the last one.
    interleave_tables: bool = False
    failovers: int = 0
    failover_spacing: int = 50
    checkpoint_lag: int = 1

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; expected one of {', '.join(PROTOCOLS)}")
        if self.encoding_format not in ENCODING_FORMATS:
            raise ValueError(f"unknown encoding-format {self.encoding_format!r}; expected json or avro")
        if self.encoding_format == "avro" and self.protocol != "simple":
            raise ValueError("encoding-format=avro is only defined for protocol=simple")
        if self.partition_num < 1:
            raise ValueError("partition-num must be at least 1")
        if self.version_profile not in VERSION_PROFILES:
            raise ValueError(f"unknown version profile {self.version_profile!r}; expected one of "
                             f"{', '.join(VERSION_PROFILES)}")
        self._validate_large_message()
        self._validate_column_selectors()
        self._validate_delivery()
        if self.integrity_check_level not in INTEGRITY_LEVELS:
            raise ValueError(f"unknown integrity-check-level {self.integrity_check_level!r}; "
                             f"expected one of {', '.join(INTEGRITY_LEVELS)}")

    def _validate_delivery(self) -> None:
        if self.failovers < 0:
            raise ValueError(f"failovers must be 0 or more, got {self.failovers}")
        if self.failover_spacing < 1:
            raise ValueError(f"failover_spacing must be at least 1 history event, got {self.failover_spacing}")
        if self.checkpoint_lag < 0:
            raise ValueError(f"checkpoint_lag must be 0 or more checkpoints, got {self.checkpoint_lag}")

    def _validate_column_selectors(self) -> None:
        """What TiCDC refuses when the changefeed is created: selector rules that do not parse, and
        column selectors together with the integrity check (pkg/config/replica_config.go,
        ErrInvalidReplicaConfig)."""
        if not self.column_selectors:
            return
        parsed_selectors(rule_key(self.column_selectors), self.case_sensitive)
        if self.integrity_check_level != "none":
            raise ValueError("[CDC:ErrInvalidReplicaConfig]integrity check enabled and column selector set, "
                             "not allowed")

    def _validate_large_message(self) -> None:
        """TiCDC pkg/config/large_message.go AdjustAndValidate, message for message."""
        if self.large_message_handle_compression not in COMPRESSIONS:
            raise ValueError(f"large message handle compression is not supported, got "
                             f"{self.large_message_handle_compression}")
        option = self.large_message_handle_option
        if option == "none":
            return
        if option not in LARGE_MESSAGE_OPTIONS:
            raise ValueError(f"unknown large-message-handle-option {option}")
        if self.protocol == "canal-json" and not self.enable_tidb_extension:
            raise ValueError(f"large message handle is set to {option}, protocol is canal-json, "
                             "but enable-tidb-extension is false")
        if self.protocol not in ("open-protocol", "simple", "canal-json"):
            raise ValueError(f"large message handle is set to {option}, protocol is {self.protocol}, "
                             "it's not supported")
        if option == "claim-check":
            if not self.claim_check_storage_uri:
                raise ValueError("large message handle is set to claim-check, but the claim-check-storage-uri "
                                 "is empty")
            if self.claim_check_raw_value and self.protocol == "open-protocol":
                raise ValueError("large message handle is set to claim-check, raw value is not supported for "
                                 "the open protocol")

    @property
    def encoding(self) -> str:
        """The encoding's short name, as used for golden folders and report rows."""
        return encoding_name(self.protocol, self.encoding_format)

    def ticdc_options(self) -> dict:
        out = {}
        for k, v in asdict(self).items():
            if k in SIMULATOR_SETTINGS:
                continue
            out[k.replace("_", "-")] = v
        return out
