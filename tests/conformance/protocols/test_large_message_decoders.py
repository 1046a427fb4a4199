"""Large messages: claim-check, handle-key-only and large-message-handle-compression in the decoders.

Messages are built by hand in TiCDC's form: the examples of spec 002 (Open Protocol, test.t1),
spec 003 (Canal-JSON, tp_int) and spec 004 (Simple, simple.user; the copies test_simple_decoder.py
keeps), turned into the large-message
shapes TiCDC's encoders write (TiCDC pkg/sink/codec/open/codec.go encodeRowChangedEvent,
canal/canal_json_encoder.go newJSONMessageForDML, simple/encoder.go AppendRowChangedEvent) and
the claim-check files its storage writer leaves (pkg/sink/kafka/claimcheck/claim_check.go). The
storage URIs are those of TiCDC's integration tests (tests/integration_tests/*_claim_check/conf).
The last part decodes whole generated runs and holds every row against the ground truth.
"""
from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import threading
import tracemalloc
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import cramjam
import lz4.frame
import orjson
import pytest

from tests.helpers import assert_decode_error, kafka_record
from ticdc_conformance.consumers.sequential.consumer import merged_records
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.claim_check import ClaimCheckStore, claim_check_options
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_conformance.protocols.common.snapshot import SNAPSHOT_LOOKUP, SnapshotUnavailable, TruthSnapshot
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema, Transaction
from ticdc_contract.record import KafkaRecord
from ticdc_contract.schema_json import table_from_json
from ticdc_contract.tidb_types import TiDBType
from ticdc_contract.truth import TruthWriter

from .test_simple_decoder import SPEC_COLUMNS, SPEC_DELETE, SPEC_INDEXES, SPEC_INSERT, SPEC_UPDATE, avro_bytes

TOPIC, PARTITION, OFFSET = "large-topic", 4, 77
CODECS = ["none", "snappy", "lz4"]
FILE_NAME = "0a37f081-cfa3-4937-9214-1105c3950be2.json"  # TiCDC claimcheck.NewFileName: uuid4 + ".json"


def rec(key: Optional[bytes], value: Optional[bytes], offset: int = OFFSET) -> KafkaRecord:
    """Key first, as Open Protocol's (key, value) pairs come."""
    return kafka_record(value, key, topic=TOPIC, partition=PARTITION, offset=offset)


def compress(codec: str, data: bytes) -> bytes:
    """TiCDC pkg/compression: Snappy's block format, LZ4's frame format."""
    if codec == "snappy":
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == "lz4":
        return lz4.frame.compress(data)
    return data


def go_claim_check_message(key: Optional[bytes], value: bytes) -> bytes:
    """json.Marshal(ClaimCheckMessage{Key, Value}): []byte as padded base64, a nil one as null."""
    def b64(b: Optional[bytes]) -> Optional[str]:
        return None if b is None else base64.b64encode(b).decode()
    return json.dumps({"key": b64(key), "value": b64(value)}, separators=(",", ":")).encode()


class DictLookup:
    """A SnapshotLookup over a few hand-written rows; remembers every question."""

    def __init__(self, rows: dict[tuple[tuple, int], dict]) -> None:
        self.rows = rows  # ((sorted key items), ts) -> row
        self.calls: list[tuple[str, str, dict, int]] = []

    def row(self, schema: str, table: str, key: dict, ts: int) -> Optional[dict]:
        self.calls.append((schema, table, dict(key), ts))
        return self.rows.get((tuple(sorted(key.items())), ts))


def at(key: dict, ts: int) -> tuple[tuple, int]:
    return (tuple(sorted(key.items())), ts)


# --- Open Protocol (spec 002 example, test.t1(id int primary key, val varchar(16))) ----------------

OPEN_URI = "file:///tmp/open-protocol-claim-check"
OPEN_TS = 415508878783938562
HANDLE, PRIMARY, NULLABLE = 0x02, 0x08, 0x40


