"""The Debezium decoder's fast path (msgspec, protocols/debezium/_fast/) gives exactly what the reference
path does: the same events for the messages the real encoder writes, the same error for damaged ones, and
the reference's answer wherever msgspec and orjson could read the same bytes differently."""
from __future__ import annotations

import copy
import random
from functools import partial
from typing import Any, Optional

import cramjam
import msgspec
import orjson
import pytest

from tests.helpers import decode_outcome, exact_events, kafka_record
from ticdc_conformance.fidelity.matrix import MatrixColumn, edge_values
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.debezium import new_decoder
from ticdc_conformance.protocols.debezium._fast.plans import MAX_PLANS, PlanCache
from ticdc_conformance.protocols.debezium.columns import StructCache
from ticdc_conformance.protocols.debezium.options import parse_options
from ticdc_contract.model import Column, Index, Op, RowChange, TableSchema
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tidb_types import TiDBType, int_type, varchar
from ticdc_contract.type_catalogue import all_types_matrix
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.events import RowEvent

BASE_TS = 1_767_225_600_000 << 18
TOPIC = "fast"
# Sink configurations under SinkConfig's names; every one the fast path serves.
VARIANTS = {
    "schema": (),
    "no-extension": (("enable_tidb_extension", False),),
    "no-schema": (("debezium_disable_schema", True),),
    "no-old-value": (("output_old_value", False),),
    "tiflow": (),
    "snappy": (("large_message_handle_compression", "snappy"),),
    "no-schema-lz4": (("debezium_disable_schema", True), ("large_message_handle_compression", "lz4")),
}
TYPES = all_types_matrix()
_INT64 = range(-(2**63), 2**63)


def wide_table(types: list[TiDBType], name: str = "wide", version: int = 1) -> TableSchema:
    columns = (Column("id", int_type("bigint"), nullable=False),
               Column("tag", varchar(16), nullable=False),  # a NOT NULL column: a non-optional field
               *(Column(f"c{i}", t) for i, t in enumerate(types)))
    primary = Index("PRIMARY", ("id",), primary=True, unique=True)
    return TableSchema(schema="fast", table=name, table_id=40 + version, schema_version=BASE_TS - version,
                       pk_is_handle=True, columns=columns, indexes=(primary,))


def _row(table: TableSchema, n: int, zone: str) -> dict:
    row: dict[str, Any] = {"id": n, "tag": f"r{n}"}
    for c in table.columns[2:]:
        edges = edge_values(c.type, zone)
        row[c.name] = edges[n % len(edges)]
    return row


def _config(variant: str, zone: str = "UTC"):
    profile = "tiflow" if variant == "tiflow" else "ticdc"
    return MatrixColumn(variant, "debezium", VARIANTS[variant], profile).config(zone)


def encoded(variant: str, rows: int = 24, zone: str = "UTC", table: Optional[TableSchema] = None) -> list[KafkaRecord]:
    """Inserts, updates and deletes of a table with a column of every type, as the real encoder writes them."""
    config = _config(variant, zone)
    table = table or wide_table(TYPES)
    encoder = encoder_module("debezium").new_encoder(config, TOPIC, 0)
    messages = []
    for n in range(rows):
        before, after = _row(table, n, zone), _row(table, n + 7, zone)
        after["id"] = n
        change = (RowChange(table, Op.INSERT, None, before), RowChange(table, Op.UPDATE, before, after),
                  RowChange(table, Op.DELETE, after, None))[n % 3]
        messages += encoder.encode(RowEvent(change, BASE_TS + 2 * n, BASE_TS + 2 * n - 1)) + encoder.flush()
    return [kafka_record(m.value, m.key, topic=TOPIC, offset=i) for i, m in enumerate(messages)]


def options(variant: str, zone: str = "UTC") -> dict:
    return _config(variant, zone).ticdc_options()


def reference(opts: dict, rec: KafkaRecord):
    """What the reference path alone (fast-path off, a fresh decoder) makes of a record: its events or its error."""
    return decode_outcome(new_decoder(dict(opts, **{"fast-path": False})), rec)


record = partial(kafka_record, topic=TOPIC, partition=1, offset=3)


# --- what the encoder writes -------------------------------------------------------------

