"""The Debezium encoder against spec 000/001 and TiCDC's own reference data and tests.

The central test rebuilds TiCDC's datatype fixture (pkg/sink/codec/debezium/testdata) by hand and
holds the encoder to the real Debezium 2.4 MySQL connector's output, configured the way TiCDC's
debezium_test.go TestDataTypes configures its encoder: cluster id "dbserver1", time zone UTC,
no TiDB extension, schema on and off, ignoring payload.source and payload.ts_ms.
"""
from __future__ import annotations

import base64
import json

import pytest

from tests.conftest import SHARED
from ticdc_contract import tso
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType, decimal, int_type, varchar
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.debezium import PROTOCOL, DebeziumEncoder, DebeziumOptions, EncodeFailure
from ticdc_generators.protocols.golang.floats import json_float32 as go_float32
from ticdc_generators.protocols.golang.floats import json_float64 as go_float64
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent, WatermarkEvent

TESTDATA = (SHARED / "reference/ticdc/pkg/sink/codec/debezium/testdata")
T0 = 1701326309000  # the fake-clock instant TiCDC's codec tests use (time.Unix(1701326309, 0))


def keys(b: bytes, *path: str) -> list[str]:
    """The keys of the object at `path`, in the order they appear in the bytes."""
    obj = json.loads(b, object_pairs_hook=lambda pairs: pairs)
    for p in path:
        obj = dict(obj)[p]
    return [k for k, _ in obj]


def enc(**kw) -> DebeziumEncoder:
    return DebeziumEncoder(DebeziumOptions(**kw), "topic", 0)


def row_event(table, op, before, after, commit_ts=1, start_ts=0):
    return RowEvent(RowChange(table, op, before, after), commit_ts, start_ts)


def col(name, t, nullable=True, **kw):
    return Column(name, t, nullable=nullable, **kw)


# --------------------------------------------------------------------------------------------
# THE reference test: datatype.ddl.sql / datatype.dml.sql vs datatype.dbz.json / .dbz.key.json
# --------------------------------------------------------------------------------------------

def datatype_table() -> TableSchema:
    """datatype.ddl.sql as TiDB's column info holds it."""
    T = TiDBType
    cols = [
        col("pk", int_type(), nullable=False),
        col("col_d_2023", T("date")), col("col_d_1000", T("date")),
        col("col_d_9999", T("date")), col("col_d_0000", T("date")),
        col("col_dt", T("datetime")), col("col_dt_fsp_0", T("datetime", decimal=0)),
        col("col_dt_fsp_1", T("datetime", decimal=1)), col("col_dt_fsp_4", T("datetime", decimal=4)),
        col("col_dt_fsp_6", T("datetime", decimal=6)), col("col_dt_0000", T("datetime", decimal=6)),
        col("col_t", T("time")), col("col_t_fsp_0", T("time", decimal=0)),
        col("col_t_fsp_1", T("time", decimal=1)), col("col_t_fsp_4", T("time", decimal=4)),
        col("col_t_fsp_6", T("time", decimal=6)), col("col_t_neg", T("time", decimal=6)),
        col("col_ts", T("timestamp")), col("col_ts_fsp_0", T("timestamp", decimal=0)),
        col("col_ts_fsp_1", T("timestamp", decimal=1)), col("col_ts_fsp_5", T("timestamp", decimal=5)),
        col("col_ts_fsp_6", T("timestamp", decimal=6)),
        col("col_y", T("year")),
        col("col_bit_1", T("bit", flen=1)), col("col_bit_5", T("bit", flen=5)),
        col("col_bit_6", T("bit", flen=6)), col("col_bit_60", T("bit", flen=60)),
        col("col_varchar", varchar(100)), col("col_char", T("char", flen=100)),
        col("col_varbinary", T("varbinary", flen=100)), col("col_binary", T("binary", flen=100)),
        col("col_blob", T("blob")),
        col("col_decimal", decimal(10, 5)), col("col_numeric", decimal(10, 5)),
        col("col_float", T("float")), col("col_double", T("double")),
        col("col_int", int_type("int")), col("col_int_unsigned", int_type("int", True)),
        col("col_tinyint", int_type("tinyint")), col("col_tinyint_unsigned", int_type("tinyint", True)),
        col("col_smallint", int_type("smallint")), col("col_smallint_unsigned", int_type("smallint", True)),
        col("col_mediumint", int_type("mediumint")), col("col_mediumint_unsigned", int_type("mediumint", True)),
        col("col_bigint", int_type("bigint")), col("col_bigint_unsigned", int_type("bigint", True)),
        col("col_enum", T("enum", elements=("a", "b", "c"))),
        col("col_enum_invalid", T("enum", elements=("a", "b", "c"))),
        col("col_set", T("set", elements=("a", "b", "c"))),
        col("col_set_invalid", T("set", elements=("a", "b", "c"))),
        col("col_json", T("json")),
    ]
    return TableSchema("test", "foo", 100, tuple(cols), (Index("PRIMARY", ("pk",), primary=True),),
                       schema_version=1, pk_is_handle=True)


def datatype_row() -> dict:
    """datatype.dml.sql's row in canonical form: what TiDB stored (with sql_mode='' and
    time_zone UTC): fractions rounded to each column's fsp, BINARY(100) zero-padded, FLOAT as
    written (TiDB keeps a float32), the invalid ENUM/SET values stored as ''."""
    return {
        "pk": 1,
        "col_d_2023": "2023-11-30", "col_d_1000": "1000-01-01", "col_d_9999": "9999-12-31",
        "col_d_0000": "0000-00-00",
        "col_dt": "2023-11-30 12:34:56", "col_dt_fsp_0": "2023-11-30 12:34:56",
        "col_dt_fsp_1": "2023-11-30 12:34:56.1", "col_dt_fsp_4": "2023-11-30 12:34:56.1235",
        "col_dt_fsp_6": "2023-11-30 12:34:56.123456", "col_dt_0000": "0000-00-00 00:00:00.000000",
        "col_t": "12:34:56", "col_t_fsp_0": "12:34:56", "col_t_fsp_1": "12:34:56.1",
        "col_t_fsp_4": "12:34:56.1235", "col_t_fsp_6": "12:34:56.123456", "col_t_neg": "-12:34:56.123456",
        "col_ts": "2023-11-30 12:34:56", "col_ts_fsp_0": "2023-11-30 12:34:56",
        "col_ts_fsp_1": "2023-11-30 12:34:56.1", "col_ts_fsp_5": "2023-11-30 12:34:56.12346",
        "col_ts_fsp_6": "2023-11-30 12:34:56.123456",
        "col_y": 2023,
        "col_bit_1": 1, "col_bit_5": 16, "col_bit_6": 16, "col_bit_60": 16,
        "col_varchar": "foo", "col_char": "foo", "col_varbinary": b"foo",
        "col_binary": b"foo" + b"\x00" * 97, "col_blob": b"foo",
        "col_decimal": "12345.12345", "col_numeric": "12345.12345",
        "col_float": 12345.12345, "col_double": 12345.12345,
        "col_int": -2147483648, "col_int_unsigned": 4294967295,
        "col_tinyint": -128, "col_tinyint_unsigned": 255,
        "col_smallint": -32768, "col_smallint_unsigned": 65535,
        "col_mediumint": -8388608, "col_mediumint_unsigned": 16777215,
        "col_bigint": -9223372036854775808, "col_bigint_unsigned": 18446744073709551615,
        "col_enum": "a", "col_enum_invalid": "", "col_set": "a,b", "col_set_invalid": "",
        "col_json": '["foo"]',
    }


