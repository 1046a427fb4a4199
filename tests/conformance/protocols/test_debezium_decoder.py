"""The reference Debezium decoder against spec 000/001, the real Debezium output in
/work/shared/reference, and its own fidelity projection."""
from __future__ import annotations

import base64
import copy
import struct
from functools import partial

import cramjam
import lz4.frame
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED
from tests.helpers import assert_decode_error, decodes_or_decode_error, kafka_record
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.debezium import describe_fidelity, new_decoder, project_value
from ticdc_contract.tidb_types import ALL_BASE_TYPES, TiDBType, datetime, decimal, int_type, varchar

REF = (SHARED / "reference/ticdc/pkg/sink/codec/debezium/testdata")
NO_SCHEMA = {"debezium-disable-schema": True}
EXT = {"enable-tidb-extension": True}


record = partial(kafka_record, topic="dbz", partition=2, offset=7)


def decode_one(value, key=None, options=None):
    events = new_decoder(options or {}).decode(record(value, key))
    assert len(events) == 1
    return events[0]


# --- the real Debezium 2.4 output for datatype.ddl.sql / datatype.dml.sql ----------------

# (column, type, canonical value of the row datatype.dml.sql inserts with sql_mode='' and
# time_zone UTC: TiDB rounds fractions to the column's fsp, pads BINARY(100) with zeros,
# stores invalid ENUM/SET members as '' and FLOAT as float32).
_F32 = struct.unpack("f", struct.pack("f", 12345.12345))[0]
_B64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
DATATYPE_ROW = [
    ("pk", int_type("int"), 1),
    ("col_d_2023", TiDBType("date"), "2023-11-30"),
    ("col_d_1000", TiDBType("date"), "1000-01-01"),
    ("col_d_9999", TiDBType("date"), "9999-12-31"),
    ("col_d_0000", TiDBType("date"), "0000-00-00"),
    ("col_dt", datetime(0), "2023-11-30 12:34:56"),
    ("col_dt_fsp_0", datetime(0), "2023-11-30 12:34:56"),
    ("col_dt_fsp_1", datetime(1), "2023-11-30 12:34:56.1"),
    ("col_dt_fsp_4", datetime(4), "2023-11-30 12:34:56.1235"),
    ("col_dt_fsp_6", datetime(6), "2023-11-30 12:34:56.123456"),
    ("col_dt_0000", datetime(6), "0000-00-00 00:00:00.000000"),
    ("col_t", TiDBType("time"), "12:34:56"),
    ("col_t_fsp_0", TiDBType("time", decimal=0), "12:34:56"),
    ("col_t_fsp_1", TiDBType("time", decimal=1), "12:34:56.1"),
    ("col_t_fsp_4", TiDBType("time", decimal=4), "12:34:56.1235"),
    ("col_t_fsp_6", TiDBType("time", decimal=6), "12:34:56.123456"),
    ("col_t_neg", TiDBType("time", decimal=6), "-12:34:56.123456"),
    ("col_ts", TiDBType("timestamp"), "2023-11-30 12:34:56"),
    ("col_ts_fsp_0", TiDBType("timestamp", decimal=0), "2023-11-30 12:34:56"),
    ("col_ts_fsp_1", TiDBType("timestamp", decimal=1), "2023-11-30 12:34:56.1"),
    ("col_ts_fsp_5", TiDBType("timestamp", decimal=5), "2023-11-30 12:34:56.12346"),
    ("col_ts_fsp_6", TiDBType("timestamp", decimal=6), "2023-11-30 12:34:56.123456"),
    ("col_y", TiDBType("year"), 2023),
    ("col_bit_1", TiDBType("bit", flen=1), 1),
    ("col_bit_5", TiDBType("bit", flen=5), 16),
    ("col_bit_6", TiDBType("bit", flen=6), 16),
    ("col_bit_60", TiDBType("bit", flen=60), 16),
    ("col_varchar", varchar(100), "foo"),
    ("col_char", TiDBType("char", flen=100), "foo"),
    ("col_varbinary", TiDBType("varbinary", flen=100), _B64(b"foo")),
    ("col_binary", TiDBType("binary", flen=100), _B64(b"foo" + bytes(97))),
    ("col_blob", TiDBType("blob"), _B64(b"foo")),
    ("col_decimal", decimal(10, 5), "12345.12345"),
    ("col_numeric", decimal(10, 5), "12345.12345"),
    ("col_float", TiDBType("float"), _F32),
    ("col_double", TiDBType("double"), 12345.12345),
    ("col_int", int_type("int"), -2147483648),
    ("col_int_unsigned", int_type("int", True), 4294967295),
    ("col_tinyint", int_type("tinyint"), -128),
    ("col_tinyint_unsigned", int_type("tinyint", True), 255),
    ("col_smallint", int_type("smallint"), -32768),
    ("col_smallint_unsigned", int_type("smallint", True), 65535),
    ("col_mediumint", int_type("mediumint"), -8388608),
    ("col_mediumint_unsigned", int_type("mediumint", True), 16777215),
    ("col_bigint", int_type("bigint"), -9223372036854775808),
    ("col_bigint_unsigned", int_type("bigint", True), 18446744073709551615),
    ("col_enum", TiDBType("enum", elements=("a", "b", "c")), "a"),
    ("col_enum_invalid", TiDBType("enum", elements=("a", "b", "c")), ""),
    ("col_set", TiDBType("set", elements=("a", "b", "c")), "a,b"),
    ("col_set_invalid", TiDBType("set", elements=("a", "b", "c")), ""),
    ("col_json", TiDBType("json"), '["foo"]'),
]

