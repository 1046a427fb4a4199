"""Row checksums (`[integrity] integrity-check-level = "correctness"`): TiDB's algorithm against TiDB's
and TiCDC's own test vectors, the Simple encoder's `checksum` field, and the decoder's check of it."""
from __future__ import annotations

import io
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import fastavro
import orjson
import pytest
from click.testing import CliRunner

from tests.conftest import SHARED
from tests.helpers import kafka_record
from ticdc_conformance.cli import main
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.compression import codec_option, decompress
from ticdc_conformance.protocols.simple import SimpleDecoder
from ticdc_conformance.protocols.simple.message import KIND_OF as _KIND_OF
from ticdc_contract.checksum import (
    KINDS,
    TIDB_CHECKSUM_VERSION,
    RowChecksum,
    change_checksum,
    kind_of,
    row_checksum,
    timestamp_in_utc,
    value_bytes,
)
from ticdc_contract.model import Column, Index, Op, RowChange, TableSchema
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import iter_record_files
from ticdc_contract.schema_json import table_from_json
from ticdc_contract.tidb_types import TiDBType, int_type, varchar
from ticdc_contract.type_catalogue import all_types_matrix
from ticdc_generators.protocols.simple.avro_schema import MESSAGE_SCHEMA
from ticdc_generators.protocols.simple.encoder import SimpleEncoder, SimpleEncoderConfig
from ticdc_generators.protocols.simple.message import json_dml
from ticdc_generators.sink.events import BootstrapEvent, RowEvent

INTEGRATION_TESTS = SHARED / "reference/ticdc/tests/integration_tests"
KAFKA_SIMPLE_BASIC = INTEGRATION_TESTS / "kafka_simple_basic/conf/changefeed.toml"
KAFKA_SIMPLE_CLAIM_CHECK = INTEGRATION_TESTS / "kafka_simple_claim_check/conf/changefeed.toml"


def u64(hex_le: str) -> bytes:
    return bytes.fromhex(hex_le)


def lv(text: str) -> bytes:
    """TiDB's appendLengthValue: uint32 little-endian length, then the bytes."""
    data = text.encode("utf-8")
    return struct.pack("<I", len(data)) + data


# --- TiDB pkg/util/rowcodec/rowcodec_test.go TestColumnEncode (pingcap/tidb 10f255ba) -----------------
# Integers, YEAR, ENUM, SET and BIT are encodeUint64(uint64(v)); strings encodeBytes(v); FLOAT/DOUBLE
# encodeUint64(math.Float64bits(v)) with NaN/Inf as 0; temporal, DECIMAL and JSON values
# encodeBytes(v.String()), spelled out here with TiDB's prints (Time.String: fsp digits cut from
# ".%06d" of the microseconds; Duration.String; MyDecimal.String; BinaryJSON.String).
INTEGER_VECTORS = [
    ("tinyint/zero", 0, "0000000000000000"), ("tinyint/pos", 42, "2a00000000000000"),
    ("tinyint/neg", -2, "feffffffffffffff"), ("tinyint/min/signed", -128, "80ffffffffffffff"),
    ("tinyint/max/signed", 127, "7f00000000000000"), ("tinyint/max/unsigned", 255, "ff00000000000000"),
    ("smallint/min/signed", -32768, "0080ffffffffffff"), ("smallint/max/unsigned", 65535, "ffff000000000000"),
    ("int/min/signed", -(2**31), "00000080ffffffff"), ("int/max/unsigned", 2**32 - 1, "ffffffff00000000"),
    ("bigint/min/signed", -(2**63), "0000000000000080"), ("bigint/max/signed", 2**63 - 1, "ffffffffffffff7f"),
    ("bigint/max/unsigned", 2**64 - 1, "ffffffffffffffff"),
    ("mediumint/min/signed", -(2**23), "000080ffffffffff"), ("mediumint/max/unsigned", 2**24 - 1, "ffffff0000000000"),
]


@pytest.mark.parametrize("name,value,expected", INTEGER_VECTORS, ids=[v[0] for v in INTEGER_VECTORS])
def test_tidb_integer_vectors(name, value, expected):
    assert value_bytes("integer", value) == u64(expected)


def test_tidb_year_enum_set_bit_vectors():
    assert value_bytes("year", 2023) == u64("e707000000000000")
    # "enum": 0b010 is the second member; "set": 0b101 the first and third
    assert value_bytes("enum", "b", ("a", "b", "c")) == u64("0200000000000000")
    assert value_bytes("set", "a,c", ("a", "b", "c")) == u64("0500000000000000")
    # TiDB docs ticdc-integrity-check.md: SET('a','b','c') holding 'a,c' is 0b101, decimal 5
    assert value_bytes("set", "a,c", ("a", "b", "c")) == struct.pack("<Q", 5)
    # "bit": the binary literal 0x1234
    assert value_bytes("bit", 0x1234) == u64("3412000000000000")


