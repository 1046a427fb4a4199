"""Large-message handling on the encoder side: handle-key-only, claim-check, compression and
max-message-bytes, for Open Protocol, Canal-JSON, Simple (JSON and Avro) and Debezium.

Messages are read back here with cramjam, orjson, the standard json module and fastavro over
TiCDC's own Avro schema (shared/reference), never with the project's decoders. Sources: TiCDC
pkg/sink/codec/{open,canal,simple,debezium}/ and their *_test.go, pkg/sink/kafka/claimcheck/,
pkg/compression/, pkg/config/large_message.go (docs/large-messages.md).
"""
from __future__ import annotations

import base64
import io
import json
import random
import re
import struct

import cramjam
import fastavro
import orjson
import pytest
from click.testing import CliRunner

from tests.conftest import SHARED
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.record_files import iter_record_files
from ticdc_contract.tidb_types import TiDBType, varchar
from ticdc_generators.pipeline import config_for, generate
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.large_message import MessageTooLargeError, compress
from ticdc_generators.protocols.open_protocol import EncodeError
from ticdc_generators.sink.claim_check import FOLDER, ClaimCheckStorage, claim_check_message, location_prefix
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import DDLEvent, Message, RowEvent, WatermarkEvent

REFERENCE = SHARED / "reference/ticdc"
SIMPLE_SCHEMA = REFERENCE / "pkg/sink/codec/simple/message.json"
CANAL_CLAIM_CHECK_TOML = REFERENCE / "tests/integration_tests/canal_json_claim_check/conf/changefeed.toml"
# A commit TSO of today's size (18 digits), as TiCDC's tests get from their mock TiDB.
TS = 463267587900047362
URI = "file:///tmp/large-message-test/"
UUID_JSON = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json$")
LIMIT = 2000

ENCODINGS = {
    "open-protocol": dict(protocol="open-protocol"),
    "canal-json": dict(protocol="canal-json", enable_tidb_extension=True),
    "simple-json": dict(protocol="simple", encoding_format="json"),
    "simple-avro": dict(protocol="simple", encoding_format="avro"),
}
DECOMPRESS = {
    "none": lambda b: b,
    "snappy": lambda b: bytes(cramjam.snappy.decompress_raw(b)),
    "lz4": lambda b: bytes(cramjam.lz4.decompress(b)),
}

BIG = TableSchema(
    schema="shop", table="docs", table_id=120, schema_version=TS - 100, pk_is_handle=True,
    columns=(Column("id", TiDBType("int"), nullable=False), Column("title", varchar(64)),
             Column("body", TiDBType("mediumtext"))),
    indexes=(Index("PRIMARY", ("id",), primary=True),),
)


def _text(n: int, seed: int) -> str:
    # letters at random: snappy and lz4 keep it well above LIMIT, so compression alone never fits it
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(n))


def big_rows() -> list[RowEvent]:
    before = {"id": 7, "title": "draft", "body": _text(6000, 1)}
    after = {"id": 7, "title": "final", "body": _text(6000, 2)}
    return [RowEvent(RowChange(BIG, Op.INSERT, None, after), TS, TS - 1),
            RowEvent(RowChange(BIG, Op.UPDATE, before, after), TS + 1, TS),
            RowEvent(RowChange(BIG, Op.DELETE, after, None), TS + 2, TS + 1)]


def small_row() -> RowEvent:
    return RowEvent(RowChange(BIG, Op.INSERT, None, {"id": 8, "title": "t", "body": "short"}), TS + 3, TS + 2)


def config(encoding: str, **kw) -> SinkConfig:
    return SinkConfig(**ENCODINGS[encoding], **kw)


def encode_all(cfg: SinkConfig, events, storage=None, topic: str = "topic", partition: int = 0) -> list[Message]:
    enc = encoder_module(cfg.protocol).new_encoder(cfg, topic, partition, storage)
    return [m for e in events for m in enc.encode(e)] + enc.flush()


