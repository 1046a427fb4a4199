"""The Simple protocol encoder against spec 004's examples, TiCDC's Avro schema and TiCDC's value rules."""
from __future__ import annotations

import base64
import io
import json
from dataclasses import replace

import cramjam
import fastavro
import orjson
import pytest
from fastavro.schema import to_parsing_canonical_form

from tests.conftest import SHARED
from tests.spec_examples.corpus import spec_message
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import ALL_BASE_TYPES, TiDBType, blob, datetime, decimal, int_type, varchar
from ticdc_contract.tso import compose, physical_ms
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.simple import PROTOCOL
from ticdc_generators.protocols.simple.avro_schema import MESSAGE_SCHEMA, MESSAGE_UNION_INDEX, decode_avro
from ticdc_generators.protocols.simple.encoder import (
    MessageTooLargeError,
    SimpleEncoder,
    SimpleEncoderConfig,
    new_encoder,
)
from ticdc_generators.protocols.simple.values import avro_value, json_value
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent, WatermarkEvent

REFERENCE_SCHEMA = (SHARED / "reference/ticdc/pkg/sink/codec/simple/message.json")
NS = "com.pingcap.simple.avro"


# spec 004's JSON examples in the spec example corpus (tests/spec_examples/), by message type.
SPEC_EXAMPLES = {"INSERT": "004-simple-dml-insert", "UPDATE": "004-simple-dml-update", "DELETE": "004-simple-dml-delete",
                 "WATERMARK": "004-simple-watermark", "BOOTSTRAP": "004-simple-bootstrap", "ALTER": "004-simple-ddl-alter"}


def _spec_examples() -> dict[str, dict]:
    """spec 004's JSON examples, keyed by message type, in the spec's own field order."""
    return {kind: spec_message(example_id) for kind, example_id in SPEC_EXAMPLES.items()}


@pytest.fixture(scope="module")
def spec() -> dict[str, dict]:
    return _spec_examples()


@pytest.fixture(scope="module")
def reference_schema():
    return fastavro.parse_schema(json.loads(REFERENCE_SCHEMA.read_text()))


def _encoder(fmt: str = "json", **kw) -> SimpleEncoder:
    return SimpleEncoder(SimpleEncoderConfig(encoding_format=fmt, **kw), "t", 0)


def _one(enc: SimpleEncoder, event):
    msgs = enc.encode(event)
    assert len(msgs) == 1
    return msgs[0]


def _json(enc: SimpleEncoder, event) -> dict:
    return orjson.loads(_one(enc, event).value)


def _avro(value: bytes, schema) -> dict:
    return fastavro.schemaless_reader(io.BytesIO(value), schema, schema)


# --- spec 004's `simple.user` table ------------------------------------------------------------
USER_V1 = 447984074911121426
USER_V2 = 447987408682614791


def user_table(version: int = USER_V1, with_create_time: bool = False, name: str = "user") -> TableSchema:
    cols = [
        Column("id", int_type("int"), nullable=False, column_id=1),
        Column("name", varchar(255), column_id=2),
        Column("age", int_type("int"), column_id=3),
        Column("score", TiDBType("float"), column_id=4),
    ]
    if with_create_time:
        cols.append(Column("createTime", TiDBType("timestamp"), column_id=5))
    return TableSchema(schema="simple", table=name, table_id=148, columns=tuple(cols),
                       indexes=(Index("PRIMARY", ("id",), primary=True, unique=True),),
                       schema_version=version, pk_is_handle=True)


JOHN = {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}


def _expect(example: dict, **changes) -> bytes:
    """The spec example with the fields our fake clock decides (buildTs) replaced, as bytes."""
    out = dict(example)
    out.update(changes)
    return orjson.dumps(out)


# --- Avro schema -------------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-AVRO-1")
def test_message_schema_equals_ticdc_message_json(reference_schema):
    assert to_parsing_canonical_form(MESSAGE_SCHEMA) == to_parsing_canonical_form(reference_schema)


def _type_shape(t):
    """A field type with only the attributes that make up its Avro meaning (message.json also
    carries a stray `default` inside the map type, which Avro ignores)."""
    if isinstance(t, list):
        return [_type_shape(x) for x in t]
    if isinstance(t, dict):
        return {k: _type_shape(v) for k, v in t.items() if k in ("type", "name", "items", "values", "symbols")}
    return t