@pytest.mark.parametrize("kind,value", [(k, v) for k in ("text", "binary") for v in ("foo", "")])
def test_tidb_string_vectors(kind, value):
    # varchar/char/text/blob and their tiny/medium/long forms all encode as appendLengthValue
    raw = value.encode() if kind == "binary" else value
    assert value_bytes(kind, raw) == lv(value)


def test_tidb_float_vectors():
    # float32(3.14) widened to float64 = 0x40091EB860000000; double 3.14 = 0x40091EB851EB851F
    assert value_bytes("float", 3.14) == u64("00000060b81e0940")
    assert value_bytes("double", 3.14) == u64("1f85eb51b81e0940")
    for special in (float("nan"), float("inf"), float("-inf")):
        assert value_bytes("float", special) == u64("0000000000000000")
        assert value_bytes("double", special) == u64("0000000000000000")


TEXT_VECTORS = [
    ("datetime", "2023-01-02 03:04:05.000"),  # FromDate(2023,1,2,3,4,5,678) at fsp 3
    ("datetime", "0000-00-00 00:00:00"),  # ZeroDatetime
    ("datetime", "1000-01-01 00:00:00.000000"), ("datetime", "9999-12-31 23:59:59.999999"),
    ("date", "2023-01-02"), ("date", "0000-00-00"), ("date", "1000-01-01"), ("date", "9999-12-31"),
    ("time", "08:07:00.123456"), ("time", "00:00:00"), ("time", "838:59:59.000"),  # MaxMySQLDuration(3)
    ("decimal", "0.000"), ("decimal", "3.14"), ("decimal", "-1.2"),
    ("decimal", "-999999.999999"), ("decimal", "999999.999999"),  # NewMaxOrMinDec(_, 12, 6)
    ("json", "null"), ("json", "42"), ("json", '{"a": 42, "foo": "bar"}'),
]


@pytest.mark.parametrize("kind,text", TEXT_VECTORS)
def test_tidb_printed_value_vectors(kind, text):
    assert value_bytes(kind, text) == lv(text)


def test_tidb_timestamp_vectors_convert_to_utc():
    # TestColumnEncode converts each TIMESTAMP from the session zone to UTC before String(); zero stays.
    assert value_bytes("timestamp", "2023-01-02 11:04:05.000", time_zone="Asia/Shanghai") == \
        lv("2023-01-02 03:04:05.000")
    assert value_bytes("timestamp", "0000-00-00 00:00:00", time_zone="Asia/Shanghai") == lv("0000-00-00 00:00:00")
    assert value_bytes("timestamp", "1970-01-01 00:00:01", time_zone="UTC") == lv("1970-01-01 00:00:01")


def test_timestamp_conversion_follows_go_time_date():
    # America/New_York, 2021-11-07: 01:30 happens twice; Go's time.Date looks the offset up at 01:30 read
    # as UTC (EDT, -4h), keeps it because 05:30Z is still EDT, so the earlier instant wins.
    assert timestamp_in_utc("2021-11-07 01:30:00", "America/New_York") == "2021-11-07 05:30:00"
    assert timestamp_in_utc("2021-07-01 12:00:00.5", "America/New_York") == "2021-07-01 16:00:00.5"
    # 02:30 on 2021-03-14 does not exist there: GoTime fails, and so does TiDB's checksum
    with pytest.raises(ValueError, match="does not exist"):
        timestamp_in_utc("2021-03-14 02:30:00", "America/New_York")


# --- TiDB TestRowChecksum, TiCDC's decoder test ---------------------------------------------------------
def table_of(*columns: Column, name: str = "t") -> TableSchema:
    return TableSchema(schema="s", table=name, table_id=100, columns=columns,
                       indexes=(Index("PRIMARY", (columns[0].name,), primary=True, unique=True),),
                       schema_version=1)


def test_crc32_is_the_ieee_polynomial():
    # Go's crc32.IEEETable: the CRC-32/ISO-HDLC check value of "123456789" is 0xCBF43926
    assert zlib.crc32(b"123456789") == 0xCBF43926