def fast_path_serves(rec: KafkaRecord, opts: dict) -> bool:
    """Whether the fast path takes this message of the encoder: every one, but without schema those
    with a BIT(1) boolean (which becomes 0/1) or an integer beyond int64 (orjson reads one beyond 64 bits
    as a double; msgspec would keep it an int), which it leaves to the reference path. Go prints a double
    below 1e21 without exponent, so large integral doubles arrive as such integers."""
    if not opts.get("debezium-disable-schema"):
        return True
    # msgspec's untyped reading keeps every JSON integer an int, whatever its size.
    payload = msgspec.json.decode(decompress(opts.get("large-message-handle-compression") or "none",
                                             rec.value))["payload"]
    values = [v for image in (payload["before"], payload["after"]) if image for v in image.values()]
    return not any(v.__class__ is bool or v.__class__ is int and v not in _INT64 for v in values)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_message_of_the_encoder_takes_the_fast_path_and_equals_the_reference(variant):
    opts = options(variant)
    dec = new_decoder(opts)
    # Without BIT(1) and the floating-point types, no message leaves the fast path in any variant.
    plain = wide_table([t for t in TYPES if t.base not in ("bit", "float", "double", "decimal")], "plain")
    records = encoded(variant) + encoded(variant, table=plain)
    for rec in records:
        fast = dec._fast.decode(rec)
        assert (fast is not None) is fast_path_serves(rec, opts), rec.offset
        assert decode_outcome(dec, rec) == reference(opts, rec), rec.offset
        if fast is not None:
            assert exact_events(fast) == reference(opts, rec), rec.offset
    assert all(fast_path_serves(rec, opts) for rec in records[-24:])


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_timestamps_in_another_zone(zone):
    table = wide_table([TiDBType("timestamp", decimal=d) for d in (0, 3, 6)])
    opts = options("schema", zone)
    dec = new_decoder(opts)
    for rec in encoded("schema", rows=30, zone=zone, table=table):
        assert dec._fast.decode(rec) is not None
        assert decode_outcome(dec, rec) == reference(opts, rec)


def test_a_changed_table_schema_gets_its_own_plan():
    # ALTER TABLE wide MODIFY c0 VARCHAR(8): the same table, other schema bytes; messages interleave.
    old, new = wide_table([int_type("int")]), wide_table([varchar(8)], version=2)
    opts = options("schema")
    dec = new_decoder(opts)
    records = [r for pair in zip(encoded("schema", 6, table=old), encoded("schema", 6, table=new)) for r in pair]
    for rec in records:
        assert dec._fast.decode(rec) is not None
        assert decode_outcome(dec, rec) == reference(opts, rec)
    c0 = {dict((k, t) for k, t, _ in e["after"])["c0"] for _, e in (decode_outcome(dec, r)[0] for r in records)
          if isinstance(e["after"], list)}
    assert c0 == {"int", "str", "NoneType"}


def test_the_plan_cache_is_bounded():
    opts = parse_options(options("schema"))
    cache = PlanCache(StructCache(opts), limit=2)
    for name in ("a", "b", "c", "d"):
        rec = encoded("schema", 1, table=wide_table([int_type("int")], name=name))[0]
        env = orjson.loads(rec.value)
        assert cache.value_plan(orjson.dumps(env["schema"])) is not None
        assert cache.key_plan(orjson.dumps(orjson.loads(rec.key)["schema"])) is not None
        assert len(cache) <= 4  # two value plans and two key plans at most
    schema = orjson.dumps(env["schema"])
    assert cache.value_plan(schema) is cache.value_plan(schema)


def test_the_key_columns_are_remembered_in_a_bounded_memo():
    value, key = _insert("no-schema")
    opts = options("no-schema")
    dec = new_decoder(opts)
    for i in range(MAX_PLANS + 40):
        # A new column name each time; every other time the key column is not carried at all.
        after = {("id" if i % 2 else "pk"): 0, f"col{i}": i}
        rec = record(_text(dict(value, payload=dict(value["payload"], after=after))), _text(key))
        events = dec._fast.decode(rec)
        assert events is not None and events[0].key_columns == (("id",) if i % 2 else ())
        assert exact_events(events) == reference(opts, rec)
        assert len(dec._fast._carried) <= MAX_PLANS


