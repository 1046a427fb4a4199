"""Canal-JSON and Simple message checks of the stream lint, on simulator streams broken on purpose.

Each test takes the simulator's output, changes one message the way spec 003 or 004 forbids and
checks the lint names the rule at that record's coordinates. The unbroken streams lint clean
(tests/e2e/test_lint.py).
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Callable

import orjson
import pytest

from tests.conformance.consumers.test_consumer_rules import Topic, feed, insert, rows, ts, update, wm
from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedBootstrap, DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.lint import lint
from ticdc_conformance.lint.settings import make_settings
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.record import KafkaRecord

from .test_lint import simulate

Coordinates = tuple[str, str, int, int]


def findings(records: list[KafkaRecord], settings) -> list[Coordinates]:
    return [(f.rule, f.topic, f.partition, f.offset) for f in lint(records, settings).findings.kept
            if f.level != "info"]


def at(rule: str, r: KafkaRecord) -> Coordinates:
    return (rule, r.topic, r.partition, r.offset)


def first(records: list[KafkaRecord], want: Callable[[dict], bool]) -> int:
    return next(i for i, r in enumerate(records) if want(json.loads(r.value)))


def edit(records: list[KafkaRecord], i: int, change: Callable[[dict], object], text: str = "") -> KafkaRecord:
    """Record i with its message changed in place by `change`; `text` replaces the placeholder "@@"
    in the re-serialised JSON, to write a value's raw text."""
    msg = json.loads(records[i].value)
    change(msg)
    value = go_json(msg)
    if text:
        value = value.replace('"@@"', '"' + text + '"')
    records[i] = replace(records[i], value=value.encode())
    return records[i]


