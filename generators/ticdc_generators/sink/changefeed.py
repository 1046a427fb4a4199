"""Changefeed configuration in TiCDC's own vocabulary: a changefeed TOML and a Kafka sink URI.

Every key TiCDC knows is accepted and sorted into one of three kinds:
- an option the simulator applies (it lands in `SinkConfig` under the same name);
- an option that does not change what the Kafka sink sends (timeouts, TLS, other sinks, …);
- an option that changes the output but is not simulated yet (the sink URI's `output-row-key`):
  loading fails with a message naming it, unless its value is TiCDC's default, so a run never
  silently differs from TiCDC.
A key TiCDC does not know is an error naming it ("unknown keys get a clear message"), and where
the key is an option of another TOML section, the message names the section it belongs in. A value
of the wrong type (`enable-tidb-extension = "yes"`, `enable-tidb-extension=yes` in a URI) is an
error naming the option, the file or URI, and the type expected (option_types.py). The key lists
follow TiCDC pkg/config (replica_config.go, sink.go, large_message.go).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qsl, urlparse

from ticdc_contract.table_filter import FilterRuleError, TableFilter

from .config import PARTITION_DISPATCHERS, ColumnSelector, DispatchRule, SinkConfig
from .option_types import OptionTypeError, checked_toml_value, go_bool, parsed_uri_value

NO_EFFECT = "no effect on Kafka output"
NOT_SIMULATED = "not simulated"


class ChangefeedConfigError(ValueError):
    pass


# key -> SinkConfig field (applied) or NO_EFFECT
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
# Every table of a changefeed TOML whose options are read one by one, by its path: the loader's one
# table of which option is known where, also used to tell a misplaced option where it belongs.
_SECTIONS: dict[tuple[str, ...], dict] = {
    (): _TOP, ("sink",): _SINK, ("sink", "kafka-config"): _KAFKA,
    ("sink", "kafka-config", "codec-config"): _CODEC, ("sink", "kafka-config", "large-message-handle"): _LARGE,
    ("sink", "open"): _OPEN, ("sink", "debezium"): _DEBEZIUM, ("integrity",): _INTEGRITY,
}
# Keys whose value has a shape of its own (arrays of tables, whole sections), by path.
_SHAPED = {("sink", "dispatchers"), ("sink", "column-selectors"), ("filter",),
           *((name,) for name in _SECTIONS_NO_EFFECT)}


@dataclass
class Changefeed:
    sink: SinkConfig
    sink_uri: Optional[str] = None
    # Options given that TiCDC knows but that do not change Kafka output, by dotted name.
    without_effect: list[str] = field(default_factory=list)


def _section_name(path: tuple[str, ...]) -> str:
    return f"[{'.'.join(path)}]" if path else "the top level"


def _belongs(key: str, path: Optional[tuple[str, ...]]) -> str:
    """Where else `key` is an option or a section, from the loader's own tables ("" if nowhere)."""
    places = [_section_name(p) for p, known in sorted(_SECTIONS.items()) if key in known and p != path]
    places += [f"{_section_name(p[:-1])} (as [{'.'.join(p)}])"
               for p in sorted({*_SECTIONS, *_SHAPED}) if p[-1:] == (key,) and p[:-1] != path]
    return "; it belongs in " + " or ".join(places) if places else ""


def _walk(path: tuple[str, ...], table: dict, out: dict, without_effect: list, problems: list) -> None:
    """The options of the table at `path` and of the sections under it."""
    known = _SECTIONS[path]
    prefix = "".join(f"{part}." for part in path)
    for key, value in table.items():
        name, below = f"{prefix}{key}", (*path, key)
        if below in _SECTIONS:
            if isinstance(value, dict):
                _walk(below, value, out, without_effect, problems)
            else:
                problems.append(f"{name!r} must be a table ([{name}]), not {value!r}")
        elif below in _SHAPED:
            _shaped(below, value, out, without_effect, problems)
        elif key not in known:
            problems.append(f"unknown changefeed option {name!r}: TiCDC has no such option in "
                            f"{_section_name(path)}{_belongs(key, path)}")
        elif known[key] == NO_EFFECT:
            without_effect.append(name)
        else:
            try:
                out[known[key]] = checked_toml_value(known[key], value)
            except OptionTypeError as e:
                problems.append(f"changefeed option {name!r} {e}")


def _shaped(path: tuple[str, ...], value: Any, out: dict, without_effect: list, problems: list) -> None:
    if path == ("sink", "dispatchers"):
        out["dispatchers"] = _dispatchers(value, problems)
    elif path == ("sink", "column-selectors"):
        out["column_selectors"] = _column_selectors(value, problems)
    elif path == ("filter",):
        if value not in ({}, {"rules": ["*.*"]}):
            problems.append("changefeed option 'filter' narrows which tables and events are replicated; "
                            "the simulator replicates every table of the scenario")
    else:
        without_effect.append(path[0])


def _string_list(value: Any, name: str, problems: list) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.append(f"{name} is {value!r}, not an array of strings")
    return ()


def _string(value: Any, name: str, problems: list) -> str:
    if isinstance(value, str):
        return value
    problems.append(f"{name} is {value!r}, not a string")
    return ""


def _tables(rules: Any, name: str, problems: list) -> list[dict]:
    if isinstance(rules, list) and all(isinstance(r, dict) for r in rules):
        return rules
    problems.append(f"{name} must be an array of tables")
    return []