# What Debezium's mapping loses for this row, with schema, as the decoder prints it: fsp is not
# carried for DATETIME/TIME, zero dates are null, DECIMAL is a double, FLOAT keeps float32
# digits, and BIGINT UNSIGNED wraps without tidb_type.
LOSSY_WITH_SCHEMA = {
    "col_d_0000": None,
    "col_dt": "2023-11-30 12:34:56.000",
    "col_dt_fsp_0": "2023-11-30 12:34:56.000",
    "col_dt_fsp_1": "2023-11-30 12:34:56.100",
    "col_dt_fsp_4": "2023-11-30 12:34:56.123500",
    "col_dt_0000": None,
    "col_t": "12:34:56.000000",
    "col_t_fsp_0": "12:34:56.000000",
    "col_t_fsp_1": "12:34:56.100000",
    "col_t_fsp_4": "12:34:56.123500",
    "col_decimal": 12345.12345,
    "col_numeric": 12345.12345,
    "col_float": 12345.123,
    "col_bigint_unsigned": -1,
}

# TiCDC helper.go getTiDBType for the columns of datatype.ddl.sql.
TIDB_TYPES = {
    "pk": "int", "col_y": "year", "col_varchar": "varchar", "col_char": "char",
    "col_varbinary": "varbinary", "col_binary": "binary", "col_blob": "blob",
    "col_decimal": "decimal", "col_numeric": "decimal", "col_float": "float", "col_double": "double",
    "col_int": "int", "col_int_unsigned": "int unsigned", "col_tinyint": "tinyint",
    "col_tinyint_unsigned": "tinyint unsigned", "col_smallint": "smallint",
    "col_smallint_unsigned": "smallint unsigned", "col_mediumint": "mediumint",
    "col_mediumint_unsigned": "mediumint unsigned", "col_bigint": "bigint",
    "col_bigint_unsigned": "bigint unsigned", "col_json": "json",
}


def _tidb_type(column: str) -> str:
    if column in TIDB_TYPES:
        return TIDB_TYPES[column]
    for prefix, name in (("col_d_", "date"), ("col_dt", "datetime"), ("col_ts", "timestamp"),
                         ("col_t", "time"), ("col_bit", "bit"), ("col_enum", "enum"), ("col_set", "set")):
        if column.startswith(prefix):
            return name
    raise KeyError(column)


def reference():
    return orjson.loads((REF / "datatype.dbz.json").read_bytes()), orjson.loads((REF / "datatype.dbz.key.json").read_bytes())


def test_reference_record_with_schema_decodes_to_the_sql_row():
    value, key = reference()
    row = decode_one(value, key)
    assert isinstance(row, DecodedRow)
    assert (row.schema, row.table, row.op, row.before) == ("test", "foo", "insert", None)
    assert row.commit_ts is None  # real Debezium has no TiCDC commit_ts
    assert row.key_columns == ("pk",)
    assert row.columns == tuple(c for c, _, _ in DATATYPE_ROW)
    assert list(row.after) == list(row.columns)
    for column, t, truth in DATATYPE_ROW:
        got = row.after[column]
        assert got == project_value(t, truth, {}), column
        if column in LOSSY_WITH_SCHEMA:
            assert got == LOSSY_WITH_SCHEMA[column], column
            assert type(got) is type(LOSSY_WITH_SCHEMA[column]), column
            assert describe_fidelity(t, {})[0] == "lossy", column
        else:
            assert got == truth, column
            if describe_fidelity(t, {})[0] == "lossy":
                # lossy types whose loss this particular value escapes (a DATE in 0100-9999, ...)
                assert t.base in ("date", "datetime", "timestamp", "time"), column


