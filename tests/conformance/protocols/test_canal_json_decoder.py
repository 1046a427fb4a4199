"""The reference Canal-JSON decoder against spec 003's examples, TiCDC-shaped messages and bad input."""
from __future__ import annotations

import base64
import copy
import struct
from functools import partial

import cramjam
import lz4.frame
import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import assert_decode_error, decodes_or_decode_error, kafka_record
from tests.spec_examples.corpus import spec_message
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.canal_json import (
    describe_event_fidelity,
    describe_fidelity,
    new_decoder,
    project_value,
)
from ticdc_contract.canonical import value_to_json
from ticdc_contract.tidb_types import ALL_BASE_TYPES, TiDBType, blob, datetime, decimal, int_type, varchar

TOPIC, PARTITION, OFFSET = "canal-topic", 2, 41
EXT = {"enable-tidb-extension": True}
COMMIT_TS = 429918007904436226

record = partial(kafka_record, topic=TOPIC, partition=PARTITION, offset=OFFSET, timestamp_ms=1639633094670)


def decode(value, options=EXT):
    return new_decoder(options).decode(record(value))


def rejects(value, pattern: str, options=EXT) -> DecodeError:
    return assert_decode_error(new_decoder(options), record(value), pattern, catch_all="unexpected")


# --- spec 003's own examples, from the spec example corpus (tests/spec_examples/) ----------------------

SPEC_DDL = orjson.dumps(spec_message("003-canal-ddl")).decode()
SPEC_INSERT = orjson.dumps(spec_message("003-canal-dml-insert")).decode()
SPEC_WATERMARK = orjson.dumps(spec_message("003-canal-watermark")).decode()

TP_INT_ROW = {"c_bigint": "9223372036854775807", "c_int": "0", "c_mediumint": "8388607",
              "c_smallint": "32767", "c_tinyint": "0", "id": "2"}
TP_INT_AFTER = {"c_bigint": 9223372036854775807, "c_int": 0, "c_mediumint": 8388607,
                "c_smallint": 32767, "c_tinyint": 0, "id": 2}
TP_INT_BEFORE = dict(TP_INT_AFTER, c_int=2147483647, c_tinyint=127)


def tp_int_message(kind: str, data: list, old) -> dict:
    msg = orjson.loads(SPEC_INSERT)
    msg.update(type=kind, data=data, old=old)
    return msg


def test_spec_ddl_example():
    assert decode(SPEC_DDL.encode()) == [DecodedDDL(
        commit_ts=COMMIT_TS, schema="test", table="", query="drop database if exists test", ddl_type="QUERY")]


def test_spec_insert_example():
    assert decode(SPEC_INSERT.encode()) == [DecodedRow(
        schema="test", table="tp_int", op="insert", commit_ts=COMMIT_TS,
        after={"c_bigint": 9223372036854775807, "c_int": 2147483647, "c_mediumint": 8388607,
               "c_smallint": 32767, "c_tinyint": 127, "id": 2},
        before=None, key_columns=("id",))]


def test_spec_watermark_example():
    assert decode(SPEC_WATERMARK.encode()) == [DecodedWatermark(ts=COMMIT_TS)]


def test_spec_update_with_full_old():
    old = {"c_bigint": "9223372036854775807", "c_int": "2147483647", "c_mediumint": "8388607",
           "c_smallint": "32767", "c_tinyint": "127", "id": "2"}
    [row] = decode(tp_int_message("UPDATE", [TP_INT_ROW], [old]))
    assert (row.op, row.after, row.before) == ("update", TP_INT_AFTER, TP_INT_BEFORE)


@pytest.mark.parametrize("options", [
    dict(EXT, **{"only-output-updated-columns": True}),
    dict(EXT, **{"content-compatible": True}),
])
def test_spec_update_with_only_changed_columns(options):
    # Spec 003's official-Canal form: old names just the modified columns.
    msg = tp_int_message("UPDATE", [TP_INT_ROW], [{"c_int": "2147483647", "c_tinyint": "127"}])
    [row] = decode(msg, options)
    assert row.before == TP_INT_BEFORE
    assert list(row.before) == list(TP_INT_ROW)  # table order of data, not of old


def test_update_with_nothing_changed_keeps_after_as_before():
    [row] = decode(tp_int_message("UPDATE", [TP_INT_ROW], [{}]), dict(EXT, **{"content-compatible": True}))
    assert row.before == row.after == TP_INT_AFTER


