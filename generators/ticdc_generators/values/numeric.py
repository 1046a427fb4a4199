"""Integer, BOOL, FLOAT/DOUBLE, DECIMAL, BIT and YEAR domains."""
from __future__ import annotations

import math
import re
import struct

from ticdc_contract.tidb_types import TiDBType

from . import gen as g
from .domain import Edge, Family

# Where Canal-JSON's sqlType / Java type moves up a size, and the unsigned boundaries that can
# flip a value across int64/uint64 or float64 exactness; each paired with its neighbour.
PROMOTION_EDGES = (
    (127, "TINYINT max / Canal-JSON sqlType threshold"), (128, "just above TINYINT max"),
    (255, "TINYINT UNSIGNED max"), (256, "just above TINYINT UNSIGNED max"),
    (32767, "SMALLINT max / Canal-JSON sqlType threshold"), (32768, "just above SMALLINT max"),
    (65535, "SMALLINT UNSIGNED max"), (65536, "just above SMALLINT UNSIGNED max"),
    (8388607, "MEDIUMINT max"), (8388608, "just above MEDIUMINT max"),
    (16777215, "MEDIUMINT UNSIGNED max"), (16777216, "2**24: float32 exact-integer limit"),
    (2147483647, "INT max / Canal-JSON sqlType threshold"), (2147483648, "just above INT max"),
    (4294967295, "INT UNSIGNED max"), (4294967296, "just above INT UNSIGNED max"),
    (2**53, "2**53: float64 exact-integer limit"), (2**53 + 1, "2**53+1: first integer a double cannot hold"),
    (9223372036854775807, "BIGINT max / Canal-JSON sqlType threshold"),
    (9223372036854775808, "just above BIGINT max: needs uint64"),
    (18446744073709551615, "BIGINT UNSIGNED max"),
    (-1, "-1"), (-128, "TINYINT min"), (-129, "just below TINYINT min"),
    (-32768, "SMALLINT min"), (-32769, "just below SMALLINT min"),
    (-8388608, "MEDIUMINT min"), (-8388609, "just below MEDIUMINT min"),
    (-2147483648, "INT min"), (-2147483649, "just below INT min"),
    (-(2**53) - 1, "-(2**53)-1: beyond float64 exactness"),
    (-9223372036854775808, "BIGINT min"),
)


def _check_int(v, lo: int, hi: int) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"expected int, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{v} outside {lo}..{hi}")


def integer_family(t: TiDBType) -> Family:
    lo, hi = t.int_range
    edges = [Edge(0, "zero"), Edge(1, "one"), Edge(lo, "range minimum"), Edge(hi, "range maximum"),
             Edge(lo + 1, "range minimum + 1"), Edge(hi - 1, "range maximum - 1")]
    edges += [Edge(v, why) for v, why in PROMOTION_EDGES if lo <= v <= hi]
    if t.is_bool:
        gen = g.weighted((0.9, g.integers(0, 1)), (0.1, g.integers(lo, hi)))
        defaults = [0, 1]
    else:
        typical = (0, 10_000) if lo >= 0 else (-1_000, 100_000)
        gen = g.integers(lo, hi, typical=typical)
        defaults = [0, 1, -1, 42, lo, hi]
    return Family(gen, edges, lambda v: _check_int(v, lo, hi), defaults)


# --- FLOAT / DOUBLE ------------------------------------------------------------------------------
F32_MAX = 3.4028234663852886e38
F32_MIN_NORMAL = 1.1754943508222875e-38
F32_MIN_SUBNORMAL = 1.401298464324817e-45
F64_MAX = 1.7976931348623157e308


