"""JSON a consumer writes, read and written with every digit of its numbers.

JSON numbers have no fixed precision, and a consumer may print a DECIMAL as a number with all its
digits (Jackson prints a BigDecimal so, Go a json.Number, Python's json a Decimal through a hook).
orjson reads every number with a fraction or an exponent, and every integer beyond 64 bits, as a
float64: 3046274941999.9964 becomes 3046274941999.9966, and the check would have judged the
consumer's right value a wrong one. Here:
- a number a float64 holds exactly (its shortest print has the value of the text) is that float,
  as before, and an integer is an int, however long;
- any other number is an `ExactNumber`: a float64 (the nearest one, for every reader that wants a
  float) that keeps the text it was written as, for the readers that want its digits
  (checks/value_forms.py: a DECIMAL's value, an integer written with a fraction);
- `dumps` writes an ExactNumber as its text, a Decimal as its digits and an integer beyond 64 bits
  whole, where orjson alone refuses all three.

msgspec reads the JSON: it hands the text of every non-integer number to a hook and reads integers
of any length exactly, at orjson's speed; the hook is called only for numbers with a fraction or
an exponent, so a consumer that prints its values as strings pays nothing for it.
"""
from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Optional

import msgspec
import orjson

_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1  # the integers orjson writes itself
_HELD_DIGITS = 15  # a decimal text of at most this many characters, without exponent, is what its float64 prints


class ExactNumber(float):
    """A JSON number a float64 does not hold exactly: the nearest float64, and the number's text."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> "ExactNumber":
        number = super().__new__(cls, float(text))
        number.text = text
        return number

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return ExactNumber, (self.text,)


def value_of(number: Any) -> Optional[Decimal]:
    """The exact value of a JSON number as read here: an integer's, an ExactNumber's text, a plain
    float's shortest print (the digits its writer printed, which are its value); None for what is no
    finite number (a boolean included)."""
    if type(number) is int:
        return Decimal(number)
    if type(number) is ExactNumber:
        exact = Decimal(number.text)
        return exact if exact.is_finite() else None
    if type(number) is float and math.isfinite(number):
        return Decimal(repr(number))
    return None


def integer_of(number: Any) -> Optional[int]:
    """The integer a JSON number as read here is, whatever its spelling (5, 5.0, 5e0,
    9007199254740993.0 with every digit kept); None for any other value. Beyond 10^20 none: no
    integer a database column holds is that large, and 1e999999999 would be a billion digits."""
    if type(number) is int:
        return number
    if type(number) is float:
        return int(number) if number.is_integer() else None
    if type(number) is ExactNumber:
        exact = Decimal(number.text)
        whole = exact.is_finite() and exact.adjusted() <= 20 and exact == exact.to_integral_value()
        return int(exact) if whole else None
    return None


class NotJSON(ValueError):
    """Bytes that are not one JSON text; the message says where."""


def _number(text: str) -> float:
    """msgspec's hook for a number with a fraction or an exponent."""
    value = float(text)
    if len(text) <= _HELD_DIGITS and "e" not in text and "E" not in text:
        return value  # at most 15 significant digits: the float64's shortest print is this value
    if math.isfinite(value) and Decimal(repr(value)) == Decimal(text):
        return value
    return ExactNumber(text)


_DECODER = msgspec.json.Decoder(float_hook=_number)


def loads(data: bytes | str) -> Any:
    """One JSON text, numbers as the module docstring says; NotJSON if it is not one."""
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as e:
        raise NotJSON(_named_constant(data) or str(e)) from None


def _named_constant(data: bytes | str) -> Optional[str]:
    """What JavaScript and several JSON writers print for a double JSON has no text for (NaN,
    Infinity), named, where the text is JSON but for it; else None."""
    def refuse(name: str) -> Any:
        raise NotJSON(f"{name} is no JSON value (JSON has no text for NaN or the infinities)")

    try:
        json.loads(data, parse_constant=refuse)
    except NotJSON as e:
        return str(e)
    except (ValueError, UnicodeDecodeError):
        pass
    return None


def _digits(value: Any) -> Any:
    """orjson's `default`: the numbers it does not write itself."""
    if type(value) is ExactNumber:
        return orjson.Fragment(value.text)
    if isinstance(value, Decimal) and value.is_finite():
        return orjson.Fragment(str(value))
    raise TypeError(f"{type(value).__name__} {value!r} is not a JSON value")


def _whole(value: Any) -> Any:
    """`value` with every integer beyond 64 bits as its digits (orjson refuses them, and calls no
    `default` for them)."""
    if type(value) is int and not _INT64_MIN <= value <= _UINT64_MAX:
        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole(v) for v in value]
    return value


def dumps(value: Any, option: int = 0) -> bytes:
    """orjson's JSON of `value` (`option`: orjson's options), with ExactNumber, Decimal and
    integers beyond 64 bits written with all their digits; a TypeError for what is not JSON."""
    try:
        return orjson.dumps(value, default=_digits, option=option)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, the rare case: written again without
        return orjson.dumps(_whole(value), default=_digits, option=option)