_SHORT = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _go_char(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    return f"\\u{ord(ch):04x}" if ord(ch) < 32 or ch in "<>&" else ch


def go_json(value: object) -> str:
    """JSON as TiCDC's Go encoder writes it (HTML characters and control bytes as \\u00XX), so that
    re-serialising a message changes nothing but the edit."""
    if isinstance(value, str):
        return '"' + "".join(map(_go_char, value)) + '"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(go_json, value)) + "]"
    return json.dumps(value)


def of_type(*types: str) -> Callable[[dict], bool]:
    return lambda m: m.get("type") in types


def broken_once(encoding: str, want: Callable[[dict], bool], change: Callable[[dict], object], text: str = "",
                **overrides) -> tuple[KafkaRecord, list[Coordinates]]:
    records, settings = simulate("smoke", encoding, **overrides)
    assert findings(records, settings) == []
    r = edit(records, first(records, want), change, text)
    return r, findings(records, settings)


# --- Canal-JSON: fields, times, watermarks, extension ---------------------------------------------
@pytest.mark.rules("CANAL-FIELDS-1")
@pytest.mark.parametrize("field, value", [("id", 1), ("isDdl", "false"), ("pkNames", "code"), ("database", None)])
def test_a_canal_common_field_of_the_wrong_type_or_value_is_caught(field, value):
    r, found = broken_once("canal-json", of_type("INSERT"), lambda m: m.__setitem__(field, value))
    assert found[0] == at("CANAL-FIELDS-1", r)


@pytest.mark.rules("CANAL-FIELDS-2")
def test_es_in_seconds_or_apart_from_the_commit_ts_is_caught():
    r, found = broken_once("canal-json", of_type("INSERT"), lambda m: m.__setitem__("es", m["es"] // 1000))
    assert found == [at("CANAL-FIELDS-2", r)] * 2  # not 13 digits, and not the commit ts's time
    r, found = broken_once("canal-json", of_type("DELETE"), lambda m: m.__setitem__("es", m["es"] + 1))
    assert found == [at("CANAL-FIELDS-2", r)]


@pytest.mark.rules("CANAL-DDL-1")
def test_a_ddl_message_built_before_its_ddl_ran_is_caught():
    r, found = broken_once("canal-json", lambda m: m["isDdl"], lambda m: m.__setitem__("ts", m["es"] - 1))
    assert found == [at("CANAL-DDL-1", r)]


@pytest.mark.rules("CANAL-WATERMARK-1", "CANAL-WATERMARK-4")
def test_a_watermark_without_the_extension_or_of_the_wrong_shape_is_caught():
    r, found = broken_once("canal-json", of_type("TIDB_WATERMARK"), lambda m: m.update(table="t", data=[]))
    assert found == [at("CANAL-WATERMARK-4", r)] * 2
    r, found = broken_once("canal-json", of_type("TIDB_WATERMARK"), lambda m: m["_tidb"].update(commitTs=1))
    assert found == [at("CANAL-WATERMARK-4", r)]
    records, settings = simulate("smoke", "canal-json", enable_tidb_extension=False)
    watermark = {"id": 0, "database": "", "table": "", "pkNames": None, "isDdl": False, "type": "TIDB_WATERMARK",
                 "es": 1767225601032, "ts": 1767225601032, "sql": "", "sqlType": None, "mysqlType": None,
                 "data": None, "old": None}
    i = first(records, of_type("INSERT"))
    records[i] = replace(records[i], value=orjson.dumps(watermark))
    assert findings(records, settings) == [at("CANAL-WATERMARK-1", records[i])]


@pytest.mark.rules("CANAL-EXTENSION-1")
def test_tidb_extension_field_present_exactly_with_the_option():
    r, found = broken_once("canal-json", of_type("UPDATE"), lambda m: m.pop("_tidb"))
    assert found == [at("CANAL-EXTENSION-1", r)]
    r, found = broken_once("canal-json", of_type("UPDATE"), lambda m: m.__setitem__("_tidb", {"commitTs": 5}),
                           enable_tidb_extension=False)
    assert found == [at("CANAL-EXTENSION-1", r)]


# --- Canal-JSON: binary values, byte by byte ------------------------------------------------------
def _avatar(m: dict) -> None:
    m["data"][0]["avatar"] = "@@"


def _blob_insert(m: dict) -> bool:
    return m.get("type") == "INSERT" and (m.get("mysqlType") or {}).get("avatar") == "blob"


@pytest.mark.rules("CANAL-BINARY-2", "CANAL-BINARY-3", "CANAL-BINARY-4")
@pytest.mark.parametrize("raw, rule", [
    (r"a\u0009b", "CANAL-BINARY-2"),  # tab as \u0009, not \t
    (r"a\bb", "CANAL-BINARY-2"),  # byte 8 as \b, not \u0008
    ("a<b", "CANAL-BINARY-3"),  # '<' literal, not \u003c
    ("a&b", "CANAL-BINARY-3"),
    (r"\u0041b", "CANAL-BINARY-3"),  # 'A' escaped
    (r"\/", "CANAL-BINARY-3"),
    (r"a\u00ffb", "CANAL-BINARY-4"),  # byte 255 escaped, not the literal 'ÿ'
    (r"\u0085", "CANAL-BINARY-4"),
])
def test_a_binary_byte_written_otherwise_than_spec_003s_table_is_caught(raw, rule):
    r, found = broken_once("canal-json", _blob_insert, _avatar, raw)
    assert found == [at(rule, r)]


@pytest.mark.rules("CANAL-BINARY-5", "CANAL-BINARY-2", "CANAL-BINARY-3", "CANAL-BINARY-4")
def test_spec_003s_binary_example_lints_clean_and_any_byte_rewritten_is_caught():
    # spec 003 "Example of the encoding": bytes [5 7 10 15 36 50 43 99 120 60 38 255 254 45 55 70].
    example = "\\u0005\\u0007\\n\\u000f$2+cx\\u003c\\u0026\u00ff\u00fe-7F"
    records, settings = simulate("smoke", "canal-json")
    i = first(records, _blob_insert)
    edit(records, i, _avatar, example)
    assert findings(records, settings) == []
    for variant, rule in [(example.replace("\\n", "\\u000a"), "CANAL-BINARY-2"),
                          (example.replace("\\u003c", "<"), "CANAL-BINARY-3"),
                          (example.replace("\u00ff", "\\u00ff"), "CANAL-BINARY-4")]:
        records, settings = simulate("smoke", "canal-json")
        r = edit(records, i, _avatar, variant)
        assert findings(records, settings) == [at(rule, r)]


# --- Canal-JSON: an UPDATE's old, mysqlType forms -------------------------------------------------
@pytest.mark.rules("CANAL-OLD-3", "CANAL-OLD-4")
def test_default_old_holds_every_column_in_an_array_parallel_to_data():
    r, found = broken_once("canal-json", of_type("UPDATE"), lambda m: m["old"][0].pop("name"))
    assert found == [at("CANAL-OLD-3", r)]
    r, found = broken_once("canal-json", of_type("UPDATE"), lambda m: m["old"].append(m["old"][0]))
    assert found == [at("CANAL-OLD-4", r)]


@pytest.mark.rules("CANAL-OLD-2", "CANAL-COMPAT-2")
@pytest.mark.parametrize("option, rule", [("only_output_updated_columns", "CANAL-OLD-2"),
                                          ("content_compatible", "CANAL-COMPAT-2")])
def test_old_with_only_updated_columns_holds_no_unchanged_column(option, rule):
    r, found = broken_once("canal-json", of_type("UPDATE"), lambda m: m["old"][0].update(code=m["data"][0]["code"]),
                           **{option: True})
    assert found == [at(rule, r)]


@pytest.mark.rules("CANAL-MYSQLTYPE-3")
def test_default_mysql_type_is_the_lower_case_bare_name():
    r, found = broken_once("canal-json", of_type("INSERT"), lambda m: m["mysqlType"].update(
        {c: t.upper() for c, t in m["mysqlType"].items() if t == "varchar"}))
    assert found[0] == at("CANAL-MYSQLTYPE-3", r)


@pytest.mark.rules("CANAL-MYSQLTYPE-4")
def test_content_compatible_mysql_type_carries_its_parameters():
    def bare(m: dict) -> None:
        name = next(c for c, t in m["mysqlType"].items() if t.startswith("varchar("))
        m["mysqlType"][name] = "varchar"
    r, found = broken_once("canal-json", of_type("INSERT"), bare, content_compatible=True)
    assert found == [at("CANAL-MYSQLTYPE-4", r)]


# --- Simple: BOOTSTRAP --------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-BOOTSTRAP-6")
def test_a_bootstrap_with_a_commit_ts_is_caught():
    r, found = broken_once("simple-json", of_type("BOOTSTRAP"), lambda m: m.__setitem__("commitTs", 42))
    assert found == [at("SIMPLE-BOOTSTRAP-6", r)]


def _with(settings, **options):
    return make_settings(settings.protocol, {**settings.options, **options}, settings.topics)


@pytest.mark.rules("SIMPLE-BOOTSTRAP-4", "SIMPLE-BOOTSTRAP-11")
def test_bootstraps_beyond_the_first_partition_break_send_bootstrap_to_all_partition_false():
    records, settings = simulate("smoke", "simple-json")
    expected = [at("SIMPLE-BOOTSTRAP-4", r) for r in records
                if r.partition != 0 and json.loads(r.value)["type"] == "BOOTSTRAP"]
    assert expected
    found = findings(records, _with(settings, **{"send-bootstrap-to-all-partition": False}))
    assert [f for f in found if f[0] == "SIMPLE-BOOTSTRAP-4"] == expected


@pytest.mark.rules("SIMPLE-BOOTSTRAP-2", "SIMPLE-BOOTSTRAP-9")
def test_more_row_changes_than_send_bootstrap_in_msg_count_without_a_bootstrap_are_caught():
    records, settings = simulate("smoke", "simple-json")
    limit, since, expected = 3, {}, []
    for r in records:  # the row change after `limit` of its table since the partition's last BOOTSTRAP of it
        m = json.loads(r.value)
        key = (r.partition, m.get("database") or (m.get("tableSchema") or {}).get("schema"),
               m.get("table") or (m.get("tableSchema") or {}).get("table"))
        if m["type"] == "BOOTSTRAP":
            since[key] = 0
        elif m["type"] in ("INSERT", "UPDATE", "DELETE") and key in since:
            since[key] += 1
            if since[key] == limit + 1:
                expected.append(at("SIMPLE-BOOTSTRAP-2", r))
    assert expected
    assert findings(records, _with(settings, **{"send-bootstrap-in-msg-count": limit})) == expected


# --- Simple: DDL --------------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-DDL-4")
def test_a_table_ddl_without_table_schema_is_caught():
    r, found = broken_once("simple-json", of_type("ALTER"), lambda m: m.pop("tableSchema"))
    assert found[0] == at("SIMPLE-DDL-4", r)


@pytest.mark.rules("SIMPLE-DDL-3")
def test_a_create_with_a_pre_table_schema_is_caught():
    r, found = broken_once("simple-json", of_type("CREATE"),
                           lambda m: m.__setitem__("preTableSchema", m["tableSchema"]))
    assert found == [at("SIMPLE-DDL-3", r)]


@pytest.mark.rules("SIMPLE-DDL-2")
def test_a_pre_table_schema_later_than_or_of_another_table_than_table_schema_is_caught():
    def later(m: dict) -> None:
        m["preTableSchema"]["version"] = m["tableSchema"]["version"] + 1
    r, found = broken_once("simple-json", of_type("ALTER"), later, version_profile="tiflow")
    assert found[0] == at("SIMPLE-DDL-2", r)
    r, found = broken_once("simple-json", of_type("ALTER"), lambda m: m["preTableSchema"].update(table="other"),
                           version_profile="tiflow")
    assert found[0] == at("SIMPLE-DDL-2", r)


@pytest.mark.rules("SIMPLE-SCHEMAVERSION-4")
def test_a_rename_that_changes_the_schema_version_is_caught():
    records, settings = simulate("ddl-evolution", "simple-json", version_profile="tiflow")
    assert findings(records, settings) == []
    r = edit(records, first(records, of_type("RENAME")),
             lambda m: m["tableSchema"].update(version=m["preTableSchema"]["version"] + 1))
    assert findings(records, settings)[0] == at("SIMPLE-SCHEMAVERSION-4", r)


# --- decoder and reference consumer -------------------------------------------------------------
@pytest.mark.rules("SIMPLE-BOOTSTRAP-5", "SIMPLE-BOOTSTRAP-12")
def test_a_bootstrap_without_its_table_schema_is_rejected():
    records, settings = simulate("smoke", "simple-json")
    i = first(records, of_type("BOOTSTRAP"))
    decoder = protocol_spec("simple").new_decoder(dict(settings.options))
    assert isinstance(decoder.decode(records[i])[0], DecodedBootstrap)
    r = edit(records, i, lambda m: m.pop("tableSchema"))
    with pytest.raises(DecodeError, match="tableSchema"):
        decoder.decode(r)
    assert at("SIMPLE-FORMAT-1", r) in findings(records, settings)


@pytest.mark.rules("SIMPLE-SCHEMACACHE-1", "SIMPLE-SCHEMACACHE-3")
def test_read_from_the_start_every_dml_finds_its_cached_schema_and_one_before_it_waits():
    records, settings = simulate("smoke", "simple-json")
    decoders: dict = {}
    for r in records:  # from the start: no DML ever waits
        d = decoders.setdefault(r.partition, protocol_spec("simple").new_decoder(dict(settings.options)))
        events = d.decode(r)
        assert d.held_count == 0
        if json.loads(r.value)["type"] in ("INSERT", "UPDATE", "DELETE"):
            assert [type(e) for e in events] == [DecodedRow]
    # A DML ahead of its table's BOOTSTRAP waits for the schema, then comes out behind it.
    part = [r for r in records if r.partition == 1]
    b = first(part, of_type("BOOTSTRAP"))
    table = json.loads(part[b].value)["tableSchema"]["table"]
    dml = next(r for r in part[b:] if json.loads(r.value).get("table") == table)
    d = protocol_spec("simple").new_decoder(dict(settings.options))
    assert d.decode(dml) == [] and d.held_count == 1
    assert [type(e) for e in d.decode(part[b])] == [DecodedBootstrap, DecodedRow] and d.held_count == 0


@pytest.mark.rules("CONSUMER-DEDUP-2")
def test_the_consumer_drops_a_resend_below_its_applied_watermark_but_keeps_one_never_applied():
    t = Topic("canal-json", enable_tidb_extension=True)
    c = feed(t.consumer(), t.send(0, insert(1, "a", 10), update(1, "a", "b", 20), wm(20)), t.send(1, wm(20)))
    assert rows(c)[1]["v"] == "b" and c.applied_wm == ts(20)
    feed(c, t.send(0, insert(1, "a", 10)))  # a re-send below the applied watermark
    assert rows(c)[1]["v"] == "b" and c.figures["rows_dropped_below_watermark"] == 1
    # Partition 1 lags: an event above the applied watermark, even below partition 0's, is kept.
    feed(c, t.send(0, insert(2, "c", 30), wm(40)), t.send(0, wm(20), insert(2, "c", 30)), t.send(1, wm(40)))
    assert rows(c)[2]["v"] == "c" and c.figures["rows_dropped_below_watermark"] == 1


@pytest.mark.rules("CANAL-KIND-3")
def test_canal_events_are_told_apart_by_is_ddl_and_type_not_by_where_they_are():
    records, settings = simulate("smoke", "canal-json")
    picks = [records[first(records, want)] for want in (lambda m: m["isDdl"], of_type("TIDB_WATERMARK"),
                                                        of_type("INSERT"))]
    decoder = protocol_spec("canal-json").new_decoder(dict(settings.options))
    moved = [replace(r, topic="elsewhere", partition=7) for r in picks]
    assert [type(decoder.decode(r)[0]) for r in moved] == [DecodedDDL, DecodedWatermark, DecodedRow]
    not_ddl = edit(moved, 0, lambda m: m.__setitem__("isDdl", False))  # a CREATE is no DML event
    with pytest.raises(DecodeError):
        decoder.decode(not_ddl)


@pytest.mark.rules("CANAL-MYSQLTYPE-5")
def test_values_read_the_same_from_bare_and_parameterised_mysql_types():
    bare, settings = simulate("types", "canal-json")
    full, full_settings = simulate("types", "canal-json", content_compatible=True)
    i = first(bare, of_type("INSERT"))
    assert json.loads(bare[i].value)["mysqlType"] != json.loads(full[i].value)["mysqlType"]
    package = protocol_spec("canal-json")
    a = package.new_decoder(dict(settings.options)).decode(bare[i])
    b = package.new_decoder(dict(full_settings.options)).decode(full[i])
    assert [e.after for e in a] == [e.after for e in b] and a[0].after


@pytest.mark.rules("SIMPLE-MYSQLTYPE-1")
def test_a_mysql_type_outside_spec_004s_table_is_rejected():
    records, settings = simulate("smoke", "simple-json")
    r = edit(records, first(records, of_type("BOOTSTRAP")),
             lambda m: m["tableSchema"]["columns"][0]["dataType"].update(mysqlType="varchar2"))
    with pytest.raises(DecodeError, match="varchar2"):
        protocol_spec("simple").new_decoder(dict(settings.options)).decode(r)
    assert at("SIMPLE-FORMAT-1", r) in findings(records, settings)