# --- where msgspec and orjson might read the same bytes differently ------------------------

def _insert(variant: str = "schema") -> tuple[dict, dict]:
    table = wide_table([int_type("int"), TiDBType("double"), varchar(20), TiDBType("varbinary", flen=8)])
    rec = encoded(variant, 1, table=table)[0]
    return orjson.loads(rec.value), orjson.loads(rec.key)


def _text(doc: dict) -> bytes:
    return orjson.dumps(doc)


def _same_as_reference(value: bytes, key: Optional[bytes], variant: str = "schema", declined: Optional[bool] = None):
    opts = options(variant)
    dec = new_decoder(opts)
    rec = record(value, key)
    assert decode_outcome(dec, rec) == reference(opts, rec)
    if declined is not None:
        assert (dec._fast.decode(rec) is None) is declined
    return decode_outcome(dec, rec)


def test_the_base_message_of_these_cases_is_accepted():
    value, key = _insert()
    _same_as_reference(_text(value), _text(key), declined=False)
    value, key = _insert("no-schema")
    _same_as_reference(_text(value), _text(key), "no-schema", declined=False)


# (text of the message, its replacement, whether the fast path declines with schema, without schema)
DISAGREEMENTS = [
    # duplicate keys: orjson keeps the last value (in the first key's place), so does msgspec
    (b'"op":"c"', b'"op":"d","op":"c"', False, False),
    (b'"c0":', b'"c0":17,"c0":', False, False),
    (b'"db":"fast"', b'"db":"other","db":"fast"', False, False),
    (b'"db":"fast"', b'"db":"\xff","db":"fast"', True, True),  # invalid UTF-8 in the value dropped
    (b'{"payload":', b'{"payload":{"x":"\xff"},"payload":', True, True),
    # strings: lone surrogate escapes, a valid pair, NUL, invalid and overlong UTF-8, a surrogate in UTF-8
    (b'"tag":"r0"', b'"tag":"\\ud800"', True, True),
    (b'"tag":"r0"', b'"tag":"\\udc00x"', True, True),
    (b'"tag":"r0"', b'"tag":"\\ud83d\\ude00\\u0000"', False, False),
    (b'"tag":"r0"', b'"tag":"\xff"', True, True),
    (b'"tag":"r0"', b'"tag":"\xc0\x80"', True, True),
    (b'"tag":"r0"', b'"tag":"\xed\xa0\x80"', True, True),
    (b'"version":"2.4.0.Final"', b'"version":"\xe4\xb8"', True, True),
    (b'"tag":"r0"', b'"t\xffg":"r0"', True, True),
    (b'"tag":"r0"', b'"tag":"r\x010"', True, True),  # a raw control character
    (b'"tag":"r0"', b'"tag":"r\x7f\\/0"', False, False),
    # integers beyond 64 bits (orjson: a double), -0, exponents, infinity, NaN
    (b'"c0":', b'"c0":18446744073709551616,"c0":', True, True),
    (b'"c1":', b'"c1":123456789012345678901234567890,"c1":', False, True),
    (b'"id":0', b'"id":-0', False, False),
    (b'"commit_ts":', b'"commit_ts":18446744073709551616,"x":', True, True),
    (b'"commit_ts":', b'"commit_ts":18446744073709551615,"x":', True, True),  # a uint64 above int64's
    (b'"ts_ms":', b'"ts_ms":1e400,"ts_ms":', True, True),
    (b'"ts_ms":', b'"ts_ms":NaN,"ts_ms":', True, True),
    (b'"ts_ms":', b'"ts_ms":18446744073709551616000,"ts_ms":', True, True),
    (b'"ts_ms":', b'"ts_ms":1' + b'0' * 400 + b',"ts_ms":', True, True),  # infinite as a double
    (b'"c1":', b'"c1":1' + b'0' * 400 + b',"c1":', True, True),
    (b'"commit_ts":', b'"commit_ts":1' + b'0' * 400 + b',"commit_ts":', True, True),
    (b'"ts_ms":', b'"ts_ms":9223372036854775807,"ts_ms":', False, False),
    (b'"ts_ms":', b'"ts_ms":-0.0,"ts_ms":', False, False),
    # unknown fields, anywhere (without schema a row may name any column)
    (b'{"payload":', b'{"extra":1,"payload":', True, True),
    (b'"op":"c"', b'"op":"c","extra":null', True, True),
    (b'"db":"fast"', b'"db":"fast","sequence":null', True, True),
    (b'"tag":"r0"', b'"tag":"r0","zz":1', True, False),
    # null vs missing (without schema nothing says a column is NOT NULL)
    (b'"before":null,', b'', False, False),
    (b'"transaction":null,', b'', False, False),
    (b'"tag":"r0"', b'"tag":null', True, False),
    (b'"tag":"r0",', b'', True, False),
    # nesting: deeper than orjson reads, and a depth it reads but in a field the fast path keeps scalar
    (b'"transaction":null', b'"transaction":' + b'[' * 2000 + b']' * 2000, True, True),
    (b'"transaction":null', b'"transaction":' + b'[' * 100 + b']' * 100, True, True),
    # layout: whitespace (the schema's envelope is only read unparsed in TiCDC's compact form)
    (b'{"payload":', b'{ "payload" :', True, False),
    (b'"op":"c"', b'"op" : "c"', False, False),
]


