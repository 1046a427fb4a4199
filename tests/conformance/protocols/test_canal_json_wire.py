"""Where msgspec (the fast path, _fast/structs.py) and orjson (the reference path) might read a Canal-JSON
message apart: every such message gets the reference path's events or error reason, and the fast
path takes the valid ones it can vouch for."""
from __future__ import annotations

import re
from typing import Optional

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.protocols.canal_json import new_decoder
from ticdc_conformance.protocols.canal_json._fast.plans import PlanCache
from ticdc_conformance.protocols.canal_json._fast.structs import descriptions
from ticdc_conformance.protocols.canal_json.mysql_type import parse_mysql_type
from ticdc_conformance.protocols.canal_json.values import plain_form, value_reader
from ticdc_conformance.protocols.common.wire import Malformed

from .test_canal_json_decoder import EXT, record
from .test_canal_json_fast_path import messages, outcome, reference

INSERT, UPDATE, DELETE = (orjson.dumps(m) for m in messages())
ONLY_UPDATED = dict(EXT, **{"only-output-updated-columns": True})


def agrees(value: bytes, fast: Optional[bool] = None, options: Optional[dict] = None):
    """The decoder answers `value` as the reference path alone does, also with the plan of the
    message's table in use; `fast` says whether the fast path must take the message or leave it."""
    options = EXT if options is None else options
    dec = new_decoder(options)
    for warm in (INSERT, UPDATE, DELETE):
        outcome(dec, warm if options.get("enable-tidb-extension") else _without_extension(warm))
    got, want = outcome(dec, value), reference(options, value)
    assert repr(got) == repr(want), value  # repr: rows in the same column order too
    if fast is not None:
        assert (dec._fast.decode(value) is not None) is fast, value
    return got


def edit(base: bytes, old: bytes, new: bytes) -> bytes:
    assert old in base, old
    return base.replace(old, new, 1)


def _without_extension(value: bytes) -> bytes:
    return re.sub(rb',"_tidb":\{[^}]*\}', b"", value)


def rejected(got) -> bool:
    return isinstance(got, str)


def test_the_unchanged_messages_take_the_fast_path():
    for value in (INSERT, UPDATE, DELETE):
        assert not rejected(agrees(value, fast=True))


# --- a key given twice: orjson keeps the last value at the first key's place -------------------

@pytest.mark.parametrize("value, fast", [
    # An earlier mysqlType/data/_tidb that is not even JSON text orjson reads.
    (edit(UPDATE, b'"mysqlType":', b'"mysqlType":{"id":"\xff"},"mysqlType":'), False),
    (edit(UPDATE, b'"data":', b'"data":[{"id":"\xff"}],"data":'), False),
    (edit(UPDATE, b'"_tidb":', b'"_tidb":{"commitTs":1e400},"_tidb":'), False),
    # An earlier one that is valid but not the description, a large-message placeholder, a DDL flag.
    (edit(UPDATE, b'"mysqlType":', b'"mysqlType":{"id":"varchar"},"mysqlType":'), False),
    (edit(UPDATE, b'"_tidb":', b'"_tidb":{"commitTs":1,"onlyHandleKey":true},"_tidb":'), False),
    (edit(UPDATE, b'"isDdl":false', b'"isDdl":true,"isDdl":false'), False),
    (edit(UPDATE, b'"type":"UPDATE"', b'"type":"DELETE","type":"UPDATE"'), True),
    # Within a row: the last value counts, at the place of the first.
    (edit(UPDATE, b'"data":[{"id":"-3",', b'"data":[{"maybe":"first","id":"-3",'), True),
    (edit(UPDATE, b'"data":[{"id":"-3",', b'"data":[{"id":"\xff","id":"-3",'), False),
    (edit(UPDATE, b'"data":[{"id":"-3",', b'"data":[{"id":"\\ud800","id":"-3",'), False),
    (edit(UPDATE, b'"old":[{"id":"-3",', b'"old":[{"u64":"8","id":"-3",'), True),
    (edit(UPDATE, b'"old":[{"id":"-3",', b'"old":[{"u64":"\xc0\x80","id":"-3",'), False),
    (edit(UPDATE, b'"commitTs":', b'"commitTs":1,"commitTs":'), True),
    # A key spelled with escapes is the same key.
    (edit(UPDATE, b'"data":', b'"d\\u0061ta":'), True),
    (edit(UPDATE, b'"mysqlType":', b'"mysqlType":{},"mysql\\u0054ype":'), False),
], ids=lambda v: v if isinstance(v, bool) else "")
def test_repeated_keys(value, fast):
    agrees(value, fast)