def _without_source_and_ts(obj: dict) -> dict:
    out = json.loads(json.dumps(obj))
    out["payload"].pop("source", None)
    out["payload"].pop("ts_ms", None)
    return out


@pytest.mark.parametrize("disable_schema", [False, True])
@pytest.mark.rules("DBZ-TYPEMAP-1", "DBZ-SCHEMA-1", "DBZ-DML-2", "DBZ-DML-3")
def test_datatype_insert_matches_real_debezium_output(disable_schema):
    dbz_value = json.loads((TESTDATA / "datatype.dbz.json").read_bytes())
    dbz_key = json.loads((TESTDATA / "datatype.dbz.key.json").read_bytes())
    # TiCDC debezium_test.go: NewBatchEncoder(cfg, "dbserver1"), cfg.TimeZone = UTC, CommitTs 1,
    # default options (no TiDB extension), DebeziumDisableSchema per suite.
    e = enc(cluster_id="dbserver1", time_zone="UTC", disable_schema=disable_schema)
    [msg] = e.encode(row_event(datatype_table(), Op.INSERT, None, datatype_row(), commit_ts=1))
    ours_value = json.loads(msg.value)
    ours_key = json.loads(msg.key)

    if disable_schema:
        # debezium-disable-schema drops the "schema" half of key and value (spec 000, "Use the
        # Debezium message format"); TiCDC's suite then ignores Debezium's schema too.
        assert "schema" not in ours_value and "schema" not in ours_key
        dbz_value = {"payload": dbz_value["payload"]}
        dbz_key = {"payload": dbz_key["payload"]}

    assert ours_key == dbz_key
    assert _without_source_and_ts(ours_value) == _without_source_and_ts(dbz_value)

    # Where TiCDC differs from the real connector (ignored above, asserted here): the source
    # block. Spec 000: the native format lacks the TiDB commit identity, so "TiCDC adds two
    # fields, CommitTs and ClusterID"; the connector is "TiCDC" and the MySQL binlog coordinates
    # (server_id, file, pos, thread) are constants; Debezium's "sequence" is not written.
    ours_src = ours_value["payload"]["source"]
    dbz_src = dbz_value["payload"]["source"]
    assert dbz_src["connector"] == "mysql" and ours_src["connector"] == "TiCDC"
    assert (ours_src["server_id"], ours_src["file"], ours_src["pos"], ours_src["thread"]) == (0, "", 0, 0)
    assert (dbz_src["server_id"], dbz_src["file"], dbz_src["pos"], dbz_src["thread"]) == (
        223344, "mysql-bin.000005", 10394, 11)
    assert "sequence" in dbz_src and "sequence" not in ours_src
    assert ours_src["commit_ts"] == 1 and ours_src["cluster_id"] == "dbserver1"
    assert "commit_ts" not in dbz_src and "cluster_id" not in dbz_src
    # Both ts_ms are TiCDC's clock: commit time in the source (TSO 1 -> 0 ms) and the fake
    # processing clock (the commit's physical time) in the envelope.
    assert ours_src["ts_ms"] == 0 and ours_value["payload"]["ts_ms"] == 0
    assert {k: ours_src[k] for k in ("version", "name", "snapshot", "db", "table", "row")} == \
        {k: dbz_src[k] for k in ("version", "name", "snapshot", "db", "table", "row")}


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_datatype_insert_field_order_is_ticdcs():
    """Semantically equal to Debezium, but the bytes follow TiCDC's writer order."""
    e = enc(cluster_id="dbserver1", time_zone="UTC")
    [msg] = e.encode(row_event(datatype_table(), Op.INSERT, None, datatype_row()))
    assert keys(msg.value) == ["payload", "schema"]
    assert keys(msg.value, "payload") == ["source", "ts_ms", "transaction", "op", "before", "after"]
    assert keys(msg.value, "schema") == ["type", "optional", "name", "version", "fields"]
    assert keys(msg.key, "schema") == ["type", "name", "optional", "fields"]
    assert keys(msg.value, "payload", "source") == [
        "version", "connector", "name", "ts_ms", "snapshot", "db", "table", "server_id", "gtid",
        "file", "pos", "row", "thread", "query", "commit_ts", "cluster_id"]
    assert keys(msg.value, "payload", "after") == [c.name for c in datatype_table().columns]
    # No whitespace anywhere: TiCDC's JSON writer is compact.
    assert b": " not in msg.value and b", " not in msg.value


# --------------------------------------------------------------------------------------------
# TiCDC's codec_test.go cases (tinyint table, cluster "test_cluster", clock 1701326309 s)
# --------------------------------------------------------------------------------------------

def tiny_table() -> TableSchema:
    return TableSchema("test", "table1", 1, (col("tiny", int_type("tinyint"), nullable=False),),
                       (Index("PRIMARY", ("tiny",), primary=True),), schema_version=1, pk_is_handle=True)


TS1 = tso.compose(T0, 0)

