"""JSON bytes exactly as TiCDC's Debezium codec writes them.

TiCDC writes Debezium messages with its own streaming writer over json-iterator v1.1.12
(TiCDC pkg/util/json_writer.go, config EscapeHTML=false). orjson cannot reproduce those bytes:
it escapes \\b and \\f as short escapes where json-iterator writes \\u0008 and \\u000c, and it
prints floats Python's way ("12345.0", "1e+21") where json-iterator uses Go's strconv ("12345",
"1e+21" only from 1e21 up, "1e-07" below 1e-6). So the protocol's bytes come from this small
serializer; everything else in the project keeps using orjson.

Value model (what `dumps` accepts):
- dict (insertion order kept), list, None, bool, int;
- float: a Go float64, printed like json-iterator's WriteFloat64;
- F32: a Go float32, printed like WriteFloat32 (shortest digits that identify the float32);
- B64: bytes written as a base64 string (WriteBase64StringField);
- bytes: a Go string holding arbitrary bytes (e.g. a BINARY column's default value), written
  unvalidated, the way json-iterator writes any Go string;
- str: text, written as its UTF-8 bytes with json-iterator's escapes.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

# json-iterator's WriteString (non-HTML mode) escapes only '"', '\\' and bytes below 0x20;
# \n, \r and \t get short forms, every other control byte a lowercase \u00XX.
_ESCAPES = {i: b"\\u00%02x" % i for i in range(0x20)}
_ESCAPES.update({0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x22: b'\\"', 0x5C: b"\\\\"})
_NEEDS_ESCAPE = re.compile(rb'[\x00-\x1f"\\]')


@dataclass(frozen=True)
class F32:
    """A float32 column value (TiDB stores FLOAT as float32; TiCDC writes it with WriteFloat32)."""

    value: float


@dataclass(frozen=True)
class B64:
    """Bytes TiCDC writes base64-encoded (BINARY/BLOB columns, BIT(n>1))."""

    value: bytes


def go_string(raw: bytes) -> bytes:
    """A Go string as json-iterator writes it: quoted, minimal escapes, bytes otherwise untouched."""
    if _NEEDS_ESCAPE.search(raw) is None:
        return b'"' + raw + b'"'
    return b'"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group()[0]], raw) + b'"'


def _place_digits(negative: bool, digits: str, exp10: int, fmt: str) -> str:
    """Go's %f / %e rendering of shortest `digits` whose value is 0.d1d2... * 10**exp10."""
    sign = "-" if negative else ""
    if fmt == "e":
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        e = exp10 - 1
        return f"{sign}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if exp10 <= 0:
        return f"{sign}0.{'0' * -exp10}{digits}"
    if exp10 >= len(digits):
        return f"{sign}{digits}{'0' * (exp10 - len(digits))}"
    return f"{sign}{digits[:exp10]}.{digits[exp10:]}"


def _digits(f: "np.floating") -> tuple[bool, str, int]:
    """Shortest digits of a non-zero float as (negative, "d1d2...", exp10) with value
    0.d1d2... * 10**exp10. numpy's Dragon4 in unique mode yields the shortest digits that
    identify the value among floats of its width (the closest such), which is what Go's
    strconv.FormatFloat(v, _, -1, 32|64) picks; only the layout is left to do."""
    sci = np.format_float_scientific(f, unique=True, trim="-")
    negative = sci.startswith("-")
    mant, _, exp = sci.lstrip("-").partition("e")
    digits = mant.replace(".", "").rstrip("0") or "0"
    # numpy writes d.ddd, one digit before the point
    return negative, digits, int(exp) + 1


def _check_finite(f: "np.floating", v: float) -> None:
    if not np.isfinite(f):
        raise ValueError(f"TiCDC cannot write {v!r} as JSON")


def go_float64(v: float) -> str:
    """json-iterator WriteFloat64: strconv 'f' format, 'e' when |v| < 1e-6 or >= 1e21."""
    f = np.float64(v)
    _check_finite(f, v)
    if f == 0:
        return "-0" if np.signbit(f) else "0"
    fmt = "e" if abs(f) < 1e-6 or abs(f) >= 1e21 else "f"
    return _place_digits(*_digits(f), fmt)


def go_float32(v: float) -> str:
    """json-iterator WriteFloat32: shortest float32 digits, the 'f'/'e' switch compared in float32."""
    f = np.float32(v)
    _check_finite(f, v)
    if f == 0:
        return "-0" if np.signbit(f) else "0"
    fmt = "e" if abs(f) < np.float32(1e-6) or abs(f) >= np.float32(1e21) else "f"
    return _place_digits(*_digits(f), fmt)


def go_float_text(v: float, bits: int) -> str:
    """strconv.FormatFloat(v, 'f', -1, bits): how TiDB prints a FLOAT/DOUBLE as a string (for
    instance a column's DEFAULT in its column info); never an exponent."""
    f = np.float32(v) if bits == 32 else np.float64(v)
    _check_finite(f, v)
    if f == 0:
        return "-0" if np.signbit(f) else "0"
    return _place_digits(*_digits(f), "f")


def go_float_g(v: float) -> str:
    """Go's fmt %v of a float64 (strconv 'g', shortest): an exponent from 1e6 up or below 1e-4."""
    f = np.float64(v)
    _check_finite(f, v)
    if f == 0:
        return "-0" if np.signbit(f) else "0"
    negative, digits, exp10 = _digits(f)
    fmt = "e" if exp10 - 1 < -4 or exp10 - 1 >= 6 else "f"
    return _place_digits(negative, digits, exp10, fmt)


def _write(v: Any, out: list) -> None:
    if v is None:
        out.append(b"null")
    elif v is True:
        out.append(b"true")
    elif v is False:
        out.append(b"false")
    elif isinstance(v, str):
        out.append(go_string(v.encode("utf-8")))
    elif isinstance(v, int):
        out.append(str(v).encode("ascii"))
    elif isinstance(v, dict):
        out.append(b"{")
        first = True
        for k, x in v.items():
            if not first:
                out.append(b",")
            first = False
            out.append(go_string(k.encode("utf-8")))
            out.append(b":")
            _write(x, out)
        out.append(b"}")
    elif isinstance(v, list):
        out.append(b"[")
        for i, x in enumerate(v):
            if i:
                out.append(b",")
            _write(x, out)
        out.append(b"]")
    elif isinstance(v, float):
        out.append(go_float64(v).encode("ascii"))
    elif isinstance(v, F32):
        out.append(go_float32(v.value).encode("ascii"))
    elif isinstance(v, B64):
        out.append(b'"' + base64.b64encode(v.value) + b'"')
    elif isinstance(v, (bytes, bytearray)):
        out.append(go_string(bytes(v)))
    elif isinstance(v, Raw):
        out.append(v.data)
    else:
        raise TypeError(f"cannot write {type(v).__name__} as Debezium JSON")


@dataclass(frozen=True)
class Raw:
    """Already-serialized JSON, spliced in as is (schemas cached per table)."""

    data: bytes


def dumps(v: Any) -> bytes:
    out: list = []
    _write(v, out)
    return b"".join(out)