def frames(data: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = struct.unpack(">Q", data[i:i + 8])[0]
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


@pytest.fixture(scope="module")
def simple_schema():
    return fastavro.parse_schema(json.loads(SIMPLE_SCHEMA.read_text()))


def read_row(encoding: str, msg: Message, compression: str, simple_schema) -> dict:
    """What a consumer sees of a one-row message: the columns of its row images, its
    large-message markers, and (Open Protocol) the key's members in order."""
    unpack = DECOMPRESS[compression]
    if encoding == "open-protocol":
        assert msg.key[:8] == struct.pack(">Q", 1)
        [key], [value] = frames(msg.key[8:]), frames(msg.value)
        pairs = json.loads(key, object_pairs_hook=list)
        body = orjson.loads(unpack(value))
        key_obj = dict(pairs)  # a later member wins, as in Go's encoding/json
        return {"images": [set(body[k]) for k in ("u", "p", "d") if k in body], "key_pairs": pairs,
                "handle_key_only": key_obj.get("ohk", False), "location": key_obj.get("ccl")}
    if encoding == "canal-json":
        body = orjson.loads(unpack(msg.value))
        tidb = body["_tidb"]
        images = [set(body["data"][0])] + ([set(body["old"][0])] if body["old"] else [])
        assert set(body["sqlType"]) == set(body["mysqlType"]) == images[0]
        return {"images": images, "handle_key_only": tidb.get("onlyHandleKey", False),
                "location": tidb.get("claimCheckLocation")}
    if encoding == "simple-json":
        body = orjson.loads(unpack(msg.value))
    else:
        datum = fastavro.schemaless_reader(io.BytesIO(unpack(msg.value)), simple_schema, simple_schema)
        body = datum["payload"]
    return {"images": [set(body[k]) for k in ("data", "old") if body.get(k) is not None],
            "handle_key_only": bool(body.get("handleKeyOnly")), "location": body.get("claimCheckLocation")}


def stored(encoding: str, storage: ClaimCheckStorage, location: str) -> tuple[bytes | None, bytes]:
    """The (key, value) a claim-check file holds, read as TiCDC's consumers read it."""
    name = location.rsplit("/", 1)[1]
    assert location == URI.rstrip("/") + "/" + name and UUID_JSON.match(name)
    data = (storage.folder / name).read_bytes()
    if storage.raw_value:
        return None, data
    doc = orjson.loads(data)
    assert list(doc) == ["key", "value"]
    return (None if doc["key"] is None else base64.b64decode(doc["key"])), base64.b64decode(doc["value"])


OPTIONS = [("handle-key-only", False), ("claim-check", False), ("claim-check", True)]


@pytest.mark.parametrize("compression", ["none", "snappy", "lz4"])
@pytest.mark.parametrize("option,raw", OPTIONS, ids=["handle-key-only", "claim-check", "claim-check-raw"])
@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_large_rows_take_the_ticdc_form(encoding, option, raw, compression, tmp_path, simple_schema):
    if raw and encoding == "open-protocol":
        pytest.skip("TiCDC refuses claim-check-raw-value for Open Protocol")
    cfg = config(encoding, max_message_bytes=LIMIT, large_message_handle_option=option,
                 large_message_handle_compression=compression,
                 claim_check_storage_uri=URI if option == "claim-check" else "", claim_check_raw_value=raw)
    storage = ClaimCheckStorage.for_run(cfg, tmp_path)
    whole_cfg = config(encoding, max_message_bytes=10 * 1024 * 1024, large_message_handle_compression=compression)
    for event in big_rows():
        [whole] = encode_all(whole_cfg, [event])
        assert len(whole.key or b"") + len(whole.value) + 36 > LIMIT
        [msg] = encode_all(cfg, [event], storage)
        assert len(msg.key or b"") + len(msg.value) + 36 <= LIMIT
        seen = read_row(encoding, msg, compression, simple_schema)
        # only the handle key (the primary key `id`) is left in every row image
        assert seen["images"] and all(image == {"id"} for image in seen["images"])
        if option == "handle-key-only":
            assert seen["handle_key_only"] is True and seen["location"] is None
            continue
        # claim-check: the whole message, as it would have been sent, is in the file
        key, value = stored(encoding, storage, seen["location"])
        if encoding == "open-protocol":
            assert (key, value) == (whole.key, whole.value)
        else:
            assert key is None and value == whole.value
        # Canal-JSON says nothing more; Simple also sets handleKeyOnly; Open Protocol's key
        # ends "ohk":true,"ohk":false,"ccl":… (codec.go writes both flags), so ohk reads false.
        expect_hko = {"canal-json": False, "simple-json": True, "simple-avro": True, "open-protocol": False}
        assert seen["handle_key_only"] is expect_hko[encoding]
        if encoding == "open-protocol":
            assert [k for k, _ in seen["key_pairs"]] == ["ts", "scm", "tbl", "t", "ohk", "ohk", "ccl"]
    if option == "claim-check":
        assert storage.files_written == 3 and len(list(storage.folder.iterdir())) == 3
    # a small row is sent exactly as without large-message handling, and stores nothing
    assert encode_all(cfg, [small_row()], storage) == encode_all(whole_cfg, [small_row()])
    assert storage is None or storage.files_written == 3


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_claim_check_output_is_deterministic(encoding, tmp_path):
    cfg = config(encoding, max_message_bytes=LIMIT, large_message_handle_option="claim-check",
                 large_message_handle_compression="snappy", claim_check_storage_uri=URI)
    runs = []
    for run in ("a", "b"):
        storage = ClaimCheckStorage.for_run(cfg, tmp_path / run)
        messages = encode_all(cfg, big_rows(), storage, topic="orders", partition=2)
        files = {p.name: p.read_bytes() for p in sorted(storage.folder.iterdir())}
        runs.append((messages, files))
    assert runs[0] == runs[1]
    # one file per large message, names told apart by topic/partition/commit ts/running count
    assert len(runs[0][1]) == 3


def test_claim_check_names_differ_for_a_replayed_event(tmp_path):
    cfg = config("canal-json", max_message_bytes=LIMIT, large_message_handle_option="claim-check",
                 claim_check_storage_uri=URI)
    storage = ClaimCheckStorage.for_run(cfg, tmp_path)
    event = big_rows()[0]
    first, again = encode_all(cfg, [event, event], storage)
    assert first != again and storage.files_written == 2


# --- option none, and messages that do not fit even cut down ------------------------------------

@pytest.mark.parametrize("encoding", [*ENCODINGS, "debezium"])
def test_option_none_refuses_a_large_row_naming_table_and_commit_ts(encoding):
    cfg = SinkConfig(protocol="debezium", max_message_bytes=LIMIT) if encoding == "debezium" \
        else config(encoding, max_message_bytes=LIMIT)
    event = big_rows()[0]
    with pytest.raises(MessageTooLargeError) as e:
        encode_all(cfg, [event], topic="orders", partition=1)
    err = e.value
    assert (err.table, err.commit_ts, err.limit, err.topic, err.partition) == ("shop.docs", TS, LIMIT, "orders", 1)
    assert err.length > LIMIT
    assert "shop.docs" in str(err) and str(TS) in str(err) and "maxMessageBytes:2000" in str(err)


# TiCDC simple/encoder_test.go TestDMLMessageTooLarge: max-message-bytes 50 fails a row under
# every option, cut down or not.
@pytest.mark.parametrize("option", ["none", "handle-key-only", "claim-check"])
@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_a_row_that_does_not_fit_even_cut_down_fails(encoding, option, tmp_path):
    cfg = config(encoding, max_message_bytes=50, large_message_handle_option=option,
                 claim_check_storage_uri=URI if option == "claim-check" else "")
    with pytest.raises(MessageTooLargeError) as e:
        encode_all(cfg, [big_rows()[0]], ClaimCheckStorage.for_run(cfg, tmp_path))
    assert e.value.commit_ts == TS


def test_claim_check_encoders_need_a_storage():
    cfg = config("simple-json", large_message_handle_option="claim-check", claim_check_storage_uri=URI)
    with pytest.raises(ValueError, match="needs a claim-check storage"):
        encoder_module("simple").new_encoder(cfg, "topic", 0)


# --- TiCDC's own expectations ----------------------------------------------------------------------

# open/encoder_test.go: table test.t(a tinyint primary key, b int), row (1, 123).
SMALL_PK = TableSchema(schema="test", table="t", table_id=100, schema_version=1, pk_is_handle=True,
                       columns=(Column("a", TiDBType("tinyint"), nullable=False), Column("b", TiDBType("int"))),
                       indexes=(Index("PRIMARY", ("a",), primary=True),))
SMALL_PK_ROW = RowEvent(RowChange(SMALL_PK, Op.INSERT, None, {"a": 1, "b": 123}), TS, TS - 1)


def test_open_protocol_handle_key_only_at_168_bytes():
    """TestLargeMessageWithHandleEnableHandleKeyOnly: at 168 bytes the row goes out with column
    `a` only; TestMessageTooLarge: at 100 bytes it fails."""
    cfg = SinkConfig(protocol="open-protocol", max_message_bytes=168, large_message_handle_option="handle-key-only")
    [msg] = encode_all(cfg, [SMALL_PK_ROW])
    [key], [value] = frames(msg.key[8:]), frames(msg.value)
    assert orjson.loads(key)["ohk"] is True
    assert list(orjson.loads(value)["u"]) == ["a"]
    assert len(msg.key) + len(msg.value) + 36 <= 168
    [whole] = encode_all(SinkConfig(protocol="open-protocol"), [SMALL_PK_ROW])
    assert len(whole.key) + len(whole.value) + 36 > 168
    with pytest.raises(MessageTooLargeError):
        encode_all(SinkConfig(protocol="open-protocol", max_message_bytes=100), [SMALL_PK_ROW])


def test_open_protocol_row_without_handle_key_cannot_be_cut_down():
    """TestLargeMessageWithoutHandle: test.t(a tinyint, b int) at 150 bytes under handle-key-only
    is an encoding error (ErrOpenProtocolCodecInvalidData), not a size error."""
    keyless = TableSchema(schema="test", table="t", table_id=100, schema_version=1,
                          columns=SMALL_PK.columns[:1] + SMALL_PK.columns[1:], indexes=())
    event = RowEvent(RowChange(keyless, Op.INSERT, None, {"a": 1, "b": 123}), TS, TS - 1)
    cfg = SinkConfig(protocol="open-protocol", max_message_bytes=150, large_message_handle_option="handle-key-only")
    with pytest.raises(EncodeError) as e:
        encode_all(cfg, [event])
    assert not isinstance(e.value, MessageTooLargeError)


def test_canal_json_max_message_bytes_300_and_100():
    """canal_json_encoder_test.go TestMaxMessageBytes: test.t(a varchar(255) primary key) with
    "aa" fits 300 bytes and fails at 100."""
    t = TableSchema(schema="test", table="t", table_id=100, schema_version=1,
                    columns=(Column("a", varchar(255), nullable=False),), indexes=(Index("PRIMARY", ("a",), primary=True),))
    event = RowEvent(RowChange(t, Op.INSERT, None, {"a": "aa"}), TS, TS - 1)
    assert len(encode_all(SinkConfig(protocol="canal-json", max_message_bytes=300), [event])) == 1
    with pytest.raises(MessageTooLargeError):
        encode_all(SinkConfig(protocol="canal-json", max_message_bytes=100), [event])


def test_tiflow_open_protocol_keys(tmp_path):
    """tiflow internal/message_key.go: a struct with omitempty; the claim-check key has no "ohk"
    and puts "ccl" after "t"."""
    base = dict(protocol="open-protocol", max_message_bytes=LIMIT, version_profile="tiflow")
    [hko] = encode_all(SinkConfig(**base, large_message_handle_option="handle-key-only"), big_rows()[:1])
    assert frames(hko.key[8:])[0] == b'{"ts":%d,"scm":"shop","tbl":"docs","rid":7,"t":1,"ohk":true}' % TS
    cfg = SinkConfig(**base, large_message_handle_option="claim-check", claim_check_storage_uri=URI)
    storage = ClaimCheckStorage.for_run(cfg, tmp_path)
    [cc] = encode_all(cfg, big_rows()[:1], storage)
    pairs = json.loads(frames(cc.key[8:])[0], object_pairs_hook=list)
    assert [k for k, _ in pairs] == ["ts", "scm", "tbl", "rid", "t", "ccl"]


# --- compression ----------------------------------------------------------------------------------

def test_lz4_frame_has_pierrec_writer_defaults():
    """pierrec/lz4/v4 NewWriter: version 1, independent blocks, no block checksum, no content
    size, a content checksum (FLG 0x64) and 4 MiB blocks (BD 0x70). Incompressible input goes in
    one stored block: its size with the high bit set, the bytes, the end mark, the checksum."""
    data = random.Random(3).randbytes(300)
    frame = compress("lz4", data)
    assert frame[:4] == bytes.fromhex("04224d18") and frame[4] == 0x64 and frame[5] == 0x70
    assert struct.unpack("<I", frame[7:11])[0] == 0x80000000 | len(data)
    assert frame[11:11 + len(data)] == data and frame[11 + len(data):15 + len(data)] == b"\0\0\0\0"
    assert len(frame) == 15 + len(data) + 4
    assert bytes(cramjam.lz4.decompress(frame)) == data


@pytest.mark.parametrize("codec", ["snappy", "lz4"])
def test_compression_round_trips(codec):
    for data in (b"", b"x", _text(100_000, 4).encode(), random.Random(5).randbytes(70_000)):
        assert DECOMPRESS[codec](compress(codec, data)) == data
    # snappy is the block format: a varint of the uncompressed length comes first
    if codec == "snappy":
        assert compress("snappy", b"x" * 300)[:2] == bytes([0xAC, 0x02])


def _ddl() -> DDL:
    return DDL(commit_ts=TS + 10, ddl_type=DDLType.ADD_COLUMN, query="ALTER TABLE shop.docs ADD COLUMN c INT",
               schema="shop", table="docs", table_after=BIG, table_before=BIG)


@pytest.mark.parametrize("codec", ["snappy", "lz4"])
def test_where_each_protocol_compresses(codec):
    events = [small_row(), DDLEvent(_ddl()), WatermarkEvent(TS + 20)]
    unpack = DECOMPRESS[codec]

    def both(protocol: str, **kw):
        plain = encode_all(SinkConfig(protocol=protocol, **kw), events)
        packed = encode_all(SinkConfig(protocol=protocol, large_message_handle_compression=codec, **kw), events)
        assert len(plain) == len(packed)
        return list(zip(plain, packed))

    # Open Protocol: each event's value JSON, inside its frame; keys and the resolved event's
    # empty value are left alone.
    for plain, packed in both("open-protocol"):
        assert packed.key == plain.key
        assert [unpack(v) if v else v for v in frames(packed.value)] == frames(plain.value)
    # Canal-JSON and Simple: every value, keys untouched.
    for protocol, kw in (("canal-json", {"enable_tidb_extension": True}), ("simple", {})):
        pairs = both(protocol, **kw)
        assert len(pairs) == 3
        for plain, packed in pairs:
            assert packed.key == plain.key and unpack(packed.value) == plain.value
    # Debezium: key and value of rows, DDL and watermarks.
    pairs = both("debezium", enable_tidb_extension=True)
    assert len(pairs) == 3
    for plain, packed in pairs:
        assert unpack(packed.key) == plain.key and unpack(packed.value) == plain.value


# --- the claim-check storage -----------------------------------------------------------------------

def test_claim_check_message_is_go_json_of_two_byte_slices():
    assert claim_check_message(None, b"\x00\xffab") == b'{"key":null,"value":"AP9hYg=="}'
    assert claim_check_message(b"", b"?") == b'{"key":"","value":"Pw=="}'


def test_location_prefix_is_the_configured_uri_without_trailing_slash():
    # TiCDC FileNameWithPrefix: strings.TrimSuffix(storage.URI(), "/") + "/" + fileName
    assert location_prefix("file:///tmp/x/") == "file:///tmp/x"
    assert location_prefix("s3://bucket/prefix/?endpoint=http://minio:9000") == "s3://bucket/prefix/?endpoint=http://minio:9000"


def test_storage_for_a_run_starts_empty_and_writes_raw_values(tmp_path):
    cfg = config("simple-json", large_message_handle_option="claim-check", claim_check_storage_uri=URI,
                 claim_check_raw_value=True)
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "left-over.json").write_text("{}")
    storage = ClaimCheckStorage.for_run(cfg, tmp_path)
    assert list(storage.folder.iterdir()) == []
    location = storage.put(None, b"raw bytes", topic="t", partition=0, commit_ts=TS)
    assert (storage.folder / location.rsplit("/", 1)[1]).read_bytes() == b"raw bytes"
    assert ClaimCheckStorage.for_run(config("simple-json"), tmp_path) is None