@pytest.mark.parametrize("variant", ["schema", "no-schema"])
@pytest.mark.parametrize("old,new,with_schema,without", DISAGREEMENTS)
def test_msgspec_and_orjson_disagreements_get_the_reference_answer(variant, old, new, with_schema, without):
    value, key = _insert(variant)
    text = _text(value)
    assert old in text
    _same_as_reference(text.replace(old, new, 1), _text(key), variant, with_schema if variant == "schema" else without)


def test_a_number_beyond_64_bits_in_a_double_column_reads_as_the_reference_reads_it():
    value, key = _insert()
    value["payload"]["after"]["c1"] = 0
    text = _text(value).replace(b'"c1":0', b'"c1":123456789012345678901234567890', 1)
    events = _same_as_reference(text, _text(key), declined=False)
    assert ("c1", "float", repr(1.2345678901234568e29)) in events[0][1]["after"]


def test_minus_zero_in_a_double_column_is_the_integer_zero_read_as_a_double():
    value, key = _insert()
    value["payload"]["after"]["c1"] = 5
    for wire, read in ((b"-0", "0.0"), (b"-0.0", "-0.0"), (b"0e0", "0.0"), (b"-1e-400", "-0.0")):
        events = _same_as_reference(_text(value).replace(b'"c1":5', b'"c1":' + wire, 1), _text(key), declined=False)
        assert ("c1", "float", read) in events[0][1]["after"]


def test_an_integer_beyond_int64_without_schema_is_left_to_the_reference():
    # orjson reads 2**63 as an int and 2**64 as a double; msgspec would read both as ints.
    value, key = _insert("no-schema")
    for wire in (b"9223372036854775808", b"18446744073709551616", b"-9223372036854775809"):
        text = _text(value).replace(b'"c0":', b'"c0":' + wire + b',"c0x":', 1)
        _same_as_reference(text, _text(key), "no-schema", declined=True)


@pytest.mark.parametrize("damage", [
    lambda v, k: (v + b" ", k),  # trailing whitespace
    lambda v, k: (v[:-1] + b',"schema":null}', k),  # a second schema, null
    lambda v, k: (v, None),  # no key
    lambda v, k: (v, k.replace(b'"id":', b'"id":1,"id":', 1)),
    lambda v, k: (v, k.replace(b'{"id":', b'{"x":1,"id":', 1)),
    lambda v, k: (v, k.replace(b'{"id":', b'{"id":1' + b'0' * 400 + b',"id":', 1)),
    lambda v, k: (v, k.replace(b'"optional":false', b'"optional":true', 1)),
    lambda v, k: (v, k.replace(b'"payload":{"id":0}', b'"payload":{}', 1)),
    lambda v, k: (v, b"[]"),
    lambda v, k: (v.replace(b'"fields":[', b'"fields":[{"field":"after"},', 1), k),  # an earlier 'after' descriptor
    lambda v, k: (v.replace(b'"field":"before"', b'"field":"b4"', 1), k),
])
def test_damaged_envelopes_and_keys_get_the_reference_answer(damage):
    value, key = _insert()
    v, k = damage(_text(value), _text(key))
    _same_as_reference(v, k)


