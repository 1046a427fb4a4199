"""Open Protocol encoder: framing, batching, per-type rendering and options.

Sources: spec 002 (Open Protocol); the binary reference messages of tiflow's Java example
(/work/shared/reference/tiflow/examples/java/src/test/resources/data); TiCDC
pkg/sink/codec/open/{encoder,codec,message}.go for what the spec leaves open.
"""
from __future__ import annotations

import base64
import random
import struct

import orjson
import pytest

from tests.conftest import SHARED
from tests.spec_examples.corpus import spec_bytes, spec_message
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType, blob, datetime, decimal, int_type, varchar
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.golang.floats import to_float32
from ticdc_generators.protocols.open_protocol import (
    PROTOCOL,
    EncodeError,
    MessageTooLargeError,
    OpenProtocolEncoder,
    OpenProtocolOptions,
)
from ticdc_generators.protocols.open_protocol.goquote import go_quote_body
from ticdc_generators.protocols.open_protocol.values import float_text as format_float
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent, WatermarkEvent

REFERENCE = (SHARED / "reference/tiflow/examples/java/src/test/resources/data")


# --- helpers --------------------------------------------------------------------------------
def split_key(key: bytes) -> tuple[int, list[bytes]]:
    """Version and event keys of a batched Open Protocol key (spec 002, Message format)."""
    assert len(key) >= 8
    version = struct.unpack(">Q", key[:8])[0]
    return version, _split_frames(key[8:])


def _split_frames(data: bytes) -> list[bytes]:
    frames, i = [], 0
    while i < len(data):
        assert i + 8 <= len(data), "truncated length prefix"
        n = struct.unpack(">Q", data[i:i + 8])[0]
        assert i + 8 + n <= len(data), "frame runs past the end"
        frames.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return frames


def frames(msg) -> list[tuple[bytes, bytes]]:
    version, keys = split_key(msg.key)
    assert version == 1
    values = _split_frames(msg.value)
    assert len(keys) == len(values)
    return list(zip(keys, values))


def table(name="t1", columns=(), indexes=(), schema="test", version=1, pk_is_handle=False, table_id=100):
    return TableSchema(schema=schema, table=name, table_id=table_id, columns=tuple(columns),
                       indexes=tuple(indexes), schema_version=version, pk_is_handle=pk_is_handle)


def encoder(**opts) -> OpenProtocolEncoder:
    return OpenProtocolEncoder(OpenProtocolOptions(**opts), "ticdc-test", 0)


def insert(tbl, row, ts=1000):
    return RowEvent(RowChange(tbl, Op.INSERT, None, row), commit_ts=ts, start_ts=ts - 1)


def update(tbl, before, after, ts=1000):
    return RowEvent(RowChange(tbl, Op.UPDATE, before, after), commit_ts=ts, start_ts=ts - 1)


def delete(tbl, row, ts=1000):
    return RowEvent(RowChange(tbl, Op.DELETE, row, None), commit_ts=ts, start_ts=ts - 1)


def one_row(enc, event) -> tuple[bytes, bytes]:
    msgs = enc.encode(event) + enc.flush()
    assert len(msgs) == 1
    (kv,) = frames(msgs[0])
    return kv


T1 = table(columns=[Column("id", int_type(), nullable=False), Column("val", varchar(16))],
           indexes=[Index("PRIMARY", ("id",), primary=True)], pk_is_handle=True)


# --- reference binary files -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["ddl", "row", "rts"])
@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.rules("OPEN-FRAMING-1", "OPEN-FRAMING-2", "OPEN-FRAMING-3", "OPEN-VERSION-1", "OPEN-WATERMARK-3")
def test_reference_frames_parse(kind, n):
    key = (REFERENCE / "key" / f"{kind}_key_{n}").read_bytes()
    value = (REFERENCE / "value" / f"{kind}_value_{n}").read_bytes()
    version, keys = split_key(key)
    values = _split_frames(value)
    assert version == 1
    assert len(keys) == len(values) == {0: 1, 1: {"ddl": 3, "row": 4, "rts": 3}[kind], 2: 0}[n]
    expected_type = {"row": 1, "ddl": 2, "rts": 3}[kind]
    for k, v in zip(keys, values):
        assert orjson.loads(k)["t"] == expected_type
        if kind == "rts":
            assert v == b""  # spec 002, Resolved Event: "Value: None" is an empty frame
        else:
            orjson.loads(v)


@pytest.mark.rules("OPEN-WATERMARK-3")
def test_resolved_message_is_byte_identical_to_reference():
    (msg,) = encoder().encode(WatermarkEvent(1))
    assert msg.key == (REFERENCE / "key" / "rts_key_0").read_bytes()
    assert msg.value == (REFERENCE / "value" / "rts_value_0").read_bytes()
    assert msg.ts == 1


