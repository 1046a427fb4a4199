"""The Canal-JSON decoder's fast path (msgspec, plans per table description) gives exactly what the
reference path does. test_canal_json_wire.py holds the inputs msgspec and orjson might read apart."""
from __future__ import annotations

import copy
import random

import orjson
import pytest

from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.canal_json import new_decoder
from ticdc_conformance.protocols.canal_json._fast.plans import PlanCache
from ticdc_conformance.protocols.canal_json._fast.structs import descriptions
from ticdc_contract.tidb_types import int_type, varchar

from .test_canal_json_decoder import COMMIT_TS, EXT, SMOKE_COLUMNS, record, rejects, ticdc_message

COLUMNS = SMOKE_COLUMNS
AFTER = {"id": -3, "u64": 2**63, "name": "ÿ名", "amount": "12.500000", "at": "2028-05-01 04:28:12.748",
         "payload": b"\x00\xff", "maybe": None}
BEFORE = dict(AFTER, u64=7, amount=None, maybe="was")


def messages() -> list[dict]:
    return [ticdc_message(COLUMNS, AFTER), ticdc_message(COLUMNS, AFTER, "UPDATE", BEFORE),
            ticdc_message(COLUMNS, None, "DELETE", BEFORE)]


def reference(options: dict, value: bytes):
    """What the reference path alone (no plan, no fast path) makes of a record."""
    read = new_decoder(options).read(record(value))  # read(): the reference path, never the fast one
    return read.events if read.error is None else read.error.reason


def outcome(dec, value: bytes):
    try:
        return dec.decode(record(value))
    except DecodeError as e:
        return e.reason


def test_ticdc_shaped_dml_takes_the_fast_path():
    dec = new_decoder(EXT)
    # The first message of a table description goes to the reference path; the plan is built for the next.
    assert dec._fast.decode(orjson.dumps(messages()[0])) is None
    for msg in messages():
        fast = dec._fast.decode(orjson.dumps(msg))
        assert fast is not None and all(type(e) is DecodedRow for e in fast)
        assert fast == dec._decode(msg)
        # Equal field by field and in column order too: the applied log prints rows in this order.
        assert [(list(e.after or ()), list(e.before or ())) for e in fast] == \
               [(list(e.after or ()), list(e.before or ())) for e in dec._decode(msg)]


def test_an_unsigned_value_past_the_signed_range_needs_the_wider_sql_type():
    # u64 = 2**63 > 2**63 - 1: spec 003 promotes bigint unsigned to DECIMAL (3); BIGINT (-5) is wrong.
    msg = ticdc_message(COLUMNS, AFTER)
    assert msg["sqlType"]["u64"] == 3
    new_decoder(EXT).decode(record(orjson.dumps(msg)))
    msg["sqlType"]["u64"] = -5
    rejects(orjson.dumps(msg), r"column 'u64' of mysqlType 'bigint' unsigned has sqlType -5, spec 003 gives 3")


@pytest.mark.parametrize("code", [True, -5.0])
def test_a_sql_type_equal_to_the_code_but_not_an_int_is_rejected(code):
    msg = ticdc_message([("id", int_type("bigint")), ("c", varchar(3))], {"id": 1, "c": "x"})
    msg["sqlType"]["c" if code is True else "id"] = code  # CHAR is 1 == True
    dec = new_decoder(EXT)
    dec.decode(record(orjson.dumps(ticdc_message([("id", int_type("bigint")), ("c", varchar(3))],
                                                 {"id": 1, "c": "x"}))))  # the table's plan is warm
    with pytest.raises(DecodeError, match="must be a java.sql.Types code"):
        dec.decode(record(orjson.dumps(msg)))


