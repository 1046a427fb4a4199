"""The Simple protocol reference decoder (spec 004), JSON and Avro.

Messages here are built by hand from spec 004's examples and from the value rules of TiCDC
pkg/sink/codec/simple/message.go (encodeValue / encodeValue4Avro); Avro datums are written with
fastavro against the reference schema file itself, not the project's encoder.
"""
from __future__ import annotations

import base64
import io
import json
import re

import cramjam
import fastavro
import lz4.frame
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED
from tests.helpers import assert_decode_error, decodes_or_decode_error, kafka_record
from tests.spec_examples.corpus import spec_message
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedBootstrap, DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.simple import (
    MAX_HELD,
    MAX_HELD_BYTES,
    SimpleDecoder,
    describe_fidelity,
    new_decoder,
    project_value,
)
from ticdc_contract.canonical import value_to_json
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tidb_types import ALL_BASE_TYPES, TiDBType

REFERENCE_SCHEMA = fastavro.parse_schema(json.loads(
    (SHARED / "reference/ticdc/pkg/sink/codec/simple/message.json").read_text()))
NS = "com.pingcap.simple.avro."
TOPIC = "simple-topic"
PARTITION = 2


def rec(value: bytes | None, offset: int = 0) -> KafkaRecord:
    return kafka_record(value, topic=TOPIC, partition=PARTITION, offset=offset)


def jdump(obj: dict) -> bytes:
    return orjson.dumps(obj)


# --- spec 004 examples, from the spec example corpus (tests/spec_examples/) ---------------------------
def _col(name, mysql_type, charset, collate, length, nullable):
    return {"name": name, "dataType": {"mysqlType": mysql_type, "charset": charset, "collate": collate,
                                       "length": length}, "nullable": nullable, "default": None}


SPEC_COLUMNS = spec_message("004-simple-tableschema")["columns"]
SPEC_INDEXES = spec_message("004-simple-tableschema")["indexes"]
SPEC_DDL = spec_message("004-simple-ddl-alter")
SPEC_INSERT = spec_message("004-simple-dml-insert")
SPEC_UPDATE = spec_message("004-simple-dml-update")
SPEC_DELETE = spec_message("004-simple-dml-delete")
SPEC_WATERMARK = spec_message("004-simple-watermark")
SPEC_BOOTSTRAP = spec_message("004-simple-bootstrap")
SPEC_COLUMN_NAMES = ("id", "name", "age", "score")


def _bootstrap_for(table: str) -> dict:
    msg = json.loads(json.dumps(SPEC_BOOTSTRAP))
    msg["tableSchema"]["table"] = table
    return msg


def test_spec_ddl_example_decodes_to_a_ddl_with_the_new_columns():
    out = new_decoder({}).decode(rec(jdump(SPEC_DDL)))
    assert out == [DecodedDDL(commit_ts=447987408682614795, schema="simple", table="user",
                              query="ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP", ddl_type="ALTER",
                              columns=SPEC_COLUMN_NAMES + ("createTime",))]


def test_spec_dml_examples_decode_through_the_cached_schema():
    dec = new_decoder({"encoding-format": "json"})
    assert dec.decode(rec(jdump(_bootstrap_for("user")), 0)) == [
        DecodedBootstrap("simple", "user", 447984074911121426, SPEC_COLUMN_NAMES)]
    [ins] = dec.decode(rec(jdump(SPEC_INSERT), 1))
    assert ins == DecodedRow(schema="simple", table="user", op="insert", commit_ts=447984084414103554,
                             after={"id": 1, "name": "John Doe", "age": 25, "score": 90.5}, before=None,
                             key_columns=("id",), columns=SPEC_COLUMN_NAMES)
    assert list(ins.after) == list(SPEC_COLUMN_NAMES)  # table order, not message order
    [upd] = dec.decode(rec(jdump(SPEC_UPDATE), 2))
    assert (upd.op, upd.after["score"], upd.before["score"]) == ("update", 95.0, 90.5)
    [dele] = dec.decode(rec(jdump(SPEC_DELETE), 3))
    assert (dele.op, dele.after, dele.before) == ("delete", None, {"id": 1, "name": "John Doe", "age": 25, "score": 95.0})
    assert dec.decode(rec(jdump(SPEC_WATERMARK), 4)) == [DecodedWatermark(447984124732375041)]


def test_spec_bootstrap_example():
    out = new_decoder({}).decode(rec(jdump(SPEC_BOOTSTRAP)))
    assert out == [DecodedBootstrap("simple", "new_user", 447984074911121426, SPEC_COLUMN_NAMES)]


def test_ddl_pre_table_schema_also_serves_rows_of_the_previous_version():
    # TiCDC's decoder caches both table infos of a DDL; the spec's rows are at the preTableSchema version.
    dec = new_decoder({})
    dec.decode(rec(jdump(SPEC_DDL), 0))
    [row] = dec.decode(rec(jdump(SPEC_INSERT), 1))
    assert row.after == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}


def test_consumer_joining_mid_stream_holds_rows_until_the_schema_arrives():
    # spec 004, 场景二: DMLs seen before any BOOTSTRAP/DDL wait for it, then come out in arrival order.
    dec = new_decoder({})
    assert dec.decode(rec(jdump(SPEC_INSERT), 10)) == []
    assert dec.decode(rec(jdump(SPEC_UPDATE), 11)) == []
    assert dec.decode(rec(jdump(SPEC_WATERMARK), 12)) == [DecodedWatermark(447984124732375041)]
    assert dec.decode(rec(jdump(_bootstrap_for("other")), 13))[1:] == []  # another table releases nothing
    assert dec.held_count == 2
    out = dec.decode(rec(jdump(_bootstrap_for("user")), 14))
    assert isinstance(out[0], DecodedBootstrap) and out[0].table == "user"
    assert [(r.op, r.commit_ts) for r in out[1:]] == [("insert", 447984084414103554), ("update", 447984099186180098)]
    assert dec.held_count == 0
    # Later rows of the same version decode at once.
    assert [r.op for r in dec.decode(rec(jdump(SPEC_DELETE), 15))] == ["delete"]


