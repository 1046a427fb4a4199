"""The testee protocol's lines: the session's own check of a consumer line says what the JSON Schema
says (docs/testee-protocol/consumer-to-suite.schema.json), on valid lines and on each of them broken
one field at a time; what the suite writes validates against suite-to-consumer.schema.json."""
import copy
import json

import jsonschema
import orjson
import pytest

from ticdc_conformance.consumers.adapters.session_wire import (
    CONSUMER_SCHEMA,
    SUITE_SCHEMA,
    LineError,
    line_problem,
    parse_line,
    record_message,
    wire,
)
from ticdc_contract.record import KafkaRecord

CONSUMER = jsonschema.Draft202012Validator(json.loads(CONSUMER_SCHEMA.read_text()))
SUITE = jsonschema.Draft202012Validator(json.loads(SUITE_SCHEMA.read_text()))

VALID = [
    {"type": "ready", "protocol_version": 1, "supports": ["restarts", "late-join"]},
    {"type": "ready", "protocol_version": 1, "supports": [], "extra": "a later version's field"},
    {"type": "unsupported", "reason": "only canal-json"},
    {"type": "txn", "commit_ts": 4462174830592, "rows": [
        {"schema": "s", "table": "t", "op": "insert", "before": None, "after": {"id": 1}},
        {"schema": "s", "table": "t", "op": "update", "before": {"id": 1}, "after": {"id": 2}}]},
    {"type": "txn", "commit_ts": None, "rows": []},
    {"type": "ddl", "commit_ts": 5, "schema": "s", "table": "t", "query": "ALTER TABLE t ADD c INT"},
    {"type": "ddl", "commit_ts": None, "schema": "s", "table": None, "query": "CREATE DATABASE s"},
    {"type": "checkpoint", "ts": 4462174830700},
    {"type": "synced", "id": 1},
    {"type": "ended", "id": 9},
    {"type": "row", "schema": "s", "table": "t", "row": {"id": 1, "c": "x"}},
    {"type": "row", "schema": "s", "table": "empty", "row": None},
    {"type": "tables", "id": 7, "checkpoint": 4462174830700},
    {"type": "tables", "id": 7, "checkpoint": None},
    {"type": "committed", "id": 3, "offsets": {"topic": {"0": 17, "12": 0}}},
    {"type": "committed", "id": 3, "offsets": {}},
]
# Values that break a field: of the wrong JSON type, negative, fractional, a boolean for a number.
WRONG = [None, True, -1, 1.5, "x", [], {}, ["x", "x"], "", 2**70]


def _broken(line: dict):
    """Every line that differs from `line` in one field (removed or replaced), also inside txn rows
    and committed offsets."""
    for field in line:
        gone = {k: v for k, v in line.items() if k != field}
        yield gone
        for wrong in WRONG:
            yield {**line, field: wrong}
    for i, row in enumerate(line.get("rows", [])):
        for field in row:
            for wrong in WRONG[:5]:
                broken = copy.deepcopy(line)
                broken["rows"][i][field] = wrong
                yield broken
            broken = copy.deepcopy(line)
            del broken["rows"][i][field]
            yield broken
    for topic in line.get("offsets", {}):
        for bad in ({"01": 1}, {"x": 1}, {"0": -1}, {"0": "1"}, [1]):
            yield {**line, "offsets": {topic: bad}}


@pytest.mark.parametrize("line", VALID, ids=lambda line: line["type"])
def test_the_check_agrees_with_the_schema(line):
    assert CONSUMER.is_valid(line) and line_problem(line) is None
    for broken in _broken(line):
        assert CONSUMER.is_valid(broken) == (line_problem(broken) is None), (broken, line_problem(broken))


def test_lines_of_no_type_or_an_unknown_one_are_refused_by_both():
    for line in ({}, {"type": "hello"}, {"type": 3}, [], "text", 3):
        assert not CONSUMER.is_valid(line) and line_problem(line) is not None


def test_a_refused_line_says_which_field_and_what_it_must_be():
    with pytest.raises(LineError, match=r"txn.rows\[0\].op must be insert, update or delete, not \"upsert\""):
        parse_line(orjson.dumps({"type": "txn", "commit_ts": 1, "rows": [
            {"schema": "s", "table": "t", "op": "upsert", "before": None, "after": {}}]}))
    with pytest.raises(LineError, match="not JSON"):
        parse_line(b"this is not JSON")
    with pytest.raises(LineError, match="NaN is no JSON value"):
        parse_line(b'{"type": "checkpoint", "ts": NaN}')


def test_integers_beyond_64_bits_are_read():
    """orjson stops at 64 bits; JSON does not, and a row may hold such a value."""
    line = parse_line(b'{"type": "row", "schema": "s", "table": "t", "row": {"id": 123456789012345678901234}}')
    assert line["row"]["id"] == 123456789012345678901234


def test_what_the_suite_writes_validates_and_carries_bytes_as_base64():
    record = KafkaRecord("t", 1, 17, b"k", b"\x00\xff", 1767225600012, (("h", b"abc"), ("n", None)))
    message = record_message(record)
    assert message["value"] == b"\x00\xff"  # python: consumers get bytes
    written = orjson.loads(wire(message))
    assert SUITE.is_valid(written), list(SUITE.iter_errors(written))
    assert (written["key"], written["value"], written["headers"]) == \
        ("aw==", "AP8=", [{"key": "h", "value": "YWJj"}, {"key": "n", "value": None}])
    for request in ("sync", "tables", "commit", "end"):
        assert SUITE.is_valid(orjson.loads(wire({"type": request, "id": 4})))
    assert not SUITE.is_valid({"type": "sync"})