@pytest.mark.rules("OPEN-WATERMARK-3", "OPEN-FRAMING-1", "OPEN-FRAMING-2")
def test_resolved_frames_match_reference_batch():
    # The reference batches three resolved events in one message; TiCDC sends each on its
    # own, so the frames (not the messages) must agree.
    enc = encoder()
    msgs = [m for ts in (1, 2, 3) for m in enc.encode(WatermarkEvent(ts))]
    assert len(msgs) == 3
    assert b"".join(m.key[8:] for m in msgs) == (REFERENCE / "key" / "rts_key_1").read_bytes()[8:]
    assert b"".join(m.value for m in msgs) == (REFERENCE / "value" / "rts_value_1").read_bytes()


@pytest.mark.rules("OPEN-KEY-2", "OPEN-DDL-2")
def test_ddl_message_is_byte_identical_to_reference():
    ddl = DDL(commit_ts=1, ddl_type=DDLType.CREATE_SCHEMA, query="create table a", schema="a", table="b",
              table_after=None, table_before=None)
    (msg,) = encoder().encode(DDLEvent(ddl))
    assert msg.key == (REFERENCE / "key" / "ddl_key_0").read_bytes()
    assert msg.value == (REFERENCE / "value" / "ddl_value_0").read_bytes()
    assert msg.ts == 1


@pytest.mark.rules("OPEN-KEY-1", "OPEN-FRAMING-1")
def test_row_keys_match_reference_batch():
    # row_value_* predate the "f" field, so only the keys are compared byte for byte.
    tbl = table(name="b", schema="a", columns=[Column("col1", varchar(8))])
    enc = encoder()
    for ts in (1, 2, 3):
        assert enc.encode(insert(tbl, {"col1": "aa"}, ts=ts)) == []
    (msg,) = enc.flush()
    ref = (REFERENCE / "key" / "row_key_1").read_bytes()
    assert msg.key == ref[:len(msg.key)]
    _, ref_keys = split_key(ref)
    assert [k for k, _ in frames(msg)] == ref_keys[:3]
    single = encoder()
    single.encode(insert(tbl, {"col1": "aa"}, ts=1))
    assert single.flush()[0].key == (REFERENCE / "key" / "row_key_0").read_bytes()


# --- spec 002 event stream example ------------------------------------------------------------
def _spec_value(example_id: str) -> dict:
    # The spec's example predates the "f" flag field and shows VARCHAR values base64-encoded as
    # TiCDC v4 did; current TiCDC (codec.go, writeColumnFieldValue) writes the text itself.
    doc = spec_message(example_id)
    for section in doc.values():
        val = section.get("val")
        if val is not None:
            val["v"] = base64.b64decode(val["v"]).decode()
    return doc


def _without_flags(value: bytes) -> dict:
    doc = orjson.loads(value)
    for section in doc.values():
        for col in section.values():
            col.pop("f")
    return doc


@pytest.mark.rules("OPEN-BROADCAST-3", "OPEN-KEY-2", "OPEN-DDL-2", "OPEN-DDLTYPE-1", "OPEN-WATERMARK-3")
def test_spec_example_ddl_and_resolved_logs_1_to_4():
    ts = 415508856908021766
    ddl = DDL(commit_ts=ts, ddl_type=DDLType.CREATE_TABLE,
              query="CREATE TABLE test.t1(id int primary key, val varchar(16))",
              schema="test", table="t1", table_after=T1, table_before=None)
    for partition in (0, 1):
        enc = OpenProtocolEncoder(OpenProtocolOptions(), "ticdc-test", partition)
        msgs = enc.encode(DDLEvent(ddl)) + enc.encode(WatermarkEvent(ts))
        assert [frames(m) for m in msgs] == [
            [(b'{"ts":415508856908021766,"scm":"test","tbl":"t1","t":2}',
              b'{"q":"CREATE TABLE test.t1(id int primary key, val varchar(16))","t":3}')],
            [(b'{"ts":415508856908021766,"t":3}', b"")],
        ]


