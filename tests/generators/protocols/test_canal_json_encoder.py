"""The Canal-JSON encoder against spec 003 and TiCDC's canal-json codec.

Spec 003's examples come from different runs (their `es` do not match their `_tidb` TSOs, and
`ts` is a wall clock), so every example is compared field by field with `es`/`ts` checked
against the fake clock instead. Spec examples print object keys sorted; TiCDC writes them in
table order, which the byte-level tests pin down.
"""
from __future__ import annotations

import orjson
import pytest

from tests.spec_examples.corpus import spec_message
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType, decimal, varchar
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.canal_json import PROTOCOL, MessageTooLargeError
from ticdc_generators.protocols.canal_json.message import quote
from ticdc_generators.protocols.canal_json.values import java_type, mysql_type, render_value
from ticdc_generators.protocols.golang.floats import format_float32, format_float64
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, WatermarkEvent

# The TSO every spec 003 example carries; its physical part is the WATERMARK example's `es`.
SPEC_TSO = 429918007904436226
SPEC_PHYSICAL = 1640007049196


def cfg(**kw) -> SinkConfig:
    return SinkConfig(protocol="canal-json", **kw)


def encode_one(event, **kw) -> Message:
    msgs = PROTOCOL.new_encoder(cfg(**kw), "topic", 0).encode(event)
    assert len(msgs) == 1
    return msgs[0]


def encode_json(event, **kw) -> dict:
    return orjson.loads(encode_one(event, **kw).value)


def row_event(table: TableSchema, op: Op, before=None, after=None, commit_ts: int = SPEC_TSO) -> RowEvent:
    return RowEvent(RowChange(table, op, before, after), commit_ts=commit_ts, start_ts=commit_ts - 1)


def without_clock(msg: dict) -> dict:
    return {k: v for k, v in msg.items() if k not in ("es", "ts")}


# --- the spec's tp_int table ------------------------------------------------------------------

TP_INT = TableSchema(
    schema="test", table="tp_int", table_id=100,
    columns=(
        Column("id", TiDBType("int"), nullable=False, auto_increment=True),
        Column("c_tinyint", TiDBType("tinyint")),
        Column("c_smallint", TiDBType("smallint")),
        Column("c_mediumint", TiDBType("mediumint")),
        Column("c_int", TiDBType("int")),
        Column("c_bigint", TiDBType("bigint")),
    ),
    indexes=(Index("PRIMARY", ("id",), primary=True),),
    schema_version=1, pk_is_handle=True,
)
TP_INT_ROW = dict(id=2, c_tinyint=127, c_smallint=32767, c_mediumint=8388607, c_int=2147483647,
                  c_bigint=9223372036854775807)
TP_INT_UPDATED = dict(TP_INT_ROW, c_int=0, c_tinyint=0)

# spec 003, "DML Event".
SPEC_DML_INSERT = spec_message("003-canal-dml-insert")


@pytest.mark.rules("CANAL-DML-2", "CANAL-FIELDS-1", "CANAL-EXTENSION-3", "CANAL-MYSQLTYPE-1")
def test_spec_dml_insert_example():
    msg = encode_json(row_event(TP_INT, Op.INSERT, after=TP_INT_ROW), enable_tidb_extension=True)
    assert without_clock(msg) == without_clock(SPEC_DML_INSERT)
    assert msg["es"] == msg["ts"] == SPEC_PHYSICAL


@pytest.mark.rules("CANAL-DML-2")
def test_dml_bytes_follow_ticdc_field_and_column_order():
    value = encode_one(row_event(TP_INT, Op.INSERT, after=TP_INT_ROW), enable_tidb_extension=True).value
    assert value == (
        b'{"id":0,"database":"test","table":"tp_int","pkNames":["id"],"isDdl":false,"type":"INSERT",'
        b'"es":1640007049196,"ts":1640007049196,"sql":"",'
        b'"sqlType":{"id":4,"c_tinyint":-6,"c_smallint":5,"c_mediumint":4,"c_int":4,"c_bigint":-5},'
        b'"mysqlType":{"id":"int","c_tinyint":"tinyint","c_smallint":"smallint","c_mediumint":"mediumint",'
        b'"c_int":"int","c_bigint":"bigint"},"old":null,'
        b'"data":[{"id":"2","c_tinyint":"127","c_smallint":"32767","c_mediumint":"8388607",'
        b'"c_int":"2147483647","c_bigint":"9223372036854775807"}],'
        b'"_tidb":{"commitTs":429918007904436226}}'
    )


@pytest.mark.rules("CANAL-EXTENSION-2", "CANAL-EXTENSION-3")
def test_dml_without_extension_has_no_tidb_field():
    msg = encode_json(row_event(TP_INT, Op.INSERT, after=TP_INT_ROW))
    assert "_tidb" not in msg
    assert list(msg) == ["id", "database", "table", "pkNames", "isDdl", "type", "es", "ts", "sql",
                         "sqlType", "mysqlType", "old", "data"]


