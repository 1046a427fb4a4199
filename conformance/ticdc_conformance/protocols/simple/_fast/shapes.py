"""Checking the text-form values of a row -- integers, DOUBLE, DECIMAL, DATE, DATETIME, TIME -- with
one dictionary lookup, for the decoder's fast path (_fast/decoder.py).

TiCDC writes these values as text (message.go encodeValue), and the reference path accepts one when
it matches its kind's pattern (values.py: INT_RE within INT_CHARS characters, FLOAT_RE, DECIMAL_RE,
TEMPORAL_RE). Every such pattern treats the ten digits alike, so whether a text matches depends only
on its length, on where its digits are and on its other characters. The fast path writes a row's
text-form values as one JSON array (orjson) and turns every digit into "0": the row's shape. Rows
of one shape are valid or invalid together, so a shape seen valid once is kept, and the rows of a
table repeat few shapes (lengths of numbers, NULLs): most rows are checked by the lookup alone.

Why equal shapes mean equal validity: a valid value holds only characters JSON writes as themselves
(digits, "-", ".", "+", "e", "E", ":", " "), so a valid row's array has no backslash and its quotes
are exactly the strings' ends. A row of the same shape then has no backslash either (the mapping keeps
every non-digit byte), hence its strings and NULLs sit at the same places with the same lengths, and
differ from the valid row's only in which digit stands where.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ticdc_conformance.protocols.common.wire import bounded_put
from ticdc_conformance.protocols.simple.values import DECIMAL_RE, FLOAT_RE, INT_CHARS, INT_RE, TEMPORAL_RE

# Shapes kept per table schema version; the cache starts over when full (common.wire.bounded_put).
SHAPES_PER_TABLE = 512

Check = Callable[[str], Any]  # truthy when the text is a valid value of the column


def _integer(text: str) -> bool:
    return len(text) <= INT_CHARS and INT_RE.match(text) is not None


_CHECKS: dict[str, Check] = {"integer": _integer, "double": FLOAT_RE.match, "decimal": DECIMAL_RE.match}
_CHECKS.update({kind: pattern.match for kind, pattern in TEMPORAL_RE.items()})


def text_check(kind: str) -> Optional[Check]:
    """The check of a column kind whose values travel as checked text, or None."""
    return _CHECKS.get(kind)


def admit(valid: dict[bytes, None], shape: bytes, values: tuple, checks: tuple[Check, ...]) -> bool:
    """Whether a row whose shape is not yet known valid has valid values; if so its shape is kept."""
    for value, check in zip(values, checks):
        if value is not None and not check(value):
            return False
    bounded_put(valid, shape, None, SHAPES_PER_TABLE)
    return True


def admit_value(valid: dict[bytes, None], shape: bytes, value: str, check: Check) -> bool:
    """admit for one value, its shape its bytes with every digit "0" (str.encode: a valid value is
    ASCII, and no byte of a non-ASCII character's UTF-8 is a digit)."""
    if not check(value):
        return False
    bounded_put(valid, shape, None, SHAPES_PER_TABLE)
    return True