@pytest.mark.rules("OPEN-KEY-1", "OPEN-ROW-1", "OPEN-ROW-5", "OPEN-COLUMN-1", "OPEN-WATERMARK-3")
def test_spec_example_rows_logs_5_to_14():
    ts1, ts2, rts = 415508878783938562, 415508881418485761, 415508881038376963
    opts = dict(output_old_value=False, delete_only_output_handle_key_columns=True)
    p0 = OpenProtocolEncoder(OpenProtocolOptions(**opts), "ticdc-test", 0)
    p1 = OpenProtocolEncoder(OpenProtocolOptions(**opts), "ticdc-test", 1)
    out0 = []
    out0 += p0.encode(insert(T1, {"id": 1, "val": "aa"}, ts1))  # log 5
    out0 += p0.encode(insert(T1, {"id": 3, "val": "cc"}, ts1))  # log 7
    out0 += p0.encode(insert(T1, {"id": 3, "val": "cc"}, ts1))  # log 8, the repeated event
    out0 += p0.encode(delete(T1, {"id": 1, "val": "aa"}, ts2))  # log 9
    out0 += p0.encode(update(T1, {"id": 3, "val": "cc"}, {"id": 3, "val": "dd"}, ts2))  # log 11
    out0 += p0.encode(insert(T1, {"id": 4, "val": "ee"}, ts2))  # log 12 (the split PK update)
    assert out0 == []  # all still batched
    out0 += p0.encode(WatermarkEvent(rts))  # log 13
    out1 = p1.encode(update(T1, {"id": 2, "val": "aa"}, {"id": 2, "val": "bb"}, ts1))  # log 6
    out1 += p1.encode(delete(T1, {"id": 2, "val": "bb"}, ts2))  # log 10
    out1 += p1.encode(WatermarkEvent(rts))  # log 14

    # The logs of each partition, from the spec example corpus (tests/spec_examples/).
    spec0 = [(spec_bytes(f"002-open-log-{n:02}", "key"), f"002-open-log-{n:02}") for n in (5, 7, 8, 9, 11, 12)]
    spec1 = [(spec_bytes(f"002-open-log-{n:02}", "key"), f"002-open-log-{n:02}") for n in (6, 10)]
    for out, spec in ((out0, spec0), (out1, spec1)):
        assert len(out) == 2
        got = frames(out[0])
        assert [k for k, _ in got] == [k for k, _ in spec]
        assert [_without_flags(v) for _, v in got] == [_spec_value(v) for _, v in spec]
        assert frames(out[1]) == [(f'{{"ts":{rts},"t":3}}'.encode(), b"")]
        assert out[0].ts == ts2 and out[1].ts == rts
    # The full bytes TiCDC writes today: INT PK flags binary|handle|primary, VARCHAR nullable.
    assert frames(out0[0])[0][1] == b'{"u":{"id":{"t":3,"h":true,"f":11,"v":1},"val":{"t":15,"f":64,"v":"aa"}}}'
    assert frames(out0[0])[3][1] == b'{"d":{"id":{"t":3,"h":true,"f":11,"v":1}}}'


# --- batching ---------------------------------------------------------------------------------
def _rows(n, start=1):
    return [insert(T1, {"id": i, "val": "x"}, ts=1000 + i) for i in range(start, start + n)]


@pytest.mark.rules("OPEN-FRAMING-1", "OPEN-FRAMING-2")
def test_batch_closes_at_max_batch_size():
    enc = encoder(max_batch_size=2)
    out = [m for e in _rows(5) for m in enc.encode(e)]
    assert [len(frames(m)) for m in out] == [2, 2]
    rest = enc.flush()
    assert [len(frames(m)) for m in rest] == [1]
    assert enc.flush() == []
    assert [m.ts for m in out + rest] == [1002, 1004, 1005]


@pytest.mark.rules("OPEN-FRAMING-1", "OPEN-FRAMING-2")
def test_default_batch_size_is_16():
    enc = OpenProtocolEncoder(OpenProtocolOptions.from_sink_config(SinkConfig(protocol="open-protocol")), "t", 0)
    out = [m for e in _rows(17) for m in enc.encode(e)]
    assert [len(frames(m)) for m in out] == [16]
    assert [len(frames(m)) for m in enc.flush()] == [1]


@pytest.mark.rules("OPEN-FRAMING-1", "OPEN-FRAMING-2")
def test_batch_closes_before_exceeding_max_message_bytes():
    events = _rows(3)
    k, v = one_row(encoder(), events[0])
    frame = len(k) + len(v) + 16
    # TiCDC counts the version head, every frame and sarama's 36-byte record overhead.
    fits_two = 8 + 2 * frame + 36
    enc = encoder(max_message_bytes=fits_two)
    out = [m for e in events for m in enc.encode(e)] + enc.flush()
    assert [len(frames(m)) for m in out] == [2, 1]
    assert all(len(m.key) + len(m.value) + 36 <= fits_two for m in out)
    enc = encoder(max_message_bytes=fits_two - 1)
    out = [m for e in events for m in enc.encode(e)] + enc.flush()
    assert [len(frames(m)) for m in out] == [1, 1, 1]


def test_single_row_over_max_message_bytes_is_refused():
    k, v = one_row(encoder(), _rows(1)[0])
    need = len(k) + len(v) + 36 + 16 + 8
    assert len(encoder(max_message_bytes=need).encode(_rows(1)[0]) + []) == 0
    with pytest.raises(MessageTooLargeError):
        encoder(max_message_bytes=need - 1).encode(_rows(1)[0])


