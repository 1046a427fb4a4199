"""The lint's Debezium message checks (protocols/debezium/lint_shape.py) and Open Protocol DDL type,
flag, delete and per-transaction checks (protocols/open_protocol/lint_shape.py), on simulator streams broken
on purpose: each test breaks one rule in one record and expects that rule at that record's
coordinates, and nothing else that is required.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import orjson
import pytest

from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.lint import lint
from ticdc_conformance.protocols.open_protocol.wire import KIND_DDL, KIND_ROW, read_events

from .test_lint import ONE_EVENT, _frames, coordinates, decoded, renumber, required, simulate, single

_KINDS = {"dml": DecodedRow, "ddl": DecodedDDL, "watermark": DecodedWatermark}


# --- Debezium -------------------------------------------------------------------------------------------
def _dbz_edit(kind: str, edit: Callable[[dict, dict], bool], **overrides) -> tuple[list, object, int]:
    """Applies `edit(key_doc, value_doc)` to the first record of `kind` it accepts; (records, settings, index)."""
    records, settings = simulate("smoke", "debezium", **overrides)
    for index, (r, events) in enumerate(decoded(records, settings)):
        if single(events, _KINDS[kind]):
            key, value = orjson.loads(r.key), orjson.loads(r.value)
            if edit(key, value):
                records[index] = replace(r, key=orjson.dumps(key), value=orjson.dumps(value))
                return records, settings, index
    raise AssertionError("no record to edit")


def _rename(part: str, name: str) -> Callable[[dict, dict], bool]:
    def edit(key: dict, value: dict) -> bool:
        (key if part == "key" else value)["schema"]["name"] = name
        return True
    return edit


def _after_field(value: dict, tidb_type: str) -> dict | None:
    after = next(f for f in value["schema"]["fields"] if f["field"] == "after")
    return next((f for f in after["fields"] if f.get("tidb_type") == tidb_type), None)


def _retype_field(tidb_type: str, new_tidb_type: str, new_type: str) -> Callable[[dict, dict], bool]:
    def edit(key: dict, value: dict) -> bool:
        field = _after_field(value, tidb_type)
        if field is None:
            return False
        field["tidb_type"], field["type"] = new_tidb_type, new_type
        return True
    return edit


def _blob_default(key: dict, value: dict) -> bool:
    field = _after_field(value, "blob")
    if field is None:
        return False
    field["default"] = ""
    return True


def _key_value(key: dict, value: dict) -> bool:
    column = next(iter(key["payload"]))
    if not isinstance(key["payload"][column], str):
        return False
    key["payload"][column] += "-other"
    return True


def _no_commit_ts(key: dict, value: dict) -> bool:
    del value["payload"]["source"]["commit_ts"]
    return True


def _unknown_op(key: dict, value: dict) -> bool:
    value["payload"]["op"] = "t"  # Debezium's truncate, which TiCDC never sends
    return True


def _ddl_key_extra(key: dict, value: dict) -> bool:
    key["payload"]["table"] = value["payload"]["source"]["table"]
    return True


def _watermark_key_payload(key: dict, value: dict) -> bool:
    key["payload"]["ts"] = 1
    return True


def _jdbc_type_text(key: dict, value: dict) -> bool:
    columns = (value["payload"]["tableChanges"][0].get("table") or {}).get("columns") or []
    if not columns:
        return False
    columns[0]["jdbcType"] = str(columns[0]["jdbcType"])
    return True


def _ddl_blob_default(key: dict, value: dict) -> bool:
    columns = (value["payload"]["tableChanges"][0].get("table") or {}).get("columns") or []
    blob = next((c for c in columns if c.get("typeName") == "BLOB"), None)
    if blob is None:
        return False
    blob["defaultValueExpression"] = "''"
    return True


@pytest.mark.parametrize("kind, edit, rule", [
    pytest.param("dml", _rename("key", "default.smoke.other.Key"), "DBZ-KEY-3",
                 marks=pytest.mark.rules("DBZ-KEY-3", "DBZ-KEY-6")),
    pytest.param("dml", _rename("value", "default.smoke.Envelope"), "DBZ-SCHEMA-3",
                 marks=pytest.mark.rules("DBZ-SCHEMA-3", "DBZ-SCHEMA-5")),
    pytest.param("ddl", _rename("value", "default.smoke.orders.SchemaChangeValue"), "DBZ-SCHEMA-2",
                 marks=pytest.mark.rules("DBZ-SCHEMA-2")),
    pytest.param("ddl", _rename("key", "default.smoke.Key"), "DBZ-KEY-1", marks=pytest.mark.rules("DBZ-KEY-1")),
    pytest.param("ddl", _ddl_key_extra, "DBZ-KEY-1", marks=pytest.mark.rules("DBZ-KEY-1")),
    pytest.param("watermark", _rename("key", "other.watermark.Key"), "DBZ-WATERMARK-2",
                 marks=pytest.mark.rules("DBZ-WATERMARK-2")),
    pytest.param("watermark", _watermark_key_payload, "DBZ-WATERMARK-2", marks=pytest.mark.rules("DBZ-WATERMARK-2")),
    pytest.param("watermark", _rename("value", "default.Envelope"), "DBZ-WATERMARK-4",
                 marks=pytest.mark.rules("DBZ-WATERMARK-4")),
    pytest.param("dml", _key_value, "DBZ-KEY-5", marks=pytest.mark.rules("DBZ-KEY-5")),
    pytest.param("dml", _no_commit_ts, "DBZ-DML-10", marks=pytest.mark.rules("DBZ-DML-10")),
    pytest.param("dml", _unknown_op, "DBZ-EVENTS-1", marks=pytest.mark.rules("DBZ-EVENTS-1")),
    pytest.param("ddl", _jdbc_type_text, "DBZ-DDL-4", marks=pytest.mark.rules("DBZ-DDL-4")),
    pytest.param("dml", _retype_field("varchar", "geometry", "string"), "DBZ-TYPEMAP-2",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-2", "DBZ-TYPEMAP-12")),
    pytest.param("dml", _retype_field("decimal", "real", "double"), "DBZ-TYPEMAP-5",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-5")),
    pytest.param("dml", _blob_default, "DBZ-TYPEMAP-6", marks=pytest.mark.rules("DBZ-TYPEMAP-6")),
    pytest.param("ddl", _ddl_blob_default, "DBZ-TYPEMAP-6", marks=pytest.mark.rules("DBZ-TYPEMAP-6")),
    # DBZ-TYPEMAP-14 restates DBZ-TYPEMAP-4 (spec 001): DECIMAL travels as float64.
    pytest.param("dml", _retype_field("decimal", "decimal", "string"), "DBZ-TYPEMAP-4",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-14")),
    # FLOAT's Connect type is judged without its length, which TiCDC misreports: a wrong family still fails.
    pytest.param("dml", _retype_field("decimal", "float", "int64"), "DBZ-TYPEMAP-1",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-8")),
])
def test_a_broken_debezium_message_is_caught_under_its_rule(kind, edit, rule):
    records, settings, index = _dbz_edit(kind, edit)
    assert set(required(records, settings)) == {coordinates(records[index], rule)}


@pytest.mark.rules("DBZ-TYPEMAP-8")
def test_a_debezium_float_is_accepted_as_float_or_double_whatever_its_length():
    for ftype in ("float", "double"):
        records, settings, _ = _dbz_edit("dml", _retype_field("decimal", "float", ftype))
        assert required(records, settings) == []


@pytest.mark.rules("DBZ-EVENTS-2", "DBZ-DML-1")
def test_a_debezium_stream_of_row_events_only_lints_and_decodes_in_full():
    records, settings = simulate("smoke", "debezium")
    rows = [r for r, events in decoded(records, settings) if single(events, DecodedRow)]
    assert len(rows) < len(records)
    for topic, partition in {(r.topic, r.partition) for r in rows}:
        rows = renumber(rows, topic, partition)
    result = lint(rows, settings)
    assert [f for f in result.findings.kept if f.level == "required"] == []
    assert all(single(events, DecodedRow) for _, events in decoded(rows, settings))


@pytest.mark.rules("DBZ-DML-1")
def test_a_debezium_insert_without_its_after_image_is_rejected():
    records, settings, index = _dbz_edit("dml", lambda k, v: v["payload"]["op"] == "c"
                                         and v["payload"].update(after=None) is None)
    assert required(records, settings) == [coordinates(records[index], "DBZ-MESSAGE-2")]


# --- Open Protocol --------------------------------------------------------------------------------------
def _open_event(records, settings, kind: int, edit: Callable[[dict, dict], bool]) -> int:
    """Applies `edit(event key, event value)` to the first one-event record of `kind` it accepts."""
    for index, r in enumerate(records):
        events = read_events(r.key, r.value)
        if len(events) != 1 or events[0].kind != kind:
            continue
        key, value = dict(events[0].key), orjson.loads(events[0].value)
        if edit(key, value):
            records[index] = replace(r, value=_frames(orjson.dumps(value)))
            return index
    raise AssertionError("no event to edit")


def _ddl_type(statement: str, code: int) -> Callable[[dict, dict], bool]:
    def edit(key: dict, value: dict) -> bool:
        if not value["q"].startswith(statement):
            return False
        value["t"] = code
        return True
    return edit


@pytest.mark.parametrize("statement, code, rule", [
    pytest.param("CREATE TABLE", 4, "OPEN-DDLTYPE-1", marks=pytest.mark.rules("OPEN-DDLTYPE-1")),
    pytest.param("CREATE TABLE", 0, "OPEN-DDLTYPE-1", marks=pytest.mark.rules("OPEN-DDLTYPE-1")),
    pytest.param("ALTER TABLE", 8, "OPEN-DDLTYPE-2", marks=pytest.mark.rules("OPEN-DDLTYPE-2")),
    pytest.param("ALTER TABLE", 21, "OPEN-DDLTYPE-3", marks=pytest.mark.rules("OPEN-DDLTYPE-3")),
    pytest.param("ALTER TABLE", 34, "OPEN-DDLTYPE-4", marks=pytest.mark.rules("OPEN-DDLTYPE-4")),
])
def test_an_open_protocol_ddl_with_another_statements_type_code_is_caught(statement, code, rule):
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    index = _open_event(records, settings, KIND_DDL, _ddl_type(statement, code))
    assert required(records, settings) == [coordinates(records[index], rule)]


@pytest.mark.rules("OPEN-DDLTYPE-2")
def test_an_open_protocol_ddl_keeping_its_type_code_is_clean():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    _open_event(records, settings, KIND_DDL, _ddl_type("ALTER TABLE", 5))  # ADD COLUMN, as TiCDC sent it
    assert required(records, settings) == []


def _flags(change: Callable[[dict], bool]) -> Callable[[dict, dict], bool]:
    def edit(key: dict, value: dict) -> bool:
        return any(change(column) for column in value.get("u", {}).values())
    return edit


def _stray_bit(column: dict) -> bool:
    column["f"] |= 0x100
    return True


def _handle_without_key(column: dict) -> bool:
    if column.get("h") and column["f"] & 0x08:
        column["f"] &= ~0x08  # HandleKeyFlag without PrimaryKeyFlag or UniqueKeyFlag
        return not column["f"] & 0x10
    return False


@pytest.mark.parametrize("change, rule", [
    pytest.param(_stray_bit, "OPEN-FLAG-7", marks=pytest.mark.rules("OPEN-FLAG-7")),
    pytest.param(_handle_without_key, "OPEN-FLAG-4", marks=pytest.mark.rules("OPEN-FLAG-4")),
])
def test_open_protocol_flags_outside_the_spec_or_against_each_other_are_caught(change, rule):
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    # The last row event, so no later event of its table compares its flags with the edited ones.
    index = max(i for i, (r, ev) in enumerate(decoded(records, settings)) if single(ev, DecodedRow))
    [event] = read_events(records[index].key, records[index].value)
    value = orjson.loads(event.value)
    assert _flags(change)({}, value)
    records[index] = replace(records[index], value=_frames(orjson.dumps(value)))
    assert required(records, settings) == [coordinates(records[index], rule)]


@pytest.mark.rules("OPEN-ROW-5")
def test_a_key_only_open_protocol_delete_carrying_another_column_is_caught():
    records, settings = simulate("smoke", "open-protocol", delete_only_output_handle_key_columns=True, **ONE_EVENT)

    def extra(key: dict, value: dict) -> bool:
        if "d" not in value or "p" in value:
            return False
        value["d"]["extra"] = {"t": 15, "f": 65, "v": "x"}
        return True
    index = _open_event(records, settings, KIND_ROW, extra)
    assert required(records, settings) == [coordinates(records[index], "OPEN-ROW-5")]


def _second_event(records, settings, as_delete: bool) -> tuple[list, int]:
    """A copy of the first insert right after it, on its partition, as itself or as a delete."""
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings))
                 if single(ev, DecodedRow) and ev[0].op == "insert")
    r = records[index]
    [event] = read_events(r.key, r.value)
    value = orjson.loads(event.value)
    copy = replace(r, value=_frames(orjson.dumps({"d": value["u"]}))) if as_delete else r
    records = records[:index + 1] + [copy] + records[index + 1:]
    return renumber(records, r.topic, r.partition), index + 1


@pytest.mark.rules("OPEN-ROW-4")
def test_two_open_protocol_events_of_one_row_in_one_transaction_are_caught():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    records, index = _second_event(records, settings, as_delete=True)
    assert required(records, settings) == [coordinates(records[index], "OPEN-ROW-4")]


@pytest.mark.rules("OPEN-ROW-4", "KAFKA-DELIVERY-1")
def test_a_resent_open_protocol_event_is_not_a_second_event_of_its_row():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    records, _ = _second_event(records, settings, as_delete=False)
    assert required(records, settings) == []


def _move_after(records: list, index: int, target: int) -> list:
    """Record `index` moved just after record `target` (later, same partition), offsets renumbered."""
    moved = records[:index] + records[index + 1:target + 1] + [records[index]] + records[target + 1:]
    return renumber(moved, records[index].topic, records[index].partition)


@pytest.mark.rules("OPEN-WATERMARK-1", "OPEN-WATERMARK-2")
def test_an_open_protocol_row_event_after_a_resolved_event_above_it_is_caught():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    pairs = decoded(records, settings)
    # A resolved event and the row event just before it on its partition: moving the row past the
    # watermark leaves every other order as it was.
    for w, (wr, wev) in enumerate(pairs):
        if not single(wev, DecodedWatermark):
            continue
        before = [i for i in range(w) if (records[i].topic, records[i].partition) == (wr.topic, wr.partition)]
        if before and single(pairs[before[-1]][1], DecodedRow) and pairs[before[-1]][1][0].commit_ts < wev[0].ts:
            row = before[-1]
            break
    else:
        raise AssertionError("no row event before a resolved event")
    moved = _move_after(records, row, w)
    assert required(moved, settings) == [coordinates(moved[w], "OPEN-WATERMARK-2")]


@pytest.mark.rules("OPEN-PARSING-1")
def test_the_open_protocol_parser_refuses_a_type_code_the_spec_does_not_define():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    index = _open_event(records, settings, KIND_ROW, _flags(lambda c: c.update(t=200) is None))
    with pytest.raises(DecodeError):
        decoded([records[index]], settings)
    assert required(records, settings) == [coordinates(records[index], "OPEN-COLUMN-1")]


@pytest.mark.rules("OPEN-FLAG-3")
@pytest.mark.parametrize("generated", [False, True])
def test_an_open_protocol_generated_flag_against_the_tables_ddl_is_caught(generated):
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    pairs = decoded(records, settings)
    index = max(i for i, (r, ev) in enumerate(pairs) if single(ev, DecodedRow))
    row = pairs[index][1][0]
    [event] = read_events(records[index].key, records[index].value)
    value = orjson.loads(event.value)
    name, column = next(iter(value["u"].items()))
    if generated:
        # The table's CREATE TABLE defines the column as generated; its flags say it is not.
        for i, (r, ev) in enumerate(pairs):
            if single(ev, DecodedDDL) and (ev[0].schema, ev[0].table) == (row.schema, row.table) \
                    and ev[0].query.startswith("CREATE TABLE"):
                [ddl] = read_events(r.key, r.value)
                ddl_value = orjson.loads(ddl.value)
                ddl_value["q"] = ddl_value["q"].replace(f"`{name}` ", f"`{name}` INT AS (1) STORED, `{name}_x` ", 1)
                records[i] = replace(r, value=_frames(orjson.dumps(ddl_value)))
    else:
        column["f"] |= 0x04  # GeneratedColumnFlag on a column the CREATE TABLE defines plainly
        records[index] = replace(records[index], value=_frames(orjson.dumps(value)))
    found = required(records, settings)
    if generated:
        # Every row of the table on the partitions that carried the edited DDL is caught.
        assert found and {f[0] for f in found} == {"OPEN-FLAG-3"}
        assert coordinates(records[index], "OPEN-FLAG-3") in found
    else:
        assert found == [coordinates(records[index], "OPEN-FLAG-3")]


@pytest.mark.rules("OPEN-DDL-1")
def test_an_open_protocol_ddl_after_a_later_row_of_its_table_is_caught():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    pairs = decoded(records, settings)
    for d, (dr, dev) in enumerate(pairs):
        ddl = single(dev, DecodedDDL)
        if ddl is None or not ddl.query.startswith("ALTER TABLE"):
            continue
        # The partition's first row event of the table after the DDL, with no watermark in between.
        row = None
        for r in range(d + 1, len(records)):
            if (records[r].topic, records[r].partition) != (dr.topic, dr.partition):
                continue
            if single(pairs[r][1], DecodedWatermark):
                row = None
                break
            row = single(pairs[r][1], DecodedRow)
            if row is not None and (row.schema, row.table) == (ddl.schema, ddl.table):
                break
        else:
            continue
        if row is not None and (row.schema, row.table) == (ddl.schema, ddl.table) and row.commit_ts > ddl.commit_ts:
            break
    else:
        raise AssertionError("no DDL followed by a row of its table")
    moved = _move_after(records, d, r)
    assert required(moved, settings) == [coordinates(moved[r], "OPEN-DDL-1")]