def f32(x: float) -> float:
    """`x` rounded to the nearest float32, as a Python float (exact)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _float_edges(single: bool) -> list[Edge]:
    if single:
        pairs = [
            (0.0, "zero"), (1.0, "one"), (-1.0, "minus one"), (f32(0.1), "0.1 as float32"),
            (f32(-0.1), "-0.1 as float32"), (0.5, "exact binary fraction"), (f32(math.pi), "pi as float32"),
            (f32(1 / 3), "1/3 as float32"), (16777216.0, "2**24: float32 exact-integer limit"),
            (16777215.0, "2**24-1"), (-16777216.0, "-(2**24)"), (f32(123456.789), "seven digits"),
            (f32(1e-10), "small"), (f32(1e10), "large, few digits"), (f32(1e38), "near the top"),
            (F32_MAX, "float32 max"), (-F32_MAX, "float32 lowest"), (F32_MIN_NORMAL, "smallest normal float32"),
            (F32_MIN_SUBNORMAL, "smallest subnormal float32"), (-F32_MIN_SUBNORMAL, "negative subnormal"),
            (f32(1e15), "1e15 as float32: Go's exponent-notation boundary"),
            (f32(1e21), "1e21 as float32: JavaScript's exponent-notation boundary"),
        ]
    else:
        pairs = [
            (0.0, "zero"), (1.0, "one"), (-1.0, "minus one"), (0.1, "0.1: not a binary fraction"),
            (-0.1, "-0.1"), (0.5, "exact binary fraction"), (1 / 3, "1/3: 17 significant digits"),
            (math.pi, "pi"), (float(2**53), "2**53: exact-integer limit"), (float(-(2**53)), "-(2**53)"),
            (float(2**63), "2**63"), (1e15, "Go's exponent-notation boundary"), (1e16, "1e16"),
            (1e21, "JavaScript's exponent-notation boundary"), (1e-7, "small: exponent notation in JS"),
            (123456789.123456789, "many digits"), (F64_MAX, "float64 max"), (-F64_MAX, "float64 lowest"),
            (2.2250738585072014e-308, "smallest normal float64"), (5e-324, "smallest subnormal float64"),
            (-5e-324, "negative subnormal"), (F32_MAX, "float32 max as a double"),
            (f32(0.1), "0.1 as float32, widened"),
        ]
    return [Edge(v, why) for v, why in pairs]


def _fixed_round(v: float, d: int, single: bool) -> float:
    r = float(round(v, d))  # round(int, 0) stays an int; the column holds a float
    return f32(r) if single else r


def float_family(t: TiDBType) -> Family:
    single = t.base == "float"
    bound = F32_MAX if single else F64_MAX
    lo = 0.0 if t.unsigned else -bound
    fixed = t.decimal is not None and t.decimal >= 0 and t.flen is not None
    if fixed:
        m, d = t.flen, t.decimal
        units = 10 ** m - 1
        if single:  # FLOAT(M,D) with M-D > 38: the float32 range, not the digits, bounds the column
            units = min(units, int(F32_MAX) * 10 ** d)
        top = _fixed_round(units / 10 ** d, d, single)  # as stored: FLOAT's may lie just above
        # FLOAT(M,D)/DOUBLE(M,D): TiDB rounds to D decimals and refuses |v| >= 10**(M-D).
        base = g.integers(0 if t.unsigned else -units, units,
                          typical=(0 if t.unsigned else -10 ** min(m, 6), 10 ** min(m, 6)))
        gen = base.map(lambda k: _fixed_round(k / 10 ** d, d, single))
        edges = [Edge(v, why) for v, why in (
            (0.0, "zero"), (top, "largest (M,D) value"), (-top, "smallest (M,D) value"),
            (_fixed_round(10 ** -d, d, single), "smallest fraction"), (1.0 if m - d >= 1 else 0.0, "one"),
        ) if v >= lo and abs(v) <= top]

        def check(v) -> None:
            _check_float(v, single, lo, bound)
            if abs(v) > top or _fixed_round(v, d, single) != v:
                raise ValueError(f"{v!r} is not a FLOAT/DOUBLE({m},{d}) value")
        return Family(gen, edges, check, [0.0, edges[-1].value])

    def realistic(rng, fk) -> float:
        kind = rng.random()
        if kind < 0.3:
            v = round(rng.uniform(0, 1000), 2)  # prices
        elif kind < 0.6:
            v = round(rng.gauss(20, 15), 3)  # measurements
        else:
            v = rng.choice((1, -1)) * 10 ** rng.uniform(-8, 30)
        v = abs(v) if t.unsigned else v
        v = f32(v) if single else v
        return v + 0.0

    fallback = g.floats(lo, bound, width=32 if single else 64).map(lambda x: x + 0.0)  # no -0.0
    gen = g.weighted((0.7, g.realistic(realistic, fallback)), (0.3, fallback.map(f32) if single else fallback))
    edges = [e for e in _float_edges(single) if e.value >= lo]
    return Family(gen, edges, lambda v: _check_float(v, single, lo, bound), [0.0, 1.5, -1.0, 100.25])


def _check_float(v, single: bool, lo: float, bound: float) -> None:
    if not isinstance(v, float):
        raise ValueError(f"expected float, got {type(v).__name__}")
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"{v!r}: TiDB stores no NaN or infinity")
    if v < lo or v > bound:
        raise ValueError(f"{v!r} outside {lo!r}..{bound!r}")
    if single and f32(v) != v:
        raise ValueError(f"{v!r} is not a float32 value")


# --- DECIMAL ---------------------------------------------------------------------------------------
def format_decimal(unscaled: int, scale: int) -> str:
    """TiDB's print of the DECIMAL whose value is unscaled * 10**-scale: exactly `scale` fraction
    digits, one leading zero at most, '-' only for non-zero negatives."""
    whole, frac = divmod(abs(unscaled), 10 ** scale)
    text = str(whole) + (f".{frac:0{scale}d}" if scale else "")
    return "-" + text if unscaled < 0 else text


def decimal_family(t: TiDBType) -> Family:
    m, d = t.effective_flen, t.scale
    n = 10 ** m - 1
    lo = 0 if t.unsigned else -n
    one = 10 ** d
    int_digits = m - d
    pattern = re.compile(r"(-?)(0|[1-9][0-9]*)" + (rf"\.([0-9]{{{d}}})" if d else ""))
    fmt = lambda k: format_decimal(k, d)  # noqa: E731

    pairs = [(0, "zero"), (n, "maximum"), (-n, "minimum")]
    if d:
        pairs += [(1, "smallest fraction"), (-1, "smallest negative fraction"),
                  (5 * 10 ** (d - 1), "one half"), (-5 * 10 ** (d - 1), "minus one half")]
    if int_digits:
        pairs += [(one, "one"), (-one, "minus one"), ((10 ** int_digits - 1) * one, "largest whole number")]
    for v, why in ((2**53 + 1, "2**53+1: beyond float64 exactness"), (2**63 - 1, "int64 max"),
                   (2**63, "int64 max + 1"), (2**64 - 1, "uint64 max"), (2**64, "uint64 max + 1")):
        if len(str(v)) <= int_digits:
            pairs.append((v * one, why))
    if m >= 17:
        pairs.append((12345678901234567 * 10 ** (m - 17), "17 significant digits"))
    edges = [Edge(fmt(k), why) for k, why in pairs if lo <= k <= n]

    def realistic(rng, fk) -> str:
        digits = rng.randint(0, int_digits) if int_digits else 0
        whole = rng.randint(0, 10 ** digits - 1) if digits else 0
        if d and rng.random() < 0.6:
            cents = rng.randint(0, 99) if d >= 2 else rng.randint(0, 9)
            frac = cents * 10 ** max(d - 2, 0) if d >= 2 else cents
        else:
            frac = rng.randint(0, one - 1) if d else 0
        k = whole * one + frac
        if not t.unsigned and rng.random() < 0.15:
            k = -k
        return fmt(k)

    fallback = g.integers(lo, n).map(fmt)
    gen = g.weighted((0.8, g.realistic(realistic, fallback)), (0.2, fallback))

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        mt = pattern.fullmatch(v)
        if not mt:
            raise ValueError(f"{v!r} is not TiDB's print of a DECIMAL with scale {d}")
        sign, whole = mt.group(1), mt.group(2)
        if whole != "0" and len(whole) > int_digits:
            raise ValueError(f"{v!r} has more than {int_digits} integer digits")
        if int_digits == 0 and whole != "0":
            raise ValueError(f"{v!r}: DECIMAL({m},{d}) has no integer digits")
        if sign and set(v) <= set("-0."):
            raise ValueError(f"{v!r}: TiDB prints zero without a sign")
        if sign and t.unsigned:
            raise ValueError(f"{v!r}: negative in an UNSIGNED column")

    return Family(gen, edges, check, [fmt(0), fmt(one if int_digits else 1), fmt(n), fmt(lo)])


# --- BIT and YEAR ------------------------------------------------------------------------------------
def bit_family(t: TiDBType) -> Family:
    n = t.effective_flen
    top = (1 << n) - 1
    pairs = [(0, "all zeros"), (1, "lowest bit"), (top, "all ones"), (1 << (n - 1), "highest bit"),
             (top >> 1, "all but the highest bit"), (int("01" * 32, 2) & top, "0101... pattern"),
             (int("10" * 32, 2) & top, "1010... pattern")]
    pairs += [(v, why) for v, why in PROMOTION_EDGES if 0 <= v <= top]
    edges = [Edge(v, why) for v, why in pairs]
    return Family(g.integers(0, top), edges, lambda v: _check_int(v, 0, top), [0, 1, top])


YEAR_MIN, YEAR_MAX = 1901, 2155


def year_family(t: TiDBType) -> Family:
    pairs = [(2000, "2000"), (0, "zero year (0000)"), (YEAR_MIN, "minimum"), (YEAR_MAX, "maximum"),
             (1970, "epoch year"), (1999, "1999"), (2038, "2038"), (2069, "two-digit pivot: 69 -> 2069"),
             (2070, "2070"), (2099, "2099"), (2100, "2100")]
    gen = g.weighted((0.98, g.integers(YEAR_MIN, YEAR_MAX, typical=(1970, 2030), shrink_to=2000)), (0.02, g.just(0)))

    def check(v) -> None:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"expected int, got {type(v).__name__}")
        if v != 0 and not YEAR_MIN <= v <= YEAR_MAX:
            raise ValueError(f"YEAR {v} outside {YEAR_MIN}..{YEAR_MAX} (or 0)")

    return Family(gen, [Edge(v, why) for v, why in pairs], check, [2000, YEAR_MIN, YEAR_MAX, 0])
