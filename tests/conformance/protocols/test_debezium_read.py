"""DebeziumDecoder.read: the events decode() gives and the key and value documents as parsed
(message.DebeziumMessage), both kept whenever they parse, whatever the decoder then finds wrong."""
from __future__ import annotations

from functools import partial

import orjson

from tests.helpers import kafka_record
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.protocols.debezium import new_decoder
from ticdc_conformance.protocols.debezium.message import DebeziumMessage

rec = partial(kafka_record, topic="dbz", partition=2, offset=7)
FIELDS = [{"type": "int32", "optional": False, "field": "id"}]
SOURCE = {"name": "c", "db": "test", "table": "t", "commit_ts": 1}


def value(op: str = "c") -> dict:
    return {"payload": {"source": SOURCE, "op": op, "before": None, "after": {"id": 1}},
            "schema": {"type": "struct", "name": "c.test.t.Envelope", "fields": [
                {"type": "struct", "optional": True, "field": "after", "fields": FIELDS}]}}


KEY = {"payload": {"id": 1}, "schema": {"type": "struct", "name": "c.test.t.Key", "fields": FIELDS}}


def decode_outcome(record) -> object:
    try:
        return new_decoder({}).decode(record)
    except DecodeError as e:
        return e.reason


def test_a_good_record_reads_as_it_decodes_with_both_documents():
    record = rec(value(), KEY)
    read = new_decoder({}).read(record)
    assert read.error is None and read.events == decode_outcome(record)
    assert read.message == DebeziumMessage(value=value(), key=KEY)


def test_both_documents_are_kept_when_the_value_envelope_is_rejected():
    # A schema although debezium-disable-schema is on: the value's envelope fails before the key is
    # judged, yet both documents parsed and the lint's key rules need the key.
    record = rec(value(), KEY)
    read = new_decoder({"debezium-disable-schema": True}).read(record)
    assert read.error is not None and "debezium-disable-schema" in read.error.reason
    assert read.message == DebeziumMessage(value=value(), key=KEY)


def test_a_key_that_does_not_parse_fails_after_the_values_own_faults():
    broken_key = b"{not json"
    read = new_decoder({}).read(rec(value(), broken_key))
    assert read.message == DebeziumMessage(value=value(), key=None)
    assert read.error is not None and read.error.reason == decode_outcome(rec(value(), broken_key))
    assert read.error.reason.startswith("key")
    # A value that breaks its envelope is named first, as decode() names it.
    bad_value = {"payload": "not an object"}
    read = new_decoder({}).read(rec(bad_value, broken_key))
    assert read.error is not None and read.error.reason == "value: 'payload' missing or not an object"
    assert read.error.reason == decode_outcome(rec(bad_value, broken_key))


def test_a_value_that_does_not_parse_leaves_no_document():
    read = new_decoder({}).read(rec(b"\xff", orjson.dumps(KEY)))
    assert read.message == DebeziumMessage() and read.events == [] and read.error is not None
