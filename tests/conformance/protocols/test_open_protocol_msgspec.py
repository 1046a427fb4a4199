"""The Open Protocol decoder's msgspec fast path (_fast/decoder.py, _fast/structs.py, _fast/rowcode.py) gives exactly what
the reference path gives: the same events, column order and key columns, or the same DecodeError.

Each test decodes with the decoder as shipped (the fast path first) and with a decoder whose fast
path is switched off, on streams of the generators and on damaged copies of their messages, with
the documents msgspec and orjson might read differently among the damage.
"""
from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any, Optional

import orjson
import pytest

from tests.helpers import assert_fast_matches_reference, exact_events, kafka_record
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedWatermark
from ticdc_conformance.protocols.open_protocol import new_decoder
from ticdc_conformance.protocols.open_protocol._fast import decoder as fast
from ticdc_conformance.protocols.open_protocol.wire import read_events
from ticdc_contract.record import KafkaRecord
from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator

from .test_open_protocol_decoder import message, record, row_key

SCENARIOS = ["smoke", "types", "keys", "ddl-evolution", "multi-table", "wide-rows"]


@lru_cache(maxsize=None)
def stream(scenario: str, **overrides: Any) -> tuple[tuple[KafkaRecord, ...], dict]:
    config = config_for(scenario, "open-protocol", **overrides)
    records = SinkSimulator(config, seed=1).run(get_scenario(scenario).history(1, None, config.time_zone))
    return tuple(records), config.ticdc_options()


def reference_decoder(options: dict):
    return new_decoder({**options, "fast-path": False})


def same_both_ways(records, options: dict) -> int:
    """Decodes the records both ways, each way with one decoder per partition as the consumers
    keep them; asserts they agree and returns how many the fast path read itself."""
    shipped: dict = {}
    reference: dict = {}
    taken = 0
    for rec in records:
        tp = (rec.topic, rec.partition)
        dec = shipped.setdefault(tp, new_decoder(options))
        taken += dec._fast.decode(rec.key, rec.value) is not None
        assert_fast_matches_reference(dec, reference.setdefault(tp, reference_decoder(options)), rec)
    return taken


def rows_in(records) -> int:
    """The records carrying row and resolved events only: the ones the fast path is for."""
    return sum(all(e.kind != 2 for e in read_events(r.key, r.value)) for r in records)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_streams_read_the_same_and_the_fast_path_takes_every_row_message(scenario):
    records, options = stream(scenario)
    assert same_both_ways(records, options) == rows_in(records) > 0


@pytest.mark.parametrize("scenario,overrides", [
    ("keys", {"version_profile": "tiflow"}),
    ("keys", {"output_old_value": False}),
    ("keys", {"only_output_updated_columns": True}),
    ("smoke", {"delete_only_output_handle_key_columns": True}),  # "keys" has a table without one
    ("smoke", {"large_message_handle_option": "handle-key-only", "max_message_bytes": 2048}),
], ids=lambda o: ",".join(o) if isinstance(o, dict) else o)
def test_other_sink_options_read_the_same(scenario, overrides):
    records, options = stream(scenario, **overrides)
    same_both_ways(records, options)


# --- damaged messages ----------------------------------------------------------------------------

def _damaged(rng: random.Random, frame: bytes) -> bytes:
    """One value frame with one random fault, at the byte or the JSON level."""
    doc = orjson.loads(frame)
    section = next((doc[s] for s in ("u", "p", "d") if s in doc), None)
    roll = rng.randrange(14)
    if roll == 0 or section is None:
        pos = rng.randrange(len(frame))
        return frame[:pos] + bytes([rng.randrange(256)]) + frame[pos + 1:]
    name = rng.choice(list(section))
    column = section[name]
    if roll == 1:
        column["t"] = rng.choice([1, 3, 8, 15, 245, 246, 249, 255, 300, True, 3.0, None, "3"])
    elif roll == 2:
        column["f"] = rng.choice([0, 1, 2, 65, 128, 193, 2**63, -1, None, True, 1.5])
    elif roll == 3:
        column["v"] = rng.choice([None, 0, -1, 2**63, 2**64, -(2**63) - 1, 1.5, -0.0, "", "x", "1.5",
                                  "2020-01-01", "\\x41", "\\q", [1], {"a": 1}, True, "null"])
    elif roll == 4:
        column.pop(rng.choice(["t", "f", "v", "h"]), None)
    elif roll == 5:
        column["h"] = rng.choice([True, False, 1, None])
    elif roll == 6:
        column["extra"] = 1
    elif roll == 7:
        section[name + "_new"] = dict(column)
    elif roll == 8:
        del section[name]
    elif roll == 9:  # the same columns in another order
        items = list(section.items())
        rng.shuffle(items)
        section.clear()
        section.update(items)
    elif roll == 10:
        doc[rng.choice(["u", "p", "d", "x"])] = rng.choice([section, {}, None, 1])
    elif roll == 11:  # whitespace, which TiCDC never writes
        return json.dumps(doc, ensure_ascii=False, indent=rng.choice([None, 1])).encode()
    elif roll == 12:  # \u escapes where TiCDC writes UTF-8
        return json.dumps(doc, ensure_ascii=True).encode()
    else:
        return frame.replace(b'"v":', b'"v":' + rng.choice([b"1,", b'"v":1,', b"[", b"-"]), 1)
    return json.dumps(doc, ensure_ascii=False).encode()