@pytest.mark.rules("CANAL-OLD-2", "CANAL-OLD-3")
def test_update_old_carries_all_columns_by_default():
    # spec 003, "Event of Update Type": TiCDC's `old` holds every column's previous value.
    msg = encode_json(row_event(TP_INT, Op.UPDATE, before=TP_INT_ROW, after=TP_INT_UPDATED))
    assert msg["type"] == "UPDATE"
    assert msg["data"] == [{"c_bigint": "9223372036854775807", "c_int": "0", "c_mediumint": "8388607",
                            "c_smallint": "32767", "c_tinyint": "0", "id": "2"}]
    assert msg["old"] == [{"c_bigint": "9223372036854775807", "c_int": "2147483647", "c_mediumint": "8388607",
                           "c_smallint": "32767", "c_tinyint": "127", "id": "2"}]
    assert list(msg)[-2:] == ["old", "data"]


@pytest.mark.parametrize("option", ["only_output_updated_columns", "content_compatible"])
@pytest.mark.rules("CANAL-OLD-2", "CANAL-OLD-4", "CANAL-COMPAT-2")
def test_update_old_carries_only_changed_columns(option):
    # spec 003: the official Canal shape, which TiCDC produces with only-output-updated-columns
    # and (forced on) with content-compatible.
    value = encode_one(row_event(TP_INT, Op.UPDATE, before=TP_INT_ROW, after=TP_INT_UPDATED), **{option: True}).value
    msg = orjson.loads(value)
    assert msg["old"] == [{"c_int": "2147483647", "c_tinyint": "127"}]
    assert b'"old":[{"c_tinyint":"127","c_int":"2147483647"}]' in value
    assert len(msg["data"][0]) == 6


@pytest.mark.rules("CANAL-OLD-2")
def test_update_with_no_changed_column_sends_empty_old_object():
    msg = encode_json(row_event(TP_INT, Op.UPDATE, before=TP_INT_ROW, after=TP_INT_ROW),
                      only_output_updated_columns=True)
    assert msg["old"] == [{}]


@pytest.mark.rules("CANAL-OLD-2")
def test_update_null_to_value_counts_as_change():
    before = dict(TP_INT_ROW, c_int=None)
    msg = encode_json(row_event(TP_INT, Op.UPDATE, before=before, after=TP_INT_ROW), only_output_updated_columns=True)
    assert msg["old"] == [{"c_int": None}]


@pytest.mark.rules("CANAL-OLD-1", "CANAL-OLD-5")
def test_delete_sends_the_deleted_row_in_data_and_null_old():
    # spec 003, "Changes in the Old field of the Delete events" (v5.4.0 and later).
    msg = encode_json(row_event(TP_INT, Op.DELETE, before=TP_INT_UPDATED), enable_tidb_extension=True)
    assert msg["type"] == "DELETE"
    assert msg["old"] is None
    assert msg["data"] == [{"c_bigint": "9223372036854775807", "c_int": "0", "c_mediumint": "8388607",
                            "c_smallint": "32767", "c_tinyint": "0", "id": "2"}]
    assert msg["_tidb"] == {"commitTs": SPEC_TSO}


# --- WATERMARK and DDL ------------------------------------------------------------------------

SPEC_WATERMARK = spec_message("003-canal-watermark")


@pytest.mark.rules("CANAL-WATERMARK-2", "CANAL-WATERMARK-4")
def test_spec_watermark_example():
    msg = encode_one(WatermarkEvent(SPEC_TSO), enable_tidb_extension=True)
    parsed = orjson.loads(msg.value)
    # Self-consistent in the spec: es is the watermark's physical time; ts is a wall clock.
    assert {k: v for k, v in parsed.items() if k != "ts"} == {k: v for k, v in SPEC_WATERMARK.items() if k != "ts"}
    assert parsed["ts"] == SPEC_PHYSICAL
    assert list(parsed) == list(SPEC_WATERMARK)
    assert msg.key is None and msg.ts == SPEC_TSO


@pytest.mark.rules("CANAL-WATERMARK-1", "CANAL-WATERMARK-2", "CANAL-EXTENSION-2")
def test_no_watermark_without_extension():
    encoder = PROTOCOL.new_encoder(cfg(), "topic", 0)
    assert encoder.encode(WatermarkEvent(SPEC_TSO)) == []
    assert PROTOCOL.sends_watermarks(cfg()) is False
    assert PROTOCOL.sends_watermarks(cfg(enable_tidb_extension=True)) is True


SPEC_DDL = spec_message("003-canal-ddl")


def drop_schema_ddl() -> DDL:
    return DDL(commit_ts=SPEC_TSO, ddl_type=DDLType.DROP_SCHEMA, query="drop database if exists test",
               schema="test", table="", table_after=None, table_before=None)