def test_a_ddl_releases_the_rows_waiting_for_its_version():
    dec = new_decoder({})
    assert dec.decode(rec(jdump(SPEC_INSERT), 0)) == []
    out = dec.decode(rec(jdump(SPEC_DDL), 1))
    assert isinstance(out[0], DecodedDDL)
    assert [r.op for r in out[1:]] == ["insert"]


def test_held_rows_are_bounded():
    dec = SimpleDecoder({}, max_held=3)
    for i in range(3):
        assert dec.decode(rec(jdump(SPEC_INSERT), i)) == []
    with pytest.raises(DecodeError, match="schema not yet known") as e:
        dec.decode(rec(jdump(SPEC_INSERT), 3))
    assert (e.value.topic, e.value.partition, e.value.offset) == (TOPIC, PARTITION, 3)


def test_default_bound_is_ten_thousand_held_rows():
    assert MAX_HELD == 10000
    dec = new_decoder({})
    raw = jdump(SPEC_INSERT)
    for i in range(MAX_HELD):
        dec.decode(rec(raw, i))
    with pytest.raises(DecodeError, match="schema not yet known"):
        dec.decode(rec(raw, MAX_HELD))
    out = dec.decode(rec(jdump(_bootstrap_for("user")), MAX_HELD + 1))
    assert len(out) == 1 + MAX_HELD


def test_held_rows_are_bounded_in_bytes_too():
    raw = jdump(SPEC_INSERT)
    dec = SimpleDecoder({}, max_held_bytes=2 * len(raw) + len(raw) // 2)
    assert dec.decode(rec(raw, 0)) == [] and dec.decode(rec(raw, 1)) == []
    with pytest.raises(DecodeError, match=rf"2 messages \({2 * len(raw)} bytes\) already wait") as e:
        dec.decode(rec(raw, 2))
    assert (e.value.topic, e.value.partition, e.value.offset) == (TOPIC, PARTITION, 2)
    assert dec.held_count == 2  # the refused message is not kept
    # the schema releases both, and with them their bytes: two more may wait again
    out = dec.decode(rec(jdump(_bootstrap_for("other")), 3))
    assert len(out) == 1 and dec.held_count == 2
    out = dec.decode(rec(jdump(_bootstrap_for("user")), 4))
    assert [r.op for r in out[1:]] == ["insert", "insert"] and dec.held_count == 0
    later = json.loads(json.dumps(SPEC_INSERT))
    later["table"] = "later"  # a table whose schema has not come: its rows wait, within the bound again
    assert dec.decode(rec(jdump(later), 5)) == [] and dec.decode(rec(jdump(later), 6)) == []
    assert dec.held_count == 2


def test_default_byte_bound_holds_25_messages_of_tidb_max_message_bytes():
    # TiCDC pkg/config/sink.go: DefaultMaxMessageBytes = 10 MiB
    assert MAX_HELD_BYTES // (10 * 1024 * 1024) == 25
    assert MAX_HELD_BYTES // MAX_HELD >= 26 * 1024


def test_a_row_dropped_at_release_gives_back_its_bytes():
    raw = jdump(SPEC_INSERT)
    bad = json.loads(json.dumps(SPEC_INSERT))
    bad["data"]["age"] = "not a number"
    bad_raw = jdump(bad)
    dec = SimpleDecoder({}, max_held_bytes=len(raw) + len(bad_raw))
    dec.decode(rec(bad_raw, 0))
    dec.decode(rec(raw, 1))
    with pytest.raises(DecodeError):
        dec.decode(rec(raw, 2))  # full
    with pytest.raises(DecodeError) as e:
        dec.decode(rec(jdump(_bootstrap_for("user")), 3))
    assert e.value.offset == 0 and dec.held_count == 0
    assert [type(ev).__name__ for ev in e.value.events] == ["DecodedBootstrap", "DecodedRow"]
    later = json.loads(json.dumps(SPEC_INSERT))
    later["table"] = "later"
    assert 2 * len(jdump(later)) <= len(raw) + len(bad_raw)
    # both fit only because the bad row's bytes were given back along with the good one's
    assert dec.decode(rec(jdump(later), 4)) == [] and dec.decode(rec(jdump(later), 5)) == []
    assert dec.held_count == 2


def test_a_held_row_with_a_bad_value_fails_at_release_naming_its_own_offset():
    bad = json.loads(json.dumps(SPEC_INSERT))
    bad["data"]["age"] = "not a number"
    dec = new_decoder({})
    dec.decode(rec(jdump(bad), 7))
    with pytest.raises(DecodeError) as e:
        dec.decode(rec(jdump(_bootstrap_for("user")), 8))
    assert e.value.offset == 7 and "age" in e.value.reason
    assert dec.held_count == 0


@pytest.mark.parametrize("release", ["bootstrap", "ddl"])
def test_malformed_held_rows_lose_neither_the_release_event_nor_the_good_rows(release):
    bad_age = json.loads(json.dumps(SPEC_INSERT))
    bad_age["data"]["age"] = "not a number"
    bad_column = json.loads(json.dumps(SPEC_UPDATE))
    bad_column["data"]["nope"] = "1"
    other = json.loads(json.dumps(SPEC_INSERT))
    other["table"] = "other"
    dec = new_decoder({})
    for offset, msg in enumerate([SPEC_INSERT, bad_age, other, SPEC_UPDATE, bad_column, SPEC_DELETE], start=10):
        assert dec.decode(rec(jdump(msg), offset)) == []
    releasing = _bootstrap_for("user") if release == "bootstrap" else SPEC_DDL
    with pytest.raises(DecodeError) as caught:
        dec.decode(rec(jdump(releasing), 20))
    e = caught.value
    # the error names the first malformed held record, the second comes along, each with its own offset
    assert [(err.offset, err.topic, err.partition) for err in e.every_error()] == [
        (11, TOPIC, PARTITION), (14, TOPIC, PARTITION)]
    assert "age" in e.reason and "nope" in e.also[0].reason
    # the BOOTSTRAP/DDL event first, then every well-formed row in arrival order
    assert isinstance(e.events[0], DecodedBootstrap if release == "bootstrap" else DecodedDDL)
    assert [(r.op, r.commit_ts) for r in e.events[1:]] == [
        ("insert", SPEC_INSERT["commitTs"]), ("update", SPEC_UPDATE["commitTs"]), ("delete", SPEC_DELETE["commitTs"])]
    assert dec.held_count == 1  # only the other table's row still waits
    assert [r.table for r in dec.decode(rec(jdump(_bootstrap_for("other")), 21))[1:]] == ["other"]


def test_consumer_decode_stage_applies_the_events_that_come_with_a_held_rows_error():
    from ticdc_conformance.consumers.rules.decode_stage import PartitionDecoders

    bad = json.loads(json.dumps(SPEC_INSERT))
    bad["data"]["age"] = "not a number"
    decoders = PartitionDecoders("simple", {})
    decoders.decode(rec(jdump(bad), 0))
    decoders.decode(rec(jdump(SPEC_UPDATE), 1))
    rows = decoders.decode(rec(jdump(_bootstrap_for("user")), 2))
    assert [(r["kind"], r["seq"]) for r in rows] == [("bootstrap", 0), ("row", 1), ("error", 2)]
    assert rows[2]["error"].startswith(f"{TOPIC}/{PARTITION}@0: ")


def test_rename_keeps_the_version_and_both_names_resolve():
    # spec 004 note: RENAME TABLE does not change the schema version.
    ddl = json.loads(json.dumps(SPEC_DDL))
    ddl["type"], ddl["sql"] = "RENAME", "RENAME TABLE `user` TO `member`"
    ddl["tableSchema"] = dict(ddl["preTableSchema"], table="member")
    dec = new_decoder({})
    [ev] = dec.decode(rec(jdump(ddl)))
    assert (ev.ddl_type, ev.table, ev.columns) == ("RENAME", "member", SPEC_COLUMN_NAMES)
    renamed = dict(SPEC_INSERT, table="member")
    [row] = dec.decode(rec(jdump(renamed), 1))
    assert (row.table, row.after["id"]) == ("member", 1)
    [row] = dec.decode(rec(jdump(SPEC_INSERT), 2))
    assert row.table == "user"


# --- a smoke table and value rules, both encodings ----------------------------------------------------
def dtype(mysql_type: str, charset: str = "binary", length: int = 0, decimal: int | None = None,
          elements: list[str] | None = None, unsigned: bool | None = None) -> dict:
    d = {"mysqlType": mysql_type, "charset": charset,
         "collate": "utf8mb4_bin" if charset == "utf8mb4" else "binary", "length": length}
    if decimal is not None:
        d["decimal"] = decimal
    if elements is not None:
        d["elements"] = elements
    if unsigned is not None:
        d["unsigned"] = unsigned
    return d


def column(name: str, dt: dict, nullable: bool = True) -> dict:
    return {"name": name, "dataType": dt, "nullable": nullable, "default": None}


def table_schema(columns: list[dict], indexes: list[dict], table: str = "t", version: int = 100,
                 avro: bool = False) -> dict:
    ts = {("database" if avro else "schema"): "db", "table": table, "tableID": 7, "version": version,
          "columns": columns, "indexes": indexes}
    if avro:
        ts["columns"] = [dict(c, dataType={"decimal": None, "elements": None, "unsigned": None, "zerofill": None,
                                           **c["dataType"]}) for c in columns]
    return ts


def pk(*cols: str) -> dict:
    return {"name": "primary", "unique": True, "primary": True, "nullable": False, "columns": list(cols)}


def avro_bytes(mtype: str, payload: dict) -> bytes:
    names = {"WATERMARK": "Watermark", "BOOTSTRAP": "Bootstrap", "DDL": "DDL", "DML": "DML"}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, REFERENCE_SCHEMA,
                               (NS + "Message", {"type": mtype, "payload": (NS + names[mtype], payload)}))
    return buf.getvalue()