@pytest.mark.parametrize("old", [None, [TP_INT_ROW]], ids=["v5.4+", "before-v5.4"])
def test_spec_delete_old_field_both_versions(old):
    [row] = decode(tp_int_message("DELETE", [TP_INT_ROW], old))
    assert (row.op, row.after, row.before, row.key_columns) == ("delete", None, TP_INT_AFTER, ("id",))


def test_spec_binary_example():
    # Spec 003 "Example of the encoding": 16 bytes in a VARBINARY column.
    raw = [5, 7, 10, 15, 36, 50, 43, 99, 120, 60, 38, 255, 254, 45, 55, 70]
    text = '"\\u0005\\u0007\\n\\u000f$2+cx\\u003c\\u0026\xff\xfe-7F"'
    value = ('{"database":"d","table":"t","pkNames":null,"isDdl":false,"type":"UPDATE",'
             '"sqlType":{"c_varbinary":2004},"mysqlType":{"c_varbinary":"varbinary"},'
             f'"data":[{{"c_varbinary":{text}}}],"old":[{{"c_varbinary":{text}}}],'
             '"_tidb":{"commitTs":1}}').encode("utf-8")
    [row] = decode(value)
    assert base64.b64decode(row.after["c_varbinary"]) == bytes(raw)
    assert row.key_columns == ()


def test_spec_content_compatible_mysql_types():
    # Spec 003's table t with TiCDC's value texts (enum index, set bitmask, bit as an integer).
    msg = {
        "database": "test", "table": "t", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "sqlType": {"id": 4, "c_decimal": 3, "c_char": 1, "c_varchar": 12, "c_binary": 2004,
                    "c_varbinary": 2004, "c_enum": 4, "c_set": -7, "c_bit": -7},
        "mysqlType": {"id": "int", "c_decimal": "decimal(10, 4)", "c_char": "char(16)",
                      "c_varchar": "varchar(16)", "c_binary": "binary(16)", "c_varbinary": "varbinary(16)",
                      "c_enum": "enum('a','b','c')", "c_set": "set('a','b','c')", "c_bit": "bit(64)"},
        "data": [{"id": "1", "c_decimal": "123.4560", "c_char": "abc", "c_varchar": "abc",
                  "c_binary": "abc" + "\0" * 13, "c_varbinary": "abc", "c_enum": "1", "c_set": "3",
                  "c_bit": "65"}],
        "old": None, "_tidb": {"commitTs": 7},
    }
    options = dict(EXT, **{"content-compatible": True})
    [row] = decode(msg, options)
    assert row.after == {"id": 1, "c_decimal": "123.4560", "c_char": "abc", "c_varchar": "abc",
                         "c_binary": base64.b64encode(b"abc" + bytes(13)).decode(),
                         "c_varbinary": base64.b64encode(b"abc").decode(),
                         "c_enum": "a", "c_set": "a,b", "c_bit": 65}
    # The bare default-mode names cannot name the members: the numbers come through.
    plain = copy.deepcopy(msg)
    plain["mysqlType"].update(c_enum="enum", c_set="set", c_decimal="decimal", c_bit="bit")
    [row] = decode(plain)
    assert (row.after["c_enum"], row.after["c_set"]) == (1, 3)


def test_enum_members_with_quotes_and_escapes():
    msg = _single_column_message("e", "enum('it''s','a,b','x\\ny','')", 4, "2")
    assert decode(msg)[0].after["e"] == "a,b"
    msg["data"][0]["e"] = "1"
    assert decode(msg)[0].after["e"] == "it's"
    msg["data"][0]["e"] = "3"
    assert decode(msg)[0].after["e"] == "x\ny"
    msg["data"][0]["e"] = "0"
    assert decode(msg)[0].after["e"] == ""


def test_without_tidb_extension_commit_ts_is_absent():
    msg = orjson.loads(SPEC_INSERT)
    del msg["_tidb"]
    [row] = decode(msg, {})
    assert row.commit_ts is None
    [ddl] = decode(orjson.loads(SPEC_DDL), {"enable-tidb-extension": False})
    assert ddl.commit_ts is None
    assert describe_event_fidelity({})["commit_ts"][0] == "absent"
    assert describe_event_fidelity(EXT)["commit_ts"][0] == "exact"