# --- strings: UTF-8 and escapes ----------------------------------------------------------------

@pytest.mark.parametrize("value", [
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\\ud800"}],"_tidb"'),  # lone high surrogate
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\\udc00\\ud800"}],"_tidb"'),  # pair in the wrong order
    edit(UPDATE, b'"sql":""', b'"sql":"\\ud800"'),
    edit(UPDATE, b'"data":[{"id"', b'"data":[{"\\udfff":"1","id"'),
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\xff"}],"_tidb"'),  # not UTF-8
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\xed\xa0\x80"}],"_tidb"'),  # an encoded surrogate
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\xc0\x80"}],"_tidb"'),  # overlong
    edit(UPDATE, b'"sql":""', b'"sql":"\xf8\x88\x80\x80\x80"'),
    edit(UPDATE, b'"table":"t"', b'"table":"t\xff"'),
    edit(UPDATE, b'"sql":""', b'"sql":"","zz":"\xff"'),  # in a field nobody reads
    edit(UPDATE, b'"sql":""', b'"sql":"a\x01b"'),  # a raw control character
    edit(UPDATE, b'"sql":""', b'"sql":"\\x41"'),  # no such escape
    edit(UPDATE, b'"sql":""', b'"sql":"\\u00"'),
])
def test_strings_orjson_rejects_are_rejected(value):
    assert rejected(agrees(value, fast=False))


@pytest.mark.parametrize("value", [
    edit(UPDATE, b'"maybe":null}],"_tidb"',
         b'"maybe":"\\ud83d\\ude00 \\u003c\\u0026\\/\\b\\f\\u0000\\u2028"}],"_tidb"'),
    edit(UPDATE, b'"u64":"7","name":"', b'"u64":"7","name":"\\u00ff\\u540d\\u007f'),
    edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":"\x7f\xf4\x8f\xbf\xbf"}],"_tidb"'),  # DEL, U+10FFFF
])
def test_escaped_and_unusual_text_reads_alike(value):
    assert not rejected(agrees(value, fast=True))


