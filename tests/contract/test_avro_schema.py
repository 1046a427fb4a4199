"""TiCDC's Simple Avro schema as the contract vendors it, held against the encoder's own schema.

The decoder reads with the vendored schema and the encoder writes with the schema it builds from
spec 004; these tests are what makes the two provably one schema.
"""
from __future__ import annotations

import io

import fastavro
import pytest
from fastavro.schema import to_parsing_canonical_form

from tests.conftest import SHARED
from ticdc_contract import avro_schema as contract
from ticdc_generators.protocols.simple import avro_schema as encoder

TICDC_MESSAGE_JSON = SHARED / "reference/ticdc/pkg/sink/codec/simple/message.json"


def _defaults(schema: list[dict]) -> dict[tuple[str, str], object]:
    # The parsing canonical form leaves defaults out; a reader resolving schemas would use them.
    return {(r["name"], f["name"]): f.get("default", "<none>") for r in schema for f in r["fields"]}


@pytest.mark.rules("SIMPLE-AVRO-1")
def test_encoder_schema_is_the_vendored_schema():
    assert to_parsing_canonical_form(encoder.MESSAGE_SCHEMA) == to_parsing_canonical_form(contract.MESSAGE_SCHEMA)
    assert _defaults(encoder.MESSAGE_SCHEMA) == _defaults(contract.MESSAGE_SCHEMA)
    assert encoder.MESSAGE_UNION_INDEX == contract.MESSAGE_UNION_INDEX == 11


def test_vendored_schema_is_ticdc_message_json_unchanged():
    if not TICDC_MESSAGE_JSON.exists():
        pytest.skip(f"TiCDC's reference artifacts are not at {TICDC_MESSAGE_JSON}")
    assert contract.SCHEMA_FILE.read_bytes() == TICDC_MESSAGE_JSON.read_bytes()


def test_a_datum_the_encoder_writes_reads_back_with_the_vendored_schema():
    watermark = {"type": "WATERMARK",
                 "payload": (f"{encoder.NAMESPACE}.Watermark", {"version": 1, "commitTs": 42, "buildTs": 7})}
    data = encoder.encode_avro(watermark)
    assert data[:1] == bytes([contract.MESSAGE_UNION_INDEX << 1])
    read = fastavro.schemaless_reader(io.BytesIO(data), contract.MESSAGE_SCHEMA, None, return_record_name=True)
    assert read == (contract.MESSAGE_RECORD, {"type": "WATERMARK", "payload": (
        "com.pingcap.simple.avro.Watermark", {"version": 1, "commitTs": 42, "buildTs": 7})})