def test_several_rows_in_one_message_decode_in_order():
    rows = [dict(TP_INT_ROW, id=str(i)) for i in (5, 6, 7)]
    olds = [{"c_int": "1"}, {"c_int": "2"}, {"c_int": "3"}]
    out = decode(tp_int_message("UPDATE", rows, olds), dict(EXT, **{"only-output-updated-columns": True}))
    assert [(r.after["id"], r.before["c_int"]) for r in out] == [(5, 1), (6, 2), (7, 3)]


def test_record_key_and_headers_are_not_read():
    rec = record(SPEC_INSERT.encode(), b"any key", timestamp_ms=0, headers=(("h", b"v"),))
    assert new_decoder(EXT).decode(rec) == decode(SPEC_INSERT.encode())


def test_registered_under_the_protocol_name():
    assert protocol_spec("canal-json").new_decoder is new_decoder


# --- TiCDC-shaped messages for the smoke types and every base type --------------------------------

# spec 003 "SQL Type field" / "Integer types", keyed by TiDB type name.
_JAVA = {"tinyint": -6, "smallint": 5, "mediumint": 4, "int": 4, "bigint": -5, "float": 7, "double": 8,
         "decimal": 3, "char": 1, "varchar": 12, "tinytext": 2005, "text": 2005, "mediumtext": 2005,
         "longtext": 2005, "binary": 2004, "varbinary": 2004, "tinyblob": 2004, "blob": 2004,
         "mediumblob": 2004, "longblob": 2004, "date": 91, "datetime": 93, "timestamp": 93, "time": 92,
         "year": 12, "enum": 4, "set": -7, "bit": -7, "json": 12}
_PROMOTED = {"tinyint": (127, 5), "smallint": (32767, 4), "int": (2147483647, -5), "bigint": (2**63 - 1, 3)}


def sql_type_of(t: TiDBType, value) -> int:
    if t.unsigned and t.base in _PROMOTED and value is not None and value > _PROMOTED[t.base][0]:
        return _PROMOTED[t.base][1]
    return _JAVA[t.base]


def mysql_type_of(t: TiDBType, full: bool) -> str:
    suffix = " unsigned" if t.unsigned and t.base not in ("bit", "year") else ""
    if not full:
        return t.base + suffix
    if t.base in ("enum", "set"):
        return t.base + "(" + ",".join("'" + e.replace("'", "''") + "'" for e in t.elements) + ")"
    if t.base == "decimal":
        return f"decimal({t.effective_flen},{t.scale}){suffix}"
    if t.base in ("datetime", "timestamp", "time"):
        return f"{t.base}({t.fsp})" if t.fsp else t.base
    if t.is_integer or t.base in ("char", "varchar", "binary", "varbinary", "bit"):
        return f"{t.base}({t.effective_flen}){suffix}"
    return t.base + suffix


def text_of(t: TiDBType, value):
    """How TiCDC prints a canonical Python value (pkg/sink/codec/canal/helper.go formatColumnValue)."""
    if value is None:
        return None
    if t.is_binary:
        return value.decode("latin-1")
    if t.base == "float":
        return np.format_float_positional(np.float32(value), unique=True, trim="-")
    if t.base == "double":
        return np.format_float_positional(np.float64(value), unique=True, trim="-")
    if t.base == "enum":
        return str(t.elements.index(value) + 1 if value in t.elements else 0)
    if t.base == "set":
        return str(sum(1 << t.elements.index(m) for m in value.split(",")) if value else 0)
    return str(value)


def ticdc_message(columns: list[tuple[str, TiDBType]], after: dict, kind="INSERT", before=None,
                  pk=("id",), full=False, commit_ts=COMMIT_TS) -> dict:
    shown = before if kind == "DELETE" else after
    return {
        "id": 0, "database": "smoke", "table": "t", "pkNames": list(pk) or None, "isDdl": False,
        "type": kind, "es": commit_ts >> 18, "ts": commit_ts >> 18, "sql": "",
        "sqlType": {n: sql_type_of(t, shown[n]) for n, t in columns},
        "mysqlType": {n: mysql_type_of(t, full) for n, t in columns},
        "old": None if kind != "UPDATE" else [{n: text_of(t, before[n]) for n, t in columns}],
        "data": [{n: text_of(t, shown[n]) for n, t in columns}],
        "_tidb": {"commitTs": commit_ts},
    }