@pytest.mark.rules("SIMPLE-AVRO-1")
def test_message_schema_records_match_field_by_field(reference_schema):
    ours = {r["name"]: r for r in MESSAGE_SCHEMA}
    theirs = {r["name"]: r for r in reference_schema}
    assert list(ours) == list(theirs)
    for name, record in theirs.items():
        assert [(f["name"], _type_shape(f["type"]), f.get("default", "<none>")) for f in ours[name]["fields"]] == \
               [(f["name"], _type_shape(f["type"]), f.get("default", "<none>")) for f in record["fields"]], name


@pytest.mark.rules("SIMPLE-AVRO-1")
def test_every_avro_datum_starts_with_the_message_union_index():
    enc = _encoder("avro")
    value = _one(enc, WatermarkEvent(compose(1_700_000_000_000, 3))).value
    assert MESSAGE_UNION_INDEX == 11
    assert value[0] == 0x16  # zigzag varint of union index 11, no registry framing


# --- spec 004 JSON examples ---------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-VERSION-1", "SIMPLE-DML-1", "SIMPLE-DML-2", "SIMPLE-SCHEMAVERSION-1", "SIMPLE-FIELDS-1")
def test_insert_matches_spec_example(spec):
    ex = spec["INSERT"]
    ts = ex["commitTs"]
    msg = _one(_encoder(), RowEvent(RowChange(user_table(), Op.INSERT, None, JOHN), ts, ts - 10))
    assert msg.value == _expect(ex, buildTs=physical_ms(ts))
    assert msg.key == b"" and msg.ts == ts


@pytest.mark.rules("SIMPLE-DML-3")
def test_update_matches_spec_example(spec):
    ex = spec["UPDATE"]
    ts = ex["commitTs"]
    change = RowChange(user_table(), Op.UPDATE, JOHN, dict(JOHN, score=95.0))
    msg = _one(_encoder(), RowEvent(change, ts, ts - 10))
    assert msg.value == _expect(ex, buildTs=physical_ms(ts))


@pytest.mark.rules("SIMPLE-DML-4")
def test_delete_matches_spec_example(spec):
    ex = spec["DELETE"]
    ts = ex["commitTs"]
    change = RowChange(user_table(), Op.DELETE, dict(JOHN, score=95.0), None)
    msg = _one(_encoder(), RowEvent(change, ts, ts - 10))
    assert msg.value == _expect(ex, buildTs=physical_ms(ts))


@pytest.mark.rules("SIMPLE-WATERMARK-2")
def test_watermark_matches_spec_example(spec):
    ex = spec["WATERMARK"]
    msg = _one(_encoder(), WatermarkEvent(ex["commitTs"]))
    assert msg.value == _expect(ex, buildTs=physical_ms(ex["commitTs"]))
    assert msg.key is None and msg.ts == ex["commitTs"]


@pytest.mark.rules(
    "SIMPLE-BOOTSTRAP-6", "SIMPLE-BOOTSTRAP-7", "SIMPLE-TABLESCHEMA-2", "SIMPLE-COLUMN-2", "SIMPLE-INDEX-2")
def test_bootstrap_matches_spec_example(spec):
    ex = spec["BOOTSTRAP"]
    msg = _one(_encoder(), BootstrapEvent(user_table(name="new_user")))
    # a fresh partition has seen no TSO: the bootstrap is built at its schema version
    assert msg.value == _expect(ex, buildTs=physical_ms(USER_V1))
    assert orjson.loads(msg.value)["commitTs"] == 0
    assert msg.key == b"" and msg.ts == USER_V1


def _alter_ddl(commit_ts: int) -> DDL:
    before, after = user_table(), user_table(USER_V2, with_create_time=True)
    return DDL(commit_ts, DDLType.ADD_COLUMN, "ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP",
               "simple", "user", after, before)


@pytest.mark.rules("SIMPLE-DDL-1", "SIMPLE-DDL-2", "SIMPLE-DDL-3")
def test_alter_ddl_matches_spec_example_under_tiflow(spec):
    ex = spec["ALTER"]
    msg = _one(_encoder(tiflow=True), DDLEvent(_alter_ddl(ex["commitTs"])))
    assert msg.value == _expect(ex, buildTs=physical_ms(ex["commitTs"]))
    assert msg.key is None and msg.ts == ex["commitTs"]


@pytest.mark.rules("SIMPLE-DDL-3")
def test_alter_ddl_under_new_ticdc_has_no_pre_table_schema(spec):
    ex = dict(spec["ALTER"])
    del ex["preTableSchema"]
    msg = _one(_encoder(), DDLEvent(_alter_ddl(ex["commitTs"])))
    assert msg.value == _expect(ex, buildTs=physical_ms(ex["commitTs"]))