def test_row_checksum_is_crc32_of_the_concatenated_columns():
    # TiDB TestRowChecksum: RowData.Checksum == crc32.ChecksumIEEE(RowData.Encode()), NULL adding nothing
    t = table_of(Column("c1", TiDBType("int"), column_id=1), Column("c2", int_type("int"), column_id=2),
                 Column("c3", varchar(16), column_id=3), Column("c4", TiDBType("timestamp", decimal=6), column_id=4))
    row = {"c1": None, "c2": 42, "c3": "foobar", "c4": "2024-05-06 07:08:09.123456"}
    encoded = u64("2a00000000000000") + lv("foobar") + lv("2024-05-06 07:08:09.123456")
    assert row_checksum(t, row, "UTC") == zlib.crc32(encoded)
    assert row_checksum(t, {"c1": None, "c2": None, "c3": None, "c4": None}, "UTC") == 0  # "nullonly"


def test_ticdc_single_int_column_vector():
    # TiCDC pkg/sink/codec/avro/decoder_test.go TestDecodeIntegerPrimaryKeyWithUpstreamChecksum: the row
    # {id INT = 42} has checksum crc32.ChecksumIEEE(binary.LittleEndian.AppendUint64(nil, 42))
    t = table_of(Column("id", int_type("int"), nullable=False, column_id=1))
    assert row_checksum(t, {"id": 42}, "UTC") == zlib.crc32(u64("2a00000000000000"))


# --- what TiCDC attaches ---------------------------------------------------------------------------------
T2 = table_of(Column("id", int_type("bigint"), nullable=False, column_id=1), Column("v", varchar(8), column_id=2))


def test_insert_update_delete_checksums():
    a, b = {"id": 1, "v": "x"}, {"id": 1, "v": "y"}
    ins = change_checksum(RowChange(T2, Op.INSERT, None, a), "UTC")
    upd = change_checksum(RowChange(T2, Op.UPDATE, a, b), "UTC")
    dele = change_checksum(RowChange(T2, Op.DELETE, b, None), "UTC")
    assert ins == RowChecksum(TIDB_CHECKSUM_VERSION, False, row_checksum(T2, a, "UTC"), 0)
    assert upd == RowChecksum(TIDB_CHECKSUM_VERSION, False, row_checksum(T2, b, "UTC"), row_checksum(T2, a, "UTC"))
    assert dele == RowChecksum(TIDB_CHECKSUM_VERSION, False, 0, row_checksum(T2, b, "UTC"))
    assert len({ins.current, upd.current, upd.previous}) == 2  # a differs from b
    # TiCDC sends no checksum when both are 0 (mounter.go DecodeToChunk)
    assert change_checksum(RowChange(T2, Op.INSERT, None, {"id": None, "v": None}), "UTC") is None


def test_column_order_new_ticdc_table_order_tiflow_column_ids():
    t = table_of(Column("late", int_type("int"), column_id=5), Column("early", varchar(8), column_id=2))
    row = {"late": 7, "early": "x"}
    assert row_checksum(t, row, "UTC") == zlib.crc32(u64("0700000000000000") + lv("x"))
    assert row_checksum(t, row, "UTC", by_column_id=True) == zlib.crc32(lv("x") + u64("0700000000000000"))


def test_virtual_generated_columns_are_left_out():
    plain = table_of(Column("id", int_type("int"), column_id=1))
    with_virtual = table_of(Column("id", int_type("int"), column_id=1),
                            Column("g", int_type("int"), column_id=2, generated="id + 1"))
    assert row_checksum(with_virtual, {"id": 3, "g": 4}, "UTC") == row_checksum(plain, {"id": 3}, "UTC")


def test_every_catalogued_type_has_a_checksum_kind():
    assert {kind_of(t) for t in all_types_matrix()} <= KINDS
    # the Simple decoder names its value kinds the same way, so its rows can be hashed as they are
    assert set(_KIND_OF.values()) | {"binary"} <= KINDS


# --- the Simple encoder's field, the decoder's check ----------------------------------------------------
def _encoder(fmt: str, **kw) -> SimpleEncoder:
    return SimpleEncoder(SimpleEncoderConfig(encoding_format=fmt, **kw), "t", 0)


def _stream(fmt: str, changes: list[RowChange], **kw) -> list[KafkaRecord]:
    enc = _encoder(fmt, **kw)
    values = [enc.encode(BootstrapEvent(changes[0].table))[0].value]
    values += [enc.encode(RowEvent(c, 1000 + i, 999))[0].value for i, c in enumerate(changes)]
    return [kafka_record(v, b"", offset=i) for i, v in enumerate(values)]


def _decode(records: list[KafkaRecord], fmt: str, check: bool = True) -> list[DecodedRow]:
    dec = SimpleDecoder({"encoding-format": fmt, "integrity-check-level": "correctness" if check else "none"})
    return [e for r in records for e in dec.decode(r) if isinstance(e, DecodedRow)]