def test_reference_record_without_schema():
    value, key = reference()
    del value["schema"], key["schema"]
    row = decode_one(value, key, NO_SCHEMA)
    assert row.columns == () and row.key_columns == ("pk",)
    raw = reference()[0]["payload"]["after"]
    for column, t, truth in DATATYPE_ROW:
        got = row.after[column]
        assert got == project_value(t, truth, NO_SCHEMA), column
        kind = describe_fidelity(t, NO_SCHEMA)[0]
        if got != truth:
            assert kind == "lossy", column
        # Without schema the decoder can only pass values through; booleans are BIT(1).
        assert got == (int(raw[column]) if isinstance(raw[column], bool) else raw[column]), column
    assert row.after["col_d_2023"] == 19691 and row.after["col_ts_fsp_1"] == "2023-11-30T12:34:56.1Z"
    assert row.after["col_bit_5"] == "EA==" and row.after["col_bit_1"] == 1


def test_reference_record_with_tidb_extension_restores_unsigned_and_checks_base64():
    value, key = reference()
    value["payload"]["source"]["commit_ts"] = 445543491155411712
    for part in value["schema"]["fields"][:2]:
        for f in part["fields"]:
            f["tidb_type"] = _tidb_type(f["field"])
    key["schema"]["fields"][0]["tidb_type"] = "int"
    row = decode_one(value, key, EXT)
    assert row.commit_ts == 445543491155411712
    assert row.after["col_bigint_unsigned"] == 18446744073709551615
    for column, t, truth in DATATYPE_ROW:
        assert row.after[column] == project_value(t, truth, EXT), column
    assert describe_fidelity(int_type("bigint", True), EXT)[0] == "exact"
    value["payload"]["after"]["col_varbinary"] = "not base64!"
    with pytest.raises(DecodeError, match="base64"):
        decode_one(value, key, EXT)


def test_reference_schema_is_what_the_projection_assumes():
    """wire.field_spec mirrors TiCDC's schema writer; the real schema must agree with it."""
    from ticdc_conformance.protocols.debezium.encoding import field_spec
    from ticdc_conformance.protocols.debezium.options import parse_options

    value, _ = reference()
    after = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
    opts = parse_options({})
    for column, t, _ in DATATYPE_ROW:
        spec = field_spec(t, opts, column)
        real = after[column]
        assert spec.type == real["type"], column
        assert spec.semantic == real.get("name"), column
        if spec.bits is not None:
            assert str(spec.bits) == real["parameters"]["length"], column


# --- spec examples ----------------------------------------------------------------------

SOURCE = {"version": "2.4.0.Final", "connector": "TiCDC", "name": "test_cluster", "ts_ms": 0,
          "snapshot": "false", "db": "test", "table": "table1", "server_id": 0, "gtid": None,
          "file": "", "pos": 0, "row": 0, "thread": 0, "query": None, "commit_ts": 1,
          "cluster_id": "test_cluster"}


def _value_schema(fields, name="test_cluster.test.table1"):
    return {"type": "struct", "optional": False, "name": f"{name}.Envelope", "version": 1, "fields": [
        {"type": "struct", "optional": True, "name": f"{name}.Value", "field": "before", "fields": fields},
        {"type": "struct", "optional": True, "name": f"{name}.Value", "field": "after", "fields": fields},
        {"type": "string", "optional": False, "field": "op"},
    ]}


def _key(payload, fields=None):
    key = {"payload": payload}
    if fields is not None:
        key["schema"] = {"type": "struct", "name": "test_cluster.test.table1.Key", "optional": False,
                         "fields": fields}
    return key


def test_spec000_update_example():
    tiny = [{"type": "int16", "optional": True, "field": "tiny"}]
    value = {"payload": {"source": SOURCE, "ts_ms": 1701326309000, "transaction": None, "op": "u",
                         "before": {"tiny": 2}, "after": {"tiny": 1}},
             "schema": _value_schema(tiny)}
    row = decode_one(value, _key({"tiny": 1}, tiny))
    assert row == DecodedRow("test", "table1", "update", 1, {"tiny": 1}, {"tiny": 2}, ("tiny",), ("tiny",))
    del value["schema"]
    row = decode_one(value, _key({"tiny": 1}), NO_SCHEMA)
    assert row == DecodedRow("test", "table1", "update", 1, {"tiny": 1}, {"tiny": 2}, ("tiny",), ())