@pytest.mark.rules("CANAL-DDL-2", "CANAL-FIELDS-1", "CANAL-FIELDS-3")
def test_spec_ddl_example():
    msg = encode_one(DDLEvent(drop_schema_ddl()), enable_tidb_extension=True)
    parsed = orjson.loads(msg.value)
    assert without_clock(parsed) == without_clock(SPEC_DDL)
    assert list(parsed) == list(SPEC_DDL)
    assert parsed["es"] == parsed["ts"] == SPEC_PHYSICAL
    assert msg.key is None and msg.ts == SPEC_TSO


@pytest.mark.rules("CANAL-EXTENSION-2", "CANAL-FIELDS-3")
def test_ddl_without_extension():
    parsed = encode_json(DDLEvent(drop_schema_ddl()))
    assert "_tidb" not in parsed
    assert parsed["isDdl"] is True and parsed["sql"] == "drop database if exists test"


@pytest.mark.parametrize("ddl_type, expected", [
    (DDLType.CREATE_SCHEMA, "QUERY"),
    (DDLType.DROP_SCHEMA, "QUERY"),
    (DDLType.CREATE_TABLE, "CREATE"),
    (DDLType.DROP_TABLE, "ERASE"),
    (DDLType.TRUNCATE_TABLE, "TRUNCATE"),
    (DDLType.RENAME_TABLE, "RENAME"),
    (DDLType.ADD_INDEX, "CINDEX"),
    (DDLType.ADD_PRIMARY_KEY, "CINDEX"),
    (DDLType.DROP_INDEX, "DINDEX"),
    (DDLType.DROP_PRIMARY_KEY, "DINDEX"),
    (DDLType.ADD_COLUMN, "ALTER"),
    (DDLType.DROP_COLUMN, "ALTER"),
    (DDLType.MODIFY_COLUMN, "ALTER"),
    (DDLType.SET_DEFAULT_VALUE, "ALTER"),
    (DDLType.MODIFY_TABLE_COMMENT, "ALTER"),
    (DDLType.RENAME_INDEX, "ALTER"),
    (DDLType.ADD_TABLE_PARTITION, "ALTER"),
    (DDLType.DROP_TABLE_PARTITION, "ALTER"),
    (DDLType.MODIFY_TABLE_CHARSET_AND_COLLATE, "ALTER"),
    (DDLType.TRUNCATE_TABLE_PARTITION, "ALTER"),
])
@pytest.mark.rules("CANAL-FIELDS-1")
def test_ddl_type_per_action(ddl_type, expected):
    ddl = DDL(commit_ts=SPEC_TSO, ddl_type=ddl_type, query="q", schema="test", table="t",
              table_after=None, table_before=None)
    parsed = encode_json(DDLEvent(ddl))
    assert parsed["type"] == expected
    assert (parsed["database"], parsed["table"]) == ("test", "t")


def test_ddl_query_escaped_like_go():
    ddl = DDL(commit_ts=SPEC_TSO, ddl_type=DDLType.ADD_COLUMN,
              query="alter table t add column c varchar(5) default '<a&b>\u2028'\n", schema="test", table="t",
              table_after=None, table_before=None)
    value = encode_one(DDLEvent(ddl)).value
    assert b'"sql":"alter table t add column c varchar(5) default \'\\u003ca\\u0026b\\u003e\\u2028\'\\n"' in value


# --- broadcast rules and message metadata ------------------------------------------------------

@pytest.mark.rules("CANAL-DISPATCH-1")
def test_protocol_module():
    assert encoder_module("canal-json") is PROTOCOL
    assert PROTOCOL.name == "canal-json"
    assert PROTOCOL.ddl_to_all_partitions(cfg()) is False
    assert PROTOCOL.uses_bootstrap is False


@pytest.mark.rules("CANAL-EVENTS-1")
def test_messages_have_null_key_no_headers_and_event_ts():
    encoder = PROTOCOL.new_encoder(cfg(enable_tidb_extension=True), "topic", 2)
    msgs = encoder.encode(row_event(TP_INT, Op.INSERT, after=TP_INT_ROW, commit_ts=SPEC_TSO + 5))
    assert [(m.key, m.headers, m.ts) for m in msgs] == [(None, (), SPEC_TSO + 5)]
    assert encoder.flush() == []


def test_bootstrap_is_not_a_canal_event():
    encoder = PROTOCOL.new_encoder(cfg(), "topic", 0)
    with pytest.raises(TypeError):
        encoder.encode(BootstrapEvent(TP_INT))


def test_output_is_deterministic():
    event = row_event(TP_INT, Op.UPDATE, before=TP_INT_ROW, after=TP_INT_UPDATED)
    a = PROTOCOL.new_encoder(cfg(content_compatible=True), "topic", 0).encode(event)
    b = PROTOCOL.new_encoder(cfg(content_compatible=True), "topic", 0).encode(event)
    assert a == b