# --- numbers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, fast", [
    # Beyond 64 bits orjson reads a float, which the reference path rejects.
    (edit(UPDATE, b'"id":0', b'"id":18446744073709551616'), False),
    (edit(UPDATE, b'"es":', b'"es":-9223372036854775809,"zz":'), False),
    (edit(UPDATE, b'"commitTs":429918007904436226', b'"commitTs":18446744073709551616'), False),
    (edit(UPDATE, b'"sqlType":{"id":4', b'"sqlType":{"id":18446744073709551620'), False),
    # Within 64 bits but beyond what msgspec can bound: valid, and left to the reference path.
    (edit(UPDATE, b'"id":0', b'"id":18446744073709551615'), False),
    (edit(UPDATE, b'"commitTs":429918007904436226', b'"commitTs":18446744073709551615'), False),
    (edit(UPDATE, b'"commitTs":429918007904436226', b'"commitTs":9223372036854775808'), False),
    (edit(UPDATE, b'"id":0', b'"id":-9223372036854775808'), True),
    # A java.sql.Types code is an int32.
    (edit(UPDATE, b'"sqlType":{"id":4', b'"sqlType":{"id":4294967300'), False),
    # -0 is the integer 0 to both; -0.0 and 1.0 are floats; 1e400 is infinity, which orjson rejects.
    (edit(UPDATE, b'"id":0', b'"id":-0'), True),
    (edit(UPDATE, b'"id":0', b'"id":-0.0'), False),
    (edit(UPDATE, b'"ts":', b'"ts":1.0,"zz":'), False),
    (edit(UPDATE, b'"id":0', b'"id":1e400'), False),
    (edit(UPDATE, b'"sqlType":{"id":4', b'"sqlType":{"id":4.0'), False),
    (edit(UPDATE, b'"sqlType":{"id":4', b'"sqlType":{"id":4e0'), False),
    (edit(UPDATE, b'"sqlType":{"id":4', b'"sqlType":{"id":true'), False),
    (edit(UPDATE, b'"id":0', b'"id":NaN'), False),
    (edit(UPDATE, b'"id":0', b'"id":Infinity'), False),
    (edit(UPDATE, b'"id":0', b'"id":00'), False),
    (edit(UPDATE, b'"id":0', b'"id":+1'), False),
    (edit(UPDATE, b'"sql":""', b'"sql":"","zz":1e400'), False),
    (edit(UPDATE, b'"sql":""', b'"sql":"","zz":' + b"9" * 400), False),
], ids=lambda v: v if isinstance(v, bool) else "")
def test_numbers(value, fast):
    agrees(value, fast)


# --- fields: unknown, null, missing ------------------------------------------------------------

@pytest.mark.parametrize("value, fast", [
    (edit(UPDATE, b'"sql":""', b'"sql":"","zz":{"a":[1,2,null]}'), False),  # ignored by the reference
    (edit(UPDATE, b'"commitTs":', b'"rowkey":"AAE=","commitTs":'), False),
    (edit(UPDATE, b'"commitTs":', b'"watermarkTs":5,"commitTs":'), False),
    (edit(UPDATE, b'"data":[{"id"', b'"data":[{"zz":"1","id"'), False),  # a column without mysqlType
    (edit(UPDATE, b'"old":[{"id"', b'"old":[{"zz":"1","id"'), False),
    (edit(UPDATE, b'"id":0,', b'"id":null,'), False),
    (edit(UPDATE, b'"id":0,', b""), False),
    (edit(UPDATE, b'"es":1640007049196,', b'"es":null,'), False),
    (edit(UPDATE, b'"sql":"",', b""), False),
    (edit(UPDATE, b'"sql":""', b'"sql":null'), False),
    (edit(INSERT, b'"old":null,', b""), False),
    (edit(UPDATE, b'"old":', b'"zz":'), False),
    (edit(UPDATE, b'"pkNames":["id"]', b'"pkNames":null'), True),
    (edit(UPDATE, b'"pkNames":["id"]', b'"pkNames":[]'), True),
    (edit(UPDATE, b'"pkNames":["id"]', b'"pkNames":["id","id"]'), True),
    (edit(UPDATE, b'"pkNames":["id"]', b'"pkNames":["zz"]'), True),  # no key: the row identifies itself
    (edit(UPDATE, b'"_tidb":{"commitTs":429918007904436226}', b'"_tidb":null'), False),
    (edit(UPDATE, b'"_tidb":{"commitTs":429918007904436226}', b'"_tidb":{}'), False),
    (edit(UPDATE, b'"maybe":null}],"_tidb"', b'"maybe":1}],"_tidb"'), False),
    (edit(UPDATE, b',"maybe":null}],"_tidb"', b'}],"_tidb"'), False),  # a described column missing
    (edit(UPDATE, b',"maybe":"was"}]', b"}]"), True),  # old may leave columns out: they did not change
    (edit(UPDATE, b'"database":"smoke"', b'"database":1'), False),
    (edit(UPDATE, b'"isDdl":false', b'"isDdl":0'), False),
    (edit(UPDATE, b'"isDdl":false', b'"isDdl":"false"'), False),
    (edit(UPDATE, b'"type":"UPDATE"', b'"type":"update"'), False),
], ids=lambda v: v if isinstance(v, bool) else "")
def test_fields(value, fast):
    agrees(value, fast)