class Stream:
    """Builds one encoding's BOOTSTRAP and DML messages the way TiCDC's marshallers lay them out."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    @property
    def avro(self) -> bool:
        return self.fmt == "avro"

    def bootstrap(self, columns, indexes, table="t", version=100) -> bytes:
        ts = table_schema(columns, indexes, table, version, avro=self.avro)
        if self.avro:
            return avro_bytes("BOOTSTRAP", {"version": 1, "buildTs": 1, "tableSchema": ts})
        return jdump({"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 1, "tableSchema": ts})

    def dml(self, op: str, data=None, old=None, table="t", version=100, commit_ts=500, extra=None) -> bytes:
        m = {"version": 1, "database": "db", "table": table, "tableID": 7, "type": op, "commitTs": commit_ts,
             "buildTs": 1, "schemaVersion": version, **(extra or {})}
        if data is not None:
            m["data"] = data
        if old is not None:
            m["old"] = old
        if self.avro:
            return avro_bytes("DML", m)
        return jdump(m)

    def watermark(self, ts: int) -> bytes:
        if self.avro:
            return avro_bytes("WATERMARK", {"version": 1, "commitTs": ts, "buildTs": 1})
        return jdump({"version": 1, "type": "WATERMARK", "commitTs": ts, "buildTs": 1})


ALL_BYTES = bytes(range(256))
SMOKE_COLUMNS = [
    column("id", dtype("int", length=11), nullable=False),
    column("u", dtype("bigint", length=20, unsigned=True)),
    column("v", dtype("varchar", "utf8mb4", length=255)),
    column("d", dtype("decimal", length=20, decimal=6)),
    column("dt", dtype("datetime", length=23, decimal=3)),
    column("b", dtype("blob", length=65535)),
    column("n", dtype("int", length=11)),
]
SMOKE_TYPES = {
    "id": TiDBType("int"), "u": TiDBType("bigint", unsigned=True), "v": TiDBType("varchar", flen=255),
    "d": TiDBType("decimal", flen=20, decimal=6), "dt": TiDBType("datetime", decimal=3), "b": TiDBType("blob"),
    "n": TiDBType("int"),
}


def smoke_wire(fmt: str, row: dict) -> dict:
    """A canonical-Python row as TiCDC writes it (message.go encodeValue / encodeValue4Avro)."""
    if fmt == "json":
        return {"id": str(row["id"]), "u": str(row["u"]), "v": row["v"], "d": row["d"], "dt": row["dt"],
                "b": base64.b64encode(row["b"]).decode(), "n": None if row["n"] is None else str(row["n"])}
    u = row["u"]
    return {"id": row["id"], "u": (NS + "UnsignedBigint", {"value": u - 2**64 if u >= 2**63 else u}),
            "v": row["v"], "d": row["d"], "dt": row["dt"], "b": row["b"], "n": row["n"]}


SMOKE_ROWS = [
    {"id": 1, "u": 18446744073709551615, "v": "héllo 世界 🚀", "d": "12345678901234.123456",
     "dt": "2023-11-30 12:34:56.120", "b": ALL_BYTES, "n": None},
    {"id": -2147483648, "u": 0, "v": "", "d": "-0.000001", "dt": "1000-01-01 00:00:00.000", "b": b"", "n": 42},
    {"id": 2147483647, "u": 2**63, "v": "ascii", "d": "0.000000", "dt": "9999-12-31 23:59:59.999",
     "b": b"\x00", "n": -7},
    {"id": 3, "u": 2**63 - 1, "v": "x" * 255, "d": "99999999999999.999999", "dt": "2000-02-29 00:00:00.001",
     "b": ALL_BYTES[::-1], "n": 0},
]


@pytest.fixture(params=["json", "avro"])
def stream(request) -> Stream:
    return Stream(request.param)


def canonical(row: dict) -> dict:
    return {name: value_to_json(SMOKE_TYPES[name], v) for name, v in row.items()}


def test_smoke_types_round_trip_to_canonical_values(stream):
    dec = new_decoder({"encoding-format": stream.fmt})
    [boot] = dec.decode(rec(stream.bootstrap(SMOKE_COLUMNS, [pk("id")]), 0))
    assert boot == DecodedBootstrap("db", "t", 100, tuple(c["name"] for c in SMOKE_COLUMNS))
    for i, row in enumerate(SMOKE_ROWS, start=1):
        [out] = dec.decode(rec(stream.dml("INSERT", data=smoke_wire(stream.fmt, row)), i))
        expected = canonical(row)
        assert out.after == expected
        assert out.key_columns == ("id",)
        assert out.before is None and out.commit_ts == 500
        # The fidelity projection agrees with what the decoder outputs.
        assert {k: project_value(SMOKE_TYPES[k], v, {}) for k, v in expected.items()} == out.after
    assert base64.b64decode(dec.decode(rec(stream.dml("DELETE", old=smoke_wire(stream.fmt, SMOKE_ROWS[0])), 9))[0]
                            .before["b"]) == ALL_BYTES


def test_update_carries_data_and_old(stream):
    dec = new_decoder({"encoding-format": stream.fmt})
    dec.decode(rec(stream.bootstrap(SMOKE_COLUMNS, [pk("id")]), 0))
    [out] = dec.decode(rec(stream.dml("UPDATE", data=smoke_wire(stream.fmt, SMOKE_ROWS[1]),
                                      old=smoke_wire(stream.fmt, SMOKE_ROWS[0])), 1))
    assert (out.op, out.after, out.before) == ("update", canonical(SMOKE_ROWS[1]), canonical(SMOKE_ROWS[0]))


def test_varchar_primary_key_with_non_ascii_text(stream):
    cols = [column("name", dtype("varchar", "utf8mb4", length=64), nullable=False), column("x", dtype("int"))]
    dec = new_decoder({"encoding-format": stream.fmt})
    dec.decode(rec(stream.bootstrap(cols, [pk("name")]), 0))
    x = "7" if stream.fmt == "json" else 7
    [out] = dec.decode(rec(stream.dml("INSERT", data={"name": "Ünïcødé-名前", "x": x}), 1))
    assert (out.key_columns, out.after) == (("name",), {"name": "Ünïcødé-名前", "x": 7})


def test_watermark(stream):
    assert new_decoder({"encoding-format": stream.fmt}).decode(rec(stream.watermark(424242))) == [DecodedWatermark(424242)]


# Every base type: (column dataType, JSON wire value, Avro wire value, canonical value, TiDBType)
TYPE_CASES = {
    "tinyint": (dtype("tinyint", length=4), "-128", -128, -128, TiDBType("tinyint")),
    "smallint": (dtype("smallint", length=5, unsigned=True), "65535", 65535, 65535, TiDBType("smallint", unsigned=True)),
    "mediumint": (dtype("mediumint", length=9), "-8388608", -8388608, -8388608, TiDBType("mediumint")),
    "int": (dtype("int", length=10, unsigned=True), "4294967295", 4294967295, 4294967295, TiDBType("int", unsigned=True)),
    "bigint": (dtype("bigint", length=20), "-9223372036854775808", -(2**63), -(2**63), TiDBType("bigint")),
    "float": (dtype("float", length=12), "2020.0203", ("float", 2020.0203), 2020.0203, TiDBType("float")),
    "double": (dtype("double", length=22), "-3.1415926", ("double", -3.1415926), -3.1415926, TiDBType("double")),
    "decimal": (dtype("decimal", length=10, decimal=4), "2020.0404", "2020.0404", "2020.0404",
                TiDBType("decimal", flen=10, decimal=4)),
    "char": (dtype("char", "utf8mb4", 10), "ab", "ab", "ab", TiDBType("char", flen=10)),
    "varchar": (dtype("varchar", "utf8mb4", 10), "väl", "väl", "väl", TiDBType("varchar", flen=10)),
    "tinytext": (dtype("tinytext", "utf8mb4", 255), "t", "t", "t", TiDBType("tinytext")),
    "text": (dtype("text", "utf8mb4", 65535), "テキスト", "テキスト", "テキスト", TiDBType("text")),
    "mediumtext": (dtype("mediumtext", "utf8mb4"), "m", "m", "m", TiDBType("mediumtext")),
    "longtext": (dtype("longtext", "utf8mb4"), "l", "l", "l", TiDBType("longtext")),
    "binary": (dtype("binary", length=4), "AAH/AA==", b"\x00\x01\xff\x00", "AAH/AA==", TiDBType("binary", flen=4)),
    "varbinary": (dtype("varbinary", length=8), "/w==", b"\xff", "/w==", TiDBType("varbinary", flen=8)),
    "tinyblob": (dtype("tinyblob"), "", b"", "", TiDBType("tinyblob")),
    "blob": (dtype("blob"), "AQID", b"\x01\x02\x03", "AQID", TiDBType("blob")),
    "mediumblob": (dtype("mediumblob"), "gA==", b"\x80", "gA==", TiDBType("mediumblob")),
    "longblob": (dtype("longblob"), "YQ==", b"a", "YQ==", TiDBType("longblob")),
    "date": (dtype("date", length=10), "2020-02-20", "2020-02-20", "2020-02-20", TiDBType("date")),
    "datetime": (dtype("datetime", length=26, decimal=6), "2020-02-20 02:20:20.123456",
                 "2020-02-20 02:20:20.123456", "2020-02-20 02:20:20.123456", TiDBType("datetime", decimal=6)),
    "timestamp": (dtype("timestamp", length=19), {"location": "UTC", "value": "2020-02-20 02:20:20"},
                  (NS + "Timestamp", {"location": "UTC", "value": "2020-02-20 02:20:20"}),
                  "2020-02-20 02:20:20", TiDBType("timestamp")),
    "time": (dtype("time", length=14, decimal=3), "-838:59:59.000", "-838:59:59.000", "-838:59:59.000",
             TiDBType("time", decimal=3)),
    "year": (dtype("year", length=4), "2155", 2155, 2155, TiDBType("year")),
    "enum": (dtype("enum", "utf8mb4", elements=["a", "b", "c"]), "2", 2, "b",
             TiDBType("enum", elements=("a", "b", "c"))),
    "set": (dtype("set", "utf8mb4", elements=["a", "b", "c"]), "5", 5, "a,c",
            TiDBType("set", elements=("a", "b", "c"))),
    "bit": (dtype("bit", length=8), "255", "255", 255, TiDBType("bit", flen=8)),
    "json": (dtype("json", length=4294967295), '{"a": [1, 2.5, "x"]}', '{"a": [1, 2.5, "x"]}',
             '{"a": [1, 2.5, "x"]}', TiDBType("json")),
}


def test_type_cases_cover_every_tidb_base_type():
    assert set(TYPE_CASES) == set(ALL_BASE_TYPES)


def _one_column(stream: Stream, dt: dict, wire, options=None):
    cols = [column("id", dtype("int"), nullable=False), column("c", dt)]
    dec = new_decoder({"encoding-format": stream.fmt, **(options or {})})
    dec.decode(rec(stream.bootstrap(cols, [pk("id")]), 0))
    return dec.decode(rec(stream.dml("INSERT", data={"id": "1" if stream.fmt == "json" else 1, "c": wire}), 1))


@pytest.mark.parametrize("base", sorted(TYPE_CASES))
def test_every_type_decodes_and_matches_its_projection(stream, base):
    dt, jwire, awire, expected, t = TYPE_CASES[base]
    [row] = _one_column(stream, dt, awire if stream.avro else jwire)
    assert row.after["c"] == expected
    assert project_value(t, expected, {}) == expected
    [row] = _one_column(stream, dt, None)
    assert row.after["c"] is None


def test_float_is_the_nearest_float32_printed_shortest(stream):
    wire = ("float", 1.1) if stream.avro else "1.1"
    [row] = _one_column(stream, dtype("float"), wire)
    assert row.after["c"] == 1.1
    # The ground truth may hold the float32 widened to float64; the projection prints it shortest too.
    assert project_value(TiDBType("float"), 1.100000023841858, {}) == 1.1
    assert project_value(TiDBType("float"), 16777217.0, {}) == 16777216.0


def test_bigint_unsigned_avro_forms():
    s = Stream("avro")
    dt = dtype("bigint", length=20, unsigned=True)
    for wire, expected in [((NS + "UnsignedBigint", {"value": -1}), 2**64 - 1),
                           ((NS + "UnsignedBigint", {"value": -(2**63)}), 2**63),
                           (5, 5), ("18446744073709551615", 2**64 - 1)]:
        assert _one_column(s, dt, wire)[0].after["c"] == expected


def test_bit_and_set_travel_as_long_or_string_in_avro():
    s = Stream("avro")
    assert _one_column(s, dtype("bit", length=64), 2**63 - 1)[0].after["c"] == 2**63 - 1
    assert _one_column(s, dtype("bit", length=64), "18446744073709551615")[0].after["c"] == 2**64 - 1
    # Classic TiCDC writes uint64 values as int64(v).
    assert _one_column(s, dtype("bit", length=64), -1)[0].after["c"] == 2**64 - 1
    elements = [f"e{i}" for i in range(64)]
    assert _one_column(s, dtype("set", "utf8mb4", elements=elements), -(2**63))[0].after["c"] == "e63"
    with pytest.raises(DecodeError):
        _one_column(s, dtype("bit", length=8), -1)


def test_enum_and_set_zero_values(stream):
    for mysql_type in ("enum", "set"):
        [row] = _one_column(stream, dtype(mysql_type, "utf8mb4", elements=["x", "y"]), 0 if stream.avro else "0")
        assert row.after["c"] == ""
    [row] = _one_column(stream, dtype("set", "utf8mb4", elements=["x", "y"]), 3 if stream.avro else "3")
    assert row.after["c"] == "x,y"


def test_char_with_binary_charset_is_binary(stream):
    # TiCDC decoder.go newTiColumnInfo: the binary charset sets the binary flag on string columns.
    [row] = _one_column(stream, dtype("char", "binary", 2), b"\xff\x00" if stream.avro else "/wA=")
    assert row.after["c"] == "/wA="


def test_timestamp_is_rendered_in_the_upstream_time_zone(stream):
    def ts(location, value):
        return (NS + "Timestamp", {"location": location, "value": value}) if stream.avro else \
            {"location": location, "value": value}
    dt = dtype("timestamp", length=23, decimal=3)
    [row] = _one_column(stream, dt, ts("Asia/Shanghai", "2020-02-20 10:20:20.500"), {"time-zone": "UTC"})
    assert row.after["c"] == "2020-02-20 02:20:20.500"
    [row] = _one_column(stream, dt, ts("UTC", "2020-02-20 02:20:20.500"), {"time-zone": "Asia/Shanghai"})
    assert row.after["c"] == "2020-02-20 10:20:20.500"
    [row] = _one_column(stream, dt, ts("Asia/Shanghai", "2020-02-20 10:20:20.500"), {"time-zone": "Asia/Shanghai"})
    assert row.after["c"] == "2020-02-20 10:20:20.500"
    [row] = _one_column(stream, dt, ts("Asia/Shanghai", "0000-00-00 00:00:00.000"), {"time-zone": "UTC"})
    assert row.after["c"] == "0000-00-00 00:00:00.000"
    [row] = _one_column(stream, dt, ts("+08:00", "2020-02-20 10:20:20.500"), {"time-zone": "UTC"})
    assert row.after["c"] == "2020-02-20 02:20:20.500"


def test_key_columns_fall_back_to_a_not_null_unique_index(stream):
    cols = [column("a", dtype("int")), column("b", dtype("int"), nullable=False), column("c", dtype("int"))]
    uniq_nullable = {"name": "ua", "unique": True, "primary": False, "nullable": True, "columns": ["a"]}
    uniq_not_null = {"name": "ub", "unique": True, "primary": False, "nullable": False, "columns": ["b"]}
    for indexes, expected in [([uniq_nullable, uniq_not_null], ("b",)), ([uniq_nullable], ()), ([], ())]:
        dec = new_decoder({"encoding-format": stream.fmt})
        dec.decode(rec(stream.bootstrap(cols, indexes), 0))
        one = "1" if stream.fmt == "json" else 1
        [row] = dec.decode(rec(stream.dml("INSERT", data={"a": one, "b": one, "c": None}), 1))
        assert row.key_columns == expected


def test_handle_key_only_message_needs_a_snapshot_lookup(stream):
    # The message carries the key only; tests/conformance/protocols/test_large_message_decoders.py completes it.
    cols = [column("id", dtype("int"), nullable=False), column("v", dtype("varchar", "utf8mb4", 10))]
    dec = new_decoder({"encoding-format": stream.fmt, "large-message-handle-option": "handle-key-only"})
    dec.decode(rec(stream.bootstrap(cols, [pk("id")]), 0))
    extra = {"handleKeyOnly": True}
    with pytest.raises(DecodeError, match="needs an upstream snapshot lookup"):
        dec.decode(rec(stream.dml("DELETE", old={"id": "9" if stream.fmt == "json" else 9}, extra=extra), 1))


def test_avro_ddl_messages(stream):
    if not stream.avro:
        return
    cols = [column("id", dtype("int"), nullable=False)]
    ts = table_schema(cols, [pk("id")], avro=True)
    ddl = {"version": 1, "type": "CREATE", "sql": "CREATE TABLE t (id int primary key)", "commitTs": 77,
           "buildTs": 1, "tableSchema": (NS + "TableSchema", ts), "preTableSchema": None}
    dec = new_decoder({"encoding-format": "avro"})
    assert dec.decode(rec(stream.dml("INSERT", data={"id": 3}), 0)) == []
    out = dec.decode(rec(avro_bytes("DDL", ddl), 1))
    assert out[0] == DecodedDDL(77, "db", "t", "CREATE TABLE t (id int primary key)", "CREATE", ("id",))
    assert out[1].after == {"id": 3}


def test_the_avro_datum_starts_with_the_message_branch_index():
    # reference/README: every datum is the com.pingcap.simple.avro.Message branch, union index 11 = 0x16.
    assert Stream("avro").watermark(1)[0] == 0x16


def test_registered_under_the_protocol_name():
    assert protocol_spec("simple").new_decoder is new_decoder


def test_bad_options_are_rejected():
    with pytest.raises(ValueError):
        new_decoder({"encoding-format": "protobuf"})
    with pytest.raises(ValueError):
        new_decoder({"time-zone": "Mars/Olympus"})
    with pytest.raises(ValueError):
        new_decoder({"large-message-handle-compression": "zstd"})


# --- large-message-handle-compression ----------------------------------------------------------------
# TiCDC's Simple encoder compresses every value with the codec (pkg/compression: Snappy's block format,
# LZ4's frame format); the key stays as it is.
COMPRESSORS = {"snappy": lambda b: bytes(cramjam.snappy.compress_raw(b)), "lz4": lz4.frame.compress}


@pytest.mark.parametrize("codec", sorted(COMPRESSORS))
def test_snappy_and_lz4_messages_decode(codec, stream):
    compress = COMPRESSORS[codec]
    plain = [stream.bootstrap(SMOKE_COLUMNS, [pk("id")]),
             stream.dml("INSERT", data=smoke_wire(stream.fmt, SMOKE_ROWS[0])), stream.watermark(600)]
    plain_dec = new_decoder({"encoding-format": stream.fmt})
    expected = [plain_dec.decode(rec(v, i)) for i, v in enumerate(plain)]
    dec = new_decoder({"encoding-format": stream.fmt, "large-message-handle-compression": codec})
    assert [dec.decode(rec(compress(v), i)) for i, v in enumerate(plain)] == expected
    assert expected[1][0].after == canonical(SMOKE_ROWS[0])
    # An uncompressed or corrupt value is refused as a DecodeError, not read as a message.
    assert_decode_error(dec, rec(b"\xff\xff\xff\xff\x0f" + b"x" * 20, 123), codec)


# --- malformed input --------------------------------------------------------------------------------
def _with(base: dict, **changes) -> bytes:
    m = json.loads(json.dumps(base))
    for k, v in changes.items():
        if v is ...:
            m.pop(k)
        else:
            m[k] = v
    return jdump(m)


JSON_MALFORMED = {
    "no value": (None, "no value"),
    "not json": (b"\x00\x01garbage", "not JSON"),
    "truncated json": (jdump(SPEC_INSERT)[:-5], "not JSON"),
    "array": (b"[1,2]", "JSON object"),
    "version 2": (_with(SPEC_WATERMARK, version=2), "version"),
    "version missing": (_with(SPEC_WATERMARK, version=...), "version"),
    "version bool": (_with(SPEC_WATERMARK, version=True), "version"),
    "unknown type": (_with(SPEC_WATERMARK, type="RESOLVED"), "unknown message type"),
    "commitTs missing": (_with(SPEC_WATERMARK, commitTs=...), "commitTs"),
    "commitTs string": (_with(SPEC_WATERMARK, commitTs="1"), "commitTs"),
    "commitTs negative": (_with(SPEC_WATERMARK, commitTs=-1), "commitTs"),
    "buildTs missing": (_with(SPEC_WATERMARK, buildTs=...), "buildTs"),
    "insert without data": (_with(SPEC_INSERT, data=...), "data"),
    "insert with old": (_with(SPEC_INSERT, old={"id": "1"}), "old"),
    "update without old": (_with(SPEC_UPDATE, old=...), "old"),
    "delete with data": (_with(SPEC_DELETE, data={"id": "1"}), "data"),
    "data not object": (_with(SPEC_INSERT, data=["1"]), "data"),
    "database missing": (_with(SPEC_INSERT, database=...), "database"),
    "ddl without sql": (_with(SPEC_DDL, sql=...), "sql"),
    "bootstrap without schema": (_with(SPEC_BOOTSTRAP, tableSchema=...), "tableSchema"),
    "unknown mysqlType": (_with(SPEC_BOOTSTRAP, tableSchema=dict(
        SPEC_BOOTSTRAP["tableSchema"], columns=[_col("g", "geometry", "binary", "binary", 0, True)])), "geometry"),
    "index on unknown column": (_with(SPEC_BOOTSTRAP, tableSchema=dict(
        SPEC_BOOTSTRAP["tableSchema"], indexes=[pk("nope")])), "nope"),
    "duplicate column": (_with(SPEC_BOOTSTRAP, tableSchema=dict(
        SPEC_BOOTSTRAP["tableSchema"], columns=SPEC_COLUMNS + SPEC_COLUMNS[:1])), "duplicate"),
    "nullable not bool": (_with(SPEC_BOOTSTRAP, tableSchema=dict(
        SPEC_BOOTSTRAP["tableSchema"], columns=[dict(SPEC_COLUMNS[0], nullable="no")])), "nullable"),
    "indexes missing": (_with(SPEC_BOOTSTRAP, tableSchema={
        k: v for k, v in SPEC_BOOTSTRAP["tableSchema"].items() if k != "indexes"}), "indexes"),
}


@pytest.mark.parametrize("case", sorted(JSON_MALFORMED))
def test_malformed_json_messages(case):
    value, match = JSON_MALFORMED[case]
    assert_decode_error(new_decoder({}), rec(value, 123), re.escape(match))


BAD_VALUES = {
    "int as JSON number": (dtype("int"), 5),
    "int not digits": (dtype("int"), "12a"),
    "int with spaces": (dtype("int"), " 12"),
    "tinyint out of range": (dtype("tinyint"), "128"),
    "unsigned negative": (dtype("int", unsigned=True), "-1"),
    "bigint unsigned too big": (dtype("bigint", unsigned=True), "18446744073709551616"),
    "float word": (dtype("float"), "NaN"),
    "float beyond float32": (dtype("float"), "1e39"),
    "double infinite": (dtype("double"), "1e400"),
    "decimal junk": (dtype("decimal", decimal=2), "1.2.3"),
    "bad base64": (dtype("blob"), "not base64!"),
    "unpadded base64": (dtype("blob"), "AQI"),
    "date junk": (dtype("date"), "2020/01/01"),
    "datetime junk": (dtype("datetime"), "yesterday"),
    "timestamp as string": (dtype("timestamp"), "2020-01-01 00:00:00"),
    "timestamp without location": (dtype("timestamp"), {"value": "2020-01-01 00:00:00"}),
    "timestamp unknown zone": (dtype("timestamp"), {"location": "Nowhere/City", "value": "2020-01-01 00:00:00"}),
    "timestamp bad date": (dtype("timestamp"), {"location": "UTC", "value": "2020-13-01 00:00:00"}),
    "year out of range": (dtype("year"), "1800"),
    "enum index past elements": (dtype("enum", "utf8mb4", elements=["a"]), "2"),
    "set bit past elements": (dtype("set", "utf8mb4", elements=["a"]), "2"),
    "bit too wide": (dtype("bit", length=3), "8"),
    "text as object": (dtype("varchar", "utf8mb4"), {"x": 1}),
}


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_json_value_type_mismatch(case):
    dt, wire = BAD_VALUES[case]
    with pytest.raises(DecodeError) as e:
        _one_column(Stream("json"), dt, wire)
    assert e.value.offset == 1 and "'c'" in e.value.reason or "time zone" in e.value.reason


def test_column_outside_the_schema_is_rejected(stream):
    dec = new_decoder({"encoding-format": stream.fmt})
    dec.decode(rec(stream.bootstrap(SMOKE_COLUMNS[:1], [pk("id")]), 0))
    one = "1" if stream.fmt == "json" else 1
    assert_decode_error(dec, rec(stream.dml("INSERT", data={"id": one, "ghost": one}), 123), "ghost")


AVRO_BAD_VALUES = {
    "long for text": (dtype("varchar", "utf8mb4"), 5),
    "bytes for text": (dtype("varchar", "utf8mb4"), b"x"),
    "string for binary": (dtype("blob"), "AQID"),
    "string for int": (dtype("int"), "5"),
    "long for float": (dtype("float"), 5),
    "long for timestamp": (dtype("timestamp"), 5),
    "timestamp record for datetime": (dtype("datetime"), (NS + "Timestamp", {"location": "UTC", "value": "x"})),
    "unsigned bigint record for signed": (dtype("bigint"), (NS + "UnsignedBigint", {"value": 1})),
    "int out of range": (dtype("smallint"), 40000),
    "enum past elements": (dtype("enum", "utf8mb4", elements=["a"]), 9),
}


@pytest.mark.parametrize("case", sorted(AVRO_BAD_VALUES))
def test_avro_value_type_mismatch(case):
    dt, wire = AVRO_BAD_VALUES[case]
    with pytest.raises(DecodeError, match="'c'"):
        _one_column(Stream("avro"), dt, wire)


def _avro_dml() -> bytes:
    return Stream("avro").dml("UPDATE", data={"id": 1, "v": "after"}, old={"id": 1, "v": "before"})


def _zigzag(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


AVRO_MALFORMED = {
    "empty": (b"", "Avro"),
    "trailing bytes": (_avro_dml() + b"\x00", "trailing"),
    # A complete datum of another branch of the union: Watermark (index 5) {version=1, commitTs=1, buildTs=1}.
    "other union branch": (b"\x0a\x02\x02\x02", "Message"),
    "union index out of range": (b"\x7e" + _avro_dml()[1:], "Avro"),
    # Message{type=DML, payload=Watermark{...}}
    "type and payload disagree": (b"\x16\x06\x00\x02\x02\x02", "payload"),
    # Message{type=DML, payload=DML{version=1, database=<length 2^62>...}}
    "hostile string length": (b"\x16\x06\x06\x02" + _zigzag(2**62) + b"abc", "Avro"),
    "negative string length": (b"\x16\x06\x06\x02" + _zigzag(-5) + b"abc", "Avro"),
    "bad utf-8": (b"\x16\x06\x06\x02\x04\xff\xfe", "Avro"),
    "version 2": (avro_bytes("WATERMARK", {"version": 2, "commitTs": 1, "buildTs": 1}), "version"),
    "negative commitTs": (avro_bytes("WATERMARK", {"version": 1, "commitTs": -1, "buildTs": 1}), "commitTs"),
    "enum symbol out of range": (b"\x16\x7e", "Avro"),
    # Bootstrap{version=1, buildTs=1, tableSchema{"", "", 0, 0, columns=<block of 2^62 items>}}
    "hostile array block count": (b"\x16\x02\x02\x02\x02\x00\x00\x00\x00" + _zigzag(2**62), "Avro"),
    "hostile negative array block": (b"\x16\x02\x02\x02\x02\x00\x00\x00\x00" + _zigzag(-(2**62)) + _zigzag(5),
                                     "Avro"),
    # DML{1, "", "", 0, INSERT, 0, 0, 0, null, null, null, data=<map block of 2^62 entries>}
    "hostile map block count": (b"\x16\x06\x06\x02" + b"\x00" * 10 + b"\x02" + _zigzag(2**62), "Avro"),
}


@pytest.mark.parametrize("case", sorted(AVRO_MALFORMED))
def test_malformed_avro_messages(case):
    value, match = AVRO_MALFORMED[case]
    assert_decode_error(new_decoder({"encoding-format": "avro"}), rec(value, 123), re.escape(match))


def test_every_truncation_of_an_avro_message_is_a_decode_error():
    raw = _avro_dml()
    for n in range(len(raw)):
        assert_decode_error(new_decoder({"encoding-format": "avro"}), rec(raw[:n], n))


def test_every_truncation_of_a_json_message_is_a_decode_error():
    raw = jdump(SPEC_DDL)
    for n in range(len(raw)):
        assert_decode_error(new_decoder({}), rec(raw[:n], n))


def test_avro_row_values_need_the_schema_like_json():
    dec = new_decoder({"encoding-format": "avro"})
    cols = [column("id", dtype("int"), nullable=False), column("v", dtype("varchar", "utf8mb4", 10))]
    assert dec.decode(rec(_avro_dml(), 0)) == []
    out = dec.decode(rec(Stream("avro").bootstrap(cols, [pk("id")]), 1))
    assert out[1].after == {"id": 1, "v": "after"} and out[1].before == {"id": 1, "v": "before"}


def _primed(fmt: str) -> SimpleDecoder:
    s = Stream(fmt)
    dec = new_decoder({"encoding-format": fmt})
    dec.decode(rec(s.bootstrap(SMOKE_COLUMNS, [pk("id")]), 0))
    return dec


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), fmt=st.sampled_from(["json", "avro"]))
def test_arbitrary_bytes_only_ever_raise_decode_error(data, fmt):
    decodes_or_decode_error(_primed(fmt), rec(data, 5))


VALID_FOR_MUTATION = {
    "json": Stream("json").dml("INSERT", data=smoke_wire("json", SMOKE_ROWS[0])),
    "avro": Stream("avro").dml("INSERT", data=smoke_wire("avro", SMOKE_ROWS[0])),
}


@settings(max_examples=400, deadline=None)
@given(fmt=st.sampled_from(["json", "avro"]), pos=st.integers(min_value=0), byte=st.integers(0, 255),
       cut=st.booleans())
def test_mutated_messages_decode_or_raise_decode_error(fmt, pos, byte, cut):
    raw = bytearray(VALID_FOR_MUTATION[fmt])
    pos %= len(raw)
    raw[pos] = byte
    if cut:
        raw = raw[: pos + 1]
    for ev in decodes_or_decode_error(_primed(fmt), rec(bytes(raw), 9)) or []:
        assert isinstance(ev, (DecodedRow, DecodedWatermark, DecodedBootstrap, DecodedDDL))


# --- fidelity -----------------------------------------------------------------------------------------
def test_describe_fidelity_for_every_base_type():
    for base in ALL_BASE_TYPES:
        t = TYPE_CASES[base][4]
        level, why = describe_fidelity(t, {"encoding-format": "json"})
        assert level == ("lossy" if base == "float" else "exact"), base
        assert "spec 004" in why


def test_project_value_keeps_exact_types_unchanged():
    for base, (_, _, _, value, t) in TYPE_CASES.items():
        if base != "float":
            assert project_value(t, value, {}) == value
        assert project_value(t, None, {}) is None
    assert project_value(TiDBType("bigint", unsigned=True), 2**64 - 1, {}) == 2**64 - 1
