"""Every changefeed TOML of TiCDC's integration tests is accepted AND simulated: applied on top of
the encoding its integration test uses (told by the test's name), it generates a scenario whose
manifest carries the options. A TOML that only sets options without effect on Kafka output runs
under every encoding."""
from __future__ import annotations

import json

import pytest

from ticdc_generators.pipeline import configure, encoding_names, generate

from tests.conftest import SHARED

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


@pytest.mark.parametrize("path,encoding", CASES, ids=[f"{p.relative_to(REFERENCE)}-{e}" for p, e in CASES])
def test_reference_changefeed_generates(tmp_path, path, encoding):
    config = configure("smoke", encoding, changefeed=path)
    manifest = generate("smoke", 1, config, tmp_path)
    assert manifest["records"] > 0
    written = json.loads((tmp_path / "manifest.json").read_text())["sink"]
    assert written == json.loads(json.dumps(config.ticdc_options()))
    if config.large_message_handle_option == "claim-check":
        assert written["claim-check-storage-uri"] == config.claim_check_storage_uri