def test_a_partial_old_needs_only_output_updated_columns_in_neither_path():
    # The reference path overlays whatever old holds; so does the fast path, and takes it.
    value = edit(UPDATE, b',"maybe":"was"}]', b"}]")
    assert not rejected(agrees(value, fast=True, options=ONLY_UPDATED))
    assert not rejected(agrees(edit(UPDATE, b'"old":[{', b'"old":[{"amount":"1.000000"}],"zz":[{'),
                               fast=False, options=ONLY_UPDATED))


def test_without_the_extension():
    for value in (INSERT, UPDATE, DELETE):
        assert not rejected(agrees(_without_extension(value), fast=True, options={}))
    # `_tidb` is not read at all then: the reference path ignores it, the fast path leaves it.
    agrees(UPDATE, fast=False, options={})


# --- nesting, layout, order --------------------------------------------------------------------

@pytest.mark.parametrize("depth, accepted", [(500, True), (1100, False), (5000, False)])
def test_deep_nesting(depth, accepted):
    # orjson reads 1024 levels; the fields nobody reads may hold any JSON value.
    nested = b"[" * depth + b"]" * depth
    assert rejected(agrees(edit(UPDATE, b'"sql":""', b'"sql":"","zz":' + nested), fast=False)) is not accepted
    assert rejected(agrees(edit(UPDATE, b'"sql":""', b'"sql":' + nested), fast=False)) is not accepted


def test_layout_and_order_read_alike():
    msg = orjson.loads(UPDATE)
    pretty = orjson.dumps(msg, option=orjson.OPT_INDENT_2)
    assert not rejected(agrees(pretty, fast=True))
    assert not rejected(agrees(b" \n" + UPDATE + b"\n\t ", fast=True))
    # TiCDC writes mysqlType from a Go map, in any order; sqlType and the top level likewise read in any order.
    for field in ("mysqlType", "sqlType"):
        shuffled = dict(msg, **{field: dict(reversed(msg[field].items()))})
        assert not rejected(agrees(orjson.dumps(shuffled), fast=True))
    assert not rejected(agrees(orjson.dumps(dict(reversed(msg.items()))), fast=True))
    # The rows keep their own order, the row before the order of the row after.
    reordered = dict(msg, data=[dict(reversed(msg["data"][0].items()))])
    [row] = agrees(orjson.dumps(reordered), fast=True)
    assert list(row.after) == list(row.before) == list(reversed(msg["data"][0]))


@pytest.mark.parametrize("value", [b"[]", b'"x"', b"1", b"null", b"{}", b"{", INSERT[:-1], INSERT + b"{}",
                                   b"\xef\xbb\xbf" + INSERT])
def test_not_a_message(value):
    assert rejected(agrees(value, fast=False))


# --- shapes the fast path leaves to the reference path ------------------------------------------

def test_shapes_left_to_the_reference_path():
    msg = orjson.loads(INSERT)
    two_rows = dict(msg, data=msg["data"] * 2)
    assert len(agrees(orjson.dumps(two_rows), fast=False)) == 2
    delete = orjson.loads(DELETE)
    assert not rejected(agrees(orjson.dumps(dict(delete, old=delete["data"])), fast=False))  # before v5.4.0
    for broken in (dict(msg, old=msg["data"]), dict(msg, data=[]), dict(msg, data=None), dict(msg, data={})):
        assert rejected(agrees(orjson.dumps(broken), fast=False))


def test_compressed_values_take_the_fast_path_too():
    import cramjam

    options = dict(EXT, **{"large-message-handle-compression": "snappy"})
    value = bytes(cramjam.snappy.compress_raw(UPDATE))
    dec = new_decoder(options)
    assert outcome(dec, value) == reference(options, value) == outcome(new_decoder(EXT), UPDATE)