def test_handle_key_only_for_large_messages():
    big = insert(T1, {"id": 7, "val": "y" * 500})
    enc = encoder(max_message_bytes=300, large_message_handle_option="handle-key-only")
    k, v = one_row(enc, big)
    assert k == b'{"ts":1000,"scm":"test","tbl":"t1","t":1,"ohk":true}'
    assert v == b'{"u":{"id":{"t":3,"h":true,"f":11,"v":7}}}'
    with pytest.raises(ValueError):
        OpenProtocolOptions(large_message_handle_option="claim-check-everything")


@pytest.mark.rules("OPEN-DDL-2", "OPEN-DDLTYPE-2")
def test_ddl_and_watermark_flush_open_batch_first():
    enc = encoder()
    assert enc.encode(_rows(1)[0]) == []
    ddl = DDL(commit_ts=2000, ddl_type=DDLType.ADD_COLUMN, query="ALTER TABLE t1 ADD COLUMN c INT",
              schema="test", table="t1", table_after=T1, table_before=T1)
    out = enc.encode(DDLEvent(ddl))
    assert len(out) == 2
    assert len(frames(out[0])) == 1 and out[0].ts == 1001
    assert frames(out[1]) == [(b'{"ts":2000,"scm":"test","tbl":"t1","t":2}',
                               b'{"q":"ALTER TABLE t1 ADD COLUMN c INT","t":5}')]
    assert out[1].ts == 2000
    assert enc.encode(_rows(1, start=2)[0]) == []
    out = enc.encode(WatermarkEvent(3000))
    assert [len(frames(m)) for m in out] == [1, 1] and out[1].ts == 3000
    assert enc.flush() == []


@pytest.mark.rules("OPEN-KEY-2", "OPEN-DDLTYPE-1")
def test_schema_level_ddl_keeps_empty_table_name():
    ddl = DDL(commit_ts=5, ddl_type=DDLType.CREATE_SCHEMA, query="CREATE DATABASE `d`", schema="d", table="",
              table_after=None, table_before=None)
    (msg,) = encoder().encode(DDLEvent(ddl))
    assert frames(msg) == [(b'{"ts":5,"scm":"d","tbl":"","t":2}', b'{"q":"CREATE DATABASE `d`","t":1}')]


def test_bootstrap_is_not_an_open_protocol_event():
    with pytest.raises(TypeError):
        encoder().encode(BootstrapEvent(T1))


@pytest.mark.rules("OPEN-BROADCAST-1", "OPEN-BROADCAST-2")
def test_protocol_module():
    assert encoder_module("open-protocol") is PROTOCOL
    cfg = SinkConfig(protocol="open-protocol")
    assert PROTOCOL.name == "open-protocol"
    assert PROTOCOL.ddl_to_all_partitions(cfg) is True
    assert PROTOCOL.sends_watermarks(cfg) is True
    assert PROTOCOL.uses_bootstrap is False
    enc = PROTOCOL.new_encoder(SinkConfig(protocol="open-protocol", max_batch_size=3), "topic", 2)
    assert enc.options.max_batch_size == 3 and enc.partition == 2


# --- smoke types ----------------------------------------------------------------------------
SMOKE = table(
    name="smoke",
    columns=[
        Column("id", int_type(), nullable=False),
        Column("u64", int_type("bigint", unsigned=True)),
        Column("name", varchar(64), nullable=False),
        Column("amount", decimal(20, 6)),
        Column("at", datetime(3)),
        Column("data", blob()),
        Column("note", varchar(32)),
    ],
    indexes=[Index("PRIMARY", ("id",), primary=True), Index("uk_name", ("name",), unique=True)],
    pk_is_handle=True,
)


@pytest.mark.rules(
    "OPEN-COLUMN-1", "OPEN-TYPECODE-1", "OPEN-TYPECODE-5", "OPEN-TYPECODE-7", "OPEN-TYPECODE-9",
    "OPEN-TYPECODE-11", "OPEN-FLAG-1", "OPEN-FLAG-2", "OPEN-FLAG-4", "OPEN-FLAG-5", "OPEN-FLAG-6")
def test_smoke_types_row():
    row = {"id": -2147483648, "u64": 18446744073709551615, "name": "héllo 世界 \"q\" \\ \n\t\x01",
           "amount": "12345678901234.123456", "at": "2023-11-30 12:34:56.120", "data": bytes(range(256)),
           "note": None}
    k, v = one_row(encoder(), insert(SMOKE, row, ts=424242))
    assert k == b'{"ts":424242,"scm":"test","tbl":"smoke","t":1}'
    b64 = base64.b64encode(bytes(range(256))).decode()
    expected = (
        '{"u":{'
        '"id":{"t":3,"h":true,"f":11,"v":-2147483648},'
        '"u64":{"t":8,"f":193,"v":18446744073709551615},'
        '"name":{"t":15,"f":16,"v":"héllo 世界 \\"q\\" \\\\ \\n\\t\\u0001"},'
        '"amount":{"t":246,"f":65,"v":"12345678901234.123456"},'
        '"at":{"t":12,"f":65,"v":"2023-11-30 12:34:56.120"},'
        f'"data":{{"t":252,"f":65,"v":"{b64}"}},'
        '"note":{"t":15,"f":64,"v":null}'
        '}}'
    )
    assert v == expected.encode()
    doc = orjson.loads(v)["u"]
    assert base64.b64decode(doc["data"]["v"]) == bytes(range(256))
    assert doc["name"]["v"] == row["name"]


