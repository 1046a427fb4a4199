"""Go's JSON number form for FLOAT and DOUBLE column values.

TiCDC writes a FLOAT column's value as a Go float32 and a DOUBLE's as a float64 (TiCDC
pkg/sink/codec/open/codec.go: the default branch writes `Datum.GetValue()`, a float32 for
TypeFloat). Both of its JSON writers (jsoniter in new TiCDC, encoding/json in classic tiflow)
print floats the same way: the shortest digits that read back as the same float of that width,
positional ('f') unless |x| < 1e-6 or |x| >= 1e21, then exponent form ('e') with a negative
two-digit exponent trimmed ("1e-07" becomes "1e-7"). Python's repr differs (e.g. "1e+16"
against Go's "10000000000000000"), hence this module.
"""
from __future__ import annotations

import math
import struct
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext


def to_float32(x: float) -> float:
    """The float32 nearest to x (round half to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# Go compares a float32 against the float32 constants, so the cut-offs are rounded too.
_F32_LOW = to_float32(1e-6)
_F32_HIGH = to_float32(1e21)


def format_float(x: float, bits: int) -> str:
    """x as TiCDC's JSON writers print a Go float of `bits` (32 or 64) bits."""
    if bits not in (32, 64):
        raise ValueError(f"float width must be 32 or 64, not {bits}")
    if math.isnan(x) or math.isinf(x):
        # TiDB never stores NaN or infinities; Go's JSON writers refuse them as well.
        raise ValueError(f"{x!r} has no JSON form")
    if bits == 32:
        x = to_float32(x)
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    a = abs(x)
    digits, point = _shortest32(a) if bits == 32 else _shortest64(a)
    low, high = (_F32_LOW, _F32_HIGH) if bits == 32 else (1e-6, 1e21)
    if a < low or a >= high:
        return sign + _exponent_form(digits, point)
    return sign + _positional_form(digits, point)


def _positional_form(digits: str, point: int) -> str:
    """digits with the decimal point `point` places from their left (value = 0.digits * 10**point)."""
    n = len(digits)
    if point <= 0:
        return "0." + "0" * (-point) + digits
    if point >= n:
        return digits + "0" * (point - n)
    return digits[:point] + "." + digits[point:]


def _exponent_form(digits: str, point: int) -> str:
    exp = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    # strconv prints at least two exponent digits; the JSON writers then drop the zero of
    # "e-0d" (and only of a negative two-digit exponent).
    exp_digits = f"{abs(exp):02d}"
    if exp < 0:
        if len(exp_digits) == 2 and exp_digits[0] == "0":
            exp_digits = exp_digits[1]
        return f"{mantissa}e-{exp_digits}"
    return f"{mantissa}e+{exp_digits}"


def _shortest64(a: float) -> tuple[str, int]:
    # repr() is the shortest round-tripping decimal closest to the value, which is also what
    # strconv.FormatFloat(f, 'f', -1, 64) chooses.
    return _digits_of(Decimal(repr(a)))


def _digits_of(d: Decimal) -> tuple[str, int]:
    _, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    trailing = len(digit_tuple) - len(digits)
    return digits, len(digits) + exp + trailing


def _float32_from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def _shortest32(a: float) -> tuple[str, int]:
    """Shortest decimal that parses back (round half to even) to the positive float32 a.

    Python has no float32 repr, so this searches digit counts 1..9 and checks each candidate
    against a's exact rounding interval; an interval is asymmetric at a power of two, which is
    why both the rounded-down and rounded-up candidates are tried.
    """
    bits = struct.unpack("<I", struct.pack("<f", a))[0]
    with localcontext() as ctx:
        ctx.prec = 400  # exact arithmetic for every float32, subnormals included
        exact = Decimal(a)
        below = Decimal(_float32_from_bits(bits - 1)) if bits > 1 else Decimal(0)
        if bits + 1 < 0x7F800000:
            above = Decimal(_float32_from_bits(bits + 1))
        else:  # the largest float32: values up to half an ulp above still round to it
            above = exact + (exact - below)
        low_mid = (below + exact) / 2
        high_mid = (exact + above) / 2
        inclusive = bits % 2 == 0  # a tie rounds to the even mantissa

        def reads_back(c: Decimal) -> bool:
            if inclusive:
                return low_mid <= c <= high_mid
            return low_mid < c < high_mid

        top = exact.adjusted()
        for ndigits in range(1, 10):
            quantum = Decimal((0, (1,), top - ndigits + 1))
            down = exact.quantize(quantum, rounding=ROUND_FLOOR)
            up = exact.quantize(quantum, rounding=ROUND_CEILING)
            fits = [c for c in dict.fromkeys((down, up)) if c > 0 and reads_back(c)]
            if not fits:
                continue
            if len(fits) == 2:
                dd, du = exact - down, up - exact
                if dd != du:
                    best = down if dd < du else up
                else:  # equidistant: the even last digit, as Go rounds
                    best = down if down.as_tuple().digits[-1] % 2 == 0 else up
            else:
                best = fits[0]
            return _digits_of(best)
    raise AssertionError(f"no shortest form found for float32 {a!r}")
