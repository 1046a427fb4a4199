"""The sink options in effect for one simulated changefeed, under TiCDC's own names.

Field names are TiCDC's option names with '-' turned into '_'; `ticdc_options()` gives them back
under TiCDC's spelling for the manifest.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

PROTOCOLS = ("open-protocol", "canal-json", "debezium", "simple")


@dataclass(frozen=True)
class DispatchRule:
    """One `[[sink.dispatchers]]` entry."""

    matcher: tuple[str, ...] = ("*.*",)
    partition: str = "table"  # default | table | index-value | ts | columns
    index: str = ""  # index-value with a named index
    columns: tuple[str, ...] = ()
    topic: str = ""  # topic expression, e.g. "{schema}_{table}"; empty = the default topic


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
    # Simple protocol bootstrap.
    send_bootstrap_interval_in_sec: int = 120
    send_bootstrap_in_msg_count: int = 10000
    send_bootstrap_to_all_partition: bool = True
    output_raw_change_event: bool = False
    # The upstream TiDB's time zone (TIMESTAMP values, Debezium ZonedTimestamp).
    time_zone: str = "UTC"
    # TiDB cluster ID, as it appears in Debezium's `name`/`cluster_id` and schema names.
    cluster_id: str = "default"
    # Simulator settings that are not TiCDC options: how often (in upstream physical time) the
    # changefeed's resolved ts is broadcast, and which TiCDC generation is simulated.
    watermark_interval_ms: int = 1000
    version_profile: str = "ticdc"  # ticdc (new, v9 line) | tiflow (classic)

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; expected one of {', '.join(PROTOCOLS)}")
        if self.encoding_format not in ("json", "avro"):
            raise ValueError(f"unknown encoding-format {self.encoding_format!r}; expected json or avro")
        if self.encoding_format == "avro" and self.protocol != "simple":
            raise ValueError("encoding-format=avro is only defined for protocol=simple")
        if self.partition_num < 1:
            raise ValueError("partition-num must be at least 1")

    @property
    def encoding(self) -> str:
        """The encoding's short name, as used for golden folders and report rows."""
        if self.protocol == "simple":
            return f"simple-{self.encoding_format}"
        return self.protocol

    def ticdc_options(self) -> dict:
        out = {}
        for k, v in asdict(self).items():
            if k in ("watermark_interval_ms", "version_profile"):
                continue
            out[k.replace("_", "-")] = v
        return out