@pytest.mark.rules("OPEN-TYPECODE-7", "OPEN-FLAG-2", "OPEN-FLAG-4")
def test_varchar_primary_key():
    tbl = table(columns=[Column("k", varchar(32), nullable=False), Column("n", int_type())],
                indexes=[Index("PRIMARY", ("k",), primary=True)])
    k, v = one_row(encoder(), insert(tbl, {"k": "ключ-键", "n": 1}))
    assert v == '{"u":{"k":{"t":15,"h":true,"f":10,"v":"ключ-键"},"n":{"t":3,"f":65,"v":1}}}'.encode()


# --- every type -------------------------------------------------------------------------------
def _render(tidb_type: TiDBType, value, nullable=True) -> dict:
    tbl = table(columns=[Column("id", int_type(), nullable=False), Column("c", tidb_type, nullable=nullable)],
                indexes=[Index("PRIMARY", ("id",), primary=True)])
    _, v = one_row(encoder(), insert(tbl, {"id": 1, "c": value}))
    return orjson.loads(v)["u"]["c"]


def _raw_v(tidb_type: TiDBType, value) -> bytes:
    tbl = table(columns=[Column("c", tidb_type)])
    _, v = one_row(encoder(), insert(tbl, {"c": value}))
    prefix = b'{"u":{"c":{'
    assert v.startswith(prefix) and v.endswith(b"}}}")
    return v[v.index(b'"v":') + 4:-3]


@pytest.mark.parametrize("tidb_type,value,code,flag,v", [
    (TiDBType("tinyint"), -128, 1, 65, -128),
    (TiDBType("tinyint", unsigned=True), 255, 1, 193, 255),
    (TiDBType("smallint"), -32768, 2, 65, -32768),
    (TiDBType("mediumint"), 8388607, 9, 65, 8388607),
    (TiDBType("int", unsigned=True), 4294967295, 3, 193, 4294967295),
    (TiDBType("bigint"), -9223372036854775808, 8, 65, -9223372036854775808),
    (TiDBType("decimal", flen=10, decimal=0), "-42", 246, 65, "-42"),
    (TiDBType("char", flen=4), "ab", 254, 64, "ab"),
    (TiDBType("tinytext"), "tiny", 249, 64, base64.b64encode(b"tiny").decode()),
    (TiDBType("text"), "測試text", 252, 64, "5ris6KmmdGV4dA=="),  # a TEXT example in the style of spec 002
    (TiDBType("mediumtext"), "m", 250, 64, "bQ=="),
    (TiDBType("longtext"), "l", 251, 64, "bA=="),
    (TiDBType("tinyblob"), b"\x00\xff", 249, 65, "AP8="),
    (TiDBType("mediumblob"), b"\x01", 250, 65, "AQ=="),
    (TiDBType("longblob"), b"", 251, 65, ""),
    (TiDBType("date"), "2000-01-01", 10, 65, "2000-01-01"),
    (TiDBType("time", decimal=2), "-838:59:59.00", 11, 65, "-838:59:59.00"),
    (TiDBType("datetime"), "2015-12-20 23:58:58", 12, 65, "2015-12-20 23:58:58"),
    (TiDBType("timestamp", decimal=6), "1973-12-30 15:30:00.000001", 7, 65, "1973-12-30 15:30:00.000001"),
    (TiDBType("year"), 1970, 13, 193, 1970),
    (TiDBType("bit", flen=10), 81, 16, 193, 81),
    (TiDBType("bit", flen=64), 2**64 - 1, 16, 193, 2**64 - 1),
    (TiDBType("json"), '{"key1": "value1"}', 245, 65, '{"key1": "value1"}'),
    (TiDBType("enum", elements=("a", "b", "c")), "b", 247, 64, 2),
    (TiDBType("enum", elements=("a", "b")), "", 247, 64, 0),
    (TiDBType("set", elements=("a", "b", "c")), "a,c", 248, 64, 5),
    (TiDBType("set", elements=("a", "b", "c")), "", 248, 64, 0),
    (TiDBType("float"), 153.123, 4, 65, 153.123),
    (TiDBType("double"), 153.123, 5, 65, 153.123),
])
@pytest.mark.rules(
    "OPEN-TYPECODE-1", "OPEN-TYPECODE-2", "OPEN-TYPECODE-4", "OPEN-TYPECODE-5", "OPEN-TYPECODE-6",
    "OPEN-TYPECODE-8", "OPEN-TYPECODE-9", "OPEN-TYPECODE-10", "OPEN-TYPECODE-11", "OPEN-TYPECODE-12",
    "OPEN-FLAG-6")