# --- binary values -----------------------------------------------------------------------------

BIN_TABLE = TableSchema(
    schema="test", table="bin", table_id=101,
    columns=(
        Column("id", TiDBType("int"), nullable=False),
        Column("c_varbinary", TiDBType("varbinary", flen=16)),
        Column("c_blob", TiDBType("blob")),
    ),
    indexes=(Index("PRIMARY", ("id",), primary=True),), schema_version=1, pk_is_handle=True,
)


@pytest.mark.rules("CANAL-BINARY-1", "CANAL-BINARY-3", "CANAL-BINARY-5")
def test_spec_binary_encoding_example():
    # spec 003, "Example of the encoding". (The spec's character table prints '<' as \u0038 and
    # '>' as \u003E; its example and TiCDC's writer use \u003c / \u003e.)
    raw = bytes([5, 7, 10, 15, 36, 50, 43, 99, 120, 60, 38, 255, 254, 45, 55, 70])
    value = encode_one(row_event(BIN_TABLE, Op.UPDATE, before={"id": 1, "c_varbinary": b"", "c_blob": None},
                                 after={"id": 1, "c_varbinary": raw, "c_blob": None})).value
    expected = '"c_varbinary":"\\u0005\\u0007\\n\\u000f$2+cx\\u003c\\u0026ÿþ-7F"'.encode("utf-8")
    assert expected in value
    msg = orjson.loads(value)
    assert msg["sqlType"]["c_varbinary"] == 2004
    assert msg["mysqlType"]["c_varbinary"] == "varbinary"


@pytest.mark.rules("CANAL-BINARY-1", "CANAL-BINARY-2", "CANAL-BINARY-3", "CANAL-BINARY-4", "CANAL-SQLTYPE-5")
def test_blob_with_every_byte_round_trips_through_latin1():
    raw = bytes(range(256))
    value = encode_one(row_event(BIN_TABLE, Op.INSERT, after={"id": 1, "c_varbinary": None, "c_blob": raw})).value
    msg = orjson.loads(value)
    assert msg["data"][0]["c_blob"].encode("latin-1") == raw
    assert msg["sqlType"] == {"id": 4, "c_varbinary": 2004, "c_blob": 2004}
    assert msg["mysqlType"] == {"id": "int", "c_varbinary": "varbinary", "c_blob": "blob"}
    text = quote(raw.decode("latin-1"))
    # Control bytes are \u00xx except the three short escapes; '"' and '\' are backslashed;
    # '<' '>' '&' are \u003c \u003e \u0026; DEL and 0x80-0xff are literal characters.
    assert text.startswith('"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008\\t\\n\\u000b\\u000c\\r')
    assert "\\u001f !\\\"#$%\\u0026'" in text
    assert "9:;\\u003c=\\u003e?@" in text
    assert "[\\\\]" in text
    assert "~\x7f\x80" in text and text.endswith("\xfe\xff\"")
    assert ('"c_blob":' + text).encode("utf-8") in value


@pytest.mark.rules("CANAL-SQLTYPE-3", "CANAL-MYSQLTYPE-2", "CANAL-COMPAT-1")
def test_binary_char_column_is_binary():
    t = TiDBType("char", flen=4, charset="binary")
    assert java_type(t, b"ab") == 2004
    assert mysql_type(t, False) == "binary"
    assert mysql_type(t, True) == "binary(4)"
    assert render_value(t, b"\xe9\x00") == "\xe9\x00"


# --- sqlType --------------------------------------------------------------------------------------

@pytest.mark.parametrize("base, unsigned, value, expected", [
    # spec 003, "Integer types" table, at each range boundary.
    ("tinyint", False, -128, -6), ("tinyint", False, 127, -6),
    ("tinyint", True, 0, -6), ("tinyint", True, 127, -6), ("tinyint", True, 128, 5), ("tinyint", True, 255, 5),
    ("smallint", False, -32768, 5), ("smallint", False, 32767, 5),
    ("smallint", True, 32767, 5), ("smallint", True, 32768, 4), ("smallint", True, 65535, 4),
    ("mediumint", False, -8388608, 4), ("mediumint", False, 8388607, 4),
    ("mediumint", True, 8388607, 4), ("mediumint", True, 8388608, 4), ("mediumint", True, 16777215, 4),
    ("int", False, -2147483648, 4), ("int", False, 2147483647, 4),
    ("int", True, 2147483647, 4), ("int", True, 2147483648, -5), ("int", True, 4294967295, -5),
    ("bigint", False, -(2**63), -5), ("bigint", False, 2**63 - 1, -5),
    ("bigint", True, 2**63 - 1, -5), ("bigint", True, 2**63, 3), ("bigint", True, 2**64 - 1, 3),
    # A NULL keeps the type's own code: TiCDC decides before it reads the value.
    ("tinyint", True, None, -6), ("smallint", True, None, 5), ("int", True, None, 4), ("bigint", True, None, -5),
])
@pytest.mark.rules("CANAL-SQLTYPE-8", "CANAL-SQLTYPE-9", "CANAL-SQLTYPE-10", "CANAL-SQLTYPE-11", "CANAL-SQLTYPE-12")
def test_integer_sql_type_promotion(base, unsigned, value, expected):
    assert java_type(TiDBType(base, unsigned=unsigned), value) == expected


