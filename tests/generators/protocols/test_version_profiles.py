"""Version profiles (docs/version-profiles.md): each documented difference between new TiCDC
(`ticdc`) and classic TiCDC (`tiflow`) shows in the encoders' output, and the reference consumer
reads both generations."""
from __future__ import annotations

import io
import subprocess

import fastavro
import orjson
import pytest

from tests.conftest import CLI, ROOT
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.tidb_types import TiDBType, int_type, varchar
from ticdc_generators.protocols import encoder_module
from ticdc_generators.protocols.simple.avro_schema import MESSAGE_SCHEMA
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent

PROFILES = ("ticdc", "tiflow")
TS = 450_000_000_000_000_000


def _table(columns, name="t", table_id=100) -> TableSchema:
    return TableSchema(schema="test", table=name, table_id=table_id, columns=tuple(columns),
                       indexes=(Index("PRIMARY", ("id",), primary=True),), schema_version=1, pk_is_handle=True)


T = _table([Column("id", int_type(), nullable=False), Column("b", varchar(8)), Column("a", varchar(8))])


def _encode(profile: str, event, **options) -> list:
    config = SinkConfig(version_profile=profile, **options)
    enc = encoder_module(config.protocol).new_encoder(config, "t", 0)
    return enc.encode(event) + enc.flush()


def _open_frames(msg) -> tuple[dict, dict]:
    key_len = int.from_bytes(msg.key[8:16], "big")
    value_len = int.from_bytes(msg.value[:8], "big")
    return orjson.loads(msg.key[16:16 + key_len]), orjson.loads(msg.value[8:8 + value_len])


def _insert(table=T, row=None):
    return RowEvent(RowChange(table, Op.INSERT, None, row or {"id": 7, "b": "x", "a": "y"}), TS, TS - 1)


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown version profile 'v8'"):
        SinkConfig(protocol="simple", version_profile="v8")


def test_open_protocol_row_key_and_column_order():
    new, old = (_open_frames(_encode(p, _insert(), protocol="open-protocol")[0]) for p in PROFILES)
    assert list(new[0]) == ["ts", "scm", "tbl", "t"]
    assert list(old[0]) == ["ts", "scm", "tbl", "rid", "t"] and old[0]["rid"] == 7
    assert list(new[1]["u"]) == ["id", "b", "a"]
    assert list(old[1]["u"]) == ["a", "b", "id"]


def test_open_protocol_json_writer_escapes_html_only_in_tiflow():
    ddl = DDL(TS, DDLType.CREATE_TABLE, "CREATE TABLE t (id INT, c INT CHECK (c < 5))", "test", "t", T, None)
    new, old = (_encode(p, DDLEvent(ddl), protocol="open-protocol")[0].value for p in PROFILES)
    assert b"c < 5" in new and b"\\u003c" not in new
    assert b"\\u003c 5" in old


def test_open_protocol_empty_pre_image_left_out_by_tiflow():
    row = {"id": 7, "b": "x", "a": "y"}
    event = RowEvent(RowChange(T, Op.UPDATE, row, dict(row)), TS, TS - 1)
    new, old = (_open_frames(_encode(p, event, protocol="open-protocol", only_output_updated_columns=True)[0])[1]
                for p in PROFILES)
    assert new["p"] == {} and "p" not in old


def test_canal_json_mysql_type_of_a_row_without_columns():
    # A DELETE of a key-less table under delete-only-output-handle-key-columns sends no column.
    keyless = TableSchema(schema="test", table="k", table_id=101, columns=(Column("v", varchar(8)),), indexes=(),
                          schema_version=1)
    event = RowEvent(RowChange(keyless, Op.DELETE, {"v": "x"}, None), TS, TS - 1)
    new, old = (orjson.loads(_encode(p, event, protocol="canal-json", enable_tidb_extension=True,
                                     delete_only_output_handle_key_columns=True)[0].value)
                for p in PROFILES)
    assert new["mysqlType"] is None and old["mysqlType"] == {}


def test_debezium_source_schema_and_start_ts():
    new, old = (orjson.loads(_encode(p, _insert(), protocol="debezium", enable_tidb_extension=True,
                                     debezium_include_start_ts=True)[0].value)
                for p in PROFILES)

    def source_fields(doc):
        source = next(f for f in doc["schema"]["fields"] if f["field"] == "source")
        return {f["field"] for f in source["fields"]}

    assert {"commit_ts", "cluster_id"} <= source_fields(new)
    assert not {"commit_ts", "cluster_id"} & source_fields(old)
    assert "start_ts" in new["payload"]["source"] and "start_ts" not in old["payload"]["source"]


def test_debezium_null_time_with_default():
    t = _table([Column("id", int_type(), nullable=False),
                Column("t", TiDBType("time", decimal=0), default="01:02:03", has_default=True)])
    event = RowEvent(RowChange(t, Op.INSERT, None, {"id": 1, "t": None}), TS, TS - 1)
    new, old = (orjson.loads(_encode(p, event, protocol="debezium")[0].value)["payload"]["after"]["t"]
                for p in PROFILES)
    assert new == 0 and old == 3_723_000_000


def test_simple_column_order_follows_column_ids_in_tiflow():
    t = _table([Column("id", int_type(), nullable=False, column_id=3), Column("b", varchar(8), column_id=1),
                Column("a", varchar(8), column_id=2)])
    new, old = (orjson.loads(_encode(p, BootstrapEvent(t), protocol="simple")[0].value) for p in PROFILES)
    assert [c["name"] for c in new["tableSchema"]["columns"]] == ["id", "b", "a"]
    assert [c["name"] for c in old["tableSchema"]["columns"]] == ["b", "a", "id"]


def test_simple_pre_table_schema_sent_by_tiflow_for_alter():
    after = _table([*T.columns, Column("c", int_type())])
    ddl = DDL(TS, DDLType.ADD_COLUMN, "ALTER TABLE t ADD COLUMN c INT", "test", "t", after, T)
    new, old = (orjson.loads(_encode(p, DDLEvent(ddl), protocol="simple")[0].value) for p in PROFILES)
    assert "preTableSchema" not in new or new["preTableSchema"] is None
    assert [c["name"] for c in old["preTableSchema"]["columns"]] == ["id", "b", "a"]


def test_simple_avro_bit_is_a_string_in_ticdc_and_a_long_in_tiflow():
    t = _table([Column("id", int_type(), nullable=False), Column("flags", TiDBType("bit", flen=8))])
    event = RowEvent(RowChange(t, Op.INSERT, None, {"id": 1, "flags": 5}), TS, TS - 1)
    schema = fastavro.parse_schema(MESSAGE_SCHEMA)
    values = []
    for p in PROFILES:
        msg = _encode(p, event, protocol="simple", encoding_format="avro")[-1]
        values.append(fastavro.schemaless_reader(io.BytesIO(msg.value), schema)["payload"]["data"]["flags"])
    assert values == ["5", 5]


@pytest.mark.parametrize("scenario", ["smoke", "keys"])
def test_tiflow_streams_are_conformant(tmp_path, scenario):
    cmd = [*CLI, "run", "--scenario", scenario, "--protocol", "all", "--consumer", "local",
           "--version-profile", "tiflow", "--work", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("conformant") == 5