def test_a_changed_table_description_builds_a_new_plan():
    dec = new_decoder(EXT)
    first = ticdc_message([("id", int_type("int")), ("v", int_type("int"))], {"id": 1, "v": 5})
    assert dec.decode(record(orjson.dumps(first)))[0].after == {"id": 1, "v": 5}
    # ALTER TABLE t MODIFY v VARCHAR(8): the same table, v now text.
    second = ticdc_message([("id", int_type("int")), ("v", varchar(8))], {"id": 2, "v": "5"})
    assert dec.decode(record(orjson.dumps(second)))[0].after == {"id": 2, "v": "5"}
    # A key change alone (pkNames) also counts as a new description.
    third = ticdc_message([("id", int_type("int")), ("v", varchar(8))], {"id": 3, "v": "x"}, pk=("v",))
    assert dec.decode(record(orjson.dumps(third)))[0].key_columns == ("v",)


def test_the_plan_cache_is_bounded():
    # Descriptions, not tables, get plans: the tables here differ in one column's type each.
    cache = PlanCache(enable_tidb_extension=True, limit=2)
    plans = []
    for width in (8, 9, 10):
        msg = ticdc_message([("id", int_type("int")), ("v", varchar(width))], {"id": 1, "v": "x"}, full=True)
        assert cache.plan(descriptions.decode(orjson.dumps(msg))) is None  # seen once: no plan yet
        plans.append(cache.plan(descriptions.decode(orjson.dumps(msg))))
        assert len(cache) <= 2
        assert cache.plan(descriptions.decode(orjson.dumps(msg))) is plans[-1]  # reused while cached
    assert len({id(p) for p in plans}) == 3


def test_another_table_with_the_same_description_shares_its_plan():
    dec = new_decoder(EXT)
    for table in ("a", "b", "c"):
        msg = ticdc_message(COLUMNS, AFTER)
        msg["table"] = table
        [row] = dec.decode(record(orjson.dumps(msg)))
        assert row.table == table
    assert len(dec._fast._plans) == 1


_JUNK = [None, True, False, 0, 1, -1, 12.0, "", "x", "1", "-", "01", " 1", "1 ", "+1", "1_0", "٣", "²", [], {},
         ["id"], {"a": 1}, "1.5", "Ā", "18446744073709551616", "2147483648", "9223372036854775808", 93, 2004, 3,
         "bigint", "int unsigned", "varchar", "decimal(5,2)", "2028-05-01 04:28:12.7", COMMIT_TS]


def _mutate(msg: dict, rng: random.Random) -> dict:
    msg = copy.deepcopy(msg)
    paths = []

    def walk(node, path):
        for key, child in (node.items() if isinstance(node, dict) else enumerate(node)):
            paths.append(path + [key])
            if isinstance(child, (dict, list)):
                walk(child, path + [key])
    walk(msg, [])
    *parents, last = rng.choice(paths)
    parent = msg
    for key in parents:
        parent = parent[key]
    roll = rng.random()
    if roll < 0.15 and isinstance(parent, dict):
        del parent[last]
    elif roll < 0.25 and isinstance(parent, dict):
        parent[rng.choice(["zz", "onlyHandleKey", "watermarkTs", "rowkey"])] = rng.choice(_JUNK)
    elif roll < 0.35 and isinstance(parent, dict):  # same fields, another order
        items = list(parent.items())
        rng.shuffle(items)
        parent.clear()
        parent.update(items)
    else:
        parent[last] = copy.deepcopy(rng.choice(_JUNK))
    return msg


@pytest.mark.parametrize("options", [EXT, {}, dict(EXT, **{"content-compatible": True})],
                         ids=["extension", "no-extension", "content-compatible"])
def test_damaged_messages_get_the_reference_path_answer(options):
    """Every result and every error reason equals the reference path's, with the table's plan warm."""
    rng = random.Random(5)
    dec = new_decoder(options)
    for i in range(600):
        base = messages()[i % 3]
        outcome(dec, orjson.dumps(base))  # keeps the plan of the valid description in use
        value = orjson.dumps(_mutate(base, rng) if i % 4 else _mutate(_mutate(base, rng), rng))
        got, want = outcome(dec, value), reference(options, value)
        assert got == want, value
        if isinstance(got, list):
            assert [repr(e) for e in got] == [repr(e) for e in want]
