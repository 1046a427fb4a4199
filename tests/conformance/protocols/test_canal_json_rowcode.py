"""The event readers written out per plan (protocols/canal_json/_fast/rowcode.py) read every row as the reference path's
readers do, column by column, whatever the column names and texts: they take the rows they can
vouch for and leave the others, with the reference path's answer, to it."""
from __future__ import annotations

import keyword
import re
from types import SimpleNamespace

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.protocols.canal_json import new_decoder
from ticdc_conformance.protocols.canal_json._fast import rowcode
from ticdc_conformance.protocols.canal_json._fast.rowcode import event_reader
from ticdc_conformance.protocols.canal_json.java_type import SQL_TYPE_CODES, expected_sql_type
from ticdc_conformance.protocols.canal_json.mysql_type import parse_mysql_type
from ticdc_conformance.protocols.canal_json.values import decode_value, plain_form
from ticdc_conformance.protocols.common.wire import DIGITS_AS_ZERO, Malformed
from ticdc_contract.tidb_types import blob, datetime, decimal, int_type, varchar

from .test_canal_json_decoder import COMMIT_TS, EXT, record, ticdc_message
from .test_canal_json_fast_path import outcome, reference
from .test_canal_json_wire import PLAIN_TYPES

ONLY_UPDATED = dict(EXT, **{"only-output-updated-columns": True})

# A column of every kind the readers are written out for: integers (signed, unsigned and promoted,
# YEAR, BIT, bare ENUM), printed texts (DECIMAL, temporal), binary, text, and readers called as
# they are (DOUBLE, JSON, named ENUM members).
ROW_TYPES = {"i": "int", "u": "bigint unsigned", "t": "tinyint unsigned", "d": "decimal(8,2)", "dt": "datetime(3)",
             "b": "varbinary", "s": "varchar", "y": "year", "bit": "bit(3)", "e": "enum", "f": "double",
             "j": "json", "n": "enum('a','b')"}
TYPES = {name: parse_mysql_type(text) for name, text in ROW_TYPES.items()}
GOOD = {"i": ["0", "-2147483648", "2147483647", "42"], "u": ["0", "9223372036854775807", "9223372036854775808",
                                                               "18446744073709551615"],
        "t": ["0", "127", "128", "255"], "d": ["0.00", "-123456.78"], "dt": ["2028-05-01 04:28:12.748"],
        "b": ["", "ÿ\x00A"], "s": ["", "x", "\x00", "名"], "y": ["0", "2155"], "bit": ["0", "7"],
        "e": ["0", "3"], "f": ["0", "-1.5", "1e3"], "j": ['{"a":[1]}', "null"], "n": ["0", "1", "2"]}
# Texts just past what each column takes.
BAD = {"i": ["2147483648", "-2147483649"], "u": ["18446744073709551616", "-1"], "t": ["256", "-1"],
       "d": ["1.5", "1.500", "1e3"], "dt": ["2028-05-01 04:28:12", "2028-05-01 04:28:12.7480"], "b": ["Ā"],
       "s": [], "y": ["2156", "-1"], "bit": ["8"], "e": ["18446744073709551616"], "f": ["1e999", "nan"],
       "j": ["{", ""], "n": ["3"]}
ODD = ["01", "-0", "+1", " 1", "1 ", "١", "1.50", "1.5", "18446744073709551616", "2156", "256", "8",
       "2028-05-01 04:28:12", "Ā", "", "12345678901234567890123", "-2147483649", "\x00", "nan", "{", "3"]


def _message(data: dict, old, kind: str = "UPDATE") -> bytes:
    """A TiCDC-shaped message of ROW_TYPES, its sqlType computed from the `data` row as the
    reference path expects it where the row is valid (java_type.py)."""
    codes = {}
    for name, text in data.items():
        try:
            codes[name] = expected_sql_type(TYPES[name], decode_value(name, TYPES[name], text))
        except Malformed:
            codes[name] = SQL_TYPE_CODES[TYPES[name].base]
    return orjson.dumps({
        "id": 0, "database": "d", "table": "t", "pkNames": ["i"], "isDdl": False, "type": kind, "es": 1, "ts": 1,
        "sql": "", "sqlType": codes, "mysqlType": ROW_TYPES, "old": old, "data": [data],
        "_tidb": {"commitTs": COMMIT_TS}})


def _fast_and_reference(value: bytes, options: dict):
    """(what the fast path makes of `value` with its plan built, what the reference path makes of it)."""
    dec = new_decoder(options)
    outcome(dec, value)  # the first sight of a description builds no plan; the second does
    fast = dec._fast.decode(value)
    want = reference(options, value)
    assert repr(outcome(dec, value)) == repr(want)
    return fast, want