# --- smoke types ----------------------------------------------------------------------------------
T0 = compose(1_767_225_600_000, 0)
ALL_BYTES = bytes(range(256))


def smoke_table(version: int = T0 + 1) -> TableSchema:
    return TableSchema(
        schema="smoke", table="orders", table_id=104, schema_version=version, pk_is_handle=True,
        columns=(
            Column("id", int_type("int"), nullable=False, column_id=1),
            Column("quantity", int_type("bigint", unsigned=True), nullable=False, column_id=2),
            Column("amount", decimal(20, 6), column_id=3),
            Column("created_at", datetime(3), column_id=4),
            Column("receipt", blob(), column_id=5),
            Column("note", varchar(255), column_id=6),
        ),
        indexes=(Index("PRIMARY", ("id",), primary=True, unique=True),),
    )


def customers_table() -> TableSchema:
    return TableSchema(
        schema="smoke", table="customers", table_id=106, schema_version=T0 + 2,
        columns=(
            Column("code", varchar(32), nullable=False, column_id=1),
            Column("email", varchar(64), column_id=2),
            Column("visits", int_type("int"), column_id=3),
        ),
        indexes=(Index("PRIMARY", ("code",), primary=True, unique=True),
                 Index("uk_email", ("email",), unique=True)),
    )


SMOKE_ROW = {"id": 2**31 - 1, "quantity": 2**64 - 1, "amount": "-99999999999999.999999",
             "created_at": "2023-11-30 12:34:56.120", "receipt": ALL_BYTES, "note": "résumé 中文 🚀 <b>&</b>"}
SMOKE_NULLS = {"id": 1, "quantity": 0, "amount": None, "created_at": None, "receipt": None, "note": None}


def test_smoke_types_in_json():
    ts = T0 + 100
    msg = _one(_encoder(), RowEvent(RowChange(smoke_table(), Op.INSERT, None, SMOKE_ROW), ts, ts - 1))
    data = orjson.loads(msg.value)["data"]
    assert list(data) == sorted(data)  # a Go map: keys sorted
    assert data == {
        "id": "2147483647",
        "quantity": "18446744073709551615",
        "amount": "-99999999999999.999999",
        "created_at": "2023-11-30 12:34:56.120",
        "receipt": base64.b64encode(ALL_BYTES).decode(),
        "note": "résumé 中文 🚀 <b>&</b>",
    }
    # Go's encoding/json escapes HTML characters; non-ASCII text stays raw UTF-8
    assert b'"r\xc3\xa9sum\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x9a\x80 \\u003cb\\u003e\\u0026\\u003c/b\\u003e"' \
        in msg.value


@pytest.mark.rules("SIMPLE-DML-3")
def test_nulls_in_json_and_update_carries_full_old_row():
    ts = T0 + 100
    after = dict(SMOKE_NULLS, quantity=5)
    msg = _json(_encoder(), RowEvent(RowChange(smoke_table(), Op.UPDATE, SMOKE_NULLS, after), ts, ts - 1))
    assert msg["data"] == {"amount": None, "created_at": None, "id": "1", "note": None, "quantity": "5",
                           "receipt": None}
    assert msg["old"]["quantity"] == "0" and msg["old"]["amount"] is None
    assert msg["schemaVersion"] == smoke_table().schema_version
    assert list(msg) == ["version", "database", "table", "tableID", "type", "commitTs", "buildTs",
                         "schemaVersion", "data", "old"]


def test_varchar_primary_key_row_in_json():
    ts = T0 + 100
    row = {"code": "C-ÄÖ-中", "email": None, "visits": -7}
    msg = _json(_encoder(), RowEvent(RowChange(customers_table(), Op.DELETE, row, None), ts, ts - 1))
    assert msg["type"] == "DELETE" and "data" not in msg
    assert msg["old"] == {"code": "C-ÄÖ-中", "email": None, "visits": "-7"}


