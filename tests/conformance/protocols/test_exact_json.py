"""JSON a consumer writes, read with every digit of its numbers (protocols/common/exact_json.py)."""
import pickle
from decimal import Decimal

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.protocols.common.exact_json import ExactNumber, NotJSON, dumps, integer_of, loads, value_of


def test_a_number_a_float64_holds_is_that_float():
    row = loads(b'{"a": 1.5, "b": 0.1, "c": 1e2, "d": -0.0, "e": 15845.779245, "f": 5}')
    assert row == {"a": 1.5, "b": 0.1, "c": 100.0, "d": -0.0, "e": 15845.779245, "f": 5}
    assert [type(v) for v in row.values()] == [float] * 5 + [int]


def test_a_number_with_more_digits_keeps_them():
    row = loads(b'{"amount": 3046274941999.9964, "max": 99999999999999.999999, "tiny": 1e-400, "huge": 1e400}')
    assert all(type(v) is ExactNumber for v in row.values())
    assert [v.text for v in row.values()] == ["3046274941999.9964", "99999999999999.999999", "1e-400", "1e400"]
    # orjson reads the first two as other numbers: the loss this module is for.
    assert orjson.loads(b"3046274941999.9964") != Decimal("3046274941999.9964")
    assert float(row["amount"]) == 3046274941999.9964  # the nearest float64, for readers that want one
    assert repr(row["max"]) == str(row["max"]) == "99999999999999.999999"


def test_integers_of_any_length_are_exact():
    row = loads(b'[123456789012345678901234567890, 18446744073709551615, -9223372036854775809]')
    assert row == [123456789012345678901234567890, 2**64 - 1, -(2**63) - 1]
    assert all(type(v) is int for v in row)


def test_dumps_writes_every_digit_it_read():
    text = (b'{"a":3046274941999.9964,"b":123456789012345678901234567890,"c":[1e400,18446744073709551616],'
            b'"d":1.5,"e":"x"}')
    assert dumps(loads(text)) == text
    assert dumps({"d": Decimal("1.50"), "e": Decimal("-0E-6"), "f": Decimal("1E+2")}) == \
        b'{"d":1.50,"e":-0.000000,"f":1E+2}'
    assert dumps({"b": 1, "a": ExactNumber("0.10000000000000000001")}, orjson.OPT_SORT_KEYS) == \
        b'{"a":0.10000000000000000001,"b":1}'


def test_what_is_not_json_is_named():
    with pytest.raises(NotJSON, match="NaN is no JSON value"):
        loads(b'{"ts": NaN}')
    with pytest.raises(NotJSON, match="Infinity is no JSON value"):
        loads(b'[-Infinity]')
    with pytest.raises(NotJSON, match="truncated"):
        loads(b'{"a": 1')
    with pytest.raises(NotJSON, match="malformed"):
        loads(b'{"a": 1}}')
    with pytest.raises(NotJSON):
        loads(b'\xff')
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": object()})
    with pytest.raises(TypeError):
        dumps({"a": Decimal("NaN")})


def test_an_exact_number_survives_pickle_and_copies():
    n = ExactNumber("3046274941999.9964")
    back = pickle.loads(pickle.dumps(n))
    assert type(back) is ExactNumber and back.text == n.text and float(back) == float(n)


@settings(max_examples=300, deadline=None)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=None),
       st.sampled_from(["{}", "{:f}", "{:e}", "{:E}"]))
def test_every_number_reads_back_with_its_value(value, spelling):
    text = spelling.format(value)
    if "e" not in text.lower() and "." not in text:
        text += ".0"  # a fraction: an integer literal is an int, which test_integers covers
    read = loads(f'[{text}]'.encode())[0]
    exact = Decimal(read.text) if type(read) is ExactNumber else Decimal(repr(read))
    assert exact == Decimal(text)
    assert Decimal(loads(dumps([read]))[0].text if type(read) is ExactNumber else repr(read)) == Decimal(text)
    assert value_of(read) == Decimal(text)  # the one reading every check uses


@pytest.mark.parametrize("text,integer", [
    ("5", 5), ("5.0", 5), ("5e0", 5), ("9007199254740994.0", 9007199254740994),
    ("9007199254740993.0", 9007199254740993), ("18446744073709551615", 2**64 - 1),
    ("1e21", 10**21), ("1e400", None), ("5.5", None), ("1.0000000000000000001", None), ("true", None),
    ('"5"', None),
])
def test_the_integer_a_number_is(text, integer):
    assert integer_of(loads(text.encode())) == integer


def test_no_value_for_what_is_no_finite_number():
    assert value_of(True) is None and value_of("1") is None and value_of(float("nan")) is None
    assert value_of(loads(b"1e999")) == Decimal("1e999")  # beyond float64, still its value