def _dispatchers(rules: Any, problems: list) -> tuple[DispatchRule, ...]:
    out = []
    for i, r in enumerate(_tables(rules, "sink.dispatchers", problems)):
        at = f"sink.dispatchers[{i}]"
        unknown = set(r) - _DISPATCH_KEYS
        if unknown:
            problems.append(f"unknown key(s) {sorted(unknown)} in {at}")
        text = {k: _string(r.get(k, ""), f"{at}.{k}", problems)
                for k in ("partition", "dispatcher", "index", "topic")}
        if text["partition"] and text["dispatcher"]:
            problems.append(f"{at}: dispatcher and partition cannot be configured both")
        kind = text["partition"] or text["dispatcher"]
        if kind and kind.lower() not in PARTITION_DISPATCHERS:
            problems.append(f"{at}.{'partition' if text['partition'] else 'dispatcher'} is {kind!r}, not one of "
                            f"{', '.join(repr(k) for k in PARTITION_DISPATCHERS)}")
        matcher = _string_list(r.get("matcher", ["*.*"]), f"{at}.matcher", problems)
        try:
            TableFilter.parse(matcher)
        except FilterRuleError as e:
            problems.append(f"{at}.matcher {list(matcher)!r} is not a valid table filter: {e}")
        out.append(DispatchRule(
            matcher=matcher, partition=text["partition"] or text["dispatcher"] or "default",
            index=text["index"], columns=_string_list(r.get("columns", []), f"{at}.columns", problems),
            topic=text["topic"]))
    return tuple(out)


def _column_selectors(rules: Any, problems: list) -> tuple[ColumnSelector, ...]:
    out = []
    for i, r in enumerate(_tables(rules, "sink.column-selectors", problems)):
        at = f"sink.column-selectors[{i}]"
        unknown = set(r) - _SELECTOR_KEYS
        if unknown:
            problems.append(f"unknown key(s) {sorted(unknown)} in {at}")
        matcher = _string_list(r.get("matcher", []), f"{at}.matcher", problems)
        columns = _string_list(r.get("columns", []), f"{at}.columns", problems)
        if not matcher or not columns:
            problems.append(f"{at} needs both matcher and columns")
        out.append(ColumnSelector(matcher=matcher, columns=columns))
    return tuple(out)


def parse_changefeed(text: str, base: SinkConfig, source: str = "changefeed TOML") -> Changefeed:
    """Applies a changefeed TOML to `base` (the scenario's defaults) and returns the result.
    `source` names the TOML in every message (load_changefeed: its path)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ChangefeedConfigError(f"{source} does not parse: {e}") from None
    out: dict[str, Any] = {}
    without_effect: list[str] = []
    problems: list[str] = []
    _walk((), doc, out, without_effect, problems)
    if problems:
        raise ChangefeedConfigError(f"{source}: " + "; ".join(problems))
    try:
        return Changefeed(replace(base, **out), without_effect=without_effect)
    except (TypeError, ValueError) as e:
        raise ChangefeedConfigError(f"{source}: changefeed option value rejected: {e}") from None


def load_changefeed(path: Path, base: SinkConfig) -> Changefeed:
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ChangefeedConfigError(f"changefeed TOML {path}: cannot be read ({e})") from None
    return parse_changefeed(text, base, source=f"changefeed TOML {path}")


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
_URI_NOT_SIMULATED = {"output-row-key": False}  # key -> TiCDC's default (a boolean)
_URI_NO_EFFECT = {"kafka-version", "kafka-client-id", "replication-factor", "auto-create-topic", "dial-timeout",
                  "write-timeout", "read-timeout", "required-acks", "sasl-user", "sasl-password", "sasl-mechanism",
                  "enable-tls", "ca", "cert", "key", "insecure-skip-verify", "compression", "avro-enable-watermark",
                  "avro-decimal-handling-mode", "avro-bigint-unsigned-handling-mode", "schema-registry",
                  "max-retry", "sasl-gssapi-auth-type", "sasl-gssapi-keytab-path", "sasl-gssapi-kerberos-config-path",
                  "sasl-gssapi-service-name", "sasl-gssapi-user", "sasl-gssapi-password", "sasl-gssapi-realm",
                  "sasl-gssapi-disable-pafxfast", "avro-include-before-value"}


def parse_sink_uri(uri: str, base: SinkConfig) -> Changefeed:
    """A Kafka sink URI: `kafka://host:port/topic?protocol=…&partition-num=…&…`."""
    u = urlparse(uri)
    if u.scheme not in ("kafka", "kafka+ssl"):
        raise ChangefeedConfigError(f"sink URI {uri}: scheme {u.scheme!r} is not a Kafka sink")
    out: dict[str, Any] = {}
    without_effect, problems = [], []
    topic = u.path.lstrip("/")
    if topic:
        out["topic"] = topic
    for key, value in parse_qsl(u.query, keep_blank_values=True):
        if key in _URI or key in _URI_NOT_SIMULATED:
            try:
                parsed = parsed_uri_value(_URI[key], value) if key in _URI else go_bool(value)
            except OptionTypeError as e:
                problems.append(f"parameter {key} {e}")
                continue
            if key in _URI:
                out[_URI[key]] = parsed
            elif parsed != _URI_NOT_SIMULATED[key]:
                problems.append(f"parameter {key}={value} changes the Kafka output in a way the simulator "
                                f"does not implement")
        elif key in _URI_NO_EFFECT:
            without_effect.append(key)
        else:
            toml = _belongs(key, None).replace("it belongs in", "it is a changefeed TOML option of", 1)
            problems.append(f"unknown sink URI parameter {key!r}{toml}")
    if problems:
        raise ChangefeedConfigError(f"sink URI {uri}: " + "; ".join(problems))
    try:
        return Changefeed(replace(base, **out), sink_uri=uri, without_effect=without_effect)
    except (TypeError, ValueError) as e:
        raise ChangefeedConfigError(f"sink URI {uri}: value rejected: {e}") from None