def test_json_dml_carries_the_checksum_in_the_go_struct_order():
    change = RowChange(T2, Op.UPDATE, {"id": 1, "v": "x"}, {"id": 1, "v": "y"})
    msg = orjson.loads(_encoder("json", row_checksum=True).encode(RowEvent(change, 10, 9))[0].value)
    assert list(msg)[list(msg).index("schemaVersion") + 1:] == ["checksum", "data", "old"]
    ck = change_checksum(change, "UTC")
    assert msg["checksum"] == {"version": 2, "corrupted": False, "current": ck.current, "previous": ck.previous}
    plain = orjson.loads(_encoder("json").encode(RowEvent(change, 10, 9))[0].value)
    assert "checksum" not in plain


def test_avro_dml_carries_the_checksum_record():
    change = RowChange(T2, Op.DELETE, {"id": 1, "v": "x"}, None)
    value = _encoder("avro", row_checksum=True).encode(RowEvent(change, 10, 9))[0].value
    datum = fastavro.schemaless_reader(io.BytesIO(value), MESSAGE_SCHEMA, None, return_record_name=True)
    assert datum[1]["payload"][1]["checksum"] == ("com.pingcap.simple.avro.Checksum", {
        "version": 2, "corrupted": False, "current": 0, "previous": row_checksum(T2, {"id": 1, "v": "x"}, "UTC")})


@pytest.mark.parametrize("fmt", ["json", "avro"])
@pytest.mark.parametrize("tiflow", [False, True])
def test_decoder_accepts_the_checksums_it_is_sent(fmt, tiflow):
    # columns whose IDs run against table order: tiflow hashes (and lists) them by ID, new TiCDC in table order
    t = table_of(Column("id", int_type("int"), nullable=False, column_id=3), Column("v", varchar(8), column_id=1))
    changes = [RowChange(t, Op.INSERT, None, {"id": 1, "v": "a"}),
               RowChange(t, Op.UPDATE, {"id": 1, "v": "a"}, {"id": 1, "v": None}),
               RowChange(t, Op.DELETE, {"id": 1, "v": None}, None)]
    rows = _decode(_stream(fmt, changes, row_checksum=True, tiflow=tiflow), fmt)
    assert [r.op for r in rows] == ["insert", "update", "delete"]


def _tampered_json(records: list[KafkaRecord], index: int, edit) -> list[KafkaRecord]:
    msg = orjson.loads(records[index].value)
    edit(msg)
    out = list(records)
    out[index] = replace(records[index], value=orjson.dumps(msg))
    return out


def test_a_changed_value_fails_naming_the_record():
    records = _stream("json", [RowChange(T2, Op.INSERT, None, {"id": 1, "v": "x"})], row_checksum=True)
    bad = _tampered_json(records, 1, lambda m: m["data"].update(v="z"))
    with pytest.raises(DecodeError, match="row checksum mismatch: `current`") as e:
        _decode(bad, "json")
    assert (e.value.topic, e.value.partition, e.value.offset) == ("t", 0, 1)
    # TiCDC's consumer checks only with its own integrity check on; so does this decoder
    assert len(_decode(bad, "json", check=False)) == 1


def test_a_changed_old_value_fails_on_previous():
    change = RowChange(T2, Op.UPDATE, {"id": 1, "v": "x"}, {"id": 1, "v": "y"})
    bad = _tampered_json(_stream("json", [change], row_checksum=True), 1, lambda m: m["old"].update(v="w"))
    with pytest.raises(DecodeError, match="`previous`"):
        _decode(bad, "json")


def test_corrupted_flag_and_zero_checksums():
    records = _stream("json", [RowChange(T2, Op.INSERT, None, {"id": 1, "v": "x"})], row_checksum=True)
    with pytest.raises(DecodeError, match="marked the row corrupted"):
        _decode(_tampered_json(records, 1, lambda m: m["checksum"].update(corrupted=True)), "json")
    # 0 means "no checksum" to TiCDC's VerifyChecksum
    assert len(_decode(_tampered_json(records, 1, lambda m: (m["checksum"].update(current=0),
                                                             m["data"].update(v="z"))), "json")) == 1
    with pytest.raises(DecodeError, match=r"checksum: field 'current' = 4294967296 outside"):
        _decode(_tampered_json(records, 1, lambda m: m["checksum"].update(current=2**32)), "json")


class _Snapshot:
    """An upstream whose row differs from the one the checksum was computed for."""

    def row(self, schema, table, key, ts):
        return {"id": key["id"], "v": "changed since"}