def test_spec001_insert_example():
    source = dict(SOURCE, name="default", table="t2", commit_ts=447507027004751877, cluster_id="default",
                  ts_ms=1707103832263)
    fields = [{"type": "int32", "optional": False, "field": "a"}, {"type": "int32", "optional": True, "field": "b"}]
    value = {"payload": {"ts_ms": 1707103832957, "transaction": None, "op": "c", "before": None,
                         "after": {"a": 4, "b": 2}, "source": source},
             "schema": _value_schema(fields, "default.test.t2")}
    key = _key({"a": 4}, [{"field": "a", "optional": True, "type": "int32"}])
    row = decode_one(value, key)
    assert row == DecodedRow("test", "t2", "insert", 447507027004751877, {"a": 4, "b": 2}, None, ("a",), ("a", "b"))


def test_spec000_ddl_example():
    value = {"payload": {"source": SOURCE, "ts_ms": 1701326309000, "databaseName": "test", "schemaName": None,
                         "ddl": "RENAME TABLE test.table1 to test.table2",
                         "tableChanges": [{"type": "ALTER", "id": "\"test\".\"table2\",\"test\".\"table1\"",
                                           "table": {"defaultCharsetName": "", "primaryKeyColumnNames": ["id"],
                                                     "columns": [
                                                         {"name": "name", "jdbcType": 12, "position": 2},
                                                         {"name": "id", "jdbcType": 4, "nativeType": None,
                                                          "typeName": "INT", "position": 1, "optional": False}],
                                                     "comment": None}}]},
             "schema": {"optional": False, "type": "struct", "version": 1,
                        "name": "io.debezium.connector.mysql.SchemaChangeValue", "fields": []}}
    key = {"payload": {"databaseName": "test"},
           "schema": {"type": "struct", "name": "io.debezium.connector.mysql.SchemaChangeKey", "optional": False,
                      "version": 1, "fields": [{"field": "databaseName", "optional": False, "type": "string"}]}}
    ddl = decode_one(value, key)
    assert ddl == DecodedDDL(1, "test", "table1", "RENAME TABLE test.table1 to test.table2", "ALTER", ("id", "name"))
    # DROP TABLE carries no table; CREATE DATABASE no table change at all.
    value["payload"]["tableChanges"] = [{"type": "DROP", "id": "\"test\".\"table1\"", "table": None}]
    assert decode_one(value, key).columns == ()
    value["payload"]["tableChanges"] = []
    value["payload"]["source"] = dict(SOURCE, table="")
    assert decode_one(value, key) == DecodedDDL(1, "test", "", "RENAME TABLE test.table1 to test.table2", "", ())


def test_spec000_watermark_example():
    value = {"payload": {"source": dict(SOURCE, db="", table="", commit_ts=3), "op": "m",
                         "ts_ms": 1701326309000, "transaction": None},
             "schema": {"type": "struct", "optional": False, "name": "test_cluster.watermark.Envelope",
                        "version": 1, "fields": []}}
    key = {"payload": {}, "schema": {"fields": [], "optional": False, "name": "test_cluster.watermark.Key",
                                     "type": "struct"}}
    assert decode_one(value, key, EXT) == DecodedWatermark(3)
    del value["schema"], key["schema"]
    assert decode_one(value, key, {**EXT, **NO_SCHEMA}) == DecodedWatermark(3)


def test_snapshot_read_and_delete():
    f = [{"type": "int32", "optional": False, "field": "id"}]
    key = _key({"id": 5}, f)
    read = {"payload": {"source": SOURCE, "op": "r", "before": None, "after": {"id": 5}}, "schema": _value_schema(f)}
    assert decode_one(read, key).op == "insert"
    delete = {"payload": {"source": SOURCE, "op": "d", "before": {"id": 5}, "after": None},
              "schema": _value_schema(f)}
    row = decode_one(delete, key)
    assert (row.op, row.before, row.after, row.columns) == ("delete", {"id": 5}, None, ("id",))
    update = {"payload": {"source": SOURCE, "op": "u", "after": {"id": 5}}, "schema": _value_schema(f)}
    assert decode_one(update, key, {"output-old-value": False}).before is None