@pytest.mark.parametrize("scenario", ["smoke", "types", "keys"])
def test_damaged_messages_read_the_same(scenario):
    records, options = stream(scenario)
    rng = random.Random(f"open-protocol msgspec {scenario}")
    shipped, reference = new_decoder(options), reference_decoder(options)
    for rec in records:  # the tables' plans are warm before the damage
        shipped.decode(rec)
    row_records = [r for r in records if any(e.kind == 1 for e in read_events(r.key, r.value)) and rows_in([r])]
    for rec in rng.choices(row_records, k=400):
        frames = [e.value for e in read_events(rec.key, rec.value)]
        i = rng.choice([i for i, f in enumerate(frames) if f])  # not a resolved event's empty frame
        frames[i] = _damaged(rng, frames[i])
        damaged = kafka_record(b"".join(len(f).to_bytes(8, "big") + f for f in frames), rec.key,
                               topic=rec.topic, partition=rec.partition, offset=rec.offset)
        assert_fast_matches_reference(shipped, reference, damaged)


# --- the documents msgspec and orjson might read differently ------------------------------------

COLUMNS = b'"id":{"t":8,"h":true,"f":11,"v":1},"n":{"t":15,"f":0,"v":"a"},"x":{"t":5,"f":0,"v":2.5}'


def _row(value: bytes, key: Optional[bytes] = None) -> KafkaRecord:
    return record(*message([(key or orjson.dumps(row_key()), value)]))


def _agree(rec: KafkaRecord, taken: Optional[bool] = None) -> Any:
    """Decodes `rec` after a well-formed row of its table, both ways; `taken` says whether the
    fast path must read it itself (True) or leave it (False)."""
    shipped, reference = new_decoder({}), reference_decoder({})
    shipped.decode(_row(b'{"u":{' + COLUMNS + b"}}"))
    if taken is not None:
        assert (shipped._fast.decode(rec.key, rec.value) is not None) is taken
    return assert_fast_matches_reference(shipped, reference, rec)


def _with(column: bytes, **replace: bytes) -> bytes:
    text = COLUMNS
    for old, new in replace.items():
        text = text.replace(old.encode(), new)
    return b'{"u":{' + text + column + b"}}"


@pytest.mark.parametrize("value,taken", [
    (b'{"u":{' + COLUMNS + b',"n":{"t":15,"f":0,"v":"b"}}}', None),  # a duplicate column: the last wins
    (b'{"u":{' + COLUMNS.replace(b'"v":"a"', b'"v":"a","v":"c"') + b"}}", None),  # a duplicate field
    (b'{"u":{' + COLUMNS + b'},"u":{' + COLUMNS.replace(b'"a"', b'"b"') + b"}}", None),  # a duplicate image
    (_with(b"", **{'"v":"a"': b'"v":"\\ud800"'}), False),  # a lone surrogate escape
    (_with(b"", **{'"v":"a"': b'"v":"\\ud83d\\ude00"'}), True),  # a surrogate pair
    (_with(b"", **{'"v":"a"': b'"v":"\xff"'}), False),  # invalid UTF-8
    (_with(b"", **{'"v":"a"': b'"v":"\xed\xa0\x80"'}), False),  # an encoded surrogate
    (_with(b"", **{'"v":1}': b'"v":9223372036854775808}'}), False),  # past int64 in a BIGINT
    (_with(b"", **{'"v":1}': b'"v":18446744073709551616}'}), False),  # past 64 bits: orjson's float
    (_with(b"", **{'"v":1}': b'"v":-0}'}), True),
    (_with(b"", **{'"v":2.5': b'"v":-0'}), True),  # -0 in a DOUBLE: 0.0 both ways
    (_with(b"", **{'"v":2.5': b'"v":-0.0'}), True),
    (_with(b"", **{'"v":2.5': b'"v":18446744073709551616'}), True),  # a float from 65 bits
    (_with(b"", **{'"v":2.5': b'"v":1e400'}), False),
    (_with(b"", **{'"v":2.5': b'"v":NaN'}), False),
    (_with(b"", **{'"v":2.5': b'"v":1'}), True),  # Go writes a whole double without a fraction
    (_with(b"", **{'"v":2.5': b'"v":true'}), False),
    (_with(b',"y":{"t":3,"f":0,"v":1}'), True),  # a column the plan lacks: a new plan reads it
    (_with(b"", **{'"f":0,"v":"a"': b'"f":0,"v":"a","q":1'}), False),  # an unknown extra field
    (b'{"u":{' + COLUMNS + b'},"q":1}', False),  # an unknown extra part of the value
    (_with(b"", **{'"f":0,"v":"a"': b'"f":null,"v":"a"'}), False),  # null "f" is not a missing "f"
    (_with(b"", **{'"f":0,"v":"a"': b'"f":0'}), False),  # a missing "v"
    (_with(b"", **{'"f":0,"v":"a"': b'"f":0,"v":null'}), True),
    (_with(b"", **{'"h":true,': b'"h":null,'}), False),
    (_with(b"", **{'"h":true,': b""}), True),  # "h" changes nothing where the handle flag is set
    (_with(b"", **{'"v":"a"': b'"v":' + b"[" * 5000 + b"]" * 5000}), False),  # very deep nesting
    (_with(b"", **{'"v":"a"': b'"v":"\\u0061"'}), True),
    (b' { "u" : {' + COLUMNS + b"} } ", None),  # whitespace
    (b'{"u":{' + COLUMNS + b"}} x", False),  # trailing garbage
    (b"{}", False), (b"[]", False), (b"null", False), (b"", False),
])
def test_documents_msgspec_and_orjson_might_read_differently_read_the_same(value, taken):
    _agree(_row(value), taken)