def test_type_rendering(tidb_type, value, code, flag, v):
    assert _render(tidb_type, value) == {"t": code, "f": flag, "v": v}


@pytest.mark.rules("OPEN-COLUMN-1")
def test_every_base_type_has_a_code_and_renders_null():
    from ticdc_contract.tidb_types import ALL_BASE_TYPES
    for base in ALL_BASE_TYPES:
        t = TiDBType(base, elements=("a",) if base in ("enum", "set") else ())
        col = _render(t, None)
        assert col["v"] is None and isinstance(col["t"], int)


@pytest.mark.parametrize("value,text", [
    (153.123, b"153.123"),  # spec 002's FLOAT example: the float32 shortest form
    (4.56, b"4.56"),
    (16777217.0, b"16777216"),  # rounded to float32
    (1e20, b"100000000000000000000"),
    (1e21, b"1e+21"),
    (1e-7, b"1e-7"),
    (-0.5, b"-0.5"),
    (3.4028234663852886e38, b"3.4028235e+38"),
])
@pytest.mark.rules("OPEN-TYPECODE-2")
def test_float_text(value, text):
    assert _raw_v(TiDBType("float"), value) == text


@pytest.mark.parametrize("value,text", [
    (0.1, b"0.1"), (1e16, b"10000000000000000"), (1e21, b"1e+21"), (1.5e-7, b"1.5e-7"),
    (123456789.125, b"123456789.125"), (5e-324, b"5e-324"), (1.7976931348623157e308, b"1.7976931348623157e+308"),
    (1e-6, b"0.000001"), (0.0, b"0"),
])
@pytest.mark.rules("OPEN-TYPECODE-2")
def test_double_text(value, text):
    assert _raw_v(TiDBType("double"), value) == text


def test_float32_shortest_matches_numpy():
    np = pytest.importorskip("numpy")
    rng = random.Random(7)
    for _ in range(5000):
        b = rng.getrandbits(32)
        if (b >> 23) & 0xFF == 0xFF:
            continue
        x = struct.unpack("<f", struct.pack("<I", b))[0]
        ours = format_float(x, 32)
        assert to_float32(float(ours)) == x or x == 0
        ref = np.format_float_scientific(np.float32(x), unique=True, trim="-")
        assert float(ours) == float(ref)
        assert len(ours.replace("-", "").split("e")[0].replace(".", "").strip("0")) <= \
            len(ref.replace("-", "").split("e")[0].replace(".", "").strip("0"))


@pytest.mark.rules("OPEN-TYPECODE-7", "OPEN-TYPECODE-12", "OPEN-FLAG-1")
def test_binary_strings_are_go_quoted():
    # spec 002, Column type code: VARBINARY/BINARY show "\\x89PNG\\r\\n\\x1a\\n".
    assert _raw_v(TiDBType("varbinary", flen=16), b"\x89PNG\r\n\x1a\n") == b'"\\\\x89PNG\\\\r\\\\n\\\\x1a\\\\n"'
    col = _render(TiDBType("binary", flen=8), b"\x89PNG\r\n\x1a\n")
    assert col == {"t": 254, "f": 65, "v": "\\x89PNG\\r\\n\\x1a\\n"}
    assert _render(TiDBType("varbinary", flen=16), b'a"b\\c')["v"] == 'a\\"b\\\\c'


@pytest.mark.parametrize("data,quoted", [
    (bytes(range(0x20)), "\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\a\\b\\t\\n\\v\\f\\r\\x0e\\x0f"
                         "\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f"),
    (b" ~\x7f\x80\xff", " ~\\x7f\\x80\\xff"),
    ("é中😀".encode(), "é中😀"),  # printable UTF-8 stays as is
    ("\u00a0\u00ad\u2028\ufeff\ue000".encode(), "\\u00a0\\u00ad\\u2028\\ufeff\\ue000"),
    ("\U0010ffff".encode(), "\\U0010ffff"),
    (b"\xed\xa0\x80", "\\xed\\xa0\\x80"),  # an encoded surrogate is not UTF-8
    (b"\xc0\xaf", "\\xc0\\xaf"),  # overlong
    (b"\xe4\xb8", "\\xe4\\xb8"),  # truncated
    ("\ufffd".encode(), "\ufffd"),  # a real U+FFFD is printable
])
@pytest.mark.rules("OPEN-TYPECODE-7")
def test_go_quote(data, quoted):
    assert go_quote_body(data) == quoted