@pytest.mark.parametrize("t, expected", [
    (TiDBType("float"), 7), (TiDBType("double"), 8), (decimal(20, 6), 3),
    (TiDBType("char", flen=3), 1), (varchar(16), 12),
    (TiDBType("binary", flen=3), 2004), (TiDBType("varbinary", flen=3), 2004),
    (TiDBType("tinytext"), 2005), (TiDBType("text"), 2005), (TiDBType("mediumtext"), 2005), (TiDBType("longtext"), 2005),
    (TiDBType("tinyblob"), 2004), (TiDBType("blob"), 2004), (TiDBType("mediumblob"), 2004), (TiDBType("longblob"), 2004),
    (TiDBType("date"), 91), (TiDBType("datetime", decimal=3), 93), (TiDBType("timestamp"), 93), (TiDBType("time"), 92),
    (TiDBType("year"), 12), (TiDBType("enum", elements=("a",)), 4), (TiDBType("set", elements=("a",)), -7),
    (TiDBType("bit", flen=8), -7), (TiDBType("json"), 12),
    (TiDBType("decimal", unsigned=True), 3), (TiDBType("double", unsigned=True), 8),
])
@pytest.mark.rules(
    "CANAL-SQLTYPE-2", "CANAL-SQLTYPE-3", "CANAL-SQLTYPE-4", "CANAL-SQLTYPE-5", "CANAL-SQLTYPE-6",
    "CANAL-SQLTYPE-7")
def test_sql_type_per_mysql_type(t, expected):
    # spec 003, "SQL Type field" table.
    assert java_type(t, None) == expected


@pytest.mark.rules("CANAL-SQLTYPE-1")
def test_promotion_uses_the_row_that_is_sent():
    t = TableSchema(schema="s", table="u", table_id=5,
                    columns=(Column("id", TiDBType("int"), nullable=False), Column("v", TiDBType("tinyint", unsigned=True))),
                    indexes=(Index("PRIMARY", ("id",), primary=True),), schema_version=1)
    upd = encode_json(row_event(t, Op.UPDATE, before={"id": 1, "v": 200}, after={"id": 1, "v": 5}))
    assert upd["sqlType"]["v"] == -6
    dele = encode_json(row_event(t, Op.DELETE, before={"id": 1, "v": 200}))
    assert dele["sqlType"]["v"] == 5


# --- mysqlType --------------------------------------------------------------------------------------

@pytest.mark.parametrize("t, short, full", [
    # Expectations of TiCDC's type tests (tiflow pkg/sink/codec/canal/type_test.go).
    (TiDBType("int"), "int", "int(11)"),
    (TiDBType("int", unsigned=True), "int unsigned", "int(10) unsigned"),
    (TiDBType("tinyint"), "tinyint", "tinyint(4)"),
    (TiDBType("tinyint", flen=1), "tinyint", "tinyint(1)"),
    (TiDBType("tinyint", unsigned=True), "tinyint unsigned", "tinyint(3) unsigned"),
    (TiDBType("smallint", unsigned=True), "smallint unsigned", "smallint(5) unsigned"),
    (TiDBType("mediumint"), "mediumint", "mediumint(9)"),
    (TiDBType("bigint"), "bigint", "bigint(20)"),
    (TiDBType("bigint", unsigned=True), "bigint unsigned", "bigint(20) unsigned"),
    (TiDBType("bigint", flen=19), "bigint", "bigint(19)"),
    (decimal(20, 6), "decimal", "decimal(20,6)"),
    (TiDBType("decimal"), "decimal", "decimal(10,0)"),
    (TiDBType("decimal", unsigned=True), "decimal unsigned", "decimal(10,0) unsigned"),
    (TiDBType("float"), "float", "float"),
    (TiDBType("float", flen=10), "float", "float"),
    (TiDBType("float", flen=10, decimal=3), "float", "float(10,3)"),
    (TiDBType("double", flen=20, decimal=3), "double", "double(20,3)"),
    (TiDBType("double", unsigned=True), "double unsigned", "double unsigned"),
    (TiDBType("char"), "char", "char(1)"),
    (TiDBType("char", flen=123), "char", "char(123)"),
    (varchar(16), "varchar", "varchar(16)"),
    (TiDBType("binary"), "binary", "binary(1)"),
    (TiDBType("varbinary", flen=23), "varbinary", "varbinary(23)"),
    (TiDBType("text"), "text", "text"),
    (TiDBType("tinytext"), "tinytext", "tinytext"),
    (TiDBType("longblob"), "longblob", "longblob"),
    (TiDBType("time"), "time", "time"),
    (TiDBType("time", decimal=3), "time", "time(3)"),
    (TiDBType("datetime"), "datetime", "datetime"),
    (TiDBType("datetime", decimal=3), "datetime", "datetime(3)"),
    (TiDBType("timestamp", decimal=6), "timestamp", "timestamp(6)"),
    (TiDBType("date"), "date", "date"),
    (TiDBType("year"), "year", "year(4)"),
    (TiDBType("year", unsigned=True), "year", "year(4)"),
    (TiDBType("bit"), "bit", "bit(1)"),
    (TiDBType("bit", flen=64, unsigned=True), "bit", "bit(64)"),
    (TiDBType("enum", elements=("a", "b", "c")), "enum", "enum('a','b','c')"),
    (TiDBType("set", elements=("a", "b", "c")), "set", "set('a','b','c')"),
    (TiDBType("enum", elements=("it's", "x\ny")), "enum", "enum('it''s','x\\ny')"),
    (TiDBType("json"), "json", "json"),
])
@pytest.mark.rules("CANAL-MYSQLTYPE-2", "CANAL-COMPAT-1")
def test_mysql_type_default_and_content_compatible(t, short, full):
    assert mysql_type(t, False) == short
    assert mysql_type(t, True) == full