_ANY = st.one_of(st.none(), st.sampled_from(ODD), st.text(max_size=6))
_VALID = {name: st.sampled_from([None, *values]) for name, values in GOOD.items()}
_NEAR = {name: st.sampled_from([None, *GOOD[name], *BAD[name]]) for name in ROW_TYPES}


@settings(max_examples=400, deadline=None)
@given(data=st.one_of(st.fixed_dictionaries(_VALID), st.fixed_dictionaries({name: _ANY for name in ROW_TYPES})),
       old=st.one_of(st.none(), st.fixed_dictionaries({}, optional={name: st.one_of(_NEAR[name], _ANY)
                                                                    for name in ROW_TYPES})),
       kind=st.sampled_from(["INSERT", "UPDATE", "DELETE"]))
def test_any_row_reads_as_the_reference_path_reads_it(data, old, kind):
    # A valid row with an `old` that may not be, or any row at all.
    value = _message(data, None if old is None else [old], kind)
    fast, want = _fast_and_reference(value, ONLY_UPDATED)
    # The fast path only ever accepts, and then with the reference path's event, column order too.
    assert fast is None or repr(fast) == repr(want)


@settings(max_examples=150, deadline=None)
@given(data=st.fixed_dictionaries(_VALID),
       old=st.fixed_dictionaries({}, optional={name: st.sampled_from([None, *values]) for name, values in GOOD.items()}),
       full=st.booleans())
def test_rows_of_valid_texts_take_the_fast_path(data, old, full):
    old = dict(data, **old) if full else old  # TiCDC's default sends every column in old
    for kind, before in (("INSERT", None), ("DELETE", None), ("UPDATE", [old])):
        fast, want = _fast_and_reference(_message(data, before, kind), ONLY_UPDATED if not full else EXT)
        assert fast is not None and repr(fast) == repr(want)


@pytest.mark.parametrize("name", ROW_TYPES)
def test_one_text_out_of_a_valid_row_gets_the_reference_path_answer(name):
    base = {column: values[-1] for column, values in GOOD.items()}
    for text in [*GOOD[name], *BAD[name], *ODD]:
        for value in (_message(dict(base, **{name: text}), None, "INSERT"),
                      _message(base, [dict(base, **{name: text})]), _message(base, [{name: text}])):
            fast, want = _fast_and_reference(value, ONLY_UPDATED)
            assert repr(fast) == repr(want) if text in GOOD[name] else fast is None or repr(fast) == repr(want)


# Names the generated source must never read as code.
NAMES = list(dict.fromkeys(["id", "a'b", "'''", "名字", "é", "\U0001f680", "", " ", "class", "def", "return",
                            "row", "msg", "old", "before", "N0", "t0", "x0", "KEY", "UNSET", "Decline",
                            "__import__('os').system('false')", "{0}", "%s", "#", *keyword.kwlist]))
# Names msgspec cannot give a Struct field (_fast/structs.py): their tables are the reference path's.
UNNAMABLE = ['a"b', "a\\b", "\\", '"""', "a\nb", "\x00", "\x1f"]
_KINDS = [int_type("bigint", unsigned=True), varchar(8), decimal(10, 2), datetime(3), blob(), int_type("int")]
_VALUES = [2**63, "x'\"\\", "12.50", "2028-05-01 04:28:12.748", b"\x00\xff", -3]


def _named_messages(names: list[str], options: dict) -> list[bytes]:
    columns = [(name, _KINDS[i % len(_KINDS)]) for i, name in enumerate(names)]
    after = {name: _VALUES[i % len(_VALUES)] for i, name in enumerate(names)}
    before = dict(after, **{names[i]: None for i in range(1, len(names), 2)})
    out = []
    for msg in (ticdc_message(columns, after), ticdc_message(columns, after, "UPDATE", before),
                ticdc_message(columns, None, "DELETE", before)):
        if not options:
            del msg["_tidb"]
        out.append(orjson.dumps(msg))
    return out


@pytest.mark.parametrize("options", [EXT, {}], ids=["extension", "no-extension"])
def test_any_column_name_decodes_as_on_the_reference_path(options):
    for value in _named_messages(NAMES, options):
        fast, want = _fast_and_reference(value, options)
        assert fast is not None and repr(fast) == repr(want)
        [row] = fast
        assert list(row.after or row.before) == NAMES and row.key_columns == ("id",)


@pytest.mark.parametrize("name", UNNAMABLE)
def test_a_column_msgspec_cannot_name_leaves_its_table_to_the_reference_path(name):
    dec = new_decoder(EXT)
    for value in _named_messages(["id", name, "v"], EXT) * 2:
        [row] = outcome(dec, value)
        assert repr([row]) == repr(reference(EXT, value)) and name in (row.after or row.before)
        assert dec._fast.decode(value) is None
    # The description is remembered as one without a plan, not built anew for every message.
    assert len(dec._fast._plans) == 0 and len(dec._fast._plans._plans) == 1


