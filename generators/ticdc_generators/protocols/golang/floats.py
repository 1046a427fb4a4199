"""Go's float printing, which every TiCDC encoder uses for FLOAT and DOUBLE values.

Go's strconv, asked for the shortest form (precision -1), picks the fewest digits that read back as
the same float of the given width (32 or 64 bits) and, among those, the one closest to it. The
encoders differ only in how those digits are laid out:
- `format_float32/64`: strconv.FormatFloat(v, 'f', -1, bits), never an exponent (Canal-JSON and
  Simple values, Debezium column defaults);
- `format_float_g`: fmt's %v of a float64 ('g');
- `json_float32/64`: the JSON number writers, json-iterator's Stream.WriteFloat32/64 and
  encoding/json's floatEncoder, which switch to 'e' below 1e-6 and from 1e21 up.
Python's repr picks the same digits as Go for a float64 but lays them out its own way ("1e+16"
against Go's "10000000000000000") and has no float32 form, hence this module.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ticdc_contract.canonical import to_float32

# (significand bits, exponent of the least subnormal) of each width
_FORMAT = {32: (24, -149), 64: (53, -1074)}


# --- digits ---------------------------------------------------------------------------------

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


def _search_digits(x: float, mant_bits: int, min_exp: int) -> tuple[str, int]:
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


def shortest_digits64(x: float) -> tuple[str, int]:
    """The generic shortest-digits search at double width (cross-checks the repr shortcut)."""
    return _search_digits(x, *_FORMAT[64])


def _shortest(x: float, bits: int) -> tuple[str, int]:
    """Digits and point of |x|, x finite and non-zero, already rounded to `bits`."""
    a = abs(x)
    return _digits_from_repr(a) if bits == 64 else _search_digits(a, *_FORMAT[32])


# --- layouts --------------------------------------------------------------------------------

def _fixed(digits: str, point: int) -> str:
    """%f: digits with the decimal point `point` places from their left (value = 0.digits * 10**point)."""
    n = len(digits)
    if point <= 0:
        return "0." + "0" * (-point) + digits
    if point >= n:
        return digits + "0" * (point - n)
    return digits[:point] + "." + digits[point:]


def _exponent(digits: str, point: int, short: bool = False) -> str:
    """%e: strconv writes at least two exponent digits; `short` drops the zero of "e-0d" as
    encoding/json does (and only of a negative two-digit exponent)."""
    exp = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp_digits = f"{abs(exp):02d}"
    if short and exp < 0 and exp_digits[0] == "0" and len(exp_digits) == 2:
        exp_digits = exp_digits[1]
    return f"{mantissa}e{'-' if exp < 0 else '+'}{exp_digits}"


def _zero_text(x: float) -> str | None:
    """Go prints zeros signed ("-0"), which have no shortest digits to lay out."""
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    return None


# --- strconv and fmt ------------------------------------------------------------------------

def _format_f(x: float, bits: int) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    zero = _zero_text(x)
    if zero is not None:
        return zero
    return ("-" if x < 0 else "") + _fixed(*_shortest(x, bits))


def format_float64(x: float) -> str:
    """strconv.FormatFloat(x, 'f', -1, 64): how TiCDC prints a DOUBLE as text."""
    x = float(x)
    if 1e-4 <= abs(x) < 1e16:
        return _repr_fixed(x)
    return _format_f(x, 64)


def format_float32(x: float) -> str:
    """strconv.FormatFloat(float64(float32(x)), 'f', -1, 32): how TiCDC prints a FLOAT as text."""
    return _format_f(to_float32(float(x)), 32)


def _finite(x: float) -> None:
    if math.isnan(x) or math.isinf(x):
        # TiDB never stores NaN or infinities; Go's JSON writers refuse them as well.
        raise ValueError(f"{x!r} has no JSON form")


def format_float_g(x: float) -> str:
    """Go's fmt %v of a float64 (strconv 'g', shortest): an exponent from 1e6 up or below 1e-4."""
    x = float(x)
    _finite(x)
    zero = _zero_text(x)
    if zero is not None:
        return zero
    digits, point = _shortest(x, 64)
    sign = "-" if x < 0 else ""
    if point - 1 < -4 or point - 1 >= 6:
        return sign + _exponent(digits, point)
    return sign + _fixed(digits, point)


# --- JSON numbers -----------------------------------------------------------------------------

def _json_float(x: float, bits: int, short_exponent: bool) -> str:
    _finite(x)
    zero = _zero_text(x)
    if zero is not None:
        return zero
    digits, point = _shortest(x, bits)
    a = abs(x)
    # Go compares a float32 against the float32 constants, so the cut-offs are rounded too.
    low, high = (to_float32(1e-6), to_float32(1e21)) if bits == 32 else (1e-6, 1e21)
    body = _exponent(digits, point, short_exponent) if a < low or a >= high else _fixed(digits, point)
    return ("-" if x < 0 else "") + body


def json_float64(x: float, short_exponent: bool = False) -> str:
    """A Go float64 as a JSON number: json-iterator's WriteFloat64 ('f', 'e' when |x| < 1e-6 or
    >= 1e21), or with `short_exponent` encoding/json's, which also writes "1e-07" as "1e-7"."""
    x = float(x)
    if 1e-4 <= abs(x) < 1e16:
        return _repr_fixed(x)
    return _json_float(x, 64, short_exponent)


def _repr_fixed(x: float) -> str:
    """The 'f' form of shortest digits for 1e-4 <= |x| < 1e16, where Python's repr already lays
    them out without an exponent: the same text less repr's ".0" of a whole number."""
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


def json_float32(x: float, short_exponent: bool = False) -> str:
    """A Go float32 as a JSON number: json-iterator's WriteFloat32, the 'f'/'e' switch compared in
    float32; `short_exponent` as for json_float64."""
    return _json_float(to_float32(float(x)), 32, short_exponent)