def test_json_string_escaping_is_jsoniters():
    # jsoniter without HTML escaping (TiCDC pkg/util/json_writer.go): only '"', '\\' and
    # control bytes are escaped, \b and \f as \u00xx; '<', '>', '&', U+2028 stay raw.
    raw = _raw_v(TiDBType("varchar", flen=64), "<a&b>\b\f\x7f\u2028")
    assert raw == '"<a&b>\\u0008\\u000c\x7f\u2028"'.encode()


# --- column flags and handle key ---------------------------------------------------------------
@pytest.mark.rules(
    "OPEN-COLUMN-1", "OPEN-FLAG-1", "OPEN-FLAG-2", "OPEN-FLAG-4", "OPEN-FLAG-5", "OPEN-FLAG-6", "OPEN-FLAG-7")
def test_flags_of_ticdc_encode_flag_table():
    # The table of TiCDC's TestEncodeFlag (pkg/sink/codec/open/encoder_test.go).
    tbl = table(columns=[
        Column("a", int_type(), nullable=False), Column("b", int_type(), nullable=False), Column("c", int_type()),
        Column("d", int_type(unsigned=True)), Column("e", blob()),
    ], indexes=[
        Index("PRIMARY", ("a",), primary=True), Index("idx", ("b", "c"), unique=True), Index("idx2", ("c", "d")),
    ], pk_is_handle=True)
    _, v = one_row(encoder(), insert(tbl, {"a": 1, "b": 2, "c": 3, "d": 4, "e": b"0x010201"}))
    u = orjson.loads(v)["u"]
    assert {k: c["f"] for k, c in u.items()} == {
        "a": 0x01 | 0x02 | 0x08,
        "b": 0x01 | 0x10 | 0x20,
        "c": 0x01 | 0x40 | 0x10 | 0x20,
        "d": 0x01 | 0x40 | 0x80 | 0x20,
        "e": 0x01 | 0x40,
    }
    assert [k for k, c in u.items() if c.get("h")] == ["a"]


@pytest.mark.rules("OPEN-COLUMN-1", "OPEN-FLAG-2", "OPEN-FLAG-4")
def test_handle_key_is_narrowest_not_null_unique_index():
    tbl = table(columns=[
        Column("a", int_type(), nullable=False), Column("b", int_type(), nullable=False),
        Column("c", varchar(8), nullable=False), Column("d", int_type()),
    ], indexes=[
        Index("uk_ab", ("a", "b"), unique=True), Index("uk_d", ("d",), unique=True),
        Index("uk_c", ("c",), unique=True), Index("k_d", ("d",)),
    ])
    _, v = one_row(encoder(), insert(tbl, {"a": 1, "b": 2, "c": "x", "d": None}))
    u = orjson.loads(v)["u"]
    assert [k for k, c in u.items() if c.get("h")] == ["c"]
    assert u["c"]["f"] == 0x02 | 0x10
    assert u["a"]["f"] == 0x01 | 0x10 | 0x20
    assert u["d"]["f"] == 0x01 | 0x40 | 0x10 | 0x20  # nullable unique + single-column plain index


# --- options ---------------------------------------------------------------------------------
BEFORE = {"id": 1, "u64": 5, "name": "n", "amount": "1.000000", "at": None, "data": b"\x00", "note": "same"}
AFTER = {"id": 1, "u64": 6, "name": "n", "amount": "1.000000", "at": "2024-01-01 00:00:00.000", "data": None,
         "note": "same"}


@pytest.mark.rules("OPEN-ROW-2")
def test_update_with_old_value():
    _, v = one_row(encoder(), update(SMOKE, BEFORE, AFTER))
    doc = orjson.loads(v)
    assert list(doc) == ["u", "p"]
    assert {k: c["v"] for k, c in doc["p"].items()} == {
        "id": 1, "u64": 5, "name": "n", "amount": "1.000000", "at": None, "data": "AA==", "note": "same"}
    assert doc["u"]["u64"]["v"] == 6


@pytest.mark.rules("OPEN-ROW-2")
def test_update_without_old_value():
    _, v = one_row(encoder(output_old_value=False), update(SMOKE, BEFORE, AFTER))
    assert list(orjson.loads(v)) == ["u"]


@pytest.mark.rules("OPEN-ROW-2")
def test_only_output_updated_columns():
    _, v = one_row(encoder(only_output_updated_columns=True), update(SMOKE, BEFORE, AFTER))
    doc = orjson.loads(v)
    assert len(doc["u"]) == 7  # "u" keeps the whole new row
    # Changed columns carry their old value, NULL included (TiCDC codec.go,
    # writeColumnFieldValueIfUpdated).
    assert doc["p"] == {
        "u64": {"t": 8, "f": 193, "v": 5},
        "at": {"t": 12, "f": 65, "v": None},
        "data": {"t": 252, "f": 65, "v": "AA=="},
    }
    _, v = one_row(encoder(only_output_updated_columns=True), update(SMOKE, BEFORE, dict(BEFORE)))
    assert v.endswith(b',"p":{}}')