SMOKE_COLUMNS = [
    ("id", int_type("int")),
    ("u64", int_type("bigint", unsigned=True)),
    ("name", varchar(64)),
    ("amount", decimal(20, 6)),
    ("at", datetime(3)),
    ("payload", blob()),
    ("maybe", varchar(10)),
]
ALL_BYTES = bytes(range(256))


@pytest.mark.parametrize("full", [False, True], ids=["default", "content-compatible"])
def test_smoke_types_round_trip(full):
    after = {"id": -7, "u64": 18446744073709551615, "name": "Grüße, 世界 🚀", "amount": "-12345678901234.500000",
             "at": "2023-11-30 12:34:56.120", "payload": ALL_BYTES, "maybe": None}
    before = dict(after, u64=9223372036854775807, payload=ALL_BYTES[::-1], maybe="was set")
    options = dict(EXT, **{"content-compatible": full})
    msg = ticdc_message(SMOKE_COLUMNS, after, "UPDATE", before, full=full)
    assert msg["sqlType"]["u64"] == 3  # above the signed range: DECIMAL (spec 003 Integer types)
    [row] = decode(orjson.dumps(msg), options)
    types = dict(SMOKE_COLUMNS)
    assert row.after == {n: value_to_json(types[n], v) for n, v in after.items()}
    assert row.before == {n: value_to_json(types[n], v) for n, v in before.items()}
    assert base64.b64decode(row.after["payload"]) == ALL_BYTES
    assert row.commit_ts == COMMIT_TS and row.key_columns == ("id",)


def test_varchar_primary_key_with_non_ascii_text():
    cols = [("k", varchar(32)), ("v", int_type("int"))]
    msg = ticdc_message(cols, None, "DELETE", {"k": "ключ-キー", "v": None}, pk=("k",))
    [row] = decode(msg)
    assert (row.op, row.before, row.key_columns) == ("delete", {"k": "ключ-キー", "v": None}, ("k",))


def test_delete_only_handle_key_columns():
    options = dict(EXT, **{"delete-only-output-handle-key-columns": True})
    msg = ticdc_message([("id", int_type("int"))], None, "DELETE", {"id": 9})
    [row] = decode(msg, options)
    assert row.before == {"id": 9}
    assert describe_event_fidelity(options)["delete.before"][0] == "lossy"


@pytest.mark.parametrize("marker,missing", [({"onlyHandleKey": True}, r"needs an upstream snapshot lookup"),
                                            ({"claimCheckLocation": "s3://bucket/a.json"}, r"needs the claim-check")])
def test_large_message_placeholders_need_their_source(marker, missing):
    # TiCDC canal_json_encoder.go: an oversized row is re-encoded with its handle-key columns only; the
    # rest lives upstream or in claim-check storage, so without either the row cannot be decoded.
    # tests/conformance/protocols/test_large_message_decoders.py decodes them with both.
    options = dict(EXT, **{"large-message-handle-option": "handle-key-only"})
    msg = ticdc_message([("id", int_type("int"))], {"id": 3}, "UPDATE", {"id": 3})
    msg["_tidb"].update(marker)
    rejects(msg, missing, options)
    assert describe_event_fidelity(options)["oversized.row"][0] == "exact"


