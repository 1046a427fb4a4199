"""Which key a decoder identifies a row by, when a column selector cut the primary key away.

TiCDC accepts a selection that drops a table's primary key but keeps a NOT NULL unique key whole
(downstreamadapter/sink/columnselector/column_selector.go verifyIndices); its own integration test
does it: tests/integration_tests/debezium_basic/conf/changefeed.toml keeps only `account_id` of
`test.t1 (id int primary key, account_id int not null)` with a unique key on account_id
(data/test.sql). The `keys` scenario's `keys.int_handle` has that shape (PK `id`, NOT NULL
unique key `u`), so the streams below are generated with `id` selected away, and every encoding
must still be consumed conformantly.
"""
from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import orjson
import pytest

from tests.conftest import CLI, ROOT, SHARED
from ticdc_conformance.checks.differential import check_final_state
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.open_protocol.values import decode_columns
from ticdc_conformance.protocols.simple.wire.table import table_from_wire
from ticdc_contract.record_files import iter_record_files
from ticdc_contract.schema_json import table_from_json
from ticdc_generators.pipeline import encoding_names

REFERENCE = SHARED / "reference/ticdc/tests/integration_tests/debezium_basic"
TABLE = "keys.int_handle"
# The reference selector, moved onto the scenario's table of the same shape.
CHANGEFEED = """
[sink]
column-selectors = [
    {matcher = ['keys.int_handle'], columns = ['u']},
]
"""
DML_TYPES = ("INSERT", "UPDATE", "DELETE")
# What each encoding's message tells of the kept unique key `u`: Open Protocol flags it
# (UniqueKeyFlag, no NullableFlag), Simple's table schema lists it; Canal-JSON names only the
# primary key (pkNames) and Debezium's key holds only the handle key, both cut away.
EXPECTED_KEY = {"open-protocol": ("u",), "simple-json": ("u",), "simple-avro": ("u",),
                "canal-json": (), "debezium": ()}