@pytest.mark.parametrize("key", [
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"t":3}',  # a duplicate: orjson keeps the last
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"ts":8}',
    b'{"ts":18446744073709551615,"scm":"db","tbl":"t","t":1}',  # the largest TSO: past int64
    b'{"ts":18446744073709551616,"scm":"db","tbl":"t","t":1}',  # past 64 bits
    b'{"ts":-0,"scm":"db","tbl":"t","t":1}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1.0}',
    b'{"ts":7,"scm":"db","tbl":"t","t":true}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"rid":18446744073709551616}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"rid":-9223372036854775809}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"ptn":6}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"ohk":false}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"ohk":true}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"ccl":""}',
    b'{"ts":7,"scm":"db","tbl":"t","t":1,"zzz":1}',
    b'{"ts":7,"scm":"","tbl":"t","t":1}',
    b'{"ts":7,"scm":"db","t":1}',
    b'{"ts":7,"scm":"d\\u0062","tbl":"t","t":1}',
])
def test_event_keys_read_the_same(key):
    _agree(_row(b'{"u":{' + COLUMNS + b"}}", key))


def test_resolved_events_read_the_same():
    resolved = orjson.dumps({"ts": 9, "t": 3})
    assert _agree(record(*message([(resolved, b""), (resolved, None)])), True) == exact_events([DecodedWatermark(9)] * 2)
    _agree(record(*message([(resolved, b"{}")])), False)
    _agree(record(*message([(orjson.dumps(row_key()), None)])), False)


# --- plans -------------------------------------------------------------------------------------

def test_a_changed_table_gets_a_new_plan_and_a_reordered_one_too():
    dec = new_decoder({})
    first = dec.decode(_row(b'{"u":{' + COLUMNS + b"}}"))
    added = _row(b'{"u":{' + COLUMNS + b',"y":{"t":3,"f":0,"v":4}}}')
    reordered = _row(b'{"u":{"n":{"t":15,"f":0,"v":"a"},"id":{"t":8,"h":true,"f":11,"v":1},'
                     b'"x":{"t":5,"f":0,"v":2.5}}}')
    for rec, columns in ((added, ["id", "n", "x", "y"]), (reordered, ["n", "id", "x"])):
        assert dec._fast.decode(rec.key, rec.value) is not None
        (row,) = dec.decode(rec)
        assert list(row.after) == columns and row.key_columns == ("id",)
    assert first[0].after == {"id": 1, "n": "a", "x": 2.5}


def test_a_value_its_plan_refuses_is_not_learnt_again(monkeypatch):
    dec = new_decoder({})
    dec.decode(_row(b'{"u":{' + COLUMNS + b"}}"))
    built = []
    monkeypatch.setattr(fast, "Plan", lambda columns: built.append(columns))
    with pytest.raises(DecodeError, match="not a JSON number"):
        dec.decode(_row(_with(b"", **{'"v":2.5': b'"v":"2.5"'})))
    assert built == []


@pytest.mark.parametrize("names", [["a"], ['q"uote', "new\nline", "é文", "N0", "KEY", "decode", ""]])
def test_any_column_names_are_read(names):
    columns = {name: {"t": 3, "f": 0, "v": i} for i, name in enumerate(names)}
    columns[names[0]].update(h=True, f=2)
    rec = _row(orjson.dumps({"u": columns, "p": columns}))
    [(_, row)] = _agree(rec, True)
    assert [name for name, _, _ in row["after"]] == names


def test_the_caches_stay_bounded_under_endless_tables_and_shapes(monkeypatch):
    monkeypatch.setattr(fast, "_PLANS", {})
    monkeypatch.setattr(fast, "_PLANS_MAX", 8)
    monkeypatch.setattr(fast, "_TABLES_MAX", 8)
    dec = new_decoder({})
    for i in range(30):
        key = orjson.dumps(row_key(tbl=f"t{i}"))
        value = orjson.dumps({"u": {f"c{i}": {"t": 3, "h": True, "f": 2, "v": i}}})
        assert dec._fast.decode(*message([(key, value)])) is not None
    assert len(fast._PLANS) <= 8 and len(dec._fast._tables) <= 8


def test_compressed_values_go_the_reference_way():
    assert new_decoder({"large-message-handle-compression": "lz4"})._fast is None