# --- the pipeline and the CLI --------------------------------------------------------------------

def test_generate_writes_claim_check_files_and_the_manifest_entry(tmp_path):
    cfg = config_for("wide-rows", "canal-json", max_message_bytes=65536, large_message_handle_option="claim-check",
                     large_message_handle_compression="snappy", claim_check_storage_uri="file:///tmp/cc")
    outs = [tmp_path / "a", tmp_path / "b"]
    manifests = [generate("wide-rows", 1, cfg, out, events=8) for out in outs]
    entry = manifests[0]["claim_check"]
    assert entry["storage_uri"] == "file:///tmp/cc" and entry["folder"] == "claim-check" and entry["files"] > 0
    files = [{p.name: p.read_bytes() for p in (out / "claim-check").iterdir()} for out in outs]
    assert files[0] == files[1] and len(files[0]) == entry["files"]
    records = [[(r.partition, r.offset, r.value) for r in iter_record_files(out / "records")] for out in outs]
    assert records[0] == records[1]
    located = []
    for _, _, value in records[0]:
        body = orjson.loads(bytes(cramjam.snappy.decompress_raw(value)))
        location = (body.get("_tidb") or {}).get("claimCheckLocation")
        if location:
            assert location.startswith("file:///tmp/cc/")
            located.append(location.rsplit("/", 1)[1])
    assert sorted(located) == sorted(files[0])


def test_cli_generate_with_ticdc_claim_check_changefeed(tmp_path):
    from ticdc_conformance.cli import main

    out = tmp_path / "run"
    result = CliRunner().invoke(main, [
        "generate", "--scenario", "wide-rows", "--protocol", "canal-json", "--events", "6",
        "--changefeed", str(CANAL_CLAIM_CHECK_TOML),
        "--sink-uri", "kafka://h/t?protocol=canal-json&enable-tidb-extension=true&max-message-bytes=65536",
        "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["claim_check"]["storage_uri"] == "file:///tmp/canal-json-claim-check"
    names = sorted(p.name for p in (out / "claim-check").iterdir())
    assert names and all(UUID_JSON.match(n) for n in names)
    doc = orjson.loads((out / "claim-check" / names[0]).read_bytes())
    whole = orjson.loads(bytes(cramjam.snappy.decompress_raw(base64.b64decode(doc["value"]))))
    assert doc["key"] is None and whole["table"] == "big_values" and "claimCheckLocation" not in whole["_tidb"]
