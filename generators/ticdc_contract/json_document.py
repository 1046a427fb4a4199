"""TiDB's JSON text: how TiDB prints a JSON column value, and what it accepts. The canonical form
of a JSON column's value (ticdc_contract.canonical) is this print: the generators make values in
it, and the checks print a consumer's document in it to compare it with upstream's.

Following TiDB pkg/types/json_binary.go (BinaryJSON.MarshalJSON and CreateBinaryJSON):
- object keys sorted bytewise on their UTF-8 bytes (Go `cmp.Compare` on strings; note MySQL sorts
  by key length first, TiDB does not); duplicate keys keep the last value;
- separators ", " and ": ", no other whitespace;
- strings: '"' and '\\' escaped, \\n \\r \\t \\b \\f, other control characters as \\u00xx
  (lowercase hex), U+2028/U+2029 as \\u2028/\\u2029; everything else raw, including '<', '>', '&',
  DEL and all non-ASCII characters;
- numbers: integers within int64, then within uint64, print as integers; every other number is a
  float64 printed with the shortest round-trip digits, in plain notation with a ".0" added to
  whole numbers when 1e-15 <= |f| < 1e15 (and for zero), otherwise in exponent notation without
  '+' or leading exponent zeros ("1e15", "1.5e-16"); -0.0 prints "-0.0";
- documents nest at most 100 levels; an object key is at most 65535 bytes.
"""
from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

MAX_DEPTH = 100
MAX_KEY_BYTES = 65535
INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def quote_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif o < 0x20:
            out.append(f"\\u00{o:02x}")
        elif o in (0x2028, 0x2029):
            out.append(f"\\u{o:04x}")
        elif 0xD800 <= o <= 0xDFFF:
            raise ValueError("a lone surrogate is not a character TiDB can hold")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def format_float(f: float) -> str:
    """BinaryJSON.marshalFloat64To."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError("JSON has no NaN or infinity")
    a = abs(f)
    sign, digits, exp = Decimal(repr(f)).as_tuple()
    assert isinstance(exp, int)  # a finite float's exponent (NaN and the infinities are refused above)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    # The shortest digits d1 d2 ... dn with value 0.d1...dn * 10**point.
    point = len(digits) + exp
    neg = "-" if math.copysign(1.0, f) < 0 else ""
    if a != 0 and (a < 1e-15 or a >= 1e15):
        e = point - 1
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{e}"  # |e| >= 15 here, so Go's two-digit exponent needs no trimming
    if a == 0:
        return f"{neg}0.0"
    if point <= 0:
        text = "0." + "0" * (-point) + ds
    elif point >= len(ds):
        text = ds + "0" * (point - len(ds)) + ".0"
    else:
        text = ds[:point] + "." + ds[point:]
    return neg + text


def dumps(obj: Any) -> str:
    """The TiDB print of a JSON value given as Python data (None/bool/int/float/str/list/dict)."""
    out: list[str] = []
    _dump(obj, out, 1)
    return "".join(out)


def _dump(obj: Any, out: list[str], depth: int) -> None:
    if depth > MAX_DEPTH + 1:
        raise ValueError(f"JSON document nests deeper than {MAX_DEPTH}")
    if obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        if INT64_MIN <= obj <= UINT64_MAX:
            out.append(str(obj))
        else:
            out.append(format_float(float(obj)))  # TiDB reads such a number as a float64
    elif isinstance(obj, float):
        out.append(format_float(obj))
    elif isinstance(obj, str):
        out.append(quote_string(obj))
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(", ")
            _dump(v, out, depth + 1)
        out.append("]")
    elif isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str):
                raise ValueError(f"JSON object key {k!r} is not a string")
            kb = k.encode("utf-8")
            if len(kb) > MAX_KEY_BYTES:
                raise ValueError("JSON object key longer than 65535 bytes")
            items.append((kb, k, v))
        items.sort(key=lambda x: x[0])
        out.append("{")
        for i, (_, k, v) in enumerate(items):
            if i:
                out.append(", ")
            out.append(quote_string(k))
            out.append(": ")
            _dump(v, out, depth + 1)
        out.append("}")
    else:
        raise ValueError(f"not JSON data: {type(obj).__name__}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_float(s: str) -> float:
    f = float(s)
    if math.isinf(f):
        raise ValueError(f"JSON number {s} out of float64 range")
    return f


def _parse_int(s: str) -> Any:
    n = int(s)
    return n if INT64_MIN <= n <= UINT64_MAX else _parse_float(s)


def loads(text: str) -> Any:
    """JSON text read the way TiDB reads it (numbers typed as TiDB types them)."""
    return json.loads(text, parse_float=_parse_float, parse_int=_parse_int, parse_constant=_reject_constant)


def depth(obj: Any) -> int:
    if isinstance(obj, dict):
        return 1 + max((depth(v) for v in obj.values()), default=0)
    if isinstance(obj, (list, tuple)):
        return 1 + max((depth(v) for v in obj), default=0)
    return 1


def check_text(text: str) -> None:
    """Raises ValueError unless `text` is exactly TiDB's print of a document TiDB accepts."""
    if not isinstance(text, str):
        raise ValueError(f"JSON value must be str, got {type(text).__name__}")
    try:
        obj = loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not a JSON document TiDB accepts: {exc}") from None
    if depth(obj) - 1 > MAX_DEPTH:
        raise ValueError(f"JSON document nests deeper than {MAX_DEPTH}")
    printed = dumps(obj)
    if printed != text:
        raise ValueError(f"not TiDB's print of the document: expected {printed[:80]!r}, got {text[:80]!r}")