def test_float_equality_is_float32_for_updated_columns():
    tbl = table(columns=[Column("id", int_type(), nullable=False), Column("f", TiDBType("float"))],
                indexes=[Index("PRIMARY", ("id",), primary=True)])
    ev = update(tbl, {"id": 1, "f": 0.1}, {"id": 1, "f": to_float32(0.1)})
    _, v = one_row(encoder(only_output_updated_columns=True), ev)
    assert orjson.loads(v)["p"] == {}


@pytest.mark.rules("OPEN-ROW-3")
def test_delete_outputs_full_old_row_unless_handle_only():
    _, v = one_row(encoder(), delete(SMOKE, BEFORE))
    assert list(orjson.loads(v)["d"]) == ["id", "u64", "name", "amount", "at", "data", "note"]
    # output-old-value governs only the update's "p" (TiCDC codec.go).
    _, v = one_row(encoder(output_old_value=False), delete(SMOKE, BEFORE))
    assert len(orjson.loads(v)["d"]) == 7
    _, v = one_row(encoder(delete_only_output_handle_key_columns=True), delete(SMOKE, BEFORE))
    assert v == b'{"d":{"id":{"t":3,"h":true,"f":11,"v":1}}}'


@pytest.mark.rules("OPEN-ROW-3")
def test_delete_without_handle_key_is_refused_when_handle_only():
    tbl = table(columns=[Column("x", int_type())])
    with pytest.raises(EncodeError):
        encoder(delete_only_output_handle_key_columns=True).encode(delete(tbl, {"x": 1}))
    k, v = one_row(encoder(), delete(tbl, {"x": 1}))
    assert v == b'{"d":{"x":{"t":3,"f":65,"v":1}}}'


def test_schema_change_is_picked_up():
    enc = encoder()
    v1 = table(columns=[Column("id", int_type(), nullable=False)], indexes=[Index("PRIMARY", ("id",), primary=True)])
    v2 = table(columns=[Column("id", int_type(), nullable=False), Column("c", int_type())],
               indexes=[Index("PRIMARY", ("id",), primary=True)], version=2)
    enc.encode(insert(v1, {"id": 1}))
    enc.encode(insert(v2, {"id": 2, "c": 3}))
    (msg,) = enc.flush()
    values = [orjson.loads(v)["u"] for _, v in frames(msg)]
    assert [list(u) for u in values] == [["id"], ["id", "c"]]


# --- classic tiflow profile ---------------------------------------------------------------------
def test_tiflow_profile_differences():
    enc = encoder(version_profile="tiflow")
    tbl = table(columns=[Column("z", varchar(8)), Column("id", int_type(unsigned=True), nullable=False)],
                indexes=[Index("PRIMARY", ("id",), primary=True)], pk_is_handle=True)
    k, v = one_row(enc, update(tbl, {"z": "<&>", "id": 2**64 - 1}, {"z": "<&>", "id": 2**64 - 1}))
    # encoding/json: struct order ts, scm, tbl, rid, t; map keys sorted; HTML escaped.
    assert k == b'{"ts":1000,"scm":"test","tbl":"t1","rid":-1,"t":1}'
    assert v == (b'{"u":{"id":{"t":3,"h":true,"f":139,"v":18446744073709551615},'
                 b'"z":{"t":15,"f":64,"v":"\\u003c\\u0026\\u003e"}},'
                 b'"p":{"id":{"t":3,"h":true,"f":139,"v":18446744073709551615},'
                 b'"z":{"t":15,"f":64,"v":"\\u003c\\u0026\\u003e"}}}')
    k, v = one_row(encoder(version_profile="tiflow", only_output_updated_columns=True),
                   update(tbl, {"z": "a", "id": 1}, {"z": "a", "id": 1}))
    assert v == b'{"u":{"id":{"t":3,"h":true,"f":139,"v":1},"z":{"t":15,"f":64,"v":"a"}}}'  # empty "p" omitted
    ddl = DDL(commit_ts=9, ddl_type=DDLType.CREATE_SCHEMA, query="CREATE DATABASE d /* a<b */", schema="d",
              table="", table_after=None, table_before=None)
    (msg,) = encoder(version_profile="tiflow").encode(DDLEvent(ddl))
    assert frames(msg) == [(b'{"ts":9,"scm":"d","t":2}', b'{"q":"CREATE DATABASE d /* a\\u003cb */","t":1}')]
    raw = _tiflow_raw_v(TiDBType("varchar", flen=16), "\b\f\x01\u2028")
    assert raw == b'"\\b\\f\\u0001\\u2028"'


def _tiflow_raw_v(tidb_type, value) -> bytes:
    tbl = table(columns=[Column("c", tidb_type)])
    _, v = one_row(encoder(version_profile="tiflow"), insert(tbl, {"c": value}))
    return v[v.index(b'"v":') + 4:-3]
