"""Go's text forms that Canal-JSON messages are made of: JSON string escaping and float printing.

TiCDC writes DML messages with easyjson's `jwriter.Writer` and DDL/WATERMARK messages with
goccy/go-json's `Marshal`; both escape strings the same way, which is not what orjson does
(orjson leaves `<`, `>`, `&` and U+2028/U+2029 alone). Floats are printed by Go's
`strconv.FormatFloat(v, 'f', -1, bits)`: the shortest digits that read back as the same
float of that width, never in exponent form.
"""
from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

# easyjson jwriter.String / goccy appendNormalizedHTMLString: control characters, the quote,
# the backslash, the three HTML-sensitive characters and the two JavaScript line separators
# are escaped; DEL (0x7f) and every other code point go out as raw UTF-8. Surrogates cannot
# be UTF-8 and stand for bytes Go would find invalid.
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\"\\\\<>&\u2028\u2029\ud800-\udfff]")
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _escape(match: re.Match) -> str:
    ch = match.group()
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        # A surrogateescape'd byte: one invalid byte, which Go replaces by one U+FFFD.
        return "\\ufffd"
    if 0xD800 <= code <= 0xDFFF:
        # Any other lone surrogate is three invalid bytes in WTF-8; Go rejects each.
        return "\\ufffd\\ufffd\\ufffd"
    # Go writes the hex digits in lower case ("\u001f", "\u003c").
    return f"\\u{code:04x}"


def quote(s: str) -> str:
    """`s` as a JSON string literal exactly as TiCDC's Go JSON writers produce it."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


# --- floats ---------------------------------------------------------------------------------

_FLOAT32_MANT_BITS, _FLOAT32_MIN_EXP = 24, -149
_FLOAT64_MANT_BITS, _FLOAT64_MIN_EXP = 53, -1074


def to_float32(x: float) -> float:
    """The FLOAT column value TiDB holds: the nearest IEEE single (TiDB rounds on write)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _digits_from_repr(x: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive double, from Python's repr (the same
    shortest-then-closest rule Go's strconv applies for 64-bit floats)."""
    text = repr(x)
    mantissa, _, exponent = text.partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    all_digits = int_part + frac_part
    point = len(int_part) + (int(exponent) if exponent else 0)
    stripped = all_digits.lstrip("0")
    point -= len(all_digits) - len(stripped)
    return stripped.rstrip("0"), point


def shortest_digits(x: float, mant_bits: int, min_exp: int) -> tuple[str, int]:
    """Shortest decimal digits `d` and point position `p` (x == 0.d * 10**p) that read back as
    `x` in a binary format with `mant_bits` significand bits; among equally short candidates the
    one closest to `x` (ties to even), as Go's strconv does. `x` must be positive and finite."""
    frac, exp2 = math.frexp(x)
    mant = int(frac * (1 << mant_bits))
    exp = exp2 - mant_bits
    if exp < min_exp:
        mant >>= min_exp - exp
        exp = min_exp
    value = Fraction(mant) * Fraction(2) ** exp
    half_ulp = Fraction(2) ** (exp - 1)
    upper = value + half_ulp
    # At a power of two (above the subnormal range) the gap below is half the gap above.
    lower = value - half_ulp / 2 if (mant == 1 << (mant_bits - 1) and exp > min_exp) else value - half_ulp
    # Round-half-even reading: a boundary reads back as `x` only when x's significand is even.
    inclusive = mant % 2 == 0
    k = math.floor(math.log10(float(upper))) + 1
    while True:
        scale = Fraction(10) ** k
        lo_n = math.ceil(lower / scale)
        if not inclusive and lo_n * scale == lower:
            lo_n += 1
        hi_n = math.floor(upper / scale)
        if not inclusive and hi_n * scale == upper:
            hi_n -= 1
        if lo_n <= hi_n:
            n = min(max(round(value / scale), lo_n), hi_n)  # round() on a Fraction is half-even
            digits = str(n)
            return digits.rstrip("0"), len(digits) + k
        k -= 1


def _format_fixed(negative: bool, digits: str, point: int) -> str:
    """Go's %f layout of shortest digits: no exponent, no trailing zeros, no bare '.'."""
    if point > 0:
        whole = digits[:point].ljust(point, "0")
    else:
        whole = "0"
    frac_len = max(len(digits) - point, 0)
    out = whole
    if frac_len:
        frac = "".join(digits[i] if 0 <= i < len(digits) else "0" for i in range(point, point + frac_len))
        out += "." + frac
    return ("-" if negative else "") + out


def _format(x: float, bits: int) -> str:
    if math.isnan(x) or math.isinf(x):
        # TiDB cannot store them; Go would print "NaN"/"+Inf", kept for completeness.
        return "NaN" if math.isnan(x) else ("+Inf" if x > 0 else "-Inf")
    negative = math.copysign(1.0, x) < 0
    magnitude = abs(x)
    if magnitude == 0.0:
        return "-0" if negative else "0"
    if bits == 64:
        digits, point = _digits_from_repr(magnitude)
    else:
        digits, point = shortest_digits(magnitude, _FLOAT32_MANT_BITS, _FLOAT32_MIN_EXP)
    return _format_fixed(negative, digits, point)


def format_float64(x: float) -> str:
    """strconv.FormatFloat(x, 'f', -1, 64): how TiCDC prints a DOUBLE."""
    return _format(float(x), 64)


def format_float32(x: float) -> str:
    """strconv.FormatFloat(float64(float32(x)), 'f', -1, 32): how TiCDC prints a FLOAT."""
    return _format(to_float32(float(x)), 32)


def shortest_digits64(x: float) -> tuple[str, int]:
    """The generic shortest-digits search at double width (cross-checks the repr shortcut)."""
    return shortest_digits(x, _FLOAT64_MANT_BITS, _FLOAT64_MIN_EXP)