SPEC_T = TableSchema(
    schema="test", table="t", table_id=102,
    columns=(
        Column("id", TiDBType("int"), nullable=False, auto_increment=True),
        Column("c_decimal", decimal(10, 4)),
        Column("c_char", TiDBType("char", flen=16)),
        Column("c_varchar", varchar(16)),
        Column("c_binary", TiDBType("binary", flen=16)),
        Column("c_varbinary", TiDBType("varbinary", flen=16)),
        Column("c_enum", TiDBType("enum", elements=("a", "b", "c"))),
        Column("c_set", TiDBType("set", elements=("a", "b", "c"))),
        Column("c_bit", TiDBType("bit", flen=64)),
    ),
    indexes=(Index("pk", ("id",), primary=True),), schema_version=1, pk_is_handle=True,
)
# insert into t (...) values (123.456, "abc", "abc", "abc", "abc", 'a', 'a,b', b'1000001');
# BINARY(16) is stored right-padded with zero bytes.
SPEC_T_ROW = {"id": 1, "c_decimal": "123.4560", "c_char": "abc", "c_varchar": "abc",
              "c_binary": b"abc" + bytes(13), "c_varbinary": b"abc", "c_enum": "a", "c_set": "a,b", "c_bit": 65}


@pytest.mark.rules("CANAL-MYSQLTYPE-3")
def test_spec_mysql_type_example_default():
    # spec 003, "mysqlType field": TiCDC's output has bare type names.
    msg = encode_json(row_event(SPEC_T, Op.INSERT, after=SPEC_T_ROW))
    assert msg["mysqlType"] == {"c_binary": "binary", "c_bit": "bit", "c_char": "char", "c_decimal": "decimal",
                                "c_enum": "enum", "c_set": "set", "c_varbinary": "varbinary", "c_varchar": "varchar",
                                "id": "int"}
    assert msg["sqlType"] == {"id": 4, "c_decimal": 3, "c_char": 1, "c_varchar": 12, "c_binary": 2004,
                              "c_varbinary": 2004, "c_enum": 4, "c_set": -7, "c_bit": -7}
    assert msg["data"] == [{"id": "1", "c_decimal": "123.4560", "c_char": "abc", "c_varchar": "abc",
                            "c_binary": "abc" + "\x00" * 13, "c_varbinary": "abc", "c_enum": "1", "c_set": "3",
                            "c_bit": "65"}]


@pytest.mark.rules("CANAL-MYSQLTYPE-4", "CANAL-COMPAT-1")
def test_spec_mysql_type_example_content_compatible():
    # With content-compatible the parameters come back as TiDB prints them: no space inside
    # "decimal(10,4)" and the display width on "int(11)", unlike the official Canal sample.
    msg = encode_json(row_event(SPEC_T, Op.INSERT, after=SPEC_T_ROW), content_compatible=True)
    assert msg["mysqlType"] == {"id": "int(11)", "c_decimal": "decimal(10,4)", "c_char": "char(16)",
                                "c_varchar": "varchar(16)", "c_binary": "binary(16)", "c_varbinary": "varbinary(16)",
                                "c_enum": "enum('a','b','c')", "c_set": "set('a','b','c')", "c_bit": "bit(64)"}


# --- the smoke types -------------------------------------------------------------------------------

