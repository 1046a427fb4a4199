"""Changefeed configuration in TiCDC's own vocabulary: a changefeed TOML and a Kafka sink URI.

Every key TiCDC knows is accepted and sorted into one of three kinds:
- an option the simulator applies (it lands in `SinkConfig` under the same name);
- an option that does not change what the Kafka sink sends (timeouts, TLS, other sinks, …);
- an option that changes the output but is not simulated yet: loading fails with a message
  naming it, unless its value is TiCDC's default, so a run never silently differs from TiCDC.
A key TiCDC does not know is an error naming it ("unknown keys get a clear message"). The key
lists follow TiCDC pkg/config (replica_config.go, sink.go, large_message.go).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl, urlparse

from .config import ColumnSelector, DispatchRule, SinkConfig
from .table_filter import FilterRuleError, TableFilter

APPLIED = "applied"
NO_EFFECT = "no effect on Kafka output"
NOT_SIMULATED = "not simulated"


class ChangefeedConfigError(ValueError):
    pass


# key -> SinkConfig field (applied), NO_EFFECT, or (NOT_SIMULATED, TiCDC's default value)
_TOP = {k: NO_EFFECT for k in (
    "memory-quota", "force-replicate", "check-gc-safe-point", "enable-sync-point",
    "bdr-mode", "sync-point-interval", "sync-point-retention", "sql-mode", "changefeed-error-stuck-duration",
    "enable-table-monitor", "ignore-ineligible-table", "performance-mode", "enable-active-active",
    "active-active-progress-interval", "active-active-sync-stats-interval", "event-collector-batch-count",
    "event-collector-batch-bytes", "enable-old-value")}
# Column selectors match tables case-insensitively unless this is true (TiCDC columnselector.New).
_TOP["case-sensitive"] = "case_sensitive"
_SECTIONS_NO_EFFECT = ("mounter", "consistent", "scheduler", "synced-status")
# [integrity] (TiCDC pkg/config/integrity.go): with "correctness" TiCDC computes row checksums and
# the Simple and Debezium-free encoders carry them; the handling level only decides what TiCDC
# does on a mismatch, which the simulator never produces.
_INTEGRITY = {"integrity-check-level": "integrity_check_level", "corruption-handle-level": NO_EFFECT}
_SINK = {
    "protocol": "protocol",
    "only-output-updated-columns": "only_output_updated_columns",
    "delete-only-output-handle-key-columns": "delete_only_output_handle_key_columns",
    "content-compatible": "content_compatible",
    "send-bootstrap-interval-in-sec": "send_bootstrap_interval_in_sec",
    "send-bootstrap-in-msg-count": "send_bootstrap_in_msg_count",
    "send-bootstrap-to-all-partition": "send_bootstrap_to_all_partition",
    "debezium-disable-schema": "debezium_disable_schema",
    "output-raw-change-event": "output_raw_change_event",
    "send-all-bootstrap-at-start": "send_all_bootstrap_at_start",
    "encoder-concurrency": NO_EFFECT, "enable-kafka-sink-v2": NO_EFFECT, "advance-timeout-in-sec": NO_EFFECT,
    "terminator": NO_EFFECT, "csv": NO_EFFECT, "date-separator": NO_EFFECT, "enable-partition-separator": NO_EFFECT,
    "file-index-digit": NO_EFFECT, "cloud-storage-config": NO_EFFECT, "transaction-atomicity": NO_EFFECT,
    "safe-mode": NO_EFFECT, "mysql-config": NO_EFFECT, "pulsar-config": NO_EFFECT, "schema-registry": NO_EFFECT,
    "tidb-source-id": NO_EFFECT,
}
_KAFKA = {
    "partition-num": "partition_num",
    "max-message-bytes": "max_message_bytes",
    "output-raw-change-event": "output_raw_change_event",
}
_KAFKA.update({k: NO_EFFECT for k in (
    "replication-factor", "kafka-version", "kafka-client-id", "auto-create-topic", "dial-timeout", "write-timeout",
    "read-timeout", "required-acks", "sasl-user", "sasl-password", "sasl-mechanism", "sasl-gssapi-auth-type",
    "sasl-gssapi-keytab-path", "sasl-gssapi-kerberos-config-path", "sasl-gssapi-service-name", "sasl-gssapi-user",
    "sasl-gssapi-password", "sasl-gssapi-realm", "sasl-gssapi-disable-pafxfast", "sasl-oauth-client-id",
    "sasl-oauth-client-secret", "sasl-oauth-token-url", "sasl-oauth-scopes", "sasl-oauth-grant-type",
    "sasl-oauth-audience", "enable-tls", "ca", "cert", "key", "insecure-skip-verify", "compression",
    "glue-schema-registry-config")})
_CODEC = {
    "enable-tidb-extension": "enable_tidb_extension",
    "max-batch-size": "max_batch_size",
    "encoding-format": "encoding_format",
    "avro-enable-watermark": NO_EFFECT, "avro-decimal-handling-mode": NO_EFFECT,
    "avro-bigint-unsigned-handling-mode": NO_EFFECT, "avro-include-before-value": NO_EFFECT,
}
_LARGE = {
    "large-message-handle-option": "large_message_handle_option",
    "large-message-handle-compression": "large_message_handle_compression",
    "claim-check-storage-uri": "claim_check_storage_uri",
    "claim-check-raw-value": "claim_check_raw_value",
}
_SELECTOR_KEYS = {"matcher", "columns"}
_OPEN = {"output-old-value": "output_old_value"}
_DEBEZIUM = {"output-old-value": "output_old_value", "include-start-ts": "debezium_include_start_ts"}
_DISPATCH_KEYS = {"matcher", "partition", "dispatcher", "index", "columns", "topic"}


@dataclass
class Changefeed:
    sink: SinkConfig
    sink_uri: Optional[str] = None
    # Options given that TiCDC knows but that do not change Kafka output, by dotted name.
    without_effect: list[str] = field(default_factory=list)


def _walk(table: dict, known: dict, prefix: str, out: dict, without_effect: list, problems: list) -> None:
    for key, value in table.items():
        name = f"{prefix}{key}"
        kind = known.get(key)
        if kind is None:
            problems.append(f"unknown changefeed option {name!r}: TiCDC has no such option")
        elif kind == NO_EFFECT:
            without_effect.append(name)
        elif isinstance(kind, tuple):
            _, default = kind
            if value != default:
                problems.append(f"changefeed option {name!r} = {value!r} changes the Kafka output in a way the "
                                f"simulator does not implement yet")
        else:
            out[kind] = value


def _dispatchers(rules: Any, problems: list) -> tuple[DispatchRule, ...]:
    out = []
    if not isinstance(rules, list):
        problems.append("sink.dispatchers must be an array of tables")
        return ()
    for i, r in enumerate(rules):
        unknown = set(r) - _DISPATCH_KEYS
        if unknown:
            problems.append(f"unknown key(s) {sorted(unknown)} in sink.dispatchers[{i}]")
        if r.get("partition") and r.get("dispatcher"):
            problems.append(f"sink.dispatchers[{i}]: dispatcher and partition cannot be configured both")
        matcher = tuple(r.get("matcher", ("*.*",)))
        try:
            TableFilter.parse(matcher)
        except FilterRuleError as e:
            problems.append(f"sink.dispatchers[{i}].matcher {list(matcher)!r} is not a valid table filter: {e}")
        out.append(DispatchRule(
            matcher=matcher, partition=r.get("partition") or r.get("dispatcher") or "default",
            index=r.get("index", ""), columns=tuple(r.get("columns", ())), topic=r.get("topic", "")))
    return tuple(out)


def _column_selectors(rules: Any, problems: list) -> tuple[ColumnSelector, ...]:
    if not isinstance(rules, list):
        problems.append("sink.column-selectors must be an array of tables")
        return ()
    out = []
    for i, r in enumerate(rules):
        unknown = set(r) - _SELECTOR_KEYS
        if unknown:
            problems.append(f"unknown key(s) {sorted(unknown)} in sink.column-selectors[{i}]")
        matcher, columns = r.get("matcher", []), r.get("columns", [])
        if not matcher or not columns:
            problems.append(f"sink.column-selectors[{i}] needs both matcher and columns")
        out.append(ColumnSelector(matcher=tuple(matcher), columns=tuple(columns)))
    return tuple(out)


def parse_changefeed(text: str, base: SinkConfig) -> Changefeed:
    """Applies a changefeed TOML to `base` (the scenario's defaults) and returns the result."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ChangefeedConfigError(f"changefeed TOML does not parse: {e}") from None
    out: dict[str, Any] = {}
    without_effect: list[str] = []
    problems: list[str] = []
    for key, value in doc.items():
        if key == "sink":
            sink = dict(value)
            kafka = dict(sink.pop("kafka-config", {}))
            codec = kafka.pop("codec-config", {})
            large = kafka.pop("large-message-handle", {})
            open_cfg = sink.pop("open", {})
            dbz_cfg = sink.pop("debezium", {})
            if "dispatchers" in sink:
                out["dispatchers"] = _dispatchers(sink.pop("dispatchers"), problems)
            if "column-selectors" in sink:
                out["column_selectors"] = _column_selectors(sink.pop("column-selectors"), problems)
            _walk(sink, _SINK, "sink.", out, without_effect, problems)
            _walk(kafka, _KAFKA, "sink.kafka-config.", out, without_effect, problems)
            _walk(codec, _CODEC, "sink.kafka-config.codec-config.", out, without_effect, problems)
            _walk(large, _LARGE, "sink.kafka-config.large-message-handle.", out, without_effect, problems)
            _walk(open_cfg, _OPEN, "sink.open.", out, without_effect, problems)
            _walk(dbz_cfg, _DEBEZIUM, "sink.debezium.", out, without_effect, problems)
        elif key == "filter":
            if value not in ({}, {"rules": ["*.*"]}):
                problems.append("changefeed option 'filter' narrows which tables and events are replicated; "
                                "the simulator replicates every table of the scenario")
        elif key == "integrity":
            _walk(dict(value), _INTEGRITY, "integrity.", out, without_effect, problems)
        elif key in _SECTIONS_NO_EFFECT:
            without_effect.append(key)
        else:
            _walk({key: value}, _TOP, "", out, without_effect, problems)
    if problems:
        raise ChangefeedConfigError("; ".join(problems))
    try:
        return Changefeed(replace(base, **out), without_effect=without_effect)
    except (TypeError, ValueError) as e:
        raise ChangefeedConfigError(f"changefeed option value rejected: {e}") from None


def load_changefeed(path: Path, base: SinkConfig) -> Changefeed:
    return parse_changefeed(Path(path).read_text(), base)


_URI_BOOL = {"true": True, "false": False}
_URI = {
    "protocol": "protocol", "partition-num": "partition_num", "max-message-bytes": "max_message_bytes",
    "max-batch-size": "max_batch_size", "enable-tidb-extension": "enable_tidb_extension",
    "content-compatible": "content_compatible", "encoding-format": "encoding_format",
    "output-raw-change-event": "output_raw_change_event", "time-zone": "time_zone",
    "only-output-updated-columns": "only_output_updated_columns", "debezium-disable-schema": "debezium_disable_schema",
    "debezium-include-start-ts": "debezium_include_start_ts",
}
# Canal-JSON's `_tidb.rowkey` is the row's TiKV key (t{physical id}_r{handle}), which needs
# TiDB's memcomparable key codec and the hidden row IDs of non-clustered tables; not simulated.
_URI_NOT_SIMULATED = {"output-row-key": "false"}
_URI_NO_EFFECT = {"kafka-version", "kafka-client-id", "replication-factor", "auto-create-topic", "dial-timeout",
                  "write-timeout", "read-timeout", "required-acks", "sasl-user", "sasl-password", "sasl-mechanism",
                  "enable-tls", "ca", "cert", "key", "insecure-skip-verify", "compression", "avro-enable-watermark",
                  "avro-decimal-handling-mode", "avro-bigint-unsigned-handling-mode", "schema-registry",
                  "max-retry", "sasl-gssapi-auth-type", "sasl-gssapi-keytab-path", "sasl-gssapi-kerberos-config-path",
                  "sasl-gssapi-service-name", "sasl-gssapi-user", "sasl-gssapi-password", "sasl-gssapi-realm",
                  "sasl-gssapi-disable-pafxfast", "avro-include-before-value"}
_URI_INTS = {"partition_num", "max_message_bytes", "max_batch_size"}


def parse_sink_uri(uri: str, base: SinkConfig) -> Changefeed:
    """A Kafka sink URI: `kafka://host:port/topic?protocol=…&partition-num=…&…`."""
    u = urlparse(uri)
    if u.scheme not in ("kafka", "kafka+ssl"):
        raise ChangefeedConfigError(f"sink URI scheme {u.scheme!r} is not a Kafka sink")
    out: dict[str, Any] = {}
    without_effect, problems = [], []
    topic = u.path.lstrip("/")
    if topic:
        out["topic"] = topic
    for key, value in parse_qsl(u.query, keep_blank_values=True):
        if key in _URI:
            field_name = _URI[key]
            if field_name in _URI_INTS:
                try:
                    out[field_name] = int(value)
                except ValueError:
                    problems.append(f"sink URI parameter {key}={value!r} is not a number")
            elif value.lower() in _URI_BOOL and field_name not in ("protocol", "encoding_format", "time_zone"):
                out[field_name] = _URI_BOOL[value.lower()]
            else:
                out[field_name] = value
        elif key in _URI_NO_EFFECT:
            without_effect.append(key)
        elif key in _URI_NOT_SIMULATED:
            if value.lower() != _URI_NOT_SIMULATED[key]:
                problems.append(f"sink URI parameter {key}={value} changes the Kafka output in a way the simulator "
                                f"does not implement")
        else:
            problems.append(f"unknown sink URI parameter {key!r}")
    if problems:
        raise ChangefeedConfigError("; ".join(problems))
    try:
        return Changefeed(replace(base, **out), sink_uri=uri, without_effect=without_effect)
    except (TypeError, ValueError) as e:
        raise ChangefeedConfigError(f"sink URI value rejected: {e}") from None