# --- the smoke types, hand-encoded by TiCDC's rules (codec.go writeDebeziumFieldValue) ---------

SMOKE = [
    # column, type, schema descriptor, [(canonical, wire value, decoded with schema)]
    ("id", int_type("int"), {"type": "int32", "optional": False},
     [(1, 1, 1), (-(2**31), -(2**31), -(2**31))]),
    ("qty", int_type("bigint", True), {"type": "int64", "optional": True},
     [(18446744073709551615, -1, -1), (2**63, -(2**63), -(2**63)), (0, 0, 0), (2**63 - 1, 2**63 - 1, 2**63 - 1)]),
    ("name", varchar(128), {"type": "string", "optional": True},
     [("emoji 🚀 résumé 中文 テスト", "emoji 🚀 résumé 中文 テスト", "emoji 🚀 résumé 中文 テスト"), ("", "", "")]),
    ("amount", decimal(20, 6), {"type": "double", "optional": True},
     [("12.500000", 12.5, 12.5), ("99999999999999.999999", 100000000000000, 1e14),
      ("-0.000001", -1e-06, -1e-06), ("0.000000", 0, 0.0)]),
    ("created", datetime(3), {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1},
     [("2023-11-30 12:34:56.120", 1701347696120, "2023-11-30 12:34:56.120"),
      ("1000-01-01 00:00:00.000", -30610224000000, "1000-01-01 00:00:00.000"),
      ("9999-12-31 23:59:59.999", 253402300799999, "9999-12-31 23:59:59.999")]),
    ("receipt", TiDBType("blob"), {"type": "string", "optional": True},
     [(_B64(bytes(range(256))), _B64(bytes(range(256))), _B64(bytes(range(256)))), ("", "", "")]),
    ("note", varchar(255), {"type": "string", "optional": True}, [(None, None, None)]),
]


@pytest.mark.parametrize("options", [{}, EXT, NO_SCHEMA], ids=["schema", "tidb-extension", "no-schema"])
def test_smoke_types_agree_with_projection(options):
    ext = options.get("enable-tidb-extension", False)
    no_schema = options.get("debezium-disable-schema", False)
    tidb_types = {"id": "int", "qty": "bigint unsigned", "name": "varchar", "amount": "decimal",
                  "created": "datetime", "receipt": "blob", "note": "varchar"}
    fields = [dict(d, field=c, **({"tidb_type": tidb_types[c]} if ext else {})) for c, _, d, _ in SMOKE]
    rounds = max(len(cases) for *_, cases in SMOKE)
    for i in range(rounds):
        after = {c: cases[i % len(cases)][1] for c, _, _, cases in SMOKE}
        value = {"payload": {"source": dict(SOURCE, db="smoke", table="orders"), "op": "c", "before": None,
                             "after": after}}
        key = {"payload": {"id": after["id"]}}
        if not no_schema:
            value["schema"] = _value_schema(fields, "default.smoke.orders")
            key["schema"] = {"type": "struct", "fields": [fields[0]]}
        row = decode_one(value, key, options)
        for column, t, _, cases in SMOKE:
            truth, wire, with_schema = cases[i % len(cases)]
            got = row.after[column]
            assert got == project_value(t, truth, options), (column, truth)
            if no_schema:
                assert got == wire and type(got) is type(wire), column
            elif column == "qty" and ext:
                assert got == truth, column
            else:
                assert got == with_schema and type(got) is type(with_schema), column


def test_timestamp_in_upstream_zone():
    f = [{"type": "int32", "optional": False, "field": "id"},
         {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "field": "ts"}]
    value = {"payload": {"source": SOURCE, "op": "c", "after": {"id": 1, "ts": "2023-11-30T20:34:56.120Z"}},
             "schema": _value_schema(f)}
    key = _key({"id": 1}, f[:1])
    opts = {"time-zone": "Asia/Shanghai"}
    row = decode_one(value, key, opts)
    assert row.after["ts"] == "2023-12-01 04:34:56.120"
    t = TiDBType("timestamp", decimal=3)
    assert project_value(t, "2023-12-01 04:34:56.120", opts) == "2023-12-01 04:34:56.120"
    assert project_value(t, "2023-12-01 04:34:56.120", {**opts, **NO_SCHEMA}) == "2023-11-30T20:34:56.120Z"
    # The zero TIMESTAMP goes out as the epoch (TiCDC codec.go), which the zone then shifts.
    assert project_value(t, "0000-00-00 00:00:00.000", opts) == "1970-01-01 08:00:00"
    with pytest.raises(ValueError):
        new_decoder({"time-zone": "Mars/Olympus"})