def _sample(base: str) -> tuple[TiDBType, list]:
    """A type of every base with values that probe its edges, as the model holds them."""
    if base in ("tinyint", "smallint", "mediumint", "int", "bigint"):
        signed, unsigned = TiDBType(base), TiDBType(base, unsigned=True)
        return signed, [*signed.int_range, 0, None], unsigned, [*unsigned.int_range, unsigned.int_range[1] // 2 + 1]
    samples = {
        "float": (TiDBType("float"), [3.14, -0.0, 1.0000001, 3.4028234663852886e38, 1e-45, 16777217.0, None]),
        "double": (TiDBType("double"), [0.1, -1e300, 5e-324, 1 / 3, 2.0**63, None]),
        "decimal": (decimal(20, 6), ["0.000000", "-99999999999999.999999", "12.500000", None]),
        "char": (TiDBType("char", flen=4), ["", "ab", "é", None]),
        "varchar": (varchar(20), ["x\u0000y", "\"quoted\" \\ back", "😀", None]),
        "tinytext": (TiDBType("tinytext"), ["t", None]),
        "text": (TiDBType("text"), ["line1\nline2", None]),
        "mediumtext": (TiDBType("mediumtext"), ["m" * 300, None]),
        "longtext": (TiDBType("longtext"), ["<&>", None]),
        "binary": (TiDBType("binary", flen=4), [b"\x00\x01\xfe\xff", None]),
        "varbinary": (TiDBType("varbinary", flen=300), [ALL_BYTES, b"", None]),
        "tinyblob": (TiDBType("tinyblob"), [b"<&>\x7f\x80", None]),
        "blob": (blob(), [ALL_BYTES, None]),
        "mediumblob": (TiDBType("mediumblob"), [b"\xc3\xa9", None]),
        "longblob": (TiDBType("longblob"), [b"\x00" * 10, None]),
        "date": (TiDBType("date"), ["2024-02-29", "0000-00-00", None]),
        "datetime": (datetime(6), ["2023-11-30 12:34:56.000001", None]),
        "timestamp": (TiDBType("timestamp", decimal=2), ["1970-01-01 00:00:01.50", None]),
        "time": (TiDBType("time", decimal=1), ["-838:59:59.0", "00:00:00.5", None]),
        "year": (TiDBType("year"), [1901, 2155, 0, None]),
        "enum": (TiDBType("enum", elements=("a", "it's", "ü")), ["a", "it's", "ü", "", None]),
        "set": (TiDBType("set", elements=("x", "y", "z")), ["", "x", "x,z", "x,y,z", None]),
        "bit": (TiDBType("bit", flen=64), [0, 1, 2**64 - 1, None]),
        "json": (TiDBType("json"), ['{"a": [1, 2.5, "x"]}', "null", "18446744073709551615", None]),
    }
    return samples[base]


def _typed_samples():
    for base in ALL_BASE_TYPES:
        sample = _sample(base)
        for i in range(0, len(sample), 2):
            yield pytest.param(sample[i], sample[i + 1], id=f"{sample[i].sql()}")


@pytest.mark.parametrize("full", [False, True], ids=["default", "content-compatible"])
@pytest.mark.parametrize("t,values", list(_typed_samples()))
def test_project_value_agrees_with_decoder(t, values, full):
    options = dict(EXT, **{"content-compatible": full})
    cols = [("id", int_type("int")), ("c", t)]
    for v in values:
        [row] = decode(ticdc_message(cols, {"id": 1, "c": v}, full=full), options)
        expected = project_value(t, value_to_json(t, v), options)
        assert row.after["c"] == expected, (t, v)
        assert type(row.after["c"]) is type(expected)
        kind, why = describe_fidelity(t, options)
        assert kind in ("exact", "lossy", "absent") and "spec 003" in why
        if kind == "exact":
            assert expected == value_to_json(t, v)


def test_float_fidelity_is_float32():
    t = TiDBType("float")
    assert project_value(t, 0.1, {}) == 0.1  # float32(0.1) prints as "0.1"
    assert project_value(t, 16777217.0, {}) == 16777216.0
    assert project_value(t, 0.1000000000001, {}) == 0.1  # below float32 resolution: lost
    assert describe_fidelity(t, {})[0] == "lossy"
    assert describe_fidelity(TiDBType("double"), {})[0] == "exact"


def test_float_fidelity_at_a_power_of_two_follows_go():
    # float32 2**-96: Go prints the 8 digits 1.2621775e-29, which lie in the wider gap above it; the
    # nearest 8-digit decimal (1.2621774e-29) falls outside the narrower gap below, so a nearest-digits
    # search would need a ninth digit (1.26217745e-29) and miss what a consumer reads.
    go_text = "0.000000000000000000000000000012621775"  # strconv.FormatFloat(2**-96, 'f', -1, 32)
    assert project_value(TiDBType("float"), 2.0**-96, {}) == float(go_text)


def test_enum_set_fidelity_depends_on_content_compatible():
    e = TiDBType("enum", elements=("a", "b"))
    assert project_value(e, "b", {}) == 2
    assert project_value(e, "b", {"content-compatible": "true"}) == "b"
    assert describe_fidelity(e, {})[0] == "lossy"
    assert describe_fidelity(e, {"content-compatible": True})[0] == "exact"


# --- compression (large-message-handle-compression) ------------------------------------------------

def test_snappy_and_lz4_values():
    value = SPEC_INSERT.encode()
    expected = decode(value)
    assert decode(bytes(cramjam.snappy.compress_raw(value)),
                  dict(EXT, **{"large-message-handle-compression": "snappy"})) == expected
    assert decode(lz4.frame.compress(value), dict(EXT, **{"large-message-handle-compression": "lz4"})) == expected


def test_compression_rejections():
    snappy = dict(EXT, **{"large-message-handle-compression": "snappy"})
    rejects(b"\xff\xff\xff\xff\x0f\x00abc", r"claims 4294967295 bytes", snappy)
    rejects(b"\x05\x00abc", r"snappy", snappy)
    rejects(b"\xff\xff\xff\xff\xff\xff", r"unterminated length", snappy)
    lz4opt = dict(EXT, **{"large-message-handle-compression": "lz4"})
    frame = lz4.frame.compress(SPEC_INSERT.encode())
    rejects(frame[:-6], r"lz4: truncated", lz4opt)
    rejects(frame + b"junk", r"lz4: bytes after", lz4opt)
    rejects(b"not a frame", r"lz4", lz4opt)


# --- malformed input: every class raises DecodeError naming the record ----------------------------

def _single_column_message(name: str, mysql_type: str, sql_type: int, value) -> dict:
    return {"database": "d", "table": "t", "pkNames": None, "isDdl": False, "type": "INSERT",
            "sqlType": {name: sql_type}, "mysqlType": {name: mysql_type}, "data": [{name: value}],
            "old": None, "_tidb": {"commitTs": 1}}


def _with(base: dict, path: tuple, value) -> dict:
    msg = copy.deepcopy(base)
    target = msg
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return msg


_DELETE = object()
INSERT = orjson.loads(SPEC_INSERT)


@pytest.mark.parametrize("value,pattern", [
    (None, r"empty record value"),
    (b"", r"empty record value"),
    (b"{not json", r"not JSON"),
    (SPEC_INSERT.encode()[:-5], r"not JSON"),
    (SPEC_INSERT.encode() + b"{}", r"not JSON"),
    (b'{"isDdl": false, "type": "INSERT", "x": "\xff"}', r"not JSON"),
    (b"[1, 2]", r"must be a JSON object"),
    (b'"text"', r"must be a JSON object"),
], ids=["none", "empty", "garbage", "truncated", "trailing", "bad-utf8", "array", "string"])
def test_rejects_non_json(value, pattern):
    rejects(value, pattern)


@pytest.mark.parametrize("path,value,pattern", [
    (("isDdl",), _DELETE, r"missing field 'isDdl'"),
    (("isDdl",), "false", r"'isDdl' must be a boolean"),
    (("type",), _DELETE, r"missing field 'type'"),
    (("type",), 3, r"'type' must be a string"),
    (("type",), "UPSERT", r"unknown event type 'UPSERT'"),
    (("es",), "1639633141221", r"'es' must be an integer"),
    (("id",), True, r"'id' must be an integer"),
    (("database",), _DELETE, r"missing field 'database'"),
    (("table",), None, r"'table' must be a string"),
    (("pkNames",), _DELETE, r"missing field 'pkNames'"),
    (("pkNames",), "id", r"'pkNames' must be an array"),
    (("pkNames",), [1], r"pkNames must hold column names"),
    (("mysqlType",), None, r"'mysqlType' must be an object"),
    (("sqlType",), _DELETE, r"missing field 'sqlType'"),
    (("data",), _DELETE, r"missing field 'data'"),
    (("data",), None, r"data must hold at least one row"),
    (("data",), [], r"data must hold at least one row"),
    (("data",), {"id": "2"}, r"'data' must be an array"),
    (("data", 0), "row", r"a row must be an object"),
    (("old",), _DELETE, r"missing field 'old'"),
    (("old",), [TP_INT_ROW], r"old must be null on INSERT"),
    (("data", 0, "c_int"), 5, r"must be a JSON string or null, got int"),
    (("data", 0, "c_int"), "abc", r"'abc' is not a int value"),
    (("data", 0, "c_int"), "1.5", r"is not a int value"),
    (("data", 0, "c_int"), "2147483648", r"outside \[-2147483648, 2147483647\]"),
    (("data", 0, "c_int"), "١٢", r"is not a int value"),  # non-ASCII digits int() would take
    (("data", 0, "c_int"), "1_000", r"is not a int value"),
    (("data", 0, "c_int"), " 7", r"is not a int value"),
    (("data", 0, "c_tinyint"), "9" * 5000, r"is not a tinyint value"),
    (("data", 0, "extra"), "1", r"column 'extra' has no mysqlType"),
    (("mysqlType", "extra"), "int", r"sqlType and mysqlType describe different columns"),
    (("mysqlType", "c_int"), "int(", r"not a MySQL column type"),
    (("mysqlType", "c_int"), "int(a)", r"malformed parameters"),
    (("mysqlType", "c_int"), 4, r"mysqlType of 'c_int' must be a string"),
    (("sqlType", "c_int"), "4", r"must be a java.sql.Types code"),
    (("sqlType", "c_int"), True, r"must be a java.sql.Types code"),
    (("sqlType", "c_int"), 12, r"'c_int' of mysqlType 'int' has sqlType 12, spec 003 gives 4"),
    (("_tidb",), _DELETE, r"missing field '_tidb'"),
    (("_tidb",), 5, r"'_tidb' must be an object"),
    (("_tidb", "commitTs"), _DELETE, r"missing field 'commitTs'"),
    (("_tidb", "commitTs"), "429918007904436226", r"'commitTs' must be an unsigned 64-bit integer"),
    (("_tidb", "commitTs"), -1, r"'commitTs' must be an unsigned 64-bit integer"),
    (("_tidb", "onlyHandleKey"), "yes", r"'onlyHandleKey' must be a bool"),
    (("_tidb", "claimCheckLocation"), 3, r"'claimCheckLocation' must be a str"),
])
def test_rejects_malformed_fields(path, value, pattern):
    rejects(_with(INSERT, path, value), pattern)


def test_missing_column_value_is_rejected():
    rejects(_with(INSERT, ("data", 0, "c_int"), _DELETE), r"column 'c_int' is described but has no value")


@pytest.mark.parametrize("mysql_type,sql_type,value,pattern", [
    ("bigint unsigned", 3, "18446744073709551616", r"outside \[0, 18446744073709551615\]"),
    ("bigint unsigned", -5, "-1", r"outside"),
    ("bigint unsigned", -5, "18446744073709551615", r"has sqlType -5, spec 003 gives 3"),
    ("tinyint unsigned", -6, "200", r"has sqlType -6, spec 003 gives 5"),
    ("float", 7, "abc", r"not a float value"),
    ("double", 8, "1e999", r"not finite"),
    ("double", 8, "NaN", r"not a double value"),
    ("decimal", 3, "1e5", r"not a decimal value"),
    ("decimal", 3, "1." + "0" * 80, r"not a decimal value"),
    ("decimal(10,4)", 3, "1.25", r"scale is 4"),
    ("decimal(10)", 3, "1.5", r"scale is 0"),
    ("datetime", 93, "2023-11-30T12:34:56", r"not a datetime value"),
    ("datetime(3)", 93, "2023-11-30 12:34:56.12", r"fsp is 3"),
    ("timestamp", 93, "yesterday", r"not a timestamp value"),
    ("date", 91, "2023-11-30 00:00:00", r"not a date value"),
    ("time", 92, "12:00", r"not a time value"),
    ("year", 12, "2156", r"not a year value"),
    ("bit(3)", -7, "8", r"above 7"),
    ("bit(65)", -7, "8", r"BIT width 65"),
    ("bit", -7, "-1", r"not a bit value"),
    ("enum", 4, "a", r"not a enum value"),
    ("enum('a','b')", 4, "3", r"above 2"),
    ("enum('a','b)", 4, "1", r"unterminated ENUM/SET member"),
    ("enum(a)", 4, "1", r"member is not quoted"),
    ("enum('a' 'b')", 4, "1", r"not comma separated"),
    ("set('a','b')", -7, "4", r"above 3"),
    ("set", -7, "a,b", r"not a set value"),
    ("json", 12, "{bad json", r"not a json value"),
    ("varbinary", 2004, "ok\u0100", r"U\+0100 is not a byte"),
    ("blob", 2004, "\U0001F600", r"is not a byte"),
    ("blob", 2005, "x", r"has sqlType 2005, spec 003 gives 2004"),
    ("text", 2004, "x", r"has sqlType 2004, spec 003 gives 2005"),
])
def test_rejects_value_that_does_not_fit_its_type(mysql_type, sql_type, value, pattern):
    rejects(_single_column_message("c", mysql_type, sql_type, value), pattern)


def test_rejects_old_data_mismatch():
    rejects(tp_int_message("UPDATE", [TP_INT_ROW], [TP_INT_ROW, TP_INT_ROW]), r"old has 2 rows but data has 1")
    rejects(tp_int_message("UPDATE", [TP_INT_ROW], [{"nope": "1"}]), r"column 'nope' has no mysqlType")
    rejects(tp_int_message("UPDATE", [TP_INT_ROW], ["x"]), r"old\[0\]: a row must be an object")
    rejects(tp_int_message("UPDATE", [TP_INT_ROW], [{"c_int": "x"}]), r"'x' is not a int value")
    rejects(tp_int_message("DELETE", [TP_INT_ROW], [dict(TP_INT_ROW, c_int="5")]), r"copy of data")


def test_rejects_bad_ddl_and_watermark():
    ddl = orjson.loads(SPEC_DDL)
    rejects(_with(ddl, ("type",), "INSERT"), r"unknown DDL type 'INSERT'")
    rejects(_with(ddl, ("sql",), None), r"'sql' must be a string")
    rejects(_with(ddl, ("_tidb", "commitTs"), 1.5), r"'commitTs' must be an unsigned 64-bit integer")
    wm = orjson.loads(SPEC_WATERMARK)
    rejects(_with(wm, ("_tidb",), {}), r"missing field 'watermarkTs'")
    too_big = SPEC_WATERMARK.replace("429918007904436226", "18446744073709551616").encode()
    rejects(too_big, r"'watermarkTs' must be an unsigned 64-bit integer")
    rejects(wm, r"TIDB_WATERMARK without enable-tidb-extension", {})


def test_bad_options_are_a_configuration_error():
    with pytest.raises(ValueError):
        new_decoder({"enable-tidb-extension": "maybe"})
    with pytest.raises(ValueError):
        new_decoder({"large-message-handle-compression": "zstd"})


# --- fuzz: nothing but DecodeError escapes, and never through the catch-all -------------------------

@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["none", "snappy", "lz4"]))
def test_arbitrary_bytes_raise_only_decode_error(value, codec):
    decodes_or_decode_error(new_decoder(dict(EXT, **{"large-message-handle-compression": codec})), record(value),
                            catch_all="unexpected")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_PATHS = [(), ("_tidb",), ("data",), ("data", 0), ("mysqlType",), ("sqlType",), ("old",)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([SPEC_INSERT, SPEC_DDL, SPEC_WATERMARK]), st.sampled_from(_PATHS),
       st.one_of(st.sampled_from(sorted(INSERT)), st.sampled_from(sorted(TP_INT_ROW)), st.text(max_size=6)),
       json_values, st.booleans())