def test_a_binary_text_above_u00ff_is_left_to_the_reference_path():
    data = dict.fromkeys(ROW_TYPES, None)
    for where in ("data", "old"):
        value = _message(dict(data, b="Ā" if where == "data" else "x"), [dict(data, b="Ā")])
        fast, want = _fast_and_reference(value, EXT)
        assert fast is None and "character U+0100 is not a byte" in want


def test_a_promoted_code_follows_the_row_value():
    data = dict.fromkeys(ROW_TYPES, None)
    for text, code in (("9223372036854775808", 3), ("9223372036854775807", -5), (None, -5)):
        msg = orjson.loads(_message(dict(data, u=text), None, "INSERT"))
        assert msg["sqlType"]["u"] == code
        fast, _ = _fast_and_reference(orjson.dumps(msg), EXT)
        assert fast is not None and fast[0].after["u"] == (None if text is None else int(text))
        msg["sqlType"]["u"] = 3 if code == -5 else -5
        fast, want = _fast_and_reference(orjson.dumps(msg), EXT)
        assert fast is None and "has sqlType" in want


def test_a_record_through_the_decoder_is_the_fast_paths_event():
    data = {name: values[-1] for name, values in GOOD.items()}
    value = _message(data, [dict(data, i="7", d=None, s="was")])
    dec = new_decoder(EXT)
    first = dec.decode(record(value))  # the reference path's
    assert dec.decode(record(value)) == first == dec._fast.decode(value)
    assert first[0].before == dict(first[0].after, i=7, d=None, s="was")


def test_the_generated_reader_takes_any_name_as_data():
    # The names msgspec cannot match are still plain data to the generated source itself.
    names = [*UNNAMABLE, *NAMES]
    types = {name: parse_mysql_type(["int", "varchar", "decimal", "varbinary"][i % 4]) for i, name in enumerate(names)}
    fields = {name: f"c{i}" for i, name in enumerate(names)}
    texts = ["-3", "x", "1.5", "ÿ"]
    data = {name: texts[i % 4] for i, name in enumerate(names)}
    old = msgspec.defstruct("Old", [(f"c{i}", object) for i in range(len(names))])(
        *(None if i % 4 == 1 else text for i, text in enumerate(data.values())))
    read = event_reader(types, fields, ("id",), enable_tidb_extension=False)
    message = SimpleNamespace(data=(dict(data),), old=(old,), type="UPDATE", database="d", table="t")
    [row] = read(message)
    want = {name: decode_value(name, types[name], text) for name, text in data.items()}
    assert repr(row.after) == repr(want)
    assert repr(row.before) == repr({name: None if i % 4 == 1 else value for i, (name, value) in enumerate(want.items())})


@pytest.mark.parametrize("text", PLAIN_TYPES)
@settings(max_examples=80, deadline=None)
@given(sample=st.text(alphabet="0123456789-.: ١x", max_size=30))
def test_a_plain_pattern_takes_a_text_as_it_takes_its_shape(text, sample):
    # What lets a row's shape, once matched, stand for every row of that shape (rowcode.py).
    pattern = re.compile(plain_form(parse_mysql_type(text)).pattern)
    shape = sample.encode("utf-8").translate(DIGITS_AS_ZERO).decode("utf-8")
    assert (pattern.fullmatch(sample) is None) == (pattern.fullmatch(shape) is None)


def test_remembered_shapes_are_bounded_and_decide_alike(monkeypatch):
    monkeypatch.setattr(rowcode, "_SHAPES", 4)
    dec = new_decoder(ONLY_UPDATED)
    base = {column: values[-1] for column, values in GOOD.items()}
    values = [_message(dict(base, i=str(-(10**n)), d=f"{10**n}.25"), [{"d": f"-{n}.50", "u": str(10**n)}])
              for n in range(12)]
    outcome(dec, values[0])
    for value in values + [_message(dict(base, i="2147483648"), None, "INSERT"),
                           _message(base, [{"u": "18446744073709551616"}])] + values:
        assert repr(outcome(dec, value)) == repr(reference(ONLY_UPDATED, value))
        reader = dec._fast._last.event.__globals__
        assert all(len(reader[name]) <= 4 for name in reader if name.startswith("SHAPES"))
    # Rows of known shapes take the fast path; those past a column's range do not.
    assert dec._fast.decode(values[3]) is not None and dec._fast.decode(values[5]) is not None
    assert dec._fast.decode(values[11]) is None  # -10**11 is past INT too
    assert dec._fast.decode(_message(dict(base, i="2147483648"), None, "INSERT")) is None