SOURCE_SCHEMA_NO_EXT = [
    {"type": "string", "optional": False, "field": "version"},
    {"type": "string", "optional": False, "field": "connector"},
    {"type": "string", "optional": False, "field": "name"},
    {"type": "int64", "optional": False, "field": "ts_ms"},
    {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
     "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
    {"type": "string", "optional": False, "field": "db"},
    {"type": "string", "optional": True, "field": "sequence"},
    {"type": "string", "optional": True, "field": "table"},
    {"type": "int64", "optional": False, "field": "server_id"},
    {"type": "string", "optional": True, "field": "gtid"},
    {"type": "string", "optional": False, "field": "file"},
    {"type": "int64", "optional": False, "field": "pos"},
    {"type": "int32", "optional": False, "field": "row"},
    {"type": "int64", "optional": True, "field": "thread"},
    {"type": "string", "optional": True, "field": "query"},
]


@pytest.mark.rules("DBZ-KEY-2", "DBZ-KEY-3", "DBZ-SCHEMA-3", "DBZ-DML-2", "DBZ-DML-3", "DBZ-EXTENSION-1")
def test_insert_exact_bytes_like_ticdc_codec_test():
    e = enc(cluster_id="test_cluster")
    [msg] = e.encode(row_event(tiny_table(), Op.INSERT, None, {"tiny": 1}, commit_ts=TS1))
    assert msg.key == (b'{"payload":{"tiny":1},"schema":{"type":"struct","name":"test_cluster.test.table1.Key",'
                       b'"optional":false,"fields":[{"type":"int16","optional":false,"field":"tiny"}]}}')
    source = (b'{"version":"2.4.0.Final","connector":"TiCDC","name":"test_cluster","ts_ms":1701326309000,'
              b'"snapshot":"false","db":"test","table":"table1","server_id":0,"gtid":null,"file":"",'
              b'"pos":0,"row":0,"thread":0,"query":null,"commit_ts":' + str(TS1).encode() +
              b',"cluster_id":"test_cluster"}')
    assert msg.value.startswith(b'{"payload":{"source":' + source +
                                b',"ts_ms":1701326309000,"transaction":null,"op":"c","before":null,'
                                b'"after":{"tiny":1}},"schema":{"type":"struct","optional":false,'
                                b'"name":"test_cluster.test.table1.Envelope","version":1,"fields":[')
    schema = json.loads(msg.value)["schema"]
    value_fields = [{"type": "int16", "optional": False, "field": "tiny"}]
    assert schema["fields"][0] == {"type": "struct", "optional": True, "name": "test_cluster.test.table1.Value",
                                   "field": "before", "fields": value_fields}
    assert schema["fields"][1]["field"] == "after" and schema["fields"][1]["fields"] == value_fields
    assert schema["fields"][2] == {"type": "struct", "fields": SOURCE_SCHEMA_NO_EXT, "optional": False,
                                   "name": "io.debezium.connector.mysql.Source", "field": "source"}
    assert schema["fields"][3:] == [
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
        {"type": "struct", "fields": [
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": False, "field": "total_order"},
            {"type": "int64", "optional": False, "field": "data_collection_order"}],
         "optional": True, "name": "event.block", "version": 1, "field": "transaction"},
    ]
    assert msg.ts == TS1 and msg.headers == ()


@pytest.mark.rules("DBZ-DML-2", "DBZ-DML-4", "DBZ-SCHEMA-1")
def test_update_and_delete_like_ticdc_codec_test():
    t = tiny_table()
    e = enc(cluster_id="test_cluster", disable_schema=True)
    [upd] = e.encode(row_event(t, Op.UPDATE, {"tiny": 2}, {"tiny": 1}, commit_ts=TS1))
    assert upd.key == b'{"payload":{"tiny":1}}'
    p = json.loads(upd.value)["payload"]
    assert (p["op"], p["before"], p["after"]) == ("u", {"tiny": 2}, {"tiny": 1})
    assert keys(upd.value, "payload")[-3:] == ["op", "before", "after"]

    [dele] = e.encode(row_event(t, Op.DELETE, {"tiny": 2}, None, commit_ts=TS1))
    # The key of a delete comes from the old row; the value writes "after" before "before".
    assert dele.key == b'{"payload":{"tiny":2}}'
    assert keys(dele.value, "payload")[-3:] == ["op", "after", "before"]
    p = json.loads(dele.value)["payload"]
    assert (p["op"], p["after"], p["before"]) == ("d", None, {"tiny": 2})

    # [sink.debezium] output-old-value = false: updates carry no "before" at all.
    e2 = enc(cluster_id="test_cluster", disable_schema=True, output_old_value=False)
    [upd2] = e2.encode(row_event(t, Op.UPDATE, {"tiny": 2}, {"tiny": 1}, commit_ts=TS1))
    assert keys(upd2.value, "payload") == ["source", "ts_ms", "transaction", "op", "after"]


def test_output_old_value_read_from_sink_config():
    cfg = SinkConfig(protocol="debezium", output_old_value=False, debezium_disable_schema=True)
    e = PROTOCOL.new_encoder(cfg, "t", 0)
    [m] = e.encode(row_event(tiny_table(), Op.UPDATE, {"tiny": 2}, {"tiny": 1}))
    assert "before" not in json.loads(m.value)["payload"]


# --------------------------------------------------------------------------------------------
# Smoke types: INT PK, BIGINT UNSIGNED, VARCHAR PK (non-ASCII), DECIMAL(20,6), DATETIME(3),
# BLOB (all 256 byte values), nullable NULLs
# --------------------------------------------------------------------------------------------

def smoke_table() -> TableSchema:
    cols = (
        col("id", int_type(), nullable=False),
        col("name", varchar(64), nullable=False),
        col("u", int_type("bigint", True)),
        col("amount", decimal(20, 6)),
        col("at", TiDBType("datetime", decimal=3)),
        col("data", TiDBType("blob")),
        col("note", varchar(32)),
    )
    return TableSchema("shop", "orders", 7, cols, (Index("PRIMARY", ("id", "name"), primary=True),),
                       schema_version=1)


ALL_BYTES = bytes(range(256))


@pytest.mark.rules("DBZ-KEY-2", "DBZ-TYPEMAP-3", "DBZ-TYPEMAP-4")
def test_smoke_types_exact_payload():
    t = smoke_table()
    after = {"id": 42, "name": "Zoë 東京 🚀", "u": 18446744073709551615, "amount": "12345678901234.123456",
             "at": "2023-11-30 12:34:56.120", "data": ALL_BYTES, "note": None}
    e = enc(disable_schema=True)
    [m] = e.encode(row_event(t, Op.INSERT, None, after, commit_ts=TS1))
    # The key holds the whole composite primary key, in table order; text stays raw UTF-8.
    assert m.key == '{"payload":{"id":42,"name":"Zoë 東京 🚀"}}'.encode("utf-8")
    b64 = base64.b64encode(ALL_BYTES).decode()
    expected_after = (
        '{"id":42,"name":"Zoë 東京 🚀","u":-1,"amount":12345678901234.123,'
        '"at":1701347696120,"data":"' + b64 + '","note":null}'
    ).encode("utf-8")
    assert m.value.endswith(b'"op":"c","before":null,"after":' + expected_after + b"}}")


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_bigint_unsigned_wraps_to_int64():
    t = smoke_table()
    e = enc(disable_schema=True)
    got = []
    for u in (0, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1):
        [m] = e.encode(row_event(t, Op.INSERT, None, {"id": 1, "name": "a", "u": u}))
        got.append(json.loads(m.value)["payload"]["after"]["u"])
    # TiCDC writes int64(v); the maximum is special-cased to -1, which is the same bit pattern.
    assert got == [0, 2**63 - 1, -(2**63), -2, -1]


def test_smoke_schema_fields():
    e = enc(cluster_id="default")
    [m] = e.encode(row_event(smoke_table(), Op.INSERT, None, {"id": 1, "name": "a"}))
    fields = json.loads(m.value)["schema"]["fields"][1]["fields"]
    assert fields == [
        {"type": "int32", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int64", "optional": True, "field": "u"},
        {"type": "double", "optional": True, "field": "amount"},
        {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1, "field": "at"},
        {"type": "string", "optional": True, "field": "data"},
        {"type": "string", "optional": True, "field": "note"},
    ]
    assert json.loads(m.key)["schema"]["name"] == "default.shop.orders.Key"


@pytest.mark.rules("DBZ-EXTENSION-1", "DBZ-EXTENSION-2")
def test_tidb_extension_adds_tidb_type_and_source_fields():
    e = enc(enable_tidb_extension=True)
    [m] = e.encode(row_event(smoke_table(), Op.INSERT, None, {"id": 1, "name": "a"}))
    v = json.loads(m.value)
    fields = v["schema"]["fields"][1]["fields"]
    assert [f["tidb_type"] for f in fields] == [
        "int", "varchar", "bigint unsigned", "decimal", "datetime", "blob", "varchar"]
    assert list(fields[0].keys())[0] == "tidb_type"
    assert json.loads(m.key)["schema"]["fields"][0]["tidb_type"] == "int"
    src_fields = [f["field"] for f in v["schema"]["fields"][2]["fields"]]
    assert src_fields[-2:] == ["commit_ts", "cluster_id"]
    # Without the extension the payload still carries commit_ts/cluster_id, undeclared.
    [m2] = enc().encode(row_event(smoke_table(), Op.INSERT, None, {"id": 1, "name": "a"}))
    v2 = json.loads(m2.value)
    assert "commit_ts" in v2["payload"]["source"]
    assert [f["field"] for f in v2["schema"]["fields"][2]["fields"]][-1] == "query"
    assert "tidb_type" not in m2.value.decode()


def test_tiflow_profile_never_declares_commit_ts():
    e = enc(enable_tidb_extension=True, profile="tiflow", include_start_ts=True)
    [m] = e.encode(row_event(smoke_table(), Op.INSERT, None, {"id": 1, "name": "a"}, start_ts=9))
    v = json.loads(m.value)
    assert [f["field"] for f in v["schema"]["fields"][2]["fields"]][-1] == "query"
    assert "start_ts" not in v["payload"]["source"]


def test_include_start_ts():
    e = enc(include_start_ts=True)
    [m] = e.encode(row_event(tiny_table(), Op.INSERT, None, {"tiny": 1}, commit_ts=TS1, start_ts=5))
    assert keys(m.value, "payload", "source")[-3:] == ["commit_ts", "start_ts", "cluster_id"]
    assert json.loads(m.value)["payload"]["source"]["start_ts"] == 5
    assert json.loads(m.value)["schema"]["fields"][2]["fields"][-1] == {
        "type": "int64", "optional": False, "field": "start_ts"}
    cfg = SinkConfig(protocol="debezium")
    object.__setattr__(cfg, "debezium_include_start_ts", True)
    assert DebeziumOptions.from_sink_config(cfg).include_start_ts


# --------------------------------------------------------------------------------------------
# Type mapping details
# --------------------------------------------------------------------------------------------

def one_col_table(name: str, t: TiDBType, nullable=True, **kw) -> TableSchema:
    return TableSchema("d", "t", 1, (col("id", int_type(), nullable=False), col(name, t, nullable, **kw)),
                       (Index("PRIMARY", ("id",), primary=True),), schema_version=1)


def render_one(t: TiDBType, value, nullable=True, tz="UTC", profile="ticdc", **colkw):
    table = one_col_table("c", t, nullable, **colkw)
    [m] = enc(time_zone=tz, profile=profile, disable_schema=True).encode(
        row_event(table, Op.INSERT, None, {"id": 1, "c": value}))
    return m.value.split(b'"after":')[1][len(b'{"id":1,"c":'):-3]


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_integer_schema_types():
    cases = {
        ("tinyint", False): "int16", ("tinyint", True): "int16",
        ("smallint", False): "int16", ("smallint", True): "int32",
        ("mediumint", False): "int32", ("mediumint", True): "int32",
        ("int", False): "int32", ("int", True): "int64",
        ("bigint", False): "int64", ("bigint", True): "int64",
    }
    for (base, unsigned), kind in cases.items():
        [m] = enc().encode(row_event(one_col_table("c", int_type(base, unsigned)), Op.INSERT, None, {"id": 1, "c": 1}))
        assert json.loads(m.value)["schema"]["fields"][1]["fields"][1]["type"] == kind, (base, unsigned)


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_bit_little_endian_and_bool():
    assert render_one(TiDBType("bit", flen=1), 0) == b"false"
    assert render_one(TiDBType("bit", flen=1), 1) == b"true"
    assert render_one(TiDBType("bit", flen=16), 0x0102) == b'"' + base64.b64encode(b"\x02\x01") + b'"'
    assert render_one(TiDBType("bit", flen=64), 2**64 - 1) == b'"' + base64.b64encode(b"\xff" * 8) + b'"'
    [m] = enc().encode(row_event(one_col_table("c", TiDBType("bit", flen=12)), Op.INSERT, None, {"id": 1, "c": 1}))
    assert json.loads(m.value)["schema"]["fields"][1]["fields"][1] == {
        "type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "version": 1,
        "parameters": {"length": "12"}, "field": "c"}


@pytest.mark.rules("DBZ-TYPEMAP-7")
def test_floats_follow_go_formatting():
    assert render_one(TiDBType("double"), 100.0) == b"100"
    assert render_one(TiDBType("double"), 1e21) == b"1e+21"
    assert render_one(TiDBType("double"), 1e20) == b"100000000000000000000"
    assert render_one(TiDBType("double"), 1.5e-7) == b"1.5e-07"
    assert render_one(TiDBType("double"), -0.25) == b"-0.25"
    # Spec 000, differences: "Debezium FLOAT data convert 5.61 to 5.610000133514404, but TiCDC
    # does not" -- TiCDC writes the shortest float32 digits.
    assert render_one(TiDBType("float"), 5.61) == b"5.61"
    assert render_one(TiDBType("float"), 12345.12345) == b"12345.123"
    assert go_float32(16777217.0) == "16777216"
    assert go_float64(0.1 + 0.2) == "0.30000000000000004"
    # DECIMAL is a double in TiCDC (spec 000: "TiCDC uses the float64 type").
    assert render_one(decimal(20, 6), "-0.000001") == b"-0.000001"
    assert render_one(decimal(30, 2), "1234567890123456789012.50") == b"1.2345678901234568e+21"


def test_float_with_decimals_declared_double():
    [m] = enc().encode(row_event(one_col_table("c", TiDBType("float", flen=7, decimal=3)), Op.INSERT, None,
                                 {"id": 1, "c": 1.5}))
    assert json.loads(m.value)["schema"]["fields"][1]["fields"][1]["type"] == "double"


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_temporal_types():
    assert render_one(TiDBType("date"), "1970-01-01") == b"0"
    assert render_one(TiDBType("date"), "1969-12-31") == b"-1"
    # Years below 70 / 100 are read as 20xx / 19xx (TiCDC's AddDate adjustment).
    assert render_one(TiDBType("date"), "0018-01-01") == render_one(TiDBType("date"), "2018-01-01")
    assert render_one(TiDBType("date"), "0099-01-01") == render_one(TiDBType("date"), "1999-01-01")
    # Zero dates: null when nullable, 0 when NOT NULL.
    assert render_one(TiDBType("date"), "0000-00-00") == b"null"
    assert render_one(TiDBType("date"), "0000-00-00", nullable=False) == b"0"
    assert render_one(TiDBType("datetime", decimal=6), "0000-00-00 00:00:00.000000", nullable=False) == b"0"
    assert render_one(TiDBType("datetime", decimal=3), "1969-12-31 23:59:59.999") == b"-1"
    assert render_one(TiDBType("datetime", decimal=4), "1970-01-01 00:00:00.0001") == b"100"
    assert render_one(TiDBType("time", decimal=0), "838:59:59") == str(3020399 * 10**6).encode()
    assert render_one(TiDBType("time", decimal=1), "-00:00:00.5") == b"-500000"
    assert render_one(TiDBType("year"), 1901) == b"1901"


def test_timestamp_zoned_in_utc_from_upstream_time_zone():
    t3 = TiDBType("timestamp", decimal=3)
    assert render_one(t3, "2023-11-30 20:34:56.120", tz="Asia/Shanghai") == b'"2023-11-30T12:34:56.120Z"'
    assert render_one(t3, "2023-11-30 12:34:56.120", tz="UTC") == b'"2023-11-30T12:34:56.120Z"'
    assert render_one(TiDBType("timestamp"), "2023-07-01 00:00:00", tz="America/New_York") == \
        b'"2023-07-01T04:00:00Z"'
    assert render_one(TiDBType("timestamp"), "2023-01-01 00:00:00", tz="America/New_York") == \
        b'"2023-01-01T05:00:00Z"'
    # The zero TIMESTAMP is written as the epoch.
    assert render_one(TiDBType("timestamp"), "0000-00-00 00:00:00") == b'"1970-01-01T00:00:00Z"'
    # A wall clock inside a DST gap cannot come from TiDB; TiCDC's GoTime check fails on it.
    with pytest.raises(EncodeFailure):
        render_one(TiDBType("timestamp"), "2023-03-12 02:30:00", tz="America/New_York")


@pytest.mark.rules("DBZ-TYPEMAP-1")
def test_enum_set_json_and_text():
    e = TiDBType("enum", elements=("x,y", "it's", "z"))
    [m] = enc().encode(row_event(one_col_table("c", e), Op.INSERT, None, {"id": 1, "c": "x,y"}))
    f = json.loads(m.value)["schema"]["fields"][1]["fields"][1]
    # ENUM elements are escaped (',' -> '\,'), SET elements are not.
    assert f["name"] == "io.debezium.data.Enum" and f["parameters"] == {"allowed": "x\\,y,it's,z"}
    s = TiDBType("set", elements=("a", "b"))
    [m] = enc().encode(row_event(one_col_table("c", s), Op.INSERT, None, {"id": 1, "c": "a,b"}))
    f = json.loads(m.value)["schema"]["fields"][1]["fields"][1]
    assert f["name"] == "io.debezium.data.EnumSet" and f["parameters"] == {"allowed": "a,b"}
    assert json.loads(m.value)["payload"]["after"]["c"] == "a,b"
    [m] = enc().encode(row_event(one_col_table("c", TiDBType("json")), Op.INSERT, None,
                                 {"id": 1, "c": '{"a": [1, 2]}'}))
    assert json.loads(m.value)["payload"]["after"]["c"] == '{"a": [1, 2]}'
    assert json.loads(m.value)["schema"]["fields"][1]["fields"][1]["name"] == "io.debezium.data.Json"
    # json-iterator escapes: short forms for \n \r \t, \u00XX for other control bytes, nothing else.
    assert render_one(TiDBType("text"), 'a"\\\n\r\t\x08\x0c\x1f\x7f\u2028é') == \
        '"a\\"\\\\\\n\\r\\t\\u0008\\u000c\\u001f\x7f\u2028é"'.encode("utf-8")


def test_null_replaced_by_column_default():
    """TiCDC writes a column's DEFAULT instead of NULL when the column has one (codec.go
    writeDebeziumFieldValue, both TiCDC generations)."""
    assert render_one(int_type(), None, has_default=True, default=5) == b"5"
    assert render_one(int_type(), None) == b"null"
    assert render_one(int_type(), None, has_default=True, default=None) == b"null"
    assert render_one(varchar(10), None, has_default=True, default="dflt") == b'"dflt"'
    assert render_one(TiDBType("varbinary", flen=4), None, has_default=True, default=b"\x00\xff") == b'"AP8="'
    assert render_one(decimal(10, 2), None, has_default=True, default="1.50") == b"1.5"
    assert render_one(TiDBType("enum", elements=("a", "b")), None, has_default=True, default="b") == b'"b"'
    assert render_one(TiDBType("bit", flen=8), None, has_default=True, default=5) == b'"BQ=="'
    assert render_one(TiDBType("datetime"), None, has_default=True, default="2023-01-02 00:00:00") == \
        b"1672617600000"
    assert render_one(TiDBType("datetime"), None, has_default=True, default="CURRENT_TIMESTAMP") == b"0"
    assert render_one(TiDBType("timestamp"), None, has_default=True, default="CURRENT_TIMESTAMP") == b"null"
    # The TIMESTAMP default is kept in UTC by TiDB but read back as a wall clock of the
    # changefeed zone, so it is shifted by the zone's offset (TiCDC behaviour, reproduced).
    assert render_one(TiDBType("timestamp"), None, tz="Asia/Shanghai", has_default=True,
                      default="2023-01-01 08:00:00") == b'"2022-12-31T16:00:00Z"'
    # New TiCDC reads a string datum as a Duration (0) and panics for DATE; classic TiCDC parses.
    assert render_one(TiDBType("time"), None, has_default=True, default="01:00:00") == b"0"
    assert render_one(TiDBType("time"), None, profile="tiflow", has_default=True, default="01:00:00") == \
        b"3600000000"
    with pytest.raises(EncodeFailure):
        render_one(TiDBType("date"), None, has_default=True, default="2023-01-01")
    assert render_one(TiDBType("date"), None, profile="tiflow", has_default=True, default="1970-01-02") == b"1"


def test_field_schema_defaults():
    def schema_of(t, value, **kw):
        [m] = enc().encode(row_event(one_col_table("c", t, **kw), Op.INSERT, None, {"id": 1, "c": value}))
        return json.loads(m.value)["schema"]["fields"][1]["fields"][1]

    assert schema_of(int_type(), 1, has_default=True, default=7) == {
        "type": "int32", "optional": True, "field": "c", "default": 7}
    assert b'"default":7}' in enc().encode(row_event(
        one_col_table("c", int_type(), has_default=True, default=7), Op.INSERT, None, {"id": 1, "c": 1}))[0].value
    assert schema_of(TiDBType("bit", flen=1), 0, has_default=True, default=1)["default"] is True
    assert schema_of(TiDBType("date"), "2000-01-01", has_default=True, default="1970-01-11")["default"] == 10
    assert schema_of(TiDBType("date"), "2000-01-01", nullable=False, has_default=True,
                     default="0000-00-00")["default"] == 0
    assert schema_of(TiDBType("datetime", decimal=6), "2000-01-01 00:00:00.000000", has_default=True,
                     default="1970-01-01 00:00:01.000001")["default"] == 1000001
    assert schema_of(TiDBType("timestamp"), "2000-01-01 00:00:00", nullable=False, has_default=True,
                     default="CURRENT_TIMESTAMP")["default"] == "1970-01-01T00:00:00Z"
    assert "default" not in schema_of(TiDBType("timestamp"), "2000-01-01 00:00:00", has_default=True,
                                      default="CURRENT_TIMESTAMP")
    # The schema reads the (UTC) stored TIMESTAMP default as UTC: no shift here.
    [m] = enc(time_zone="Asia/Shanghai").encode(row_event(
        one_col_table("c", TiDBType("timestamp"), has_default=True, default="2023-01-01 08:00:00"),
        Op.INSERT, None, {"id": 1, "c": "2023-01-01 08:00:00"}))
    assert json.loads(m.value)["schema"]["fields"][1]["fields"][1]["default"] == "2023-01-01T00:00:00Z"
    assert schema_of(TiDBType("time"), "00:00:00", has_default=True, default="-01:00:00")["default"] == -3600000000
    assert schema_of(TiDBType("year"), 2000, has_default=True, default=2023)["default"] == 2023
    assert schema_of(varchar(5), "v", has_default=True, default="x")["default"] == "x"
    assert schema_of(TiDBType("bit", flen=12), 0, has_default=True, default=0x102)["default"] == \
        base64.b64encode(b"\x02\x01").decode()


# --------------------------------------------------------------------------------------------
# Keys: handle-key choice, sanitized names, tables without a handle
# --------------------------------------------------------------------------------------------

@pytest.mark.rules("DBZ-KEY-2")
def test_key_uses_smallest_not_null_unique_key_in_table_order():
    cols = (col("a", int_type(), nullable=False), col("b", int_type(), nullable=False),
            col("c", int_type(), nullable=False), col("n", int_type()))
    idx = (Index("uk_n", ("n",), unique=True),  # nullable: never a handle
           Index("uk_cb", ("c", "b"), unique=True),
           Index("uk_a", ("a",), unique=True))
    t = TableSchema("d", "t", 1, cols, idx, schema_version=1)
    [m] = enc(disable_schema=True).encode(row_event(t, Op.INSERT, None, {"a": 1, "b": 2, "c": 3, "n": 4}))
    assert m.key == b'{"payload":{"a":1}}'
    t2 = TableSchema("d", "t", 1, cols, idx[:2], schema_version=1)
    [m] = enc(disable_schema=True).encode(row_event(t2, Op.INSERT, None, {"a": 1, "b": 2, "c": 3, "n": 4}))
    assert m.key == b'{"payload":{"b":2,"c":3}}'
    t3 = TableSchema("d", "t", 1, cols, idx[:1], schema_version=1)
    [m] = enc().encode(row_event(t3, Op.INSERT, None, {"a": 1, "b": 2, "c": 3, "n": 4}))
    assert json.loads(m.key) == {"payload": {}, "schema": {
        "type": "struct", "name": "default.d.t.Key", "optional": False, "fields": []}}


def test_schema_names_are_sanitized():
    t = TableSchema("1db", "tab-le.x", 1, (col("id", int_type(), nullable=False),),
                    (Index("PRIMARY", ("id",), primary=True),), schema_version=1)
    [m] = enc(cluster_id="my-cluster").encode(row_event(t, Op.INSERT, None, {"id": 1}))
    v = json.loads(m.value)
    assert v["schema"]["name"] == "my_cluster._1db.tab_le.x.Envelope"
    assert v["payload"]["source"]["name"] == "my-cluster"
    assert v["payload"]["source"]["db"] == "1db"


# --------------------------------------------------------------------------------------------
# WATERMARK (spec 000 "WATERMARK event"; TiCDC codec_test.go TestCheckPointEvent)
# --------------------------------------------------------------------------------------------

@pytest.mark.rules("DBZ-WATERMARK-1")
def test_watermark_only_with_tidb_extension():
    assert enc().encode(WatermarkEvent(3)) == []
    assert PROTOCOL.sends_watermarks(SinkConfig(protocol="debezium")) is False
    assert PROTOCOL.sends_watermarks(SinkConfig(protocol="debezium", enable_tidb_extension=True)) is True


@pytest.mark.rules("DBZ-WATERMARK-2", "DBZ-WATERMARK-3", "DBZ-WATERMARK-4")
def test_watermark_message():
    [m] = enc(cluster_id="test_cluster", enable_tidb_extension=True).encode(WatermarkEvent(3))
    assert m.key == (b'{"payload":{},"schema":{"type":"struct","name":"test_cluster.watermark.Key",'
                     b'"optional":false,"fields":[]}}')
    v = json.loads(m.value)
    assert v["payload"] == {
        "source": {"version": "2.4.0.Final", "connector": "TiCDC", "name": "test_cluster", "ts_ms": 0,
                   "snapshot": "false", "db": "", "table": "", "server_id": 0, "gtid": None, "file": "",
                   "pos": 0, "row": 0, "thread": 0, "query": None, "commit_ts": 3,
                   "cluster_id": "test_cluster"},
        "ts_ms": 0, "transaction": None, "op": "m"}
    assert keys(m.value, "payload") == ["source", "ts_ms", "transaction", "op"]
    assert v["schema"]["name"] == "test_cluster.watermark.Envelope"
    assert [f["field"] for f in v["schema"]["fields"]] == ["source", "op", "ts_ms", "transaction"]
    # With the extension on, the source schema declares commit_ts and cluster_id.
    assert [f["field"] for f in v["schema"]["fields"][0]["fields"]][-2:] == ["commit_ts", "cluster_id"]
    assert m.ts == 3
    [m2] = enc(enable_tidb_extension=True, disable_schema=True).encode(WatermarkEvent(TS1))
    assert m2.key == b'{"payload":{}}'
    assert json.loads(m2.value)["payload"]["ts_ms"] == T0


# --------------------------------------------------------------------------------------------
# DDL (spec 000 "DDL event"; TiCDC codec_test.go TestDDLEvent)
# --------------------------------------------------------------------------------------------

def ddl_table(name: str) -> TableSchema:
    return TableSchema("test", name, 5, (col("id", TiDBType("int", flen=10), nullable=False),),
                       (Index("PRIMARY", ("id",), primary=True),), schema_version=1, pk_is_handle=True)


def id_column(**over):
    c = {"name": "id", "jdbcType": 4, "nativeType": None, "comment": None, "defaultValueExpression": None,
         "enumValues": None, "typeName": "INT", "typeExpression": "INT", "charsetName": None, "length": 10,
         "scale": None, "position": 1, "optional": False, "autoIncremented": False, "generated": False}
    c.update(over)
    return c


@pytest.mark.rules("DBZ-KEY-1", "DBZ-DDL-1", "DBZ-DDL-3", "DBZ-DDL-4", "DBZ-SCHEMA-2", "DBZ-EXTENSION-1")
def test_ddl_rename_like_ticdc_codec_test():
    d = DDL(1, DDLType.RENAME_TABLE, "RENAME TABLE test.table1 to test.table2", "test", "table2",
            ddl_table("table2"), ddl_table("table1"))
    [m] = enc(cluster_id="test_cluster").encode(DDLEvent(d))
    assert m.key == (b'{"payload":{"databaseName":"test"},"schema":{"type":"struct",'
                     b'"name":"io.debezium.connector.mysql.SchemaChangeKey","optional":false,"version":1,'
                     b'"fields":[{"field":"databaseName","optional":false,"type":"string"}]}}')
    v = json.loads(m.value)
    assert v["payload"]["source"] == {
        "version": "2.4.0.Final", "connector": "TiCDC", "name": "test_cluster", "ts_ms": 0,
        "snapshot": "false", "db": "test", "table": "table2", "server_id": 0, "gtid": None, "file": "",
        "pos": 0, "row": 0, "thread": 0, "query": None, "commit_ts": 1, "cluster_id": "test_cluster"}
    assert keys(m.value, "payload") == ["source", "ts_ms", "databaseName", "schemaName", "ddl", "tableChanges"]
    assert v["payload"]["tableChanges"] == [{
        "type": "ALTER",
        # TiCDC writes the old name first (codec.go; spec 000's example shows them the other way).
        "id": '"test"."table1","test"."table2"',
        "table": {"defaultCharsetName": "utf8mb4", "primaryKeyColumnNames": ["id"],
                  "columns": [id_column()], "comment": None}}]
    schema = v["schema"]
    assert (schema["name"], schema["version"], schema["optional"]) == (
        "io.debezium.connector.mysql.SchemaChangeValue", 1, False)
    assert [f["field"] for f in schema["fields"]] == [
        "source", "ts_ms", "databaseName", "schemaName", "ddl", "tableChanges"]
    assert schema["fields"][0]["fields"] == [
        {"field": k["field"], **{x: k[x] for x in k if x != "field"}} for k in SOURCE_SCHEMA_NO_EXT]
    column_schema = schema["fields"][5]["items"]["fields"][2]["fields"][2]["items"]["fields"]
    assert [f["field"] for f in column_schema] == [
        "name", "jdbcType", "nativeType", "typeName", "typeExpression", "charsetName", "length", "scale",
        "position", "optional", "autoIncremented", "generated", "comment", "defaultValueExpression",
        "enumValues"]


@pytest.mark.rules("DBZ-DDL-3", "DBZ-SCHEMA-1")
def test_ddl_create_and_drop_without_schema():
    e = enc(cluster_id="test_cluster", disable_schema=True)
    create = DDL(1, DDLType.CREATE_TABLE, "CREATE TABLE test.table1(id int(10) primary key)", "test", "table1",
                 ddl_table("table1"), None)
    [m] = e.encode(DDLEvent(create))
    assert m.key == b'{"payload":{"databaseName":"test"}}'
    v = json.loads(m.value)
    assert set(v) == {"payload"}
    assert v["payload"]["tableChanges"] == [{
        "type": "CREATE", "id": '"test"."table1"',
        "table": {"defaultCharsetName": "utf8mb4", "primaryKeyColumnNames": ["id"],
                  "columns": [id_column()], "comment": None}}]
    drop = DDL(1, DDLType.DROP_TABLE, "DROP TABLE test.table2", "test", "table2", None, ddl_table("table2"))
    [m] = e.encode(DDLEvent(drop))
    assert json.loads(m.value)["payload"]["tableChanges"] == [
        {"type": "DROP", "id": '"test"."table2"', "table": None}]
    truncate = DDL(1, DDLType.TRUNCATE_TABLE, "TRUNCATE TABLE test.t", "test", "t", ddl_table("t"), ddl_table("t"))
    assert json.loads(e.encode(DDLEvent(truncate))[0].value)["payload"]["tableChanges"] == []
    schema_ddl = DDL(1, DDLType.CREATE_SCHEMA, "CREATE DATABASE test", "test", "", None, None)
    [m] = e.encode(DDLEvent(schema_ddl))
    v = json.loads(m.value)["payload"]
    assert (v["tableChanges"], v["source"]["table"], v["databaseName"]) == ([], "", "test")


@pytest.mark.rules("DBZ-BROADCAST-1", "DBZ-DDL-3")
def test_ddl_types_and_broadcast():
    assert PROTOCOL.ddl_to_all_partitions(SinkConfig(protocol="debezium")) is True
    assert PROTOCOL.uses_bootstrap is False
    assert encoder_module("debezium") is PROTOCOL
    e = enc()
    t = ddl_table("t")
    kinds = {}
    for ty in DDLType:
        d = DDL(1, ty, "ALTER TABLE test.t COMMENT 'x'", "test", "t", t, t)
        msgs = e.encode(DDLEvent(d))
        if not msgs:
            kinds[ty] = "skipped"
            continue
        changes = json.loads(msgs[0].value)["payload"]["tableChanges"]
        kinds[ty] = changes[0]["type"] if changes else None
    assert kinds[DDLType.DROP_INDEX] == "DROP"  # TiCDC files DROP INDEX under DROP
    assert kinds[DDLType.ADD_COLUMN] == kinds[DDLType.RENAME_INDEX] == "ALTER"
    assert kinds[DDLType.TRUNCATE_TABLE] is None  # no tableChanges entry
    assert kinds[DDLType.ADD_FOREIGN_KEY] == "skipped"
    # A DDL type TiCDC's codec does not know (e.g. ADD FOREIGN KEY, code 9) is skipped.
    assert e.encode(DDLEvent(DDL(1, 9, "ALTER TABLE t ADD FOREIGN KEY ...", "test", "t", t, t))) == []
    assert e.encode(BootstrapEvent(t)) == [] and e.flush() == []


@pytest.mark.rules("DBZ-DDL-4")
def test_ddl_column_metadata_from_query_and_column_info():
    cols = (
        col("id", int_type("bigint", True), nullable=False, auto_increment=True),
        col("name", varchar(100), comment="user name", has_default=True, default="n/a"),
        col("created", TiDBType("datetime"), has_default=True, default="2023-01-01 00:00:00"),
        col("seen", TiDBType("timestamp", decimal=3), has_default=True, default="CURRENT_TIMESTAMP"),
        col("kind", TiDBType("enum", elements=("a", "b"))),
        col("price", decimal(10, 2), has_default=True, default="1.50"),
        col("ratio", TiDBType("double", flen=10, decimal=3)),
        col("flags", TiDBType("bit", flen=10), has_default=True, default=5),
        col("bin", TiDBType("varbinary", flen=16)),
        col("y", TiDBType("year")),
    )
    t = TableSchema("test", "t", 9, cols, (Index("PRIMARY", ("id",), primary=True),), schema_version=1,
                    pk_is_handle=True)
    query = ("CREATE TABLE `t` (`id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, "
             "`name` VARCHAR(100) DEFAULT 'n/a' COMMENT 'user name', `created` DATETIME DEFAULT '2023-01-01', "
             "`seen` TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), `kind` ENUM('a','b'), "
             "`price` DECIMAL(10,2) DEFAULT 1.5, `ratio` DOUBLE(10,3), `flags` BIT(10) DEFAULT b'101', "
             "`bin` VARBINARY(16), `y` YEAR, PRIMARY KEY (`id`))")
    [m] = enc().encode(DDLEvent(DDL(1, DDLType.CREATE_TABLE, query, "test", "t", t, None)))
    columns = json.loads(m.value)["payload"]["tableChanges"][0]["table"]["columns"]
    by = {c["name"]: c for c in columns}
    assert by["id"] == {
        "name": "id", "jdbcType": -5, "nativeType": None, "comment": None, "defaultValueExpression": None,
        "enumValues": None, "typeName": "BIGINT UNSIGNED", "typeExpression": "BIGINT UNSIGNED",
        "charsetName": None, "length": None, "scale": None, "position": 1, "optional": False,
        "autoIncremented": True, "generated": True}
    # Columns written in the statement lose their comment.
    assert by["name"]["comment"] is None and by["name"]["charsetName"] == "utf8mb4"
    assert (by["name"]["length"], by["name"]["defaultValueExpression"]) == (100, "n/a")
    # DATETIME/TIMESTAMP/YEAR take fsp and DEFAULT from the statement text: "DATETIME" leaves
    # the fsp unspecified (null length) and the literal is kept as written.
    assert (by["created"]["length"], by["created"]["defaultValueExpression"]) == (None, "2023-01-01")
    assert (by["seen"]["length"], by["seen"]["defaultValueExpression"], by["seen"]["jdbcType"]) == (
        3, "1970-01-01 00:00:00", 2014)
    assert (by["kind"]["enumValues"], by["kind"]["length"], by["kind"]["jdbcType"]) == (["'a'", "'b'"], 1, 1)
    assert (by["price"]["length"], by["price"]["scale"], by["price"]["defaultValueExpression"]) == (10, 2, "1.50")
    assert (by["ratio"]["typeExpression"], by["ratio"]["typeName"], by["ratio"]["length"],
            by["ratio"]["scale"]) == ("DOUBLE(10,3)", "DOUBLE", 10, 3)
    assert (by["flags"]["defaultValueExpression"], by["flags"]["length"], by["flags"]["jdbcType"]) == (
        "101", 10, -7)
    assert (by["bin"]["jdbcType"], by["bin"]["charsetName"], by["bin"]["typeName"]) == (-3, None, "VARBINARY")
    assert (by["y"]["length"], by["y"]["jdbcType"]) == (None, 4)
    # "scale" is written as a Go float64: 2, not 2.0.
    assert b'"scale":2,' in m.value

    # An ALTER that does not spell the columns keeps TiDB's column info (fsp 0, YEAR width 4).
    [m] = enc().encode(DDLEvent(DDL(2, DDLType.ADD_INDEX, "ALTER TABLE t ADD INDEX ix(kind)", "test", "t", t, t)))
    by = {c["name"]: c for c in json.loads(m.value)["payload"]["tableChanges"][0]["table"]["columns"]}
    assert (by["created"]["length"], by["created"]["defaultValueExpression"]) == (0, "2023-01-01 00:00:00")
    assert by["y"]["length"] == 4 and by["name"]["comment"] == "user name"