SMOKE = TableSchema(
    schema="db", table="smoke", table_id=7,
    columns=(
        Column("id", TiDBType("int"), nullable=False),
        Column("name", varchar(32), nullable=False),
        Column("big", TiDBType("bigint", unsigned=True)),
        Column("amount", decimal(20, 6)),
        Column("at", TiDBType("datetime", decimal=3)),
        Column("payload", TiDBType("blob")),
        Column("note", varchar(64)),
    ),
    indexes=(Index("PRIMARY", ("id", "name"), primary=True),), schema_version=1,
)


def test_smoke_types_insert_bytes():
    row = {"id": 7, "name": "Grüße, 東京 😀", "big": 18446744073709551615, "amount": "-12.500000",
           "at": "2023-11-30 12:34:56.120", "payload": b"\x00\xffA<", "note": None}
    value = encode_one(row_event(SMOKE, Op.INSERT, after=row), enable_tidb_extension=True).value
    assert value == (
        '{"id":0,"database":"db","table":"smoke","pkNames":["id","name"],"isDdl":false,"type":"INSERT",'
        '"es":1640007049196,"ts":1640007049196,"sql":"",'
        '"sqlType":{"id":4,"name":12,"big":3,"amount":3,"at":93,"payload":2004,"note":12},'
        '"mysqlType":{"id":"int","name":"varchar","big":"bigint unsigned","amount":"decimal","at":"datetime",'
        '"payload":"blob","note":"varchar"},"old":null,'
        '"data":[{"id":"7","name":"Grüße, 東京 😀","big":"18446744073709551615","amount":"-12.500000",'
        '"at":"2023-11-30 12:34:56.120","payload":"\\u0000ÿA\\u003c","note":null}],'
        '"_tidb":{"commitTs":429918007904436226}}'
    ).encode("utf-8")


@pytest.mark.rules("CANAL-COMPAT-1")
def test_smoke_types_content_compatible_types():
    row = {"id": 1, "name": "a", "big": 1, "amount": "0.000000", "at": "2023-01-01 00:00:00.000",
           "payload": b"", "note": ""}
    msg = encode_json(row_event(SMOKE, Op.INSERT, after=row), content_compatible=True)
    assert msg["mysqlType"] == {"id": "int(11)", "name": "varchar(32)", "big": "bigint(20) unsigned",
                                "amount": "decimal(20,6)", "at": "datetime(3)", "payload": "blob",
                                "note": "varchar(64)"}
    assert msg["sqlType"]["big"] == -5
    assert msg["data"][0]["payload"] == "" and msg["data"][0]["note"] == ""


@pytest.mark.rules("CANAL-SQLTYPE-1")
def test_nulls_are_json_null_with_base_sql_type():
    row = {"id": 1, "name": "x", "big": None, "amount": None, "at": None, "payload": None, "note": None}
    msg = encode_json(row_event(SMOKE, Op.INSERT, after=row))
    assert msg["data"][0] == {"id": "1", "name": "x", "big": None, "amount": None, "at": None, "payload": None,
                              "note": None}
    assert msg["sqlType"]["big"] == -5


@pytest.mark.rules("CANAL-FIELDS-1")
def test_table_without_primary_key_has_empty_pk_names():
    t = TableSchema(schema="s", table="nopk", table_id=9, columns=(Column("a", TiDBType("int")),), indexes=(),
                    schema_version=1)
    value = encode_one(row_event(t, Op.INSERT, after={"a": 1})).value
    assert b'"pkNames":[]' in value


# --- delete with only handle-key columns ---------------------------------------------------------

def test_delete_only_handle_key_columns():
    row = {"id": 7, "name": "n", "big": 1, "amount": "1.000000", "at": None, "payload": b"x", "note": "z"}
    msg = encode_json(row_event(SMOKE, Op.DELETE, before=row), delete_only_output_handle_key_columns=True)
    assert msg["sqlType"] == {"id": 4, "name": 12}
    assert msg["mysqlType"] == {"id": "int", "name": "varchar"}
    assert msg["data"] == [{"id": "7", "name": "n"}]
    assert msg["old"] is None
    # Only deletes are cut down.
    ins = encode_json(row_event(SMOKE, Op.INSERT, after=row), delete_only_output_handle_key_columns=True)
    assert len(ins["data"][0]) == 7


def test_handle_key_is_the_smallest_not_null_unique_key():
    t = TableSchema(
        schema="s", table="uk", table_id=10,
        columns=(Column("a", TiDBType("int"), nullable=False), Column("b", TiDBType("int"), nullable=False),
                 Column("c", TiDBType("int"), nullable=False), Column("d", TiDBType("int"))),
        indexes=(Index("uk_ab", ("a", "b"), unique=True), Index("uk_d", ("d",), unique=True),
                 Index("uk_c", ("c",), unique=True)),
        schema_version=1,
    )
    msg = encode_json(row_event(t, Op.DELETE, before={"a": 1, "b": 2, "c": 3, "d": 4}),
                      delete_only_output_handle_key_columns=True)
    assert msg["data"] == [{"c": "3"}]
    assert msg["pkNames"] == []