@pytest.mark.rules("SIMPLE-AVRO-1", "SIMPLE-FORMAT-2")
def test_smoke_types_round_trip_through_the_reference_avro_schema(reference_schema):
    ts = T0 + 100
    enc = _encoder("avro", time_zone="Asia/Shanghai")
    msg = _one(enc, RowEvent(RowChange(smoke_table(), Op.UPDATE, SMOKE_NULLS, SMOKE_ROW), ts, ts - 1))
    assert msg.key == b""
    rec = _avro(msg.value, reference_schema)
    assert rec["type"] == "DML"
    p = rec["payload"]
    assert (p["version"], p["database"], p["table"], p["tableID"], p["type"]) == (1, "smoke", "orders", 104, "UPDATE")
    assert (p["commitTs"], p["buildTs"], p["schemaVersion"]) == (ts, physical_ms(ts), smoke_table().schema_version)
    assert p["claimCheckLocation"] is None and p["handleKeyOnly"] is None and p["checksum"] is None
    assert p["data"] == {
        "id": 2**31 - 1,
        "quantity": {"value": -1},  # UnsignedBigint carries int64(u64)
        "amount": "-99999999999999.999999",
        "created_at": "2023-11-30 12:34:56.120",
        "receipt": ALL_BYTES,
        "note": "résumé 中文 🚀 <b>&</b>",
    }
    assert p["old"] == {"id": 1, "quantity": {"value": 0}, "amount": None, "created_at": None,
                        "receipt": None, "note": None}
    # the reader names the branch it read: check the unsigned bigint really is the record branch
    named = fastavro.schemaless_reader(io.BytesIO(msg.value), reference_schema, reference_schema,
                                       return_record_name=True)
    assert named[1]["payload"][1]["data"]["quantity"] == (f"{NS}.UnsignedBigint", {"value": -1})


@pytest.mark.rules("SIMPLE-DML-2", "SIMPLE-DML-4", "SIMPLE-FORMAT-2")
def test_insert_and_delete_in_avro_carry_one_row_map(reference_schema):
    ts = T0 + 100
    enc = _encoder("avro")
    ins = _avro(_one(enc, RowEvent(RowChange(smoke_table(), Op.INSERT, None, SMOKE_NULLS), ts, ts)).value,
                reference_schema)["payload"]
    dele = _avro(_one(enc, RowEvent(RowChange(smoke_table(), Op.DELETE, SMOKE_NULLS, None), ts, ts)).value,
                 reference_schema)["payload"]
    assert ins["type"] == "INSERT" and ins["old"] is None and ins["data"]["id"] == 1
    assert dele["type"] == "DELETE" and dele["data"] is None and dele["old"]["id"] == 1


# --- every TiDB type ----------------------------------------------------------------------------
ENUM = TiDBType("enum", elements=("new", "paid", "shipped"))
SET = TiDBType("set", elements=("a", "b", "c"))
CASES = [
    # type, canonical value, JSON, Avro (branch, value)
    (TiDBType("tinyint"), -128, "-128", ("long", -128)),
    (TiDBType("tinyint", unsigned=True), 255, "255", ("long", 255)),
    (TiDBType("smallint"), -32768, "-32768", ("long", -32768)),
    (TiDBType("mediumint", unsigned=True), 16777215, "16777215", ("long", 16777215)),
    (TiDBType("int", unsigned=True), 4294967295, "4294967295", ("long", 4294967295)),
    (TiDBType("bigint"), -(2**63), "-9223372036854775808", ("long", -(2**63))),
    (TiDBType("bigint", unsigned=True), 2**63, "9223372036854775808", (f"{NS}.UnsignedBigint", {"value": -(2**63)})),
    (TiDBType("bigint", unsigned=True), 7, "7", (f"{NS}.UnsignedBigint", {"value": 7})),
    (TiDBType("float"), 90.5, "90.5", ("float", 90.5)),
    (TiDBType("float"), 1e20, "100000000000000000000", ("float", 100000002004087734272.0)),
    (TiDBType("double"), 0.1, "0.1", ("double", 0.1)),
    (TiDBType("double"), -1e-7, "-0.0000001", ("double", -1e-7)),
    (decimal(20, 6), "12.500000", "12.500000", ("string", "12.500000")),
    (TiDBType("char", flen=4), "ab", "ab", ("string", "ab")),
    (TiDBType("varchar", flen=10, charset="binary"), b"\x00\xff", "AP8=", ("bytes", b"\x00\xff")),
    (TiDBType("tinytext"), "t", "t", ("string", "t")),
    (TiDBType("text"), "中文", "中文", ("string", "中文")),
    (TiDBType("mediumtext"), "m", "m", ("string", "m")),
    (TiDBType("longtext"), "l", "l", ("string", "l")),
    (TiDBType("binary", flen=2), b"\x01\x02", "AQI=", ("bytes", b"\x01\x02")),
    (TiDBType("varbinary", flen=8), b"", "", ("bytes", b"")),
    (TiDBType("tinyblob"), b"\xfe", "/g==", ("bytes", b"\xfe")),
    (TiDBType("blob"), ALL_BYTES, base64.b64encode(ALL_BYTES).decode(), ("bytes", ALL_BYTES)),
    (TiDBType("mediumblob"), b"m", "bQ==", ("bytes", b"m")),
    (TiDBType("longblob"), b"l", "bA==", ("bytes", b"l")),
    (TiDBType("date"), "2024-02-29", "2024-02-29", ("string", "2024-02-29")),
    (datetime(6), "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999",
     ("string", "9999-12-31 23:59:59.999999")),
    (TiDBType("timestamp", decimal=2), "2024-01-01 08:00:00.50", {"location": "UTC", "value": "2024-01-01 08:00:00.50"},
     (f"{NS}.Timestamp", {"location": "UTC", "value": "2024-01-01 08:00:00.50"})),
    (TiDBType("time", decimal=1), "-838:59:59.0", "-838:59:59.0", ("string", "-838:59:59.0")),
    (TiDBType("year"), 2155, "2155", ("long", 2155)),
    (ENUM, "shipped", "3", ("long", 3)),
    (ENUM, "", "0", ("long", 0)),
    (SET, "a,c", "5", ("long", 5)),
    (SET, "", "0", ("long", 0)),
    (TiDBType("bit", flen=64), 2**64 - 1, "18446744073709551615", ("string", "18446744073709551615")),
    (TiDBType("json"), '{"a": [1, 2]}', '{"a": [1, 2]}', ("string", '{"a": [1, 2]}')),
]