def open_frames(parts: list[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(8, "big") + p for p in parts)


def open_message(key_json: bytes, value: bytes) -> tuple[bytes, bytes]:
    """One-event batch: 8-byte version 1, then [u64 length][payload] frames (spec 002, Message format)."""
    return (1).to_bytes(8, "big") + open_frames([key_json]), open_frames([value])


def open_cols(id_: int, val: Optional[str] = None) -> dict:
    out = {"id": {"t": 3, "h": True, "f": HANDLE | PRIMARY, "v": id_}}
    if val is not None:
        out["val"] = {"t": 15, "f": NULLABLE, "v": val}
    return out


def open_key(ts: int = OPEN_TS, **extra: Any) -> bytes:
    return orjson.dumps({"ts": ts, "scm": "test", "tbl": "t1", "t": 1, **extra})


def open_location_key(location: str, ts: int = OPEN_TS) -> bytes:
    # codec.go writes "ohk" twice for a claim-check location message (true for the handle-key-only
    # columns, then false with the location); JSON readers keep the last.
    return (f'{{"ts":{ts},"scm":"test","tbl":"t1","t":1,"ohk":true,"ohk":false,'
            f'"ccl":{json.dumps(location)}}}').encode()


# --- Canal-JSON (spec 003 example, test.tp_int) ---------------------------------------------------

CANAL_URI = "file:///tmp/canal-json-claim-check"
CANAL_TS = 429918007904436226
CANAL_TYPES = {"c_bigint": "bigint", "c_int": "int", "c_mediumint": "mediumint", "c_smallint": "smallint",
               "c_tinyint": "tinyint", "id": "int"}
CANAL_SQL = {"c_bigint": -5, "c_int": 4, "c_mediumint": 4, "c_smallint": 5, "c_tinyint": -6, "id": 4}
CANAL_ROW = {"c_bigint": "9223372036854775807", "c_int": "2147483647", "c_mediumint": "8388607",
             "c_smallint": "32767", "c_tinyint": "127", "id": "2"}


def canal_message(kind: str, data: dict, old: Optional[dict] = None, only: Optional[set] = None,
                  **tidb: Any) -> dict:
    """A DML the way newJSONMessageForDML lays it out; `only` keeps the handle-key columns."""
    def keep(row: dict) -> dict:
        return {k: v for k, v in row.items() if only is None or k in only}
    names = [n for n in CANAL_TYPES if only is None or n in only]
    return {"id": 0, "database": "test", "table": "tp_int", "pkNames": ["id"], "isDdl": False, "type": kind,
            "es": 1639633141221, "ts": 1639633142960, "sql": "",
            "sqlType": {n: CANAL_SQL[n] for n in names}, "mysqlType": {n: CANAL_TYPES[n] for n in names},
            "old": None if old is None else [keep(old)], "data": [keep(data)],
            "_tidb": {"commitTs": CANAL_TS, **tidb}}


CANAL_EXT = {"enable-tidb-extension": True}


# --- Simple (spec 004 examples, simple.user) ------------------------------------------------------

SIMPLE_URI = "file:///tmp/kafka-simple-claim-check"
SCHEMA_VERSION = SPEC_INSERT["schemaVersion"]
# spec 004: the INSERT / UPDATE / DELETE examples of simple.user (wire values of the JSON encoding).
SIMPLE_DMLS = {m["type"]: (m["commitTs"], m.get("data"), m.get("old")) for m in (SPEC_INSERT, SPEC_UPDATE, SPEC_DELETE)}


def _avro_value(name: str, text: Optional[str]) -> Any:
    # message.go encodeValue4Avro: integers as long, FLOAT as float, strings as string.
    if text is None:
        return None
    return float(text) if name == "score" else int(text) if name in ("id", "age") else text


class Simple:
    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    def bootstrap(self) -> bytes:
        ts = {"table": "user", "tableID": 148, "version": SCHEMA_VERSION, "indexes": SPEC_INDEXES}
        if self.fmt == "json":
            return orjson.dumps({"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 1708924603278,
                                 "tableSchema": {"schema": "simple", **ts, "columns": SPEC_COLUMNS}})
        cols = [dict(c, dataType={"decimal": None, "elements": None, "unsigned": None, "zerofill": None,
                                  **c["dataType"]}) for c in SPEC_COLUMNS]
        return avro_bytes("BOOTSTRAP", {"version": 1, "buildTs": 1708924603278,
                                        "tableSchema": {"database": "simple", **ts, "columns": cols}})

    def dml(self, kind: str, data: Optional[dict], old: Optional[dict], commit_ts: int, **extra: Any) -> bytes:
        msg = {"version": 1, "database": "simple", "table": "user", "tableID": 148, "type": kind,
               "commitTs": commit_ts, "buildTs": 1708923662983, "schemaVersion": SCHEMA_VERSION, **extra}
        if self.fmt == "json":
            for name, image in (("data", data), ("old", old)):
                if image is not None:
                    msg[name] = image
            return orjson.dumps(msg)
        msg.setdefault("claimCheckLocation", None)
        msg.setdefault("handleKeyOnly", None)
        for name, image in (("data", data), ("old", old)):
            msg[name] = None if image is None else {k: _avro_value(k, v) for k, v in image.items()}
        return avro_bytes("DML", dict(msg, checksum=None))


@pytest.fixture(params=["json", "avro"])
def simple(request) -> Simple:
    return Simple(request.param)


def key_only(image: Optional[dict]) -> Optional[dict]:
    return None if image is None else {"id": image["id"]}


# =================================================================================================
# Claim-check
# =================================================================================================

@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "claim-check"
    path.mkdir()
    return path


def cc_options(uri: str, folder: Path, **more: Any) -> dict:
    return {"large-message-handle-option": "claim-check", "claim-check-storage-uri": uri,
            "claim-check-folder": str(folder), **more}


@pytest.mark.parametrize("codec", CODECS)
def test_open_protocol_claim_check_reads_the_stored_batch(folder, codec):
    full_value = orjson.dumps({"u": open_cols(3, "cc")})
    key, value = open_message(open_key(), compress(codec, full_value))
    # claim_check.go WriteMessage gets enhancedKeyValue: the version head and length frames included.
    (folder / FILE_NAME).write_bytes(go_claim_check_message(key, value))
    location = f"{OPEN_URI}/{FILE_NAME}"
    placeholder = open_message(open_location_key(location), compress(codec, orjson.dumps({"u": open_cols(3)})))
    options = cc_options(OPEN_URI, folder, **{"large-message-handle-compression": codec})
    dec = protocol_spec("open-protocol").new_decoder(options)
    [row] = dec.decode(rec(*placeholder))
    [direct] = dec.decode(rec(key, value))
    assert row == direct
    assert (row.op, row.commit_ts, row.after) == ("insert", OPEN_TS, {"id": 3, "val": "cc"})


def test_open_protocol_claim_check_key_of_classic_ticdc(folder):
    # tiflow pkg/sink/codec/open/open_protocol_encoder.go newClaimCheckLocationMessage clears
    # OnlyHandleKey, and message_key.go's omitempty leaves "ohk" out: only "ccl" marks the message.
    key, value = open_message(open_key(), orjson.dumps({"u": open_cols(3, "cc")}))
    (folder / FILE_NAME).write_bytes(go_claim_check_message(key, value))
    placeholder = open_message(open_key(ccl=f"{OPEN_URI}/{FILE_NAME}"), orjson.dumps({"u": open_cols(3)}))
    [row] = protocol_spec("open-protocol").new_decoder(cc_options(OPEN_URI, folder)).decode(rec(*placeholder))
    assert row.after == {"id": 3, "val": "cc"}


def test_open_protocol_claim_check_refuses_a_file_of_another_row(folder):
    key, value = open_message(open_key(ts=OPEN_TS + 1), orjson.dumps({"u": open_cols(3, "cc")}))
    (folder / FILE_NAME).write_bytes(go_claim_check_message(key, value))
    placeholder = open_message(open_location_key(f"{OPEN_URI}/{FILE_NAME}"), orjson.dumps({"u": open_cols(3)}))
    dec = protocol_spec("open-protocol").new_decoder(cc_options(OPEN_URI, folder))
    assert_decode_error(dec, rec(*placeholder), r'claim-check file holds a row whose key "ts"')


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("raw_value", [False, True])
def test_canal_json_claim_check_reads_the_stored_message(folder, codec, raw_value):
    full = compress(codec, orjson.dumps(canal_message("INSERT", CANAL_ROW)))
    # The Canal-JSON message has a nil key, which json.Marshal writes as null.
    (folder / FILE_NAME).write_bytes(full if raw_value else go_claim_check_message(None, full))
    location = f"{CANAL_URI}/{FILE_NAME}"
    placeholder = canal_message("INSERT", CANAL_ROW, only={"id"}, claimCheckLocation=location)
    options = cc_options(CANAL_URI, folder, **CANAL_EXT, **{"large-message-handle-compression": codec,
                                                            "claim-check-raw-value": raw_value})
    dec = protocol_spec("canal-json").new_decoder(options)
    [row] = dec.decode(rec(None, compress(codec, orjson.dumps(placeholder))))
    [direct] = dec.decode(rec(None, full))
    assert row == direct
    assert row.after["c_bigint"] == 9223372036854775807 and row.commit_ts == CANAL_TS


def test_canal_json_claim_check_refuses_a_stored_placeholder(folder):
    nested = canal_message("INSERT", CANAL_ROW, only={"id"}, claimCheckLocation=f"{CANAL_URI}/{FILE_NAME}")
    (folder / FILE_NAME).write_bytes(go_claim_check_message(None, orjson.dumps(nested)))
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    assert_decode_error(dec, rec(None, orjson.dumps(nested)), r"claim-check file: holds another large-message placeholder")


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("raw_value", [False, True])
@pytest.mark.parametrize("kind", ["INSERT", "UPDATE", "DELETE"])
def test_simple_claim_check_reads_the_stored_message(simple, folder, codec, raw_value, kind):
    ts, data, old = SIMPLE_DMLS[kind]
    full = compress(codec, simple.dml(kind, data, old, ts))
    (folder / FILE_NAME).write_bytes(full if raw_value else go_claim_check_message(None, full))
    # simple/encoder.go: the placeholder is the handle-key-only message with the location added.
    placeholder = simple.dml(kind, key_only(data), key_only(old), ts, handleKeyOnly=True,
                             claimCheckLocation=f"{SIMPLE_URI}/{FILE_NAME}")
    options = cc_options(SIMPLE_URI, folder, **{"encoding-format": simple.fmt, "claim-check-raw-value": raw_value,
                                                "large-message-handle-compression": codec})
    dec = protocol_spec("simple").new_decoder(options)
    dec.decode(rec(None, compress(codec, simple.bootstrap()), 0))
    [row] = dec.decode(rec(None, compress(codec, placeholder), 1))
    [direct] = dec.decode(rec(None, full, 2))
    assert row == direct
    image = row.after if kind != "DELETE" else row.before
    assert image == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0 if kind != "INSERT" else 90.5}