def test_value_bytes_of_another_type_are_left_to_the_reference():
    value, key = _insert()
    for v in (bytearray(_text(value)), memoryview(_text(value)), _text(value).decode()):
        opts = options("schema")
        rec = record(v, _text(key))
        assert new_decoder(opts)._fast.decode(rec) is None
        assert decode_outcome(new_decoder(opts), rec) == reference(opts, rec)


def test_compressed_damage_gets_the_reference_answer():
    value, key = _insert()
    opts = options("snappy")
    for v in (b"\x05garbage", bytes(cramjam.snappy.compress_raw(_text(value)[:-1])),
              bytes(cramjam.snappy.compress_raw(_text(value)))):
        rec = record(v, bytes(cramjam.snappy.compress_raw(_text(key))))
        assert decode_outcome(new_decoder(opts), rec) == reference(opts, rec)


# --- damage at random ------------------------------------------------------------------------

_JUNK = [None, True, False, 0, -1, 1.5, 2**63, 2**64 - 1, -(2**63), "", "x", "c", "u", "d", "r", "m", [], {}, [1],
         {"a": 1}, "AAAA", "AA=", "2028-05-01", "int64", "string", "struct", "bigint unsigned"]


def _mutate(doc: Any, rng: random.Random) -> Any:
    """A copy of `doc` changed at a random depth: a value replaced, a field dropped or added, or the
    fields of an object reordered."""
    doc = copy.deepcopy(doc)
    node = doc
    while True:
        slot = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        inner = node[slot]
        if not (isinstance(inner, (dict, list)) and inner and rng.random() < 0.75):
            break
        node = inner
    change = rng.choice(["replace"] * 6 + (["drop", "add", "reorder"] if isinstance(node, dict) else []))
    if change == "drop":
        del node[slot]
    elif change == "add":
        node[rng.choice(["zz", "op", "before", "after", "commit_ts", "id", "c0"])] = copy.deepcopy(rng.choice(_JUNK))
    elif change == "reorder":
        reordered = sorted(node.items(), key=lambda _: rng.random())
        node.clear()
        node.update(reordered)
    else:
        node[slot] = copy.deepcopy(rng.choice(_JUNK))
    return doc


_BYTES = [b"\xff", b"\\ud800", b'"', b",", b"}", b"]", b"1e400", b"-0", b" ", b"\x00", b"NaN",
          b'"op":"c",', b'"id":1,', b'"schema":{},', b"18446744073709551616"]


def _damage_bytes(text: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(text) + 1)
    cut = rng.choice([0, 0, 1, 2])
    return text[:i] + rng.choice(_BYTES) + text[i + cut:]


@pytest.mark.parametrize("variant", ["schema", "no-extension", "no-schema", "no-old-value"])
def test_damaged_messages_get_the_reference_answer(variant):
    """Every result and every error reason equals the reference path's, with the table's plans warm."""
    rng = random.Random(11)
    opts = options(variant)
    dec = new_decoder(opts)
    base = encoded(variant, 9, table=wide_table([int_type("bigint", True), TiDBType("datetime", decimal=3),
                                                TiDBType("blob"), TiDBType("bit", flen=5), TiDBType("float")]))
    docs = [(orjson.loads(r.value), orjson.loads(r.key)) for r in base]
    for i in range(900):
        rec = base[i % len(base)]
        assert decode_outcome(dec, rec) == reference(opts, rec)  # keeps the plans of the valid schemas in use
        value, key = docs[i % len(docs)]
        if i % 3 == 0:
            damaged = record(_damage_bytes(rec.value, rng), rec.key, offset=rec.offset)
        elif i % 3 == 1:
            damaged = record(orjson.dumps(_mutate(value, rng)), rec.key, offset=rec.offset)
        else:
            damaged = record(rec.value, orjson.dumps(_mutate(key, rng)), offset=rec.offset)
        assert decode_outcome(dec, damaged) == reference(opts, damaged), (i, damaged.value[:300], damaged.key)