def test_handle_key_only_rows_are_not_checked():
    # TiCDC still attaches the whole-row checksum to a handle-key-only message, but its consumer rebuilds
    # the row from an upstream read without it (simple/decoder.go assembleHandleKeyOnlyRowChangedEvent)
    change = RowChange(T2, Op.INSERT, None, {"id": 1, "v": "x"})
    enc = _encoder("json", row_checksum=True)
    body = json_dml(change, 1000, 1, enc.config.style, only_handle_key=True)
    assert body["handleKeyOnly"] is True and body["checksum"]["current"] == row_checksum(T2, change.after, "UTC")
    records = [kafka_record(enc.encode(BootstrapEvent(T2))[0].value, b"", offset=0),
               kafka_record(body, b"", offset=1)]
    dec = SimpleDecoder({"encoding-format": "json", "integrity-check-level": "correctness",
                         "snapshot-lookup": _Snapshot()})
    rows = [e for r in records for e in dec.decode(r) if isinstance(e, DecodedRow)]
    assert rows[0].after == {"id": 1, "v": "changed since"}


# --- the `types` scenario end to end ---------------------------------------------------------------------
def _generate(out: Path, changefeed: Path, *extra: str) -> None:
    result = CliRunner().invoke(main, ["generate", "--scenario", "types", "--protocol", "simple",
                                       "--changefeed", str(changefeed), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


def _dml_checksums(value: bytes, fmt: str):
    """The `checksum` of each DML message in a (decompressed) record value."""
    if fmt == "json":
        msg = orjson.loads(value)
        return (msg.get("checksum"),) if msg["type"] in ("INSERT", "UPDATE", "DELETE") else ()
    _, message = fastavro.schemaless_reader(io.BytesIO(value), MESSAGE_SCHEMA, None, return_record_name=True)
    return (message["payload"][1]["checksum"],) if message["type"] == "DML" else ()


def _kinds_by_column(truth_tables: Path) -> dict[tuple[str, str, str], str]:
    out = {}
    for line in truth_tables.read_text().splitlines():
        t = table_from_json(orjson.loads(line))
        out.update({(t.schema, t.table, c.name): kind_of(c.type) for c in t.columns})
    return out


@pytest.mark.parametrize("fmt,changefeed,extra", [
    ("json", KAFKA_SIMPLE_BASIC, ()),  # the kafka_simple_basic changefeed as it is
    ("avro", KAFKA_SIMPLE_BASIC, ("--encoding", "avro", "--time-zone", "America/New_York")),
    ("json", KAFKA_SIMPLE_BASIC, ("--version-profile", "tiflow", "--time-zone", "Asia/Shanghai")),
    # kafka_simple_claim_check with a limit that sends some rows through claim-check storage
    ("json", KAFKA_SIMPLE_CLAIM_CHECK, ("--sink-uri", "kafka://127.0.0.1:9092/ticdc-types?protocol=simple"
                                                      "&max-message-bytes=3000")),
], ids=["json-ticdc-utc", "avro-ticdc-new-york", "json-tiflow-shanghai", "json-claim-check"])
def test_types_scenario_round_trip_verifies_every_checksum(tmp_path, fmt, changefeed, extra):
    _generate(tmp_path, changefeed, *extra)
    manifest = orjson.loads((tmp_path / "manifest.json").read_bytes())
    sink = dict(manifest["sink"])
    assert sink["integrity-check-level"] == "correctness"
    if sink["large-message-handle-option"] == "claim-check":
        assert manifest["claim_check"]["files"] > 0
        sink["claim-check-folder"] = str(tmp_path / manifest["claim_check"]["folder"])
    kind_of_column = _kinds_by_column(tmp_path / "truth" / "tables.ndjson")
    decoders: dict[int, SimpleDecoder] = {}
    dml = rows = 0
    hashed: set[str] = set()
    for rec in iter_record_files(tmp_path / "records"):
        checksums = _dml_checksums(decompress(codec_option(sink), rec.value), fmt)
        assert all(c is not None for c in checksums), f"{rec.coordinates}: DML without checksum"
        dml += len(checksums)
        dec = decoders.setdefault(rec.partition, SimpleDecoder(sink))
        for event in dec.decode(rec):  # raises DecodeError on any checksum mismatch
            if isinstance(event, DecodedRow):
                rows += 1
                for image in (event.after, event.before):
                    hashed |= {kind_of_column[(event.schema, event.table, n)]
                               for n, v in (image or {}).items() if v is not None}
    assert dml > 0 and rows == dml
    assert hashed == KINDS  # every value kind took part in some verified checksum