def test_cases_cover_every_base_type():
    assert {t.base for t, *_ in CASES} == set(ALL_BASE_TYPES)


@pytest.mark.parametrize("t,value,as_json,as_avro", CASES, ids=[f"{c[0].sql()}={c[1]!r}"[:40] for c in CASES])
@pytest.mark.rules(
    "SIMPLE-MYSQLTYPE-2", "SIMPLE-MYSQLTYPE-3", "SIMPLE-MYSQLTYPE-4", "SIMPLE-MYSQLTYPE-5", "SIMPLE-MYSQLTYPE-6",
    "SIMPLE-MYSQLTYPE-7")
def test_value_rendering(t, value, as_json, as_avro):
    assert json_value(t, value, "UTC") == as_json
    assert avro_value(t, value, "UTC") == as_avro
    assert json_value(t, None, "UTC") is None and avro_value(t, None, "UTC") == ("null", None)


@pytest.mark.rules("SIMPLE-FORMAT-2")
def test_every_type_encodes_and_reads_back_in_both_formats(reference_schema):
    cols = tuple(Column(f"c{i}", t, column_id=i + 1) for i, (t, *_) in enumerate(CASES))
    table = TableSchema("db", "all_types", 7, (Column("pk", int_type(), nullable=False, column_id=0),) + cols,
                        (Index("PRIMARY", ("pk",), primary=True, unique=True),), T0, pk_is_handle=True)
    row = {"pk": 1, **{f"c{i}": v for i, (_, v, *_) in enumerate(CASES)}}
    event = RowEvent(RowChange(table, Op.INSERT, None, row), T0 + 5, T0 + 4)
    data = _json(_encoder(), event)["data"]
    assert all(data[f"c{i}"] == j for i, (_, _, j, _) in enumerate(CASES))
    rec = _avro(_one(_encoder("avro"), event).value, reference_schema)["payload"]["data"]
    for i, (_, _, _, (branch, value)) in enumerate(CASES):
        assert rec[f"c{i}"] == value, CASES[i]


def test_timestamp_location_is_the_changefeed_time_zone():
    t = TiDBType("timestamp")
    assert json_value(t, "2024-01-01 08:00:00", "Asia/Tokyo") == {"location": "Asia/Tokyo",
                                                                  "value": "2024-01-01 08:00:00"}