def test_delete_without_handle_key_new_and_classic_ticdc():
    t = TableSchema(schema="s", table="nokey", table_id=11, columns=(Column("a", TiDBType("int")),), indexes=(),
                    schema_version=1)
    event = row_event(t, Op.DELETE, before={"a": 1})
    new = encode_one(event, delete_only_output_handle_key_columns=True).value
    assert b'"sqlType":null,"mysqlType":null,"old":null,"data":[{}]' in new
    classic = encode_one(event, delete_only_output_handle_key_columns=True, version_profile="tiflow").value
    assert b'"sqlType":null,"mysqlType":{},"old":null,"data":[{}]' in classic


# --- value rendering -----------------------------------------------------------------------------

@pytest.mark.parametrize("t, value, expected", [
    (TiDBType("enum", elements=("a", "b", "c")), "b", "2"),
    (TiDBType("enum", elements=("a", "b", "c")), "", "0"),
    (TiDBType("set", elements=("a", "b", "c")), "a,c", "5"),
    (TiDBType("set", elements=("a", "b", "c")), "", "0"),
    (TiDBType("bit", flen=64), 2**64 - 1, "18446744073709551615"),
    (TiDBType("year"), 2024, "2024"),
    (TiDBType("json"), '{"a": [1, 2]}', '{"a": [1, 2]}'),
    (TiDBType("time", decimal=2), "-838:59:59.00", "-838:59:59.00"),
    (TiDBType("date"), "2020-02-29", "2020-02-29"),
    (TiDBType("timestamp"), "2020-01-01 12:00:00", "2020-01-01 12:00:00"),
    (TiDBType("text"), "tab\there", "tab\there"),
    (TiDBType("double"), 1e20, "100000000000000000000"),
    (TiDBType("double"), 1.5e-7, "0.00000015"),
    (TiDBType("double"), -0.0, "-0"),
    (TiDBType("double"), 10.11, "10.11"),
    (TiDBType("float"), 1.23, "1.23"),
    (TiDBType("float"), 7.89, "7.89"),
    (TiDBType("float"), 16777217.0, "16777216"),
    (TiDBType("float"), 3.4028234663852886e38, "340282350000000000000000000000000000000"),
])
def test_render_value(t, value, expected):
    assert render_value(t, value) == expected


def test_float_formatting_matches_go_shortest():
    # FormatFloat(v, 'f', -1, 64) and (..., 32) for values whose Go output is known.
    assert format_float64(5e-324) == "0." + "0" * 323 + "5"
    assert format_float64(123.0) == "123"
    assert format_float32(0.1) == "0.1"
    assert format_float32(1e-45) == "0." + "0" * 44 + "1"
    assert format_float32(3.14) == "3.14"


def test_generic_shortest_search_agrees_with_repr_for_doubles():
    import struct

    from ticdc_generators.protocols.golang.floats import _digits_from_repr, shortest_digits64

    state = 0x9E3779B97F4A7C15
    checked = 0
    while checked < 3000:
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        x = abs(struct.unpack("<d", struct.pack("<Q", state))[0])
        if x == 0 or x != x or x == float("inf"):
            continue
        assert shortest_digits64(x) == _digits_from_repr(x), repr(x)
        checked += 1


def test_text_escaping_in_values():
    t = TableSchema(schema="s", table="txt", table_id=12,
                    columns=(Column("id", TiDBType("int"), nullable=False), Column("v", TiDBType("text"))),
                    indexes=(Index("PRIMARY", ("id",), primary=True),), schema_version=1)
    value = encode_one(row_event(t, Op.INSERT, after={"id": 1, "v": 'a"b\\c<d>&\u2029\x7fé'})).value
    assert '"v":"a\\"b\\\\c\\u003cd\\u003e\\u0026\\u2029\x7fé"'.encode("utf-8") in value


def test_quote_replaces_invalid_utf8_like_go():
    assert quote("a\udcffb") == '"a\\ufffdb"'


# --- message size ----------------------------------------------------------------------------------

def test_row_message_above_max_message_bytes_is_refused():
    event = row_event(BIN_TABLE, Op.INSERT, after={"id": 1, "c_varbinary": None, "c_blob": b"x" * 200})
    size = len(encode_one(event).value) + 36
    assert len(encode_one(event, max_message_bytes=size).value) + 36 == size
    with pytest.raises(MessageTooLargeError):
        encode_one(event, max_message_bytes=size - 1)
    # DDL and WATERMARK messages are not measured by TiCDC's canal-json encoder.
    assert encode_one(DDLEvent(drop_schema_ddl()), max_message_bytes=1).value