def test_simple_claim_check_waits_for_its_schema_like_any_dml(simple, folder):
    # A placeholder that arrives before the BOOTSTRAP is resolved when the schema comes.
    ts, data, _ = SIMPLE_DMLS["INSERT"]
    (folder / FILE_NAME).write_bytes(go_claim_check_message(None, simple.dml("INSERT", data, None, ts)))
    placeholder = simple.dml("INSERT", key_only(data), None, ts, handleKeyOnly=True,
                             claimCheckLocation=f"{SIMPLE_URI}/{FILE_NAME}")
    dec = protocol_spec("simple").new_decoder(cc_options(SIMPLE_URI, folder, **{"encoding-format": simple.fmt}))
    assert dec.decode(rec(None, placeholder, 0)) == []
    _, row = dec.decode(rec(None, simple.bootstrap(), 1))
    assert row.after["name"] == "John Doe"


def test_simple_claim_check_refuses_a_file_of_another_commit(simple, folder):
    ts, data, _ = SIMPLE_DMLS["INSERT"]
    (folder / FILE_NAME).write_bytes(go_claim_check_message(None, simple.dml("INSERT", data, None, ts + 1)))
    placeholder = simple.dml("INSERT", key_only(data), None, ts, handleKeyOnly=True,
                             claimCheckLocation=f"{SIMPLE_URI}/{FILE_NAME}")
    dec = protocol_spec("simple").new_decoder(cc_options(SIMPLE_URI, folder, **{"encoding-format": simple.fmt}))
    dec.decode(rec(None, simple.bootstrap(), 0))
    assert_decode_error(dec, rec(None, placeholder, 1), r"claim-check file: holds a DML whose commit_ts")