def test_mutated_messages_raise_only_decode_error(base, parent, key, value, extension):
    msg = orjson.loads(base)
    target = msg
    for step in parent:
        if isinstance(target, dict) and isinstance(step, str) and isinstance(target.get(step), (dict, list)):
            target = target[step]
        elif isinstance(target, list) and isinstance(step, int) and step < len(target):
            target = target[step]
    if isinstance(target, dict):
        target[key] = value
    elif isinstance(target, list):
        target.append(value)
    decodes_or_decode_error(new_decoder({"enable-tidb-extension": extension}), record(msg), catch_all="unexpected")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**64 - 1), st.text(max_size=30), st.binary(max_size=64),
       st.floats(width=32, allow_nan=False, allow_infinity=False), st.integers(-(10**14), 10**14),
       st.integers(0, 999999))
def test_random_smoke_values_round_trip(u64, text, data, f32, int_part, frac):
    amount = f"{'-' if int_part < 0 else ''}{abs(int_part)}.{frac:06d}"
    cols = [("id", int_type("int")), ("u64", int_type("bigint", unsigned=True)), ("name", varchar(64)),
            ("amount", decimal(20, 6)), ("payload", blob()), ("f", TiDBType("float"))]
    after = {"id": 1, "u64": u64, "name": text, "amount": amount, "payload": data, "f": f32}
    [row] = decode(ticdc_message(cols, after))
    types = dict(cols)
    assert row.after == {n: project_value(types[n], value_to_json(types[n], v), EXT) for n, v in after.items()}
    # The text read back is the float32's shortest decimal: it names the same float32.
    assert struct.unpack("<f", struct.pack("<f", row.after["f"]))[0] == f32