def test_the_selection_is_the_reference_one_on_a_table_of_the_same_shape():
    reference = tomllib.loads((REFERENCE / "conf/changefeed.toml").read_text())["sink"]["column-selectors"]
    ours = tomllib.loads(CHANGEFEED)["sink"]["column-selectors"]
    assert len(reference) == len(ours) == 1 and len(reference[0]["columns"]) == len(ours[0]["columns"]) == 1
    sql = (REFERENCE / "data/test.sql").read_text()
    assert "create table t1 (id int primary key, account_id int not null);" in sql
    assert "alter table t1 add unique key(account_id);" in sql
    assert reference[0]["columns"] == ["account_id"] and ours[0]["columns"] == ["u"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keys")
    toml = tmp / "changefeed.toml"
    toml.write_text(CHANGEFEED)
    proc = subprocess.run(CLI + ["run", "--scenario", "keys", "--protocol", "all", "--consumer", "local",
                                 "--changefeed", str(toml), "--work", str(tmp / "w")],
                          capture_output=True, text=True, cwd=ROOT)
    [case] = (tmp / "w").glob("keys-seed1-*")  # the changefeed's options digest names the folder
    return case, proc


def test_the_table_has_the_reference_tables_shape(run):
    case, _ = run
    with open(case / "canal-json" / "truth" / "tables.ndjson", "rb") as f:
        tables = [table_from_json(orjson.loads(line)) for line in f]
    t = next(t for t in tables if t.qualified_name == TABLE)
    assert t.primary_key.columns == ("id",)
    assert any(ix.unique and not ix.primary and ix.columns == ("u",) for ix in t.indexes)
    assert not t.column("u").nullable


def test_every_encoding_conforms_with_the_primary_key_selected_away(run):
    _, proc = run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("conformant") == len(encoding_names()) and "NOT conformant" not in proc.stdout


def _decoded_rows(case: Path) -> list[DecodedRow]:
    manifest = json.loads((case / "manifest.json").read_text())
    package = protocol_spec(manifest["protocol"])
    decoders, rows = {}, []
    for record in iter_record_files(case / "records"):
        tp = (record.topic, record.partition)
        decoder = decoders.setdefault(tp, package.new_decoder(manifest["sink"]))
        rows += [ev for ev in decoder.decode(record) if isinstance(ev, DecodedRow)]
    return rows


@pytest.mark.rules("OPEN-FLAG-2", "OPEN-FLAG-4", "OPEN-FLAG-5", "SIMPLE-INDEX-2", "CANAL-FIELDS-1", "DBZ-KEY-2")
@pytest.mark.parametrize("encoding", encoding_names())
def test_rows_are_identified_by_the_key_the_message_still_carries(run, encoding):
    case, _ = run
    rows = _decoded_rows(case / encoding)
    selected = [r for r in rows if f"{r.schema}.{r.table}" == TABLE]
    assert selected and {r.op for r in selected} == {"insert", "update", "delete"}
    for r in selected:
        assert r.key_columns == EXPECTED_KEY[encoding]
        for image in (r.after, r.before):
            assert image is None or set(image) == {"u"}
    # A table the selector does not match keeps its primary key.
    others = [r for r in rows if f"{r.schema}.{r.table}" == "keys.varchar_pk"]
    assert others and all(r.key_columns == ("code",) for r in others)


def _named_key(encoding: str, record) -> list[str] | None:
    """The key columns a row message of TABLE names (pkNames; Debezium's key payload), else None."""
    value = orjson.loads(record.value)
    if encoding == "canal-json":
        if value["isDdl"] or f"{value['database']}.{value['table']}" != TABLE or value["type"] not in DML_TYPES:
            return None
        return value["pkNames"]
    payload = value["payload"]
    if payload.get("op") not in ("c", "u", "d") or f"{payload['source']['db']}.{payload['source']['table']}" != TABLE:
        return None
    return list(orjson.loads(record.key)["payload"])


def test_the_messages_name_the_primary_key_they_do_not_carry(run):
    """Canal-JSON's pkNames and Debezium's key still name `id` (new TiCDC describes the whole table
    there), which is why those decoders must not take them for the row's key."""
    case, _ = run
    for encoding in ("canal-json", "debezium"):
        named = [_named_key(encoding, r) for r in iter_record_files(case / encoding / "records")]
        named = [n for n in named if n is not None]
        assert named and all(n == ["id"] for n in named)


def test_the_consumer_output_holds_no_primary_key_and_the_check_depends_on_the_selection(run):
    case, _ = run
    for encoding in encoding_names():
        manifest = json.loads((case / encoding / "manifest.json").read_text())
        final = case / encoding / "consumer" / "final" / f"{TABLE}.ndjson"
        rows = [json.loads(line) for line in final.open()]
        assert rows and all(r.get("id") is None and r.get("u") is not None for r in rows)
        whole = dict(manifest["sink"], **{"column-selectors": []})
        verdicts = check_final_state(case / encoding / "truth", case / encoding / "consumer",
                                     manifest["protocol"], whole)
        assert any(v.findings for v in verdicts if v.table == TABLE)


# --- the pieces --------------------------------------------------------------------------------

def test_carried_key_takes_the_first_candidate_every_image_holds_whole():
    pk, uk = ("id",), ("u",)
    assert carried_key([pk, uk], {"id": 1, "u": 2}) == pk
    assert carried_key([pk, uk], {"u": 2, "v": 3}) == uk
    assert carried_key([pk, uk], {"u": 2}, None) == uk
    assert carried_key([pk, uk], {"id": 1, "u": 2}, {"u": 2}) == uk  # an image without `id`
    assert carried_key([("a", "b"), uk], {"a": 1, "u": 2}) == uk  # a key cut in part identifies nothing
    assert carried_key([pk], {"v": 3}) == ()
    assert carried_key([(), uk], {"u": 1}) == uk
    assert carried_key([], {"u": 1}) == ()


def _col(t: int, f: int, v, h: bool = False) -> dict:
    out = {"t": t, "f": f, "v": v}
    if h:
        out["h"] = True
    return out


@pytest.mark.rules("OPEN-FLAG-2", "OPEN-FLAG-4", "OPEN-FLAG-5")
def test_open_protocol_keys_come_from_the_column_flags():
    # spec 002 Bit flags: 0x02 Handle, 0x08 Primary, 0x10 Unique, 0x20 Multiple, 0x40 Nullable.
    _, keys = decode_columns({"id": _col(3, 0x0B, 1, h=True), "u": _col(3, 0x10, 2), "v": _col(15, 0x40, "x")})
    assert keys[0] == ("id",) and ("u",) in keys
    _, keys = decode_columns({"u": _col(3, 0x10, 2), "v": _col(15, 0x40, "x")})
    assert keys[0] == ("u",)
    # A nullable unique column is no key; a composite unique key counts as a whole.
    _, keys = decode_columns({"n": _col(3, 0x50, None), "v": _col(15, 0x40, "x")})
    assert keys == []
    _, keys = decode_columns({"a": _col(3, 0x30, 1), "b": _col(3, 0x30, 2), "v": _col(15, 0x60, "x")})
    assert keys == [("a", "b")]
    # Without flags ("f" absent, spec 002's first version) only "h" tells a key.
    _, keys = decode_columns({"u": {"t": 3, "v": 2}})
    assert keys == []


def _simple_column(name: str, nullable: bool) -> dict:
    return {"name": name, "dataType": {"mysqlType": "int", "charset": "binary", "collate": "binary", "length": 11},
            "nullable": nullable, "default": None}


def _index(name: str, columns: list[str], unique: bool = True, primary: bool = False) -> dict:
    return {"name": name, "unique": unique, "primary": primary, "nullable": False, "columns": columns}


@pytest.mark.rules("SIMPLE-INDEX-2")
def test_simple_keys_are_the_primary_key_then_the_not_null_unique_keys_fewest_columns_first():
    columns = [_simple_column(n, nullable=(n == "n")) for n in ("id", "a", "b", "c", "n")]
    indexes = [_index("uk_ab", ["a", "b"]), _index("ix_c", ["c"], unique=False), _index("uk_n", ["n"]),
               _index("uk_c", ["c"]), _index("primary", ["id"], primary=True)]
    raw = {"schema": "s", "table": "t", "tableID": 1, "version": 1, "columns": columns, "indexes": indexes}
    table = table_from_wire(raw, "schema", "test")
    assert table.keys == (("id",), ("c",), ("a", "b"))
    assert carried_key(table.keys, {"a": 1, "b": 2, "c": 3}) == ("c",)
    assert carried_key(table.keys, {"a": 1, "b": 2}) == ("a", "b")
