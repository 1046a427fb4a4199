"""The Simple JSON fast path's generated event functions (protocols/simple/_fast/rowcode.py) give what the
reference path gives, whatever the column names, and check an UPDATE's old values on their own.

Every check goes through test_simple_fast_path.Pair: the decoder as it runs and one without a fast
path decode the same message, and their outcomes (events with value types and column order, or the
error) must be equal.
"""
from __future__ import annotations

import dataclasses

import pytest

from tests.helpers import kafka_record
from ticdc_conformance.protocols.simple import new_decoder
from ticdc_conformance.protocols.simple._fast.shapes import SHAPES_PER_TABLE

from .test_simple_decoder import column, dtype, pk
from .test_simple_fast_path import JSON, Pair

# Names that are not identifiers, that hold quotes or braces, that are Python keywords or names the
# generated code itself binds, or that read as code if pasted into source.
HOSTILE_NAMES = ["class", "None", "event", "new", "old", "msg", "r0", "SHAPES", "__init__", "a'b", "{x}", "名字", "😀",
                 "'); raise SystemExit('x", "c0", "0", "async", "x y", "'''", "lambda: 1"]
# Names msgspec does not take as JSON field names: their tables are the reference path's.
REFERENCE_NAMES = ['a"b', "a\\b", "x\ny", '"""']
KINDS = [dtype("bigint"), dtype("varchar", "utf8mb4"), dtype("decimal", decimal=2), dtype("blob"),
         dtype("int", unsigned=True), dtype("datetime", decimal=3), dtype("double"), dtype("timestamp"),
         dtype("bigint", length=20, unsigned=True), dtype("year"), dtype("float")]
WIRE = {"bigint": "12", "varchar": "x'\"\\", "decimal": "3.25", "blob": "AQID", "int": "4000000000",
        "datetime": "2020-02-20 02:20:20.123", "double": "-0", "timestamp": {"location": "UTC", "value":
        "2020-01-01 00:00:00"}, "year": "2020", "float": "1.5"}


def _row(cols: list[dict], bump: int = 0) -> dict:
    row = {}
    for c in cols:
        wire = WIRE[c["dataType"]["mysqlType"]]
        if bump and c["dataType"]["mysqlType"] in ("bigint", "int"):
            wire = str(int(wire) + bump)
        row[c["name"]] = wire
    return row


@pytest.mark.parametrize("names,fast", [(HOSTILE_NAMES, True), (HOSTILE_NAMES + REFERENCE_NAMES, False)])
def test_hostile_column_names_decode_alike(names, fast):
    cols = [column(name, KINDS[i % len(KINDS)]) for i, name in enumerate(names)]
    pair = Pair(None, JSON.bootstrap(cols, [pk(names[0])]))
    data, old = _row(cols), _row(cols, bump=1)
    for _ in range(2):  # the first row of a version takes two steps, the second one
        assert pair.check(JSON.dml("INSERT", data=data)) == fast
        assert pair.check(JSON.dml("UPDATE", data=data, old=old)) == fast
        assert pair.check(JSON.dml("DELETE", old=old)) == fast
        assert pair.check(JSON.dml("INSERT", data=dict.fromkeys(names))) == fast


def test_every_event_field_is_set():
    cols = [column("id", dtype("int")), column("c", dtype("varchar", "utf8mb4"))]
    dec = new_decoder({"encoding-format": "json"})
    dec.decode(kafka_record(JSON.bootstrap(cols, [pk("id")])))
    for offset in (1, 2):  # two steps, then one
        value = JSON.dml("UPDATE", data={"id": "1", "c": "x"}, old={"id": "1", "c": "y"})
        assert dec._fast.decode(value) is not None
        [event] = dec.decode(kafka_record(value, offset=offset))
        assert {f.name: getattr(event, f.name) for f in dataclasses.fields(event)} == {
            "schema": "db", "table": "t", "op": "update", "commit_ts": event.commit_ts,
            "after": {"id": 1, "c": "x"}, "before": {"id": 1, "c": "y"}, "key_columns": ("id",),
            "columns": ("id", "c")}


def _update_pair() -> Pair:
    cols = [column("id", dtype("bigint")), column("u", dtype("bigint", length=20, unsigned=True)),
            column("d", dtype("decimal", decimal=2)), column("t", dtype("time", decimal=3)),
            column("f", dtype("double")), column("b", dtype("blob")), column("y", dtype("year"))]
    return Pair(None, JSON.bootstrap(cols, [pk("id")]))


NEW = {"id": "1", "u": "18446744073709551615", "d": "1.50", "t": "-838:59:59.000", "f": "2.5", "b": "AQ==",
       "y": "2001"}
# Old values differing from the new ones, each alone: read by the event function or left to the
# reference path, whose value or error must come out either way.
OLD_VALUES = {
    "id": ["2", "-0", "007", "-00", " 1", "1 ", "1.0", "1e3", "9223372036854775808", "-9223372036854775809", "",
           "١", None],
    "u": ["0", "18446744073709551616", "-1", "007", " 5", None],
    "d": ["2.25", "-0.0", "1e3", ".5", "5.", "1.2.3", " 1", None],
    "t": ["00:00:00", "12:00:00.5", "1:00:00", "12:00", None],
    "f": ["-0", "1e308", "1e400", "nan", "007.5", None],
    "b": ["AQ==", "QR==", "AQI", "!!!!", "", None],
    "y": ["0", "1901", "1900", "x", None],
}


@pytest.mark.parametrize("name", sorted(OLD_VALUES))
def test_old_values_of_an_update_checked_alone_agree(name):
    pair = _update_pair()
    assert pair.check(JSON.dml("INSERT", data=NEW))  # the version is a union member from here on
    for wire in OLD_VALUES[name]:
        pair.check(JSON.dml("UPDATE", data=NEW, old=dict(NEW, **{name: wire})))
        pair.check(JSON.dml("UPDATE", data=dict(NEW, **{name: wire}), old=NEW))


def test_an_old_value_of_a_known_shape_that_is_not_valid_is_not_admitted():
    pair = _update_pair()
    assert pair.check(JSON.dml("UPDATE", data=NEW, old=dict(NEW, d="12.50")))
    for wire in ("12a50", "12-50", "12.5 ", "1.2.5", "12\u0660.5"):
        assert not pair.check(JSON.dml("UPDATE", data=NEW, old=dict(NEW, d=wire))), wire


def test_the_old_value_shape_caches_are_bounded():
    pair = _update_pair()
    assert pair.check(JSON.dml("INSERT", data=NEW))
    [plan] = pair.fast._fast._plans.values()
    for n in range(SHAPES_PER_TABLE + 5):
        old = dict(NEW, d="9" * (n % 40 + 1) + "." + "5" * (n // 40 + 1))
        assert pair.check(JSON.dml("UPDATE", data=NEW, old=old))
        assert all(len(c.shapes) <= SHAPES_PER_TABLE for c in plan.columns)