# --- locations that must not be read ---------------------------------------------------------------

def _canal_placeholder(location: str) -> KafkaRecord:
    return rec(None, orjson.dumps(canal_message("INSERT", CANAL_ROW, only={"id"}, claimCheckLocation=location)))


@pytest.mark.parametrize("location,pattern", [
    (f"{CANAL_URI}/../secret.json", r"contains '\.\.'"),
    (f"{CANAL_URI}//etc/passwd", r"is an absolute path"),
    ("s3://bucket/canal-json-claim-check/" + FILE_NAME, r"is not under the configured claim-check-storage-uri"),
    ("file:///tmp/canal-json-claim-check-other/" + FILE_NAME, r"is not under the configured"),
    (f"{CANAL_URI}/..\\secret.json", r"contains '\.\.'"),
    (f"{CANAL_URI}/a\\secret.json", r"contains a backslash"),
    (f"{CANAL_URI}/sub/{FILE_NAME}", r"names a sub-folder"),
    (f"{CANAL_URI}/", r"names no file"),
    (f"{CANAL_URI}/missing.json", r"'missing\.json' does not exist"),
])
def test_claim_check_locations_outside_the_folder_are_refused(tmp_path, folder, location, pattern):
    # A file a careless reader would find at each of these places.
    full = orjson.dumps(canal_message("INSERT", CANAL_ROW))
    (tmp_path / "secret.json").write_bytes(go_claim_check_message(None, full))
    (folder / "sub").mkdir()
    (folder / "sub" / FILE_NAME).write_bytes((tmp_path / "secret.json").read_bytes())
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    assert_decode_error(dec, _canal_placeholder(location), pattern)


def test_a_symlink_out_of_the_folder_is_refused(tmp_path, folder):
    secret = tmp_path / "secret.json"
    secret.write_bytes(go_claim_check_message(None, orjson.dumps(canal_message("INSERT", CANAL_ROW))))
    (folder / FILE_NAME).symlink_to(secret)
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    assert_decode_error(dec, _canal_placeholder(f"{CANAL_URI}/{FILE_NAME}"), r"resolves outside the claim-check folder")


def test_unreadable_names_are_decode_errors(folder):
    (folder / "loop.json").symlink_to(folder / "loop.json")
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    assert_decode_error(dec, _canal_placeholder(f"{CANAL_URI}/loop.json"), r"'loop\.json' cannot be read")
    assert_decode_error(dec, _canal_placeholder(f"{CANAL_URI}/{'a' * 300}.json"), r"cannot be read: File name too long")


def test_a_fifo_is_refused_without_blocking(folder):
    os.mkfifo(folder / FILE_NAME)
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(
        pytest.raises(DecodeError, dec.decode, _canal_placeholder(f"{CANAL_URI}/{FILE_NAME}"))), daemon=True)
    worker.start()
    worker.join(10)
    assert outcome, "reading a FIFO blocked"
    assert "is not a regular file" in outcome[0].value.reason


def test_every_decoder_names_the_record_when_storage_is_missing_or_refused(simple, folder):
    # No folder configured: the placeholder cannot be resolved.
    key, value = open_message(open_location_key(f"{OPEN_URI}/{FILE_NAME}"), orjson.dumps({"u": open_cols(3)}))
    assert_decode_error(protocol_spec("open-protocol").new_decoder({}), rec(key, value),
                 r"needs the claim-check storage: decoder option 'claim-check-folder' is not set")
    assert_decode_error(protocol_spec("canal-json").new_decoder(CANAL_EXT), _canal_placeholder(f"{CANAL_URI}/{FILE_NAME}"),
                 r"needs the claim-check storage")
    dec = protocol_spec("simple").new_decoder(cc_options(SIMPLE_URI, folder, **{"encoding-format": simple.fmt}))
    dec.decode(rec(None, simple.bootstrap(), 0))
    ts, data, _ = SIMPLE_DMLS["INSERT"]
    for offset, location in enumerate([f"{SIMPLE_URI}/../{FILE_NAME}", f"{SIMPLE_URI}/{FILE_NAME}"], start=1):
        placeholder = simple.dml("INSERT", key_only(data), None, ts, handleKeyOnly=True, claimCheckLocation=location)
        assert_decode_error(dec, rec(None, placeholder, offset), r"contains '\.\.'|does not exist")
    # Open Protocol through a relative escape as well.
    key, value = open_message(open_location_key(f"{OPEN_URI}/../{FILE_NAME}"), orjson.dumps({"u": open_cols(3)}))
    assert_decode_error(protocol_spec("open-protocol").new_decoder(cc_options(OPEN_URI, folder)), rec(key, value),
                 r"contains '\.\.'")


@pytest.mark.parametrize("content,pattern", [
    (b"not json", r"claim-check file: not JSON"),
    (b'{"key":null,"value":"@@@"}', r"field 'value' is not base64"),
    (b'{"key":null,"value":7}', r"field 'value' must be base64 text"),
    (b'{"key":null}', r"has no value"),
])
def test_broken_claim_check_files_are_decode_errors(folder, content, pattern):
    (folder / FILE_NAME).write_bytes(content)
    dec = protocol_spec("canal-json").new_decoder(cc_options(CANAL_URI, folder, **CANAL_EXT))
    assert_decode_error(dec, _canal_placeholder(f"{CANAL_URI}/{FILE_NAME}"), pattern)


