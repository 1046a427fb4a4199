"""Every changefeed TOML of TiCDC's integration tests is accepted AND simulated: applied on top of
the encoding its integration test uses (told by the test's name), it generates a scenario whose
records show what the TOML configures. A TOML that only sets options without effect on Kafka output
runs under every encoding."""
from __future__ import annotations

import fnmatch
import json
import tomllib
from collections import Counter
from typing import Any, Optional

import cramjam
import lz4.frame
import orjson
import pytest

from tests.conftest import SHARED
from ticdc_conformance.checks.locate import decoded_events
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import iter_record_files
from ticdc_generators.pipeline import config_for, configure, encoding_names, generate

REFERENCE = SHARED / "reference"
TOMLS = sorted(REFERENCE.glob("*/tests/integration_tests/**/*.toml"))

# Integration test name prefix -> the encodings it runs (TiCDC's tests/integration_tests naming).
_BY_NAME = (
    ("canal_json", ["canal-json"]),
    ("kafka_simple", None),  # simple-json, or simple-avro when the name ends in _avro
    ("open_protocol", ["open-protocol"]),
    ("debezium", ["debezium"]),
)


def encodings_for(path) -> list[str]:
    name = path.relative_to(REFERENCE).parts[3]
    for prefix, encodings in _BY_NAME:
        if name.startswith(prefix):
            if encodings is None:
                return ["simple-avro" if name.endswith("_avro") else "simple-json"]
            return encodings
    return encoding_names()


CASES = [(p, enc) for p in TOMLS for enc in encodings_for(p)]


def test_every_reference_toml_is_exercised():
    assert len(TOMLS) >= 20 and {p for p, _ in CASES} == set(TOMLS)


def _toml_option(toml: dict, *keys: str, default: Any) -> Any:
    for key in keys[:-1]:
        toml = toml.get(key, {})
    return toml.get(keys[-1], default)


def expected_topic(rules: list[dict], default: str, schema: str, table: str) -> str:
    """The topic of a table's rows under TiCDC's dispatchers: the first rule whose matcher matches
    `schema.table` (case-insensitively) decides; a rule without a topic sends to the default topic."""
    for rule in rules:
        if any(fnmatch.fnmatch(f"{schema}.{table}".lower(), m.lower()) for m in rule["matcher"]):
            topic = rule.get("topic", "")
            return topic.replace("{schema}", schema).replace("{table}", table) if topic else default
    return default


def _payload(value: Optional[bytes], compression: str) -> Any:
    """The JSON a message value holds, through the configured compression; None when not JSON."""
    for data in (value, _decompressed(value, compression)):
        try:
            return orjson.loads(data)
        except (orjson.JSONDecodeError, TypeError):
            continue
    return None


def _decompressed(value: Optional[bytes], compression: str) -> Optional[bytes]:
    try:
        if compression == "snappy":
            return bytes(cramjam.snappy.decompress_raw(value))
        if compression == "lz4":
            return lz4.frame.decompress(value)
    except Exception:  # not compressed after all: the caller tries the raw bytes
        return None
    return None


def protocol_of(record: KafkaRecord, compression: str) -> str:
    """The protocol a record's bytes are in, told by each protocol's own marks (specs 000-004):
    Open Protocol's 8-byte version 1 before the key batch, Canal-JSON's isDdl, Debezium's payload
    envelope, Simple's version/type; a Simple Avro datum is not JSON."""
    if record.key is not None and record.key[:8] == (1).to_bytes(8, "big"):
        return "open-protocol"
    if record.value is None:
        return "tombstone"
    message = _payload(record.value, compression)
    if not isinstance(message, dict):
        return "binary"
    if "isDdl" in message:
        return "canal-json"
    if "payload" in message:
        return "debezium"
    if message.get("version") == 1 and "type" in message:
        return "simple-json"
    return "unknown"


_SNIFFED = {"open-protocol": {"open-protocol"}, "canal-json": {"canal-json"}, "debezium": {"debezium", "tombstone"},
            "simple-json": {"simple-json"}, "simple-avro": {"binary"}}


@pytest.mark.parametrize("path,encoding", CASES, ids=[f"{p.relative_to(REFERENCE)}-{e}" for p, e in CASES])
def test_reference_changefeed_generates(tmp_path, path, encoding):
    """The records show what the TOML (read here with tomllib) asks for on top of the encoding's
    own settings: each row on the topic its dispatchers name, partitions within the partition
    count, every record in the encoding's protocol by its bytes, and the TiDB extension (Canal-JSON,
    Debezium watermarks) and row checksums (Simple, integrity) present exactly when configured."""
    toml = tomllib.loads(path.read_text())
    base = config_for("smoke", encoding)
    config = configure("smoke", encoding, changefeed=path)
    generate("smoke", 1, config, tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())

    partitions = _toml_option(toml, "sink", "kafka-config", "partition-num", default=base.partition_num)
    extension = _toml_option(toml, "sink", "kafka-config", "codec-config", "enable-tidb-extension",
                             default=base.enable_tidb_extension)
    checksums = _toml_option(toml, "integrity", "integrity-check-level", default=base.integrity_check_level)
    compression = _toml_option(toml, "sink", "kafka-config", "large-message-handle",
                               "large-message-handle-compression", default=base.large_message_handle_compression)
    rules = _toml_option(toml, "sink", "dispatchers", default=[])

    records = list(iter_record_files(tmp_path / "records"))
    assert records
    assert {r.partition for r in records} <= set(range(partitions))
    assert set(manifest["topics"].values()) == {partitions}
    sniffed = Counter(protocol_of(r, compression) for r in records)
    assert set(sniffed) <= _SNIFFED[encoding], sniffed

    events = list(decoded_events(tmp_path, manifest))
    assert not [e for e in events if e["kind"] == "error"]
    rows = [e for e in events if e["kind"] == "row"]
    assert rows
    for row in rows:
        assert row["topic"] == expected_topic(rules, base.topic, row["schema"], row["table"]), row
    assert {r.topic for r in records} == {base.topic} | {row["topic"] for row in rows}

    watermarks = any(e["kind"] == "watermark" for e in events)
    if encoding in ("canal-json", "debezium"):
        assert watermarks == extension  # TiCDC sends these protocols' watermarks only with the extension
    if encoding == "canal-json":
        dml = [m for m in (_payload(r.value, compression) for r in records) if m and not m["isDdl"]
               and m["type"] in ("INSERT", "UPDATE", "DELETE")]
        assert dml and all(("_tidb" in m) == extension for m in dml)
    if encoding == "simple-json":
        dml = [m for m in (_payload(r.value, compression) for r in records) if m and m.get("type") in
               ("INSERT", "UPDATE", "DELETE")]
        assert dml and all(("checksum" in m) == (checksums == "correctness") for m in dml)
    if config.large_message_handle_option == "claim-check":
        assert manifest["sink"]["claim-check-storage-uri"] == _toml_option(
            toml, "sink", "kafka-config", "large-message-handle", "claim-check-storage-uri", default=None)