# --- table schemas ------------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-TABLESCHEMA-2", "SIMPLE-COLUMN-2", "SIMPLE-INDEX-2")
def test_table_schema_indexes_and_data_types_in_json():
    ts = T0 + 50
    table = replace(customers_table(), columns=customers_table().columns + (
        Column("flags", TiDBType("bit", flen=3), has_default=True, default=5, column_id=4),
        Column("kind", ENUM, has_default=True, default="paid", column_id=5),
        Column("yr", TiDBType("year"), column_id=6),
        Column("price", decimal(10, 2), has_default=True, default="1.50", column_id=7),
        Column("score", TiDBType("double"), column_id=8),
        Column("at", TiDBType("timestamp", decimal=3), has_default=True, default="2024-01-01 08:00:00.000",
               column_id=9),
    ))
    ddl = DDL(ts, DDLType.CREATE_TABLE, "CREATE TABLE ...", "smoke", "customers", table, None)
    msg = _json(_encoder(time_zone="Asia/Shanghai"), DDLEvent(ddl))
    assert list(msg) == ["version", "type", "sql", "commitTs", "buildTs", "tableSchema"]
    s = msg["tableSchema"]
    # a non-handle (clustered VARCHAR) PK is a real TiDB index, kept in place under its own name
    assert s["indexes"] == [
        {"name": "PRIMARY", "unique": True, "primary": True, "nullable": False, "columns": ["code"]},
        {"name": "uk_email", "unique": True, "primary": False, "nullable": True, "columns": ["email"]},
    ]
    cols = {c["name"]: c for c in s["columns"]}
    assert cols["code"]["dataType"] == {"mysqlType": "varchar", "charset": "utf8mb4", "collate": "utf8mb4_bin",
                                        "length": 32}
    assert cols["flags"]["dataType"] == {"mysqlType": "bit", "charset": "binary", "collate": "binary",
                                         "length": 3, "unsigned": True}
    assert cols["flags"]["default"] == 5  # a BIT default is a JSON number
    assert cols["kind"]["dataType"]["elements"] == ["new", "paid", "shipped"]
    assert cols["kind"]["default"] == "paid"
    assert cols["yr"]["dataType"] == {"mysqlType": "year", "charset": "binary", "collate": "binary",
                                      "length": 4, "unsigned": True, "zerofill": True}
    assert cols["price"]["dataType"]["decimal"] == 2 and cols["price"]["default"] == "1.50"
    assert "decimal" not in cols["score"]["dataType"]  # FLOAT/DOUBLE decimal (-1) is left out
    assert cols["at"]["dataType"]["decimal"] == 3
    assert cols["at"]["default"] == "2024-01-01 00:00:00.000"  # TiDB keeps TIMESTAMP defaults in UTC
    assert cols["visits"]["default"] is None and cols["code"]["nullable"] is False


@pytest.mark.rules("SIMPLE-TABLESCHEMA-2", "SIMPLE-FORMAT-2")
def test_table_schema_in_avro(reference_schema):
    table = replace(smoke_table(), columns=smoke_table().columns + (
        Column("at", TiDBType("timestamp", decimal=3), column_id=7),
        Column("flags", TiDBType("bit", flen=16), has_default=True, default=0x4142, column_id=8),
        Column("kind", ENUM, column_id=9),
    ), indexes=smoke_table().indexes + (Index("idx_note", ("note",)),))
    msg = _one(_encoder("avro"), BootstrapEvent(table))
    rec = _avro(msg.value, reference_schema)
    assert rec["type"] == "BOOTSTRAP"
    s = rec["payload"]["tableSchema"]
    assert (s["database"], s["table"], s["tableID"], s["version"]) == ("smoke", "orders", 104, table.schema_version)
    # the handle PK has no TiDB index: TiCDC appends a synthetic "primary" after the real ones
    assert s["indexes"] == [
        {"name": "idx_note", "unique": False, "primary": False, "nullable": True, "columns": ["note"]},
        {"name": "primary", "unique": True, "primary": True, "nullable": False, "columns": ["id"]},
    ]
    dt = {c["name"]: c["dataType"] for c in s["columns"]}
    assert dt["quantity"] == {"mysqlType": "bigint", "charset": "binary", "collate": "binary", "length": 20,
                              "decimal": None, "elements": None, "unsigned": True, "zerofill": False}
    assert dt["amount"]["decimal"] == 6 and dt["amount"]["unsigned"] is False
    assert dt["created_at"]["decimal"] is None  # Avro sets decimal for DECIMAL and TIMESTAMP only
    assert dt["at"]["decimal"] == 3
    assert dt["receipt"] == {"mysqlType": "blob", "charset": "binary", "collate": "binary", "length": 65535,
                             "decimal": None, "elements": None, "unsigned": None, "zerofill": None}
    assert dt["kind"]["elements"] == ["new", "paid", "shipped"] and dt["kind"]["length"] == -1
    defaults = {c["name"]: c["default"] for c in s["columns"]}
    assert defaults["flags"] == "AB" and defaults["note"] is None  # Avro keeps a BIT default's raw bytes