def test_negative_time_and_bits():
    f = [{"type": "int32", "optional": False, "field": "id"},
         {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTime", "field": "t"},
         {"type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "parameters": {"length": "12"},
          "field": "b"},
         {"type": "boolean", "optional": True, "field": "b1"},
         {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "field": "d"}]
    after = {"id": 1, "t": -3020399000000, "b": _B64((0xABC).to_bytes(2, "little")), "b1": False, "d": -719162}
    row = decode_one({"payload": {"source": SOURCE, "op": "c", "after": after}, "schema": _value_schema(f)},
                     _key({"id": 1}, f[:1]))
    assert row.after == {"id": 1, "t": "-838:59:59.000000", "b": 0xABC, "b1": 0, "d": "0001-01-01"}
    assert project_value(TiDBType("time", decimal=6), "-838:59:59.000000") == "-838:59:59.000000"
    assert project_value(TiDBType("bit", flen=12), 0xABC) == 0xABC
    assert project_value(TiDBType("bit", flen=12), 0xABC, NO_SCHEMA) == after["b"]
    assert project_value(TiDBType("date"), "0018-05-01") == "2018-05-01"  # TiCDC's two-digit-year shift


# --- compression -------------------------------------------------------------------------

@pytest.mark.parametrize("codec,compress", [
    ("snappy", lambda b: bytes(cramjam.snappy.compress_raw(b))),
    ("lz4", lz4.frame.compress),
])
def test_compressed_messages(codec, compress):
    value, key = reference()
    rec = kafka_record(compress(orjson.dumps(value)), compress(orjson.dumps(key)), offset=3)
    row = new_decoder({"large-message-handle-compression": codec}).decode(rec)[0]
    assert row.after["col_varchar"] == "foo"
    with pytest.raises(DecodeError, match="snappy|lz4"):
        new_decoder({"large-message-handle-compression": codec}).decode(
            kafka_record(b"\xff\xff\xff\xff\x0f" + b"x" * 20, offset=3))


# --- malformed input -----------------------------------------------------------------------

def _good():
    f = [{"type": "int32", "optional": False, "field": "id"},
         {"type": "int16", "optional": True, "field": "small"},
         {"type": "double", "optional": True, "field": "dbl"},
         {"type": "string", "optional": True, "name": "io.debezium.data.Json", "field": "j"},
         {"type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "parameters": {"length": "5"},
          "field": "bits"},
         {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "field": "ts"},
         {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTime", "field": "tm"}]
    value = {"payload": {"source": dict(SOURCE), "op": "c", "before": None,
                         "after": {"id": 1, "small": 2, "dbl": 1.5, "j": "{}", "bits": "EA==",
                                   "ts": "2023-11-30T12:34:56Z", "tm": 0}},
             "schema": _value_schema(f)}
    return value, _key({"id": 1}, f[:1])


def _set(doc, path, v):
    *head, last = path
    for p in head:
        doc = doc[p]
    if v is _DELETE:
        del doc[last]
    else:
        doc[last] = v


_DELETE = object()
P = ("payload",)
A = ("payload", "after")
MALFORMED = [
    ("payload missing", P, _DELETE, "payload"),
    ("payload not an object", P, [1], "payload"),
    ("op and ddl missing", P + ("op",), _DELETE, "neither"),
    ("op not a string", P + ("op",), 1, "op"),
    ("unknown op", P + ("op",), "x", "unknown op"),
    ("source missing", P + ("source",), _DELETE, "source"),
    ("db not a string", P + ("source", "db"), 3, "source.db"),
    ("table empty", P + ("source", "table"), "", "source.table"),
    ("commit_ts a string", P + ("source", "commit_ts"), "1", "commit_ts"),
    ("commit_ts negative", P + ("source", "commit_ts"), -1, "commit_ts"),
    ("insert without after", A, None, "after"),
    ("insert with before", P + ("before",), {"id": 1}, "before"),
    ("int as string", A + ("id",), "1", "integer"),
    ("int16 overflow", A + ("small",), 40000, "int16"),
    ("int as float", A + ("id",), 1.0, "integer"),
    ("bool as int", A + ("id",), True, "integer"),
    ("double as string", A + ("dbl",), "1.5", "number"),
    ("null in non-optional", A + ("id",), None, "non-optional"),
    ("non-optional missing", A + ("id",), _DELETE, "missing"),
    ("column not in schema", A + ("ghost",), 1, "not in the schema"),
    ("nested value", A + ("small",), {"x": 1}, "integer"),
    ("bad json column", A + ("j",), "{", "JSON"),
    ("bad base64", A + ("bits",), "E!==", "base64"),
    ("bits too long", A + ("bits",), "EAA=", "BIT"),
    ("bits above length", A + ("bits",), "IA==", "BIT"),
    ("bad zoned timestamp", A + ("ts",), "2023-11-30 12:34:56", "ZonedTimestamp"),
    ("zoned timestamp not a date", A + ("ts",), "2023-02-30T00:00:00Z", "ZonedTimestamp"),
    ("time out of range", A + ("tm",), 3_100_000_000_000, "TIME"),
    ("schema missing", ("schema",), _DELETE, "schema"),
    ("unknown column type", ("schema", "fields", 1, "fields", 0, "type"), "int128", "type"),
    ("semantic name on wrong type", ("schema", "fields", 1, "fields", 5, "type"), "int64", "ZonedTimestamp"),
    ("bits length not a number", ("schema", "fields", 1, "fields", 4, "parameters", "length"), "five", "length"),
    ("after schema missing", ("schema", "fields", 1, "field"), "later", "after"),
]


@pytest.mark.parametrize("name,path,v,reason", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_value_raises_decode_error(name, path, v, reason):
    value, key = _good()
    decode_one(copy.deepcopy(value), key)  # the unmodified message is fine
    _set(value, path, v)
    assert_decode_error(new_decoder({}), record(value, key, offset=41, topic="top", partition=5), reason)


RAW_MALFORMED = [
    ("not json", b"\x00\x01garbage", "not JSON"),
    ("truncated json", orjson.dumps(_good()[0])[:-5], "not JSON"),
    ("json array", b"[1,2]", "object"),
    ("invalid utf-8", b'{"payload": "\xff"}', "not JSON"),
    # orjson reads integers beyond 64 bits as floats; the typed checks must still refuse them.
    ("huge integer", b'{"schema": {}, "payload": {"op": "m", "source": {"commit_ts": 1' + b"0" * 40 + b"}}}",
     "commit_ts"),
    ("no value", None, "no value"),
]


@pytest.mark.parametrize("name,raw,reason", RAW_MALFORMED, ids=[m[0] for m in RAW_MALFORMED])
def test_malformed_bytes(name, raw, reason):
    assert_decode_error(new_decoder({}), kafka_record(raw, _good()[1], partition=1, offset=9), reason)


def test_key_and_option_mismatches():
    value, key = _good()
    cases = [
        ({}, value, None, "without a key"),
        ({}, value, b"{", "key: not JSON"),
        ({}, value, {"payload": {"id": 1, "other": 2}, "schema": key["schema"]}, "differ"),
        ({}, value, {"payload": {"id": "x"}, "schema": key["schema"]}, "integer"),
        (NO_SCHEMA, value, key, "debezium-disable-schema is on"),
        (EXT, value, key, "tidb_type"),
        ({"output-old-value": True}, _update_without_before(value), key, "output-old-value"),
        ({}, _delete_with_after(value), key, "after"),
    ]
    for options, v, k, reason in cases:
        with pytest.raises(DecodeError, match=reason):
            new_decoder(options).decode(record(v, k))


def _update_without_before(value):
    v = copy.deepcopy(value)
    v["payload"]["op"] = "u"
    return v


def _delete_with_after(value):
    v = copy.deepcopy(value)
    v["payload"].update(op="d", before=v["payload"]["after"])
    return v


def test_malformed_ddl_and_watermark():
    ddl = {"payload": {"source": SOURCE, "ddl": "CREATE TABLE t (a INT)", "tableChanges": []},
           "schema": {"type": "struct", "fields": []}}
    assert isinstance(decode_one(ddl), DecodedDDL)
    bad = [
        (("ddl",), 5, "'ddl'"),
        (("tableChanges",), {}, "tableChanges"),
        (("tableChanges",), [{"type": "RENAME", "id": "x", "table": None}], "type"),
        (("tableChanges",), [{"type": "ALTER", "id": "x", "table": {"columns": [{"name": "a"}]}}], "position"),
        (("tableChanges",), [{"type": "ALTER", "id": "x", "table": {"columns": [
            {"name": "a", "position": 1}, {"name": "b", "position": 1}]}}], "twice"),
        (("databaseName",), 1, "databaseName"),
    ]
    for path, v, reason in bad:
        doc = copy.deepcopy(ddl)
        _set(doc["payload"], path, v)
        with pytest.raises(DecodeError, match=reason):
            decode_one(doc)
    mark = {"payload": {"source": dict(SOURCE, commit_ts=None), "op": "m"}}
    with pytest.raises(DecodeError, match="commit_ts"):
        decode_one(mark, None, NO_SCHEMA)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.one_of(st.none(), st.binary(max_size=60)),
       st.sampled_from([{}, NO_SCHEMA, EXT, {"large-message-handle-compression": "snappy"},
                        {"large-message-handle-compression": "lz4"}]))
def test_arbitrary_bytes_only_raise_decode_error(value, key, options):
    decodes_or_decode_error(new_decoder(options), kafka_record(value, key, offset=1))


_json = st.recursive(st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
                     | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([("payload",), A, ("payload", "source"), ("schema",), ("schema", "fields", 1),
                                 ("schema", "fields", 1, "fields", 2), A + ("ts",), A + ("bits",)]),
                min_size=1, max_size=3),
       st.lists(_json, min_size=3, max_size=3), st.sampled_from([{}, EXT, NO_SCHEMA]))
def test_mutated_messages_only_raise_decode_error(paths, replacements, options):
    value, key = _good()
    for path, repl in zip(paths, replacements):
        try:
            _set(value, path, repl)
        except (KeyError, IndexError, TypeError):
            pass
    try:
        raw = orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits cannot be serialised; bytes with them are tested above
        return
    decodes_or_decode_error(new_decoder(options), kafka_record(raw, key, offset=1))


# --- fidelity --------------------------------------------------------------------------------

SAMPLES = {
    "tinyint": [-128, 127], "smallint": [-32768, 32767], "mediumint": [-8388608, 8388607],
    "int": [-(2**31), 2**31 - 1], "bigint": [-(2**63), 2**63 - 1], "float": [1.5, -0.25],
    "double": [0.1, -1e300, 3.0], "decimal": ["1.50"], "char": ["ü"], "varchar": ["中文"],
    "tinytext": ["a"], "text": ["b"], "mediumtext": ["c"], "longtext": ["d"],
    "binary": [_B64(b"\x00\xff")], "varbinary": [_B64(bytes(range(256)))], "tinyblob": [""],
    "blob": [_B64(b"x")], "mediumblob": [_B64(b"y")], "longblob": [_B64(b"z")],
    "date": ["2023-11-30"], "datetime": ["2023-11-30 12:34:56"], "timestamp": ["2023-11-30 12:34:56"],
    "time": ["12:34:56"], "year": [2023, 0], "enum": ["a"], "set": ["a,b"], "bit": [1], "json": ['{"a": 1}'],
}
OPTION_SETS = [{}, EXT, NO_SCHEMA, {**EXT, **NO_SCHEMA}, {"time-zone": "America/New_York"}]


@pytest.mark.parametrize("base", ALL_BASE_TYPES)
@pytest.mark.parametrize("options", OPTION_SETS, ids=["default", "ext", "no-schema", "ext-no-schema", "zone"])
def test_describe_fidelity_is_consistent_with_projection(base, options):
    variants = [TiDBType(base, elements=("a", "b")) if base in ("enum", "set") else TiDBType(base)]
    if base in ("tinyint", "smallint", "mediumint", "int", "bigint"):
        variants.append(TiDBType(base, unsigned=True))
    if base == "bit":
        variants.append(TiDBType("bit", flen=8))
    if base in ("datetime", "time", "timestamp"):
        variants.append(TiDBType(base, decimal=6))
    for t in variants:
        kind, why = describe_fidelity(t, options)
        assert kind in ("exact", "lossy") and why
        samples = SAMPLES[base]
        if t.base in ("datetime", "time", "timestamp") and t.fsp == 6:
            samples = [s + ".123456" for s in samples]
        for v in samples + [None]:
            if t.unsigned and isinstance(v, int) and v < 0:
                v = -v
            projected = project_value(t, v, options)
            if kind == "exact":
                assert projected == v, (t, v)
    assert describe_fidelity(int_type("bigint", True), {})[0] == "lossy"
    assert project_value(int_type("bigint", True), 2**64 - 1, {}) == -1


def test_registered_as_the_debezium_package():
    pkg = protocol_spec("debezium")
    assert pkg.new_decoder is new_decoder and pkg.project_value is project_value