def test_a_hostile_compressed_claim_check_value_allocates_nothing_like_its_claim(folder):
    # A snappy block whose length header claims 4 GiB; the decoder must refuse before allocating.
    hostile = b"\xff\xff\xff\xff\x0f\x00abc"
    (folder / FILE_NAME).write_bytes(go_claim_check_message(None, hostile))
    options = cc_options(CANAL_URI, folder, **CANAL_EXT, **{"large-message-handle-compression": "snappy"})
    dec = protocol_spec("canal-json").new_decoder(options)
    placeholder = rec(None, compress("snappy", orjson.dumps(
        canal_message("INSERT", CANAL_ROW, only={"id"}, claimCheckLocation=f"{CANAL_URI}/{FILE_NAME}"))))
    tracemalloc.start()
    try:
        assert_decode_error(dec, placeholder, r"snappy: claims 4294967295 bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_claim_check_options_come_from_the_manifest(tmp_path):
    manifest = {"claim_check": {"storage_uri": "file:///tmp/x", "folder": "claim-check"}}
    assert claim_check_options(manifest, tmp_path) == {"claim-check-storage-uri": "file:///tmp/x",
                                                       "claim-check-folder": str(tmp_path / "claim-check")}
    assert claim_check_options({}, tmp_path) == {}
    for bad in ("/etc", "../elsewhere"):
        with pytest.raises(ValueError, match="must be a folder inside the run directory"):
            claim_check_options({"claim_check": {"storage_uri": "file:///tmp/x", "folder": bad}}, tmp_path)
    with pytest.raises(ValueError, match="needs 'claim-check-storage-uri'"):
        protocol_spec("canal-json").new_decoder({"claim-check-folder": str(tmp_path)})


def test_the_store_tolerates_a_trailing_slash_in_the_uri(folder):
    # claim_check.go FileNameWithPrefix trims one trailing "/" from the storage URI.
    (folder / FILE_NAME).write_bytes(b"x")
    assert ClaimCheckStore(OPEN_URI + "/", folder).read(f"{OPEN_URI}/{FILE_NAME}") == b"x"


# =================================================================================================
# Handle-key-only
# =================================================================================================

def test_open_protocol_handle_key_only_is_completed_at_commit_ts_and_the_ts_before():
    t = OPEN_TS
    lookup = DictLookup({at({"id": 2}, t): {"id": 2, "val": "bb"}, at({"id": 2}, t - 1): {"id": 2, "val": "aa"},
                         at({"id": 1}, t - 1): {"id": 1, "val": "gone"}, at({"id": 5}, t): {"id": 5, "val": "new"}})
    dec = protocol_spec("open-protocol").new_decoder({"large-message-handle-option": "handle-key-only",
                                                         SNAPSHOT_LOOKUP: lookup})
    update = dec.decode(rec(*open_message(open_key(ohk=True), orjson.dumps({"u": open_cols(2), "p": open_cols(2)}))))
    delete = dec.decode(rec(*open_message(open_key(ohk=True), orjson.dumps({"d": open_cols(1)}))))
    insert = dec.decode(rec(*open_message(open_key(ohk=True), orjson.dumps({"u": open_cols(5)}))))
    assert (update[0].op, update[0].after, update[0].before) == ("update", {"id": 2, "val": "bb"},
                                                                 {"id": 2, "val": "aa"})
    assert (delete[0].op, delete[0].before, delete[0].after) == ("delete", {"id": 1, "val": "gone"}, None)
    assert (insert[0].op, insert[0].after) == ("insert", {"id": 5, "val": "new"})
    # TiCDC open/decoder.go assembleHandleKeyOnlyDMLEvent: new row at commitTs, old row at commitTs - 1.
    assert [(c[2], c[3]) for c in lookup.calls] == [({"id": 2}, t), ({"id": 2}, t - 1), ({"id": 1}, t - 1),
                                                   ({"id": 5}, t)]
    assert {c[:2] for c in lookup.calls} == {("test", "t1")}


@pytest.mark.parametrize("codec", CODECS)
def test_open_protocol_handle_key_only_values_are_decompressed(codec):
    lookup = DictLookup({at({"id": 4}, OPEN_TS): {"id": 4, "val": "x"}})
    dec = protocol_spec("open-protocol").new_decoder({"large-message-handle-compression": codec,
                                                         SNAPSHOT_LOOKUP: lookup})
    key, value = open_message(open_key(ohk=True), compress(codec, orjson.dumps({"u": open_cols(4)})))
    assert dec.decode(rec(key, value))[0].after == {"id": 4, "val": "x"}


def test_an_update_that_moves_the_key_reads_each_row_under_its_own_key():
    # Spec 002 example: UPDATE test.t1 SET id = 4 WHERE id = 2 (sent as one update when not split).
    lookup = DictLookup({at({"id": 4}, OPEN_TS): {"id": 4, "val": "ee"},
                         at({"id": 2}, OPEN_TS - 1): {"id": 2, "val": "bb"}})
    dec = protocol_spec("open-protocol").new_decoder({SNAPSHOT_LOOKUP: lookup})
    [row] = dec.decode(rec(*open_message(open_key(ohk=True), orjson.dumps({"u": open_cols(4), "p": open_cols(2)}))))
    assert (row.after, row.before) == ({"id": 4, "val": "ee"}, {"id": 2, "val": "bb"})


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("kind", ["INSERT", "UPDATE", "DELETE"])
def test_canal_json_handle_key_only_is_completed(codec, kind):
    t = CANAL_TS
    full = {k: v for k, v in protocol_spec("canal-json").new_decoder(CANAL_EXT).decode(
        rec(None, orjson.dumps(canal_message("INSERT", CANAL_ROW))))[0].after.items()}
    older = dict(full, c_int=1)
    lookup = DictLookup({at({"id": 2}, t): full, at({"id": 2}, t - 1): older})
    options = {**CANAL_EXT, "large-message-handle-option": "handle-key-only",
               "large-message-handle-compression": codec, SNAPSHOT_LOOKUP: lookup}
    msg = canal_message(kind, CANAL_ROW, old=CANAL_ROW if kind == "UPDATE" else None, only={"id"}, onlyHandleKey=True)
    [row] = protocol_spec("canal-json").new_decoder(options).decode(rec(None, compress(codec, orjson.dumps(msg))))
    # canal_json_decoder.go assembleHandleKeyOnlyDMLEvent: INSERT/UPDATE data at commitTs, UPDATE old
    # and DELETE at commitTs - 1.
    expected = {"INSERT": (full, None, [t]), "UPDATE": (full, older, [t, t - 1]), "DELETE": (None, older, [t - 1])}
    after, before, stamps = expected[kind]
    assert (row.after, row.before) == (after, before)
    assert [c[3] for c in lookup.calls] == stamps and all(c[2] == {"id": 2} for c in lookup.calls)


@pytest.mark.parametrize("kind", ["INSERT", "UPDATE", "DELETE"])
def test_simple_handle_key_only_is_completed(simple, kind):
    ts, data, old = SIMPLE_DMLS[kind]
    dec_full = protocol_spec("simple").new_decoder({"encoding-format": simple.fmt})
    dec_full.decode(rec(None, simple.bootstrap(), 0))
    [direct] = dec_full.decode(rec(None, simple.dml(kind, data, old, ts), 1))
    rows = {}
    if direct.after is not None:
        rows[at({"id": 1}, ts)] = direct.after
    if direct.before is not None:
        rows[at({"id": 1}, ts - 1)] = direct.before
    lookup = DictLookup(rows)
    dec = protocol_spec("simple").new_decoder({"encoding-format": simple.fmt, SNAPSHOT_LOOKUP: lookup,
                                                  "large-message-handle-option": "handle-key-only"})
    dec.decode(rec(None, simple.bootstrap(), 0))
    [row] = dec.decode(rec(None, simple.dml(kind, key_only(data), key_only(old), ts, handleKeyOnly=True), 1))
    assert row == direct
    # simple/decoder.go assembleHandleKeyOnlyRowChangedEvent: data at commitTs, old at commitTs - 1.
    assert sorted(c[3] for c in lookup.calls) == sorted(k[1] for k in rows)


def test_without_a_lookup_every_handle_key_only_message_is_a_decode_error(simple):
    pattern = r"handle-key-only message needs an upstream snapshot lookup"
    assert_decode_error(protocol_spec("open-protocol").new_decoder({}),
                 rec(*open_message(open_key(ohk=True), orjson.dumps({"u": open_cols(4)}))), pattern)
    assert_decode_error(protocol_spec("canal-json").new_decoder(CANAL_EXT),
                 rec(None, orjson.dumps(canal_message("INSERT", CANAL_ROW, only={"id"}, onlyHandleKey=True))), pattern)
    dec = protocol_spec("simple").new_decoder({"encoding-format": simple.fmt})
    dec.decode(rec(None, simple.bootstrap(), 0))
    ts, data, _ = SIMPLE_DMLS["INSERT"]
    assert_decode_error(dec, rec(None, simple.dml("INSERT", key_only(data), None, ts, handleKeyOnly=True), 1), pattern)


class _Unavailable:
    def row(self, schema, table, key, ts):
        raise SnapshotUnavailable("snapshot is older than GC safe point")


@pytest.mark.parametrize("lookup,pattern", [
    (DictLookup({}), r"the upstream snapshot at ts 415508878783938562 has no row with key \{'id': 4\}"),
    (DictLookup({at({"id": 4}, OPEN_TS): {"id": 5, "val": "x"}}), r"holds 5 in handle-key column 'id', the message 4"),
    (_Unavailable(), r"upstream snapshot at ts 415508878783938562: snapshot is older than GC safe point"),
])
def test_a_lookup_that_cannot_complete_the_row_is_a_decode_error(lookup, pattern):
    dec = protocol_spec("open-protocol").new_decoder({SNAPSHOT_LOOKUP: lookup})
    err = assert_decode_error(dec, rec(*open_message(open_key(ohk=True), orjson.dumps({"u": open_cols(4)}))), pattern)
    assert not err.reason.startswith("unreadable message")


def test_simple_refuses_a_snapshot_row_with_columns_its_schema_does_not_have(simple):
    ts, data, _ = SIMPLE_DMLS["INSERT"]
    lookup = DictLookup({at({"id": 1}, ts): {"id": 1, "name": "x", "age": 1, "score": 1.0, "extra": 3}})
    dec = protocol_spec("simple").new_decoder({"encoding-format": simple.fmt, SNAPSHOT_LOOKUP: lookup})
    dec.decode(rec(None, simple.bootstrap(), 0))
    assert_decode_error(dec, rec(None, simple.dml("INSERT", key_only(data), None, ts, handleKeyOnly=True), 1),
                 r"has column 'extra', which schema version 447984074911121426 does not")


def test_a_lookup_option_that_is_not_a_lookup_is_a_configuration_error():
    with pytest.raises(ValueError, match="must be a SnapshotLookup"):
        protocol_spec("simple").new_decoder({SNAPSHOT_LOOKUP: {"not": "a lookup"}})


# =================================================================================================
# The ground-truth lookup
# =================================================================================================

def truth_changes(run: Path) -> tuple[dict, list]:
    """(commit_ts, schema, table) -> [(schema version in force, before, after)], and every change."""
    tables = (table_from_json(orjson.loads(line)) for line in open(run / "truth/tables.ndjson", "rb"))
    current: dict[tuple[str, str], TableSchema] = {}
    by_commit: dict[tuple, list] = defaultdict(list)
    for line in open(run / "truth/history.ndjson", "rb"):
        h = orjson.loads(line)
        if h["kind"] == "ddl":
            if h["schema_version"] is not None:
                t = next(tables)
                current[(t.schema, t.table)] = t
            continue
        for ch in h["changes"]:
            schema, table = ch["table"].split(".", 1)
            by_commit[(h["commit_ts"], schema, table)].append((current[(schema, table)], ch["before"], ch["after"]))
    flat = [(ts, s, t, *change) for (ts, s, t), changes in by_commit.items() for change in changes]
    return by_commit, flat


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("smoke") / "run"
    cli = Path(sys.executable).with_name("ticdc-conformance")
    subprocess.run([str(cli), "generate", "--scenario", "smoke", "--protocol", "simple", "--out", str(out)],
                   check=True, capture_output=True, timeout=600)
    return out


def test_truth_lookup_answers_every_question_a_handle_key_only_message_asks(smoke_run):
    snapshot = TruthSnapshot.for_run(smoke_run)
    sink = orjson.loads((smoke_run / "manifest.json").read_bytes())["sink"]
    _, changes = truth_changes(smoke_run)
    asked = 0
    for ts, schema, table, t, before, after in changes:
        for image, at_ts, gone_at in ((after, ts, ts - 1), (before, ts - 1, ts)):
            if image is None:
                continue
            key = {c: image[c] for c in t.handle_key}
            assert snapshot.row(schema, table, key, at_ts) == project_truth_row(t, image, "simple", sink)
            asked += 1
        if after is None:  # a delete: the row is gone at its commit ts
            assert snapshot.row(schema, table, {c: before[c] for c in t.handle_key}, ts) is None
        if before is None:  # an insert: there was no row the moment before
            assert snapshot.row(schema, table, {c: after[c] for c in t.handle_key}, ts - 1) is None
    assert asked > 100


def test_truth_lookup_survives_pickling_and_refuses_unknown_columns(smoke_run):
    snapshot = pickle.loads(pickle.dumps(TruthSnapshot.for_run(smoke_run)))
    _, changes = truth_changes(smoke_run)
    ts, schema, table, t, _, after = next(c for c in changes if c[5] is not None)
    assert snapshot.row(schema, table, {c: after[c] for c in t.handle_key}, ts) is not None
    with pytest.raises(SnapshotUnavailable, match="has no column 'no_such_column'"):
        snapshot.row(schema, table, {"no_such_column": 1}, ts)
    assert snapshot.row(schema, "no_such_table", {"id": 1}, ts) is None


# A hand-made history for what DDL does to snapshot reads (TiDB-style TSOs, 2**18 apart).
_T = [(1_700_000_000_000 + i) << 18 for i in range(12)]
_ENUM = TiDBType("enum", elements=("small", "large"))


def _tbl(name: str, version: int, extra: bool = False, table_id: int = 10) -> TableSchema:
    cols = [Column("id", TiDBType("int"), nullable=False), Column("size", _ENUM)]
    if extra:
        cols.append(Column("note", TiDBType("varchar", flen=10), default="n/a", has_default=True))
    return TableSchema("db", name, table_id, tuple(cols), (Index("PRIMARY", ("id",), primary=True, unique=True),),
                       schema_version=version, pk_is_handle=True)


@pytest.fixture(scope="module")
def ddl_truth(tmp_path_factory) -> Path:
    t1, t1x = _tbl("t", _T[0]), _tbl("t", _T[3], extra=True)
    moved = replace(t1x, table="u")
    ins = lambda t, row, ts: Transaction(ts - 1, ts, (RowChange(t, Op.INSERT, None, row),))  # noqa: E731
    history = [
        DDL(_T[1], DDLType.CREATE_TABLE, "CREATE TABLE t", "db", "t", t1, None),
        ins(t1, {"id": 1, "size": "large"}, _T[2]),
        ins(t1, {"id": 2, "size": "small"}, _T[2] + 1),
        DDL(_T[4], DDLType.ADD_COLUMN, "ALTER TABLE t ADD note", "db", "t", t1x, t1, backfill={"note": "n/a"}),
        Transaction(_T[5] - 1, _T[5], (RowChange(t1x, Op.UPDATE, {"id": 2, "size": "small", "note": "n/a"},
                                                 {"id": 2, "size": "large", "note": "n/a"}),)),
        DDL(_T[6], DDLType.RENAME_TABLE, "RENAME TABLE t TO u", "db", "u", moved, t1x),
        DDL(_T[7], DDLType.TRUNCATE_TABLE, "TRUNCATE TABLE u", "db", "u", replace(moved, table_id=11), moved),
    ]
    out = tmp_path_factory.mktemp("ddl") / "truth"
    writer = TruthWriter(out)
    for _ in writer.tee(history):
        pass
    writer.close()
    return out


def test_truth_lookup_follows_ddl_or_says_it_cannot_tell(ddl_truth):
    snap = TruthSnapshot(ddl_truth, "simple", {})
    assert snap.row("db", "t", {"id": 1}, _T[2]) == {"id": 1, "size": "large"}
    assert snap.row("db", "t", {"id": 1}, _T[2] - 1) is None
    # After ADD COLUMN, id 2 is known again from the next change's old row (backfilled)...
    assert snap.row("db", "t", {"id": 2}, _T[4]) == {"id": 2, "size": "small", "note": "n/a"}
    assert snap.row("db", "t", {"id": 2}, _T[5]) == {"id": 2, "size": "large", "note": "n/a"}
    # ...while id 1 was not written again, so no row image shows it with the new column.
    with pytest.raises(SnapshotUnavailable, match=r"the DDL at \d+ changed the table"):
        snap.row("db", "t", {"id": 1}, _T[4])
    assert snap.row("db", "t", {"id": 2}, _T[6]) is None  # renamed away
    with pytest.raises(SnapshotUnavailable):
        snap.row("db", "u", {"id": 2}, _T[6])  # the rows moved under the new name: no image shows them
    assert snap.row("db", "u", {"id": 2}, _T[7]) is None  # truncated


def test_truth_lookup_answers_in_the_asking_protocols_form(ddl_truth):
    # Open Protocol carries an ENUM as its 1-based index (spec 002 type code 247), so a key and a
    # completed row are in that form; Simple carries the member name.
    open_snap = TruthSnapshot(ddl_truth, "open-protocol", {})
    assert open_snap.row("db", "t", {"id": 1}, _T[2]) == {"id": 1, "size": 2}
    assert open_snap.row("db", "t", {"size": 2}, _T[2]) == {"id": 1, "size": 2}
    assert TruthSnapshot(ddl_truth, "simple", {}).row("db", "t", {"size": "large"}, _T[2]) == {"id": 1, "size": "large"}


# =================================================================================================
# Round trip: generated runs with large messages, decoded and held against the ground truth
# =================================================================================================

ROUND_TRIPS = [
    # encoding, option, compression, raw value, max-message-bytes, version profile. The limit is
    # small enough that wide-rows' widest rows cross it and large enough for every placeholder, DDL
    # and BOOTSTRAP (which TiCDC holds against it too).
    ("open-protocol", "claim-check", "lz4", False, 4096, "ticdc"),
    ("open-protocol", "claim-check", "snappy", False, 4096, "tiflow"),  # classic key: no "ohk"
    ("open-protocol", "handle-key-only", "snappy", False, 4096, "ticdc"),
    ("canal-json", "claim-check", "snappy", True, 4096, "ticdc"),
    ("canal-json", "handle-key-only", "lz4", False, 4096, "ticdc"),
    ("simple-json", "claim-check", "lz4", False, 4096, "ticdc"),
    ("simple-json", "handle-key-only", "snappy", False, 4096, "ticdc"),
    ("simple-avro", "claim-check", "snappy", True, 4096, "ticdc"),
    ("simple-avro", "handle-key-only", "none", False, 8192, "ticdc"),
]


class CountingLookup:
    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0

    def row(self, *args):
        self.calls += 1
        return self.inner.row(*args)


@pytest.mark.parametrize("encoding,option,codec,raw_value,max_bytes,profile", ROUND_TRIPS,
                         ids=[f"{e}-{o}-{c}{'-raw' if r else ''}-{p}" for e, o, c, r, _, p in ROUND_TRIPS])
def test_generated_large_messages_decode_to_the_ground_truth(tmp_path, monkeypatch, encoding, option, codec,
                                                             raw_value, max_bytes, profile):
    from ticdc_generators.pipeline import configure, generate

    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text(f"""[sink.kafka-config]
max-message-bytes = {max_bytes}
[sink.kafka-config.large-message-handle]
large-message-handle-option = "{option}"
large-message-handle-compression = "{codec}"
claim-check-storage-uri = "file:///tmp/{encoding}-claim-check"
claim-check-raw-value = {str(raw_value).lower()}
""")
    run = tmp_path / "run"
    config = replace(configure("wide-rows", encoding, changefeed=changefeed), version_profile=profile)
    manifest = generate("wide-rows", 1, config, run)
    lookup = CountingLookup(TruthSnapshot.for_run(run))
    options = {**manifest["sink"], **claim_check_options(manifest, run), SNAPSHOT_LOOKUP: lookup}
    reads: list[str] = []
    original_read = ClaimCheckStore.read
    monkeypatch.setattr(ClaimCheckStore, "read", lambda self, loc: reads.append(loc) or original_read(self, loc))

    by_commit, _ = truth_changes(run)
    package = protocol_spec(manifest["protocol"])
    decoders: dict = {}
    rows = 0
    for record in merged_records(run / "records"):
        decoder = decoders.setdefault((record.topic, record.partition), package.new_decoder(options))
        for ev in decoder.decode(record):
            if isinstance(ev, DecodedRow):
                rows += 1
                assert_matches_truth(ev, by_commit[(ev.commit_ts, ev.schema, ev.table)], manifest)
    assert rows > 0
    if option == "claim-check":
        files = manifest["claim_check"]["files"]
        assert files > 0 and len(reads) == files and len(set(reads)) == files
        assert lookup.calls == 0
    else:
        assert lookup.calls > 0 and not reads


def assert_matches_truth(ev: DecodedRow, changes: list, manifest: dict) -> None:
    """Every image the decoder produced equals the truth's image of that key, projected."""
    assert changes, f"no transaction of {ev.schema}.{ev.table} committed at {ev.commit_ts}"
    for image, side in ((ev.after, 2), (ev.before, 1)):
        if image is None:
            continue
        matches = []
        for change in changes:
            t, truth_image = change[0], change[side]
            if truth_image is None:
                continue
            expected = project_truth_row(t, truth_image, manifest["protocol"], manifest["sink"])
            if all(expected[c] == image.get(c) for c in t.handle_key):
                matches.append(expected)
        assert matches == [image], (ev, matches)