@pytest.mark.rules("SIMPLE-FIELDS-1")
def test_bootstrap_build_ts_follows_the_partition_clock():
    enc = _encoder()
    wm = T0 + (5_000 << 18)
    enc.encode(WatermarkEvent(wm))
    msg = _one(enc, BootstrapEvent(smoke_table()))
    assert msg.ts == wm and orjson.loads(msg.value)["buildTs"] == physical_ms(wm)


# --- DDL types and schemas ----------------------------------------------------------------------
@pytest.mark.parametrize("ddl_type,label", [
    (DDLType.CREATE_TABLE, "CREATE"), (DDLType.RENAME_TABLE, "RENAME"), (DDLType.ADD_INDEX, "CINDEX"),
    (DDLType.ADD_PRIMARY_KEY, "CINDEX"), (DDLType.DROP_INDEX, "DINDEX"), (DDLType.DROP_PRIMARY_KEY, "DINDEX"),
    (DDLType.DROP_TABLE, "ERASE"), (DDLType.TRUNCATE_TABLE, "TRUNCATE"), (DDLType.ADD_COLUMN, "ALTER"),
    (DDLType.DROP_COLUMN, "ALTER"), (DDLType.MODIFY_COLUMN, "ALTER"), (DDLType.SET_DEFAULT_VALUE, "ALTER"),
    (DDLType.MODIFY_TABLE_COMMENT, "ALTER"), (DDLType.RENAME_INDEX, "ALTER"),
    (DDLType.ADD_TABLE_PARTITION, "ALTER"), (DDLType.DROP_TABLE_PARTITION, "ALTER"),
    (DDLType.MODIFY_TABLE_CHARSET_AND_COLLATE, "ALTER"), (DDLType.TRUNCATE_TABLE_PARTITION, "ALTER"),
    (DDLType.CREATE_SCHEMA, "QUERY"), (DDLType.DROP_SCHEMA, "QUERY"),
])
@pytest.mark.rules("SIMPLE-TYPES-2")
def test_ddl_type_labels(ddl_type, label, reference_schema):
    schema_level = ddl_type in (DDLType.CREATE_SCHEMA, DDLType.DROP_SCHEMA)
    before = None if ddl_type == DDLType.CREATE_TABLE or schema_level else smoke_table()
    after = None if ddl_type == DDLType.DROP_TABLE or schema_level else smoke_table(T0 + 9)
    ddl = DDL(T0 + 10, ddl_type, "some ddl", "smoke", "" if schema_level else "orders", after, before)
    for tiflow in (False, True):
        msg = _json(_encoder(tiflow=tiflow), DDLEvent(ddl))
        assert msg["type"] == label
        assert ("tableSchema" in msg) == (not schema_level)
        assert ("preTableSchema" in msg) == (tiflow and before is not None)
        rec = _avro(_one(_encoder("avro", tiflow=tiflow), DDLEvent(ddl)).value, reference_schema)
        assert rec["type"] == "DDL" and rec["payload"]["type"] == label
        assert (rec["payload"]["tableSchema"] is None) == schema_level
        assert (rec["payload"]["preTableSchema"] is None) == (not (tiflow and before is not None))
    if ddl_type == DDLType.DROP_TABLE:
        # the dropped table's own info is what TiDB records in the finished job
        assert _json(_encoder(), DDLEvent(ddl))["tableSchema"]["version"] == before.schema_version


@pytest.mark.rules("SIMPLE-FORMAT-2")
def test_ddl_avro_round_trip(reference_schema):
    ddl = _alter_ddl(T0 + 10)
    rec = _avro(_one(_encoder("avro", tiflow=True), DDLEvent(ddl)).value, reference_schema)["payload"]
    assert rec["sql"] == ddl.query and rec["commitTs"] == ddl.commit_ts and rec["buildTs"] == physical_ms(T0 + 10)
    assert [c["name"] for c in rec["tableSchema"]["columns"]] == ["id", "name", "age", "score", "createTime"]
    assert [c["name"] for c in rec["preTableSchema"]["columns"]] == ["id", "name", "age", "score"]
    # classic tiflow's Avro DataType has no TIMESTAMP decimal
    assert rec["tableSchema"]["columns"][4]["dataType"]["decimal"] is None
    rec = _avro(_one(_encoder("avro"), DDLEvent(ddl)).value, reference_schema)["payload"]
    assert rec["preTableSchema"] is None and rec["tableSchema"]["columns"][4]["dataType"]["decimal"] == 0