# --- values: the plain form is a part of what the readers accept --------------------------------

PLAIN_TYPES = ["tinyint", "smallint unsigned", "mediumint", "int unsigned", "bigint", "bigint unsigned", "year",
               "bit(1)", "bit(7)", "bit", "enum", "set", "decimal", "decimal(10)", "decimal(10,4)", "date",
               "datetime", "datetime(0)", "datetime(3)", "timestamp(6)", "time", "time(2)"]


@pytest.mark.parametrize("text", PLAIN_TYPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_plain_texts_read_as_the_readers_read_them(text, data):
    mtype = parse_mysql_type(text)
    form = plain_form(mtype)
    read = value_reader("c", mtype)
    sample = data.draw(st.one_of(st.from_regex(form.pattern.replace("(?:\\x00|\\Z)", "\\Z"), fullmatch=True),
                                 st.text(alphabet="0123456789-.: ", max_size=30)))
    if not re.fullmatch(form.pattern, sample):
        return
    if form.bounds is None:
        assert read(sample) == sample
    elif form.bounds[0] <= int(sample) <= form.bounds[1]:
        assert read(sample) == int(sample)
    else:
        with pytest.raises(Malformed):
            read(sample)


@pytest.mark.parametrize("text", ["varchar", "varbinary", "double", "json", "enum('a','b')", "bit(65)",
                                  "datetime(7)", "float"])
def test_types_without_a_plain_form(text):
    assert plain_form(parse_mysql_type(text)) is None


# --- caches ------------------------------------------------------------------------------------

@pytest.mark.parametrize("repeat", [1, 2])
def test_endless_descriptions_do_not_grow_the_plan_cache(repeat):
    dec = new_decoder(EXT)
    msg = orjson.loads(INSERT)
    for i in range(300):
        named = orjson.dumps(dict(msg, mysqlType=dict(msg["mysqlType"], maybe=f"varchar({i + 1})")))
        for _ in range(repeat):
            [row] = dec.decode(record(named))
            assert row.after["maybe"] is None
    plans = dec._fast._plans
    # A description seen once gets no plan: building one costs more than the reference path's decode.
    assert len(plans) == 0 if repeat == 1 else 0 < len(plans) <= 256
    assert len(plans._seen) <= 256


def test_a_plan_is_per_description_whatever_its_mysql_type_order():
    cache = PlanCache(enable_tidb_extension=True)
    msg = orjson.loads(INSERT)
    assert cache.plan(descriptions.decode(INSERT)) is None
    plan = cache.plan(descriptions.decode(INSERT))
    shuffled = dict(msg, mysqlType=dict(reversed(msg["mysqlType"].items())))
    assert cache.plan(descriptions.decode(orjson.dumps(shuffled))) is plan
    other_key = orjson.dumps(dict(msg, pkNames=["id", "name"]))
    assert cache.plan(descriptions.decode(other_key)) is None
    assert cache.plan(descriptions.decode(other_key)) not in (None, plan)
    assert len(cache) == 2


def test_a_table_description_that_is_not_valid_is_left_to_the_reference_path():
    msg = orjson.loads(INSERT)
    for mysql_type in ("decimal(1,2,3)", "enum('a"):
        broken = dict(msg, mysqlType=dict(msg["mysqlType"], name=mysql_type))
        assert rejected(agrees(orjson.dumps(broken), fast=False))
    # A type spec 003 does not list is no fault, but only the reference path carries it.
    unknown = dict(msg, mysqlType=dict(msg["mysqlType"], name="no such type"))
    assert not rejected(agrees(orjson.dumps(unknown), fast=False))
    narrow = dict(msg, mysqlType=dict(msg["mysqlType"], id="tinyint"))  # the value -3 fits, the code 4 does not
    assert rejected(agrees(orjson.dumps(narrow), fast=False))
