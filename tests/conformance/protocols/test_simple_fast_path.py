"""The Simple JSON decoder's fast path (msgspec, per table schema version) gives exactly what the
reference path gives: the same events (values, their types, column order, key) and the same errors.

Every check decodes a message twice, with the decoder as it runs (fast path first) and with a decoder
whose fast path is off, both primed with the same schema messages, and compares the outcomes.
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import cramjam
import lz4.frame
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.helpers import assert_fast_matches_reference, decode_outcome, kafka_record
from ticdc_conformance.protocols.simple import new_decoder
from ticdc_conformance.protocols.simple._fast.decoder import PLANS
from ticdc_conformance.protocols.simple._fast.shapes import SHAPES_PER_TABLE
from ticdc_contract.record import KafkaRecord

from .test_simple_decoder import SMOKE_COLUMNS, SMOKE_ROWS, TYPE_CASES, Stream, column, dtype, pk, rec, smoke_wire

JSON = Stream("json")


class Pair:
    """A decoder with its fast path and one without, fed the same records."""

    def __init__(self, options: dict | None = None, *primers: bytes) -> None:
        opts = {"encoding-format": "json", **(options or {})}
        self.fast = new_decoder(opts)
        self.ref = new_decoder({**opts, "fast-path": False})
        self.offset = 0
        for value in primers:
            self.check(value)

    def check(self, value: bytes | None) -> bool:
        """Decodes `value` with both; asserts equal outcomes; says whether the fast path took it."""
        took = self.fast._fast.decode(value) is not None
        self.offset += 1
        assert_fast_matches_reference(self.fast, self.ref, rec(value, self.offset))
        return took


def smoke_pair(*more: bytes) -> Pair:
    return Pair(None, JSON.bootstrap(SMOKE_COLUMNS, [pk("id")]), *more)


def one_column(dt: dict, *more: bytes) -> Pair:
    return Pair(None, JSON.bootstrap([column("id", dtype("int"), nullable=False), column("c", dt)], [pk("id")]), *more)


def with_c(wire) -> bytes:
    return JSON.dml("INSERT", data={"id": "1", "c": wire})


# --- what TiCDC sends takes the fast path -------------------------------------------------------------
def test_ticdc_shaped_dml_takes_the_fast_path_in_one_step_and_in_two():
    pair = smoke_pair()
    wires = [smoke_wire("json", row) for row in SMOKE_ROWS]
    # The first row of a version is read in two steps and makes the version a union member.
    assert pair.check(JSON.dml("INSERT", data=wires[0])) and pair.fast._fast._union is not None
    for value in (JSON.dml("INSERT", data=wires[1]), JSON.dml("UPDATE", data=wires[2], old=wires[3]),
                  JSON.dml("DELETE", old=wires[0])):
        assert pair.check(value)
        assert pair.fast._fast._union.decode(value) is not None


@pytest.mark.parametrize("base", sorted(TYPE_CASES))
def test_every_type_takes_the_fast_path(base):
    dt, wire, _, _, _ = TYPE_CASES[base]
    pair = one_column(dt)
    assert pair.check(with_c(wire)) and pair.check(with_c(None))


EDGE_VALUES = {
    "tinyint": ["-128", "127", "0", "-0"], "bigint": ["-9223372036854775808", "9223372036854775807"],
    "double": ["0", "-0", "1e308", "-2.5E-300", "1.7976931348623157e308", "5e-324"],
    "decimal": ["0", "-0.0", "123456789012345678901234567890.123"], "date": ["0000-00-00", "9999-12-31"],
    "datetime": ["2020-02-20 02:20:20", "0000-00-00 00:00:00"], "time": ["00:00:00", "-838:59:59.000"],
    "binary": ["", "AA==", "AAE=", "/+/+"], "varchar": ["", "\\", '"', "\u0000", "😀", "null", "1e3"],
    "json": ["null", "[]", '{"a":1}'],
}


def _nullable(strategy):
    return st.one_of(st.none(), strategy)


SMOKE_WIRE = st.fixed_dictionaries({
    "id": st.integers(-(2**31), 2**31 - 1).map(str),
    "u": _nullable(st.integers(0, 2**64 - 1).map(str)),
    "v": _nullable(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)),
    "d": _nullable(st.from_regex(r"-?[0-9]{1,14}\.[0-9]{6}", fullmatch=True)),
    "dt": _nullable(st.datetimes().map(lambda t: f"{t.year:04d}-{t:%m-%d %H:%M:%S}.{t.microsecond // 1000:03d}")),
    "b": _nullable(st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode())),
    "n": _nullable(st.integers(-(2**31), 2**31 - 1).map(str)),
})


@settings(max_examples=200, deadline=None)
@given(op=st.sampled_from(["INSERT", "UPDATE", "DELETE"]), data=SMOKE_WIRE, old=SMOKE_WIRE)
def test_rows_of_any_values_take_the_fast_path(op, data, old):
    pair = smoke_pair()
    assert pair.check(JSON.dml(op, data=None if op == "DELETE" else data, old=None if op == "INSERT" else old))


@pytest.mark.parametrize("base", sorted(EDGE_VALUES))
def test_edge_values_agree(base):
    pair = one_column(TYPE_CASES[base][0])
    for wire in EDGE_VALUES[base]:
        assert pair.check(with_c(wire)), wire


def test_bigint_unsigned_past_the_signed_range():
    pair = one_column(dtype("bigint", length=20, unsigned=True))
    for wire in ("18446744073709551615", "9223372036854775808", "0"):
        assert pair.check(with_c(wire))


# --- what the fast path leaves to the reference path --------------------------------------------------
# Values the reference path refuses, or reads where msgspec would read them otherwise: each must
# come out as the reference path has it (an error, or its value).
TEXT_FORMS = {
    "int": ["1.0", "1e3", "1E3", "null", "007", "+1", " 1", "1_0", "١٢", "１", "-", "", "99999999999999999999999",
            "128", "-129"],
    "double": ["nan", "inf", "Infinity", "1e400", "-1e400", "007.5", ".5", "5.", "0x10", "1_0", "null", "+1"],
    "decimal": ["1e3", ".5", "5.", "-", "1.2.3", "+1", " 1", "١"],
    "datetime": ["2020-02-20T02:20:20", "2020-02-20 02:20:20.1234567", "2020-2-20 02:20:20", "２020-02-20 02:20:20"],
    "blob": ["QR==", "QUJ=", "ABCD==", "AB=C", "AQI", "A===", "AQID\n", "!!!!", "AQ-_"],
    "timestamp": [{"location": "UTC"}, {"location": "UTC", "value": "2020-01-01 00:00:00", "x": "y"},
                  {"location": 1, "value": "2020-01-01 00:00:00"}, "2020-01-01 00:00:00"],
    "varchar": [5, True, ["x"], {"x": "y"}],
}
TEXT_FORM_TYPES = {"int": dtype("tinyint"), "double": dtype("double"), "decimal": dtype("decimal", decimal=2),
                   "datetime": dtype("datetime"), "blob": dtype("blob"), "timestamp": dtype("timestamp"),
                   "varchar": dtype("varchar", "utf8mb4")}


@pytest.mark.parametrize("kind", sorted(TEXT_FORMS))
def test_forms_the_reference_refuses_or_reads_otherwise_agree(kind):
    pair = one_column(TEXT_FORM_TYPES[kind], with_c(None))
    for wire in TEXT_FORMS[kind]:
        pair.check(with_c(wire))


def test_a_known_shape_never_admits_a_value_of_another_form():
    # Warm a shape, then send values of the same length that differ in a non-digit character.
    pair = one_column(dtype("decimal", decimal=2), with_c("12.50"), with_c("99.99"))
    for wire in ("12a50", "12-50", "12.5 ", "1.2.5", "12\u0660.5"):
        assert not pair.check(with_c(wire)), wire


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["int", "double", "decimal", "datetime", "time", "date"]),
       text=st.text(alphabet="0123456789-.:eE+ a\\\"٣", max_size=24))
def test_any_text_in_a_text_form_column_agrees(kind, text):
    dt = {"int": dtype("bigint"), "double": dtype("double"), "decimal": dtype("decimal", decimal=3),
          "datetime": dtype("datetime", decimal=6), "time": dtype("time", decimal=3), "date": dtype("date")}[kind]
    pair = one_column(dt, with_c("1"), with_c("2020-01-01"), with_c("-12.5"))
    pair.check(with_c(text))


# JSON text msgspec and orjson (the reference path's parser) might read apart, written out by hand.
HEAD = (b'{"version":1,"database":"db","table":"t","tableID":7,"type":"INSERT","commitTs":500,"buildTs":1,'
        b'"schemaVersion":100')
DATA = b'"data":{"id":"1","c":"x"}'
PARSER_CASES = {
    "duplicate envelope key, same type": HEAD + b',"commitTs":600,' + DATA + b"}",
    "duplicate envelope key, other type": HEAD + b',"buildTs":"x","buildTs":2,' + DATA + b"}",
    "duplicate type": HEAD + b',"type":"DELETE","old":{"id":"1","c":"x"}}',
    "duplicate table": HEAD + b',"table":"u",' + DATA + b"}",
    "duplicate column, same type": HEAD + b',"data":{"id":"1","c":"x","c":"y"}}',
    "duplicate column, other type": HEAD + b',"data":{"id":"1","c":5,"c":"y"}}',
    "duplicate data": HEAD + b',"data":{"id":"1","c":"x"},"data":{"id":"2","c":"z"}}',
    "lone surrogate": HEAD + b',"data":{"id":"1","c":"\\ud800"}}',
    "reversed surrogates": HEAD + b',"data":{"id":"1","c":"\\udc00\\ud800"}}',
    "surrogate pair": HEAD + b',"data":{"id":"1","c":"\\ud83d\\ude00"}}',
    "escaped text": HEAD + b',"data":{"id":"\\u0031","c":"\\"\\\\\\/\\b\\f\\n\\r\\t"}}',
    "escaped key": HEAD + b',"data":{"\\u0069d":"1","c":"x"}}',
    "invalid utf-8": HEAD + b',"data":{"id":"1","c":"\xff"}}',
    "utf-8 surrogate": HEAD + b',"data":{"id":"1","c":"\xed\xa0\x80"}}',
    "control character": HEAD + b',"data":{"id":"1","c":"\x01"}}',
    "commitTs past 64 bits": HEAD.replace(b"500", b"18446744073709551616") + b"," + DATA + b"}",
    "commitTs at 2**64-1": HEAD.replace(b"500", b"18446744073709551615") + b"," + DATA + b"}",
    "commitTs at 2**63": HEAD.replace(b"500", b"9223372036854775808") + b"," + DATA + b"}",
    "tableID past 64 bits": HEAD.replace(b'"tableID":7', b'"tableID":99999999999999999999') + b"," + DATA + b"}",
    "buildTs below int64": HEAD.replace(b'"buildTs":1', b'"buildTs":-9223372036854775809') + b"," + DATA + b"}",
    "commitTs -0": HEAD.replace(b"500", b"-0") + b"," + DATA + b"}",
    "commitTs float": HEAD.replace(b"500", b"500.0") + b"," + DATA + b"}",
    "commitTs 1e400": HEAD.replace(b"500", b"1e400") + b"," + DATA + b"}",
    "commitTs NaN": HEAD.replace(b"500", b"NaN") + b"," + DATA + b"}",
    "version true": HEAD.replace(b'"version":1', b'"version":true') + b"," + DATA + b"}",
    "unknown envelope field": HEAD + b',"extra":{"a":[1]},' + DATA + b"}",
    "unknown column": HEAD + b',"data":{"id":"1","c":"x","ghost":"1"}}',
    "missing column": HEAD + b',"data":{"id":"1"}}',
    "schemaVersion null": HEAD.replace(b'"schemaVersion":100', b'"schemaVersion":null') + b"," + DATA + b"}",
    "schemaVersion missing": HEAD.replace(b',"schemaVersion":100', b"") + b"," + DATA + b"}",
    "tableID null": HEAD.replace(b'"tableID":7', b'"tableID":null') + b"," + DATA + b"}",
    "old null": HEAD + b',' + DATA + b',"old":null}',
    "data null": HEAD + b',"data":null}',
    "handleKeyOnly false": HEAD + b',"handleKeyOnly":false,' + DATA + b"}",
    "deep nesting": HEAD + b',"data":{"id":"1","c":' + b"[" * 5000 + b"]" * 5000 + b"}}",
    "unclosed nesting": HEAD + b',"data":{"id":"1","c":' + b"[" * 5000 + b"}}",
    "byte order mark": b"\xef\xbb\xbf" + HEAD + b"," + DATA + b"}",
    "whitespace": b" \n" + HEAD.replace(b",", b" , ") + b" , " + DATA + b" }\n",
    "trailing data": HEAD + b"," + DATA + b"}x",
    "trailing comma": HEAD + b"," + DATA + b",}",
}


# Of these, the ones valid in both parsers' reading that the fast path reads itself.
FAST_CASES = {"duplicate envelope key, same type", "duplicate type", "duplicate table", "duplicate column, same type",
              "duplicate data", "surrogate pair", "escaped text", "escaped key", "commitTs -0", "schemaVersion null",
              "schemaVersion missing", "tableID null", "old null", "whitespace", "missing column"}


@pytest.mark.parametrize("case", sorted(PARSER_CASES))
def test_json_the_two_parsers_might_read_apart_agrees(case):
    cols = [column("id", dtype("int")), column("c", dtype("varchar", "utf8mb4"))]
    # Tables for the cases that name another table or schema version 0.
    pair = Pair(None, JSON.bootstrap(cols, [pk("id")]), JSON.bootstrap(cols, [pk("id")], table="u"),
                JSON.bootstrap(cols, [pk("id")], version=0))
    assert pair.check(HEAD + b"," + DATA + b"}")  # the version is a union member from here on
    assert pair.check(PARSER_CASES[case]) == (case in FAST_CASES)


@settings(max_examples=400, deadline=None)
@given(pos=st.integers(min_value=0), byte=st.integers(0, 255), cut=st.booleans())
def test_damaged_messages_agree(pos, byte, cut):
    value = bytearray(JSON.dml("UPDATE", data=smoke_wire("json", SMOKE_ROWS[1]), old=smoke_wire("json", SMOKE_ROWS[2])))
    pos %= len(value)
    value[pos] = byte
    pair = smoke_pair(JSON.dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0])))
    pair.check(bytes(value[: pos + 1] if cut else value))


@pytest.mark.parametrize("tables", [1, 2])
@pytest.mark.parametrize("field", ["table", "database", "type", "commitTs", "buildTs", "version"])
def test_a_dml_without_a_required_field_is_refused_as_the_reference_refuses_it(field, tables):
    # Once the table's schema version is a union member, a DML that lost a required envelope field
    # must still be refused; the tag (`table`) was read as optional while the union had one member.
    cols = [column("id", dtype("int")), column("c", dtype("varchar", "utf8mb4"))]
    primers = [JSON.bootstrap(cols, [pk("id")], table=name) for name in ("t", "u")[:tables]]
    pair = Pair(None, *primers)
    full = JSON.dml("INSERT", data={"id": "1", "c": "x"})
    assert pair.check(full) and pair.check(full)  # read in two steps, then by the union
    damaged = json.loads(full)
    del damaged[field]
    assert not pair.check(orjson.dumps(damaged))
    assert decode_outcome(pair.ref, rec(orjson.dumps(damaged), 0))[0] == "DecodeError"


def test_a_dml_of_the_empty_table_name_is_left_to_the_reference_path():
    pair = smoke_pair(JSON.dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0])))
    assert not pair.check(JSON.dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0]), table=""))
    assert pair.fast.held_count == pair.ref.held_count == 1


def test_large_message_markers_and_checksums_are_left_to_the_reference_path():
    data = smoke_wire("json", SMOKE_ROWS[0])
    pair = smoke_pair(JSON.dml("INSERT", data=data))
    checksum = {"version": 0, "corrupted": False, "current": 1, "previous": 0}
    for extra in ({"handleKeyOnly": True}, {"checksum": checksum}):
        assert not pair.check(JSON.dml("INSERT", data=data, extra=extra))


def test_rows_of_an_unknown_version_wait_in_the_reference_path():
    pair = Pair()
    row = JSON.dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0]))
    assert not pair.check(row)
    assert pair.fast.held_count == pair.ref.held_count == 1
    pair.check(JSON.bootstrap(SMOKE_COLUMNS, [pk("id")]))
    assert pair.check(row)


def test_one_table_name_in_two_databases_and_two_versions():
    cols = [column("id", dtype("int")), column("c", dtype("varchar", "utf8mb4"))]
    other = json.loads(JSON.bootstrap(cols, [pk("id")]))
    other["tableSchema"]["schema"] = "db2"
    pair = Pair(None, JSON.bootstrap(cols, [pk("id")]), orjson.dumps(other), JSON.bootstrap(cols, [], version=101))
    rows = [JSON.dml("INSERT", data={"id": "1", "c": "x"}), JSON.dml("INSERT", data={"id": "2", "c": "y"}, version=101)]
    rows.append(rows[0].replace(b'"database":"db"', b'"database":"db2"'))
    for _ in range(2):
        for value in rows:
            assert pair.check(value)


def test_column_names_that_cannot_be_attributes():
    cols = [column(name, dt) for name, dt in [("my col", dtype("int")), ("1x", dtype("varchar", "utf8mb4")),
                                              ("__init__", dtype("blob")), ("名", dtype("decimal", decimal=1)),
                                              ("class", dtype("double"))]]
    pair = Pair(None, JSON.bootstrap(cols, [pk("1x")]))
    for _ in range(2):
        assert pair.check(JSON.dml("INSERT", data={"class": "1.5", "名": "2.5", "__init__": "AQ==", "1x": "k",
                                                   "my col": "-3"}))


def test_rows_that_leave_columns_out():
    # TiCDC leaves virtual generated columns out of its rows, and a column selector the columns it drops.
    cols = [column("id", dtype("int")), column("v", dtype("bigint")), column("c", dtype("varchar", "utf8mb4")),
            column("u", dtype("int"))]
    pair = Pair(None, JSON.bootstrap(cols, [pk("id"), {"name": "uk", "unique": True, "primary": False,
                                                      "nullable": False, "columns": ["u"]}]))
    without_v = {"id": "1", "c": "x", "u": "5"}
    for _ in range(2):
        assert pair.check(JSON.dml("UPDATE", data=without_v, old=dict(without_v, c="y")))
    assert pair.check(JSON.dml("INSERT", data=dict(without_v, v="7")))  # all columns again
    assert pair.check(JSON.dml("DELETE", old={"c": "x", "u": "5"}))  # the key falls back to the unique key
    # Images that carry different columns are the reference path's.
    assert not pair.check(JSON.dml("UPDATE", data=without_v, old=dict(without_v, v="7")))
    assert not pair.check(JSON.dml("INSERT", data=dict(without_v, ghost="1")))


def test_a_schema_version_past_int64_is_read_by_the_reference_path():
    pair = smoke_pair()
    pair.check(JSON.bootstrap(SMOKE_COLUMNS, [pk("id")], version=2**63))
    assert not pair.check(JSON.dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0]), version=2**63))


@pytest.mark.parametrize("codec", ["snappy", "lz4"])
def test_compressed_messages_take_the_fast_path(codec):
    pack = (lambda b: bytes(cramjam.snappy.compress_raw(b))) if codec == "snappy" else lz4.frame.compress
    pair = Pair({"large-message-handle-compression": codec}, pack(JSON.bootstrap(SMOKE_COLUMNS, [pk("id")])))
    for row in SMOKE_ROWS:
        assert pair.check(pack(JSON.dml("INSERT", data=smoke_wire("json", row))))
    assert not pair.check(b"\x00garbage")


def test_checking_checksums_turns_the_fast_path_off():
    assert new_decoder({"integrity-check-level": "correctness"})._fast is None
    assert new_decoder({"encoding-format": "avro"})._fast is None


def test_caches_are_bounded():
    cols = [column("id", dtype("bigint")), column("d", dtype("decimal", decimal=2))]
    pair = Pair()
    for i in range(PLANS + 5):
        pair.check(JSON.bootstrap(cols, [pk("id")], table=f"t{i}"))
        assert pair.check(JSON.dml("INSERT", data={"id": "1", "d": "1.5"}, table=f"t{i}"))
        assert len(pair.fast._fast._plans) <= PLANS
    plans = pair.fast._fast._plans
    [plan] = [p for p in plans.values() if p.table == f"t{PLANS + 4}"]
    for n in range(SHAPES_PER_TABLE + 5):
        assert pair.check(JSON.dml("INSERT", data={"id": "1" * (n % 19 + 1), "d": "9" * (n // 19 + 1) + ".5"},
                                   table=f"t{PLANS + 4}"))
        assert len(plan._shapes) <= SHAPES_PER_TABLE


def _golden_records(case: Path) -> list[KafkaRecord]:
    out = []
    for line in (case / "records.ndjson").read_text().splitlines():
        r = json.loads(line)
        value = None if r["value"] is None else base64.b64decode(r["value"])
        out.append(kafka_record(value, topic=r["topic"], partition=r["partition"], offset=r["offset"],
                                timestamp_ms=r["timestamp"]))
    return out


# A case folder holds case.json; golden/regressions/simple-json/ is a folder of cases, not one.
@pytest.mark.parametrize("case", sorted(f"{p.parent.parent.name}/{p.parent.name}"
                                        for p in (ROOT / "golden").glob("*/simple-json*/case.json")))
def test_the_golden_corpus_decodes_alike(case):
    spec = json.loads((ROOT / "golden" / case / "case.json").read_text())
    fast, ref = {}, {}
    for r in _golden_records(ROOT / "golden" / case):
        tp = (r.topic, r.partition)
        if tp not in fast:
            fast[tp], ref[tp] = new_decoder(spec["sink"]), new_decoder({**spec["sink"], "fast-path": False})
        assert_fast_matches_reference(fast[tp], ref[tp], r)