@pytest.mark.rules("SIMPLE-WATERMARK-2", "SIMPLE-FORMAT-2")
def test_watermark_avro_round_trip(reference_schema):
    ts = T0 + 77
    rec = _avro(_one(_encoder("avro"), WatermarkEvent(ts)).value, reference_schema)
    assert rec == {"type": "WATERMARK", "payload": {"version": 1, "commitTs": ts, "buildTs": physical_ms(ts)}}
    assert decode_avro(_one(_encoder("avro"), WatermarkEvent(ts)).value) == rec


# --- profiles, options, module --------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-MYSQLTYPE-7")
def test_tiflow_orders_columns_by_id_and_sends_bit_as_long(reference_schema):
    table = TableSchema("db", "t", 9, (
        Column("b", TiDBType("bit", flen=8), column_id=3),
        Column("a", int_type(), nullable=False, column_id=1),
    ), (Index("PRIMARY", ("a",), primary=True, unique=True),), T0, pk_is_handle=True)
    boot = _json(_encoder(tiflow=True), BootstrapEvent(table))
    assert [c["name"] for c in boot["tableSchema"]["columns"]] == ["a", "b"]
    assert [c["name"] for c in _json(_encoder(), BootstrapEvent(table))["tableSchema"]["columns"]] == ["b", "a"]
    event = RowEvent(RowChange(table, Op.INSERT, None, {"a": 1, "b": 255}), T0 + 1, T0)
    assert _avro(_one(_encoder("avro", tiflow=True), event).value, reference_schema)["payload"]["data"]["b"] == 255
    assert _avro(_one(_encoder("avro"), event).value, reference_schema)["payload"]["data"]["b"] == "255"


def test_new_encoder_reads_the_sink_config():
    enc = new_encoder(SinkConfig(protocol="simple", encoding_format="avro", time_zone="Europe/Berlin",
                                 version_profile="tiflow", max_message_bytes=1234), "topic", 2)
    assert enc.config == SimpleEncoderConfig("avro", "Europe/Berlin", True, 1234, "none")
    assert (enc.topic, enc.partition) == ("topic", 2)


@pytest.mark.rules("SIMPLE-BROADCAST-1", "SIMPLE-BROADCAST-2")
def test_protocol_module():
    assert encoder_module("simple") is PROTOCOL
    cfg = SinkConfig(protocol="simple")
    assert PROTOCOL.name == "simple" and PROTOCOL.uses_bootstrap
    assert PROTOCOL.ddl_to_all_partitions(cfg) and PROTOCOL.sends_watermarks(cfg)
    assert isinstance(PROTOCOL.new_encoder(cfg, "t", 0), SimpleEncoder)


@pytest.mark.rules("SIMPLE-MESSAGE-1")
def test_messages_are_never_held_back():
    enc = _encoder()
    ts = T0 + 3
    assert len(enc.encode(RowEvent(RowChange(smoke_table(), Op.INSERT, None, SMOKE_NULLS), ts, ts))) == 1
    assert enc.flush() == []


def test_output_is_deterministic():
    ts = T0 + 3
    event = RowEvent(RowChange(smoke_table(), Op.UPDATE, SMOKE_NULLS, SMOKE_ROW), ts, ts)
    for fmt in ("json", "avro"):
        assert _one(_encoder(fmt), event) == _one(_encoder(fmt), event)


def test_too_large_row_and_ddl_stop_the_changefeed_but_watermarks_do_not():
    ts = T0 + 3
    event = RowEvent(RowChange(smoke_table(), Op.INSERT, None, SMOKE_ROW), ts, ts)
    size = len(_one(_encoder(), event).value) + 36
    assert _one(_encoder(max_message_bytes=size), event)
    with pytest.raises(MessageTooLargeError):
        _encoder(max_message_bytes=size - 1).encode(event)
    with pytest.raises(MessageTooLargeError):
        _encoder(max_message_bytes=100).encode(DDLEvent(_alter_ddl(ts)))
    assert _one(_encoder(max_message_bytes=10), WatermarkEvent(ts))


@pytest.mark.parametrize("codec,decompress", [
    ("snappy", lambda b: bytes(cramjam.snappy.decompress_raw(b))),
    ("lz4", lambda b: bytes(cramjam.lz4.decompress(b))),
])
def test_compressed_values_decompress_to_the_plain_message(codec, decompress):
    ts = T0 + 3
    event = RowEvent(RowChange(smoke_table(), Op.INSERT, None, SMOKE_ROW), ts, ts)
    plain = _one(_encoder(), event).value
    assert decompress(_one(_encoder(compression=codec), event).value) == plain
