"""Composable value builders, in the style of Hypothesis's strategies.

A `Gen` is one definition with two readings:
- `draw(rng, fakers)`: a realistic value from a seeded `random.Random` (and faker, through `Fakers`),
  deterministic for the rng's state; used to generate named scenarios;
- `strategy()`: a Hypothesis `SearchStrategy` over the same space, shrinking toward simple values;
  used to fuzz.
Builders compose like strategies do (`map`, `filter`, `one_of`, `tuples`, `lists`, `recursive`),
so a type's domain is written once. Where realism needs faker (names, sentences in several
scripts) `realistic(fn, fallback)` pairs a faker-based draw with a shrinkable fallback strategy
over a superset of what `fn` produces.
"""
from __future__ import annotations

import math
import random
from functools import cached_property
from typing import Any, Callable, Optional, Sequence

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .fakers import Fakers

_FILTER_TRIES = 100


class Gen:
    """A value builder with a seeded-draw reading and a Hypothesis reading."""

    def draw(self, rng: random.Random, fk: Fakers) -> Any:
        raise NotImplementedError

    def _strategy(self) -> SearchStrategy:
        raise NotImplementedError

    @cached_property
    def _cached_strategy(self) -> SearchStrategy:
        return self._strategy()

    def strategy(self) -> SearchStrategy:
        return self._cached_strategy

    # --- composition --------------------------------------------------------------
    def map(self, f: Callable[[Any], Any]) -> "Gen":
        return _Mapped(self, f)

    def filter(self, pred: Callable[[Any], bool]) -> "Gen":
        return _Filtered(self, pred)

    def __or__(self, other: "Gen") -> "Gen":
        return one_of(self, other)


class _Mapped(Gen):
    def __init__(self, inner: Gen, f: Callable[[Any], Any]) -> None:
        self.inner, self.f = inner, f

    def draw(self, rng, fk):
        return self.f(self.inner.draw(rng, fk))

    def _strategy(self):
        return self.inner.strategy().map(self.f)


class _Filtered(Gen):
    def __init__(self, inner: Gen, pred: Callable[[Any], bool]) -> None:
        self.inner, self.pred = inner, pred

    def draw(self, rng, fk):
        for _ in range(_FILTER_TRIES):
            v = self.inner.draw(rng, fk)
            if self.pred(v):
                return v
        raise RuntimeError("filter rejected every drawn value")

    def _strategy(self):
        return self.inner.strategy().filter(self.pred)


class _Just(Gen):
    def __init__(self, value: Any) -> None:
        self.value = value

    def draw(self, rng, fk):
        return self.value

    def _strategy(self):
        return st.just(self.value)


def just(value: Any) -> Gen:
    return _Just(value)


class _Sampled(Gen):
    def __init__(self, values: Sequence[Any]) -> None:
        if not values:
            raise ValueError("sampled_from needs at least one value")
        self.values = list(values)

    def draw(self, rng, fk):
        return self.values[rng.randrange(len(self.values))]

    def _strategy(self):
        return st.sampled_from(self.values)


def sampled_from(values: Sequence[Any]) -> Gen:
    """One of `values`; shrinks toward the first."""
    return _Sampled(values)


class _OneOf(Gen):
    def __init__(self, branches: Sequence[tuple[float, Gen]]) -> None:
        self.branches = [(w, g) for w, g in branches if w > 0]
        self.total = sum(w for w, _ in self.branches)

    def draw(self, rng, fk):
        x = rng.random() * self.total
        for w, g in self.branches:
            x -= w
            if x < 0:
                return g.draw(rng, fk)
        return self.branches[-1][1].draw(rng, fk)

    def _strategy(self):
        return st.one_of(*(g.strategy() for _, g in self.branches))


def one_of(*gens: Gen) -> Gen:
    """Any of `gens`, drawn with equal weight; shrinks toward the first."""
    return _OneOf([(1.0, g) for g in gens])


def weighted(*branches: tuple[float, Gen]) -> Gen:
    """`(weight, gen)` pairs: the weights steer draw(); the strategy is one_of in the given order."""
    return _OneOf(branches)


class _Integers(Gen):
    def __init__(self, lo: int, hi: int, typical: Optional[tuple[int, int]], shrink_to: Optional[int]) -> None:
        if lo > hi:
            raise ValueError(f"empty integer range {lo}..{hi}")
        self.lo, self.hi = lo, hi
        self.typical = None
        if typical is not None:
            a, b = max(lo, typical[0]), min(hi, typical[1])
            self.typical = (a, b) if a <= b else None
        self.shrink_to = shrink_to

    def draw(self, rng, fk):
        if self.typical is not None and rng.random() < 0.75:
            return rng.randint(*self.typical)
        return log_uniform_int(rng, self.lo, self.hi)

    def _strategy(self):
        c = self.shrink_to
        if c is None or not self.lo <= c <= self.hi:
            return st.integers(self.lo, self.hi)
        # Offsets from `c` shrink toward 0, so the values shrink toward `c`.
        return st.integers(self.lo - c, self.hi - c).map(lambda k: k + c)


def integers(lo: int, hi: int, *, typical: Optional[tuple[int, int]] = None,
             shrink_to: Optional[int] = None) -> Gen:
    """Integers in [lo, hi]. draw(): uniform in `typical` most of the time, else log-uniform in
    magnitude over the whole range (so both small and huge values turn up); the strategy shrinks
    toward `shrink_to` (default: toward 0)."""
    return _Integers(lo, hi, typical, shrink_to)


def log_uniform_int(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in [lo, hi] whose bit length is uniform: small and huge magnitudes alike."""
    if lo >= 0 or hi <= 0:
        base, span = (lo, hi - lo) if lo >= 0 else (hi, hi - lo)
        bits = rng.randint(0, span.bit_length())
        off = rng.randint(0, min(span, (1 << bits) - 1)) if bits else 0
        return base + off if lo >= 0 else base - off
    # A range around zero: pick a side weighted by its bit length, then its magnitude.
    neg_bits, pos_bits = (-lo).bit_length(), hi.bit_length()
    if rng.random() * (neg_bits + pos_bits) < neg_bits:
        return -log_uniform_int(rng, 0, -lo)
    return log_uniform_int(rng, 0, hi)


class _Floats(Gen):
    def __init__(self, lo: float, hi: float, width: int) -> None:
        self.lo, self.hi, self.width = lo, hi, width

    def draw(self, rng, fk):
        # A log-uniform magnitude between 1e-6 and the bound, then the sign, now and then a
        # "measurement" with few digits.
        hi_mag = max(abs(self.lo), abs(self.hi))
        exp = rng.uniform(-6, math.log10(hi_mag) if hi_mag > 0 else 0)
        mag = 10 ** exp
        if rng.random() < 0.5:
            mag = round(mag, rng.randint(0, 4))
        v = -mag if (self.lo < 0 and rng.random() < 0.3) else mag
        return min(max(v, self.lo), self.hi)

    def _strategy(self):
        return st.floats(min_value=self.lo, max_value=self.hi, allow_nan=False, allow_infinity=False,
                         width=self.width)


def floats(lo: float, hi: float, *, width: int = 64) -> Gen:
    return _Floats(lo, hi, width)


class _Tuples(Gen):
    def __init__(self, gens: Sequence[Gen]) -> None:
        self.gens = list(gens)

    def draw(self, rng, fk):
        return tuple(g.draw(rng, fk) for g in self.gens)

    def _strategy(self):
        return st.tuples(*(g.strategy() for g in self.gens))


def tuples(*gens: Gen) -> Gen:
    return _Tuples(gens)


def _draw_size(rng: random.Random, min_size: int, max_size: int, typical_max: int) -> int:
    """Mostly short (up to typical_max), now and then anywhere up to max_size."""
    top = max(min_size, min(max_size, typical_max))
    if rng.random() < 0.9 or top == max_size:
        return rng.randint(min_size, top)
    return rng.randint(top, max_size)


class _Lists(Gen):
    def __init__(self, elem: Gen, min_size: int, max_size: int, typical_max: int) -> None:
        self.elem, self.min_size, self.max_size, self.typical_max = elem, min_size, max_size, typical_max

    def draw(self, rng, fk):
        n = _draw_size(rng, self.min_size, self.max_size, self.typical_max)
        return [self.elem.draw(rng, fk) for _ in range(n)]

    def _strategy(self):
        return st.lists(self.elem.strategy(), min_size=self.min_size, max_size=self.max_size)


def lists(elem: Gen, *, min_size: int = 0, max_size: int = 8, typical_max: int = 5) -> Gen:
    return _Lists(elem, min_size, max_size, typical_max)


class _Dicts(Gen):
    def __init__(self, keys: Gen, values: Gen, max_size: int) -> None:
        self.keys, self.values, self.max_size = keys, values, max_size

    def draw(self, rng, fk):
        n = _draw_size(rng, 0, self.max_size, self.max_size)
        return {self.keys.draw(rng, fk): self.values.draw(rng, fk) for _ in range(n)}

    def _strategy(self):
        return st.dictionaries(self.keys.strategy(), self.values.strategy(), max_size=self.max_size)


def dictionaries(keys: Gen, values: Gen, *, max_size: int = 6) -> Gen:
    return _Dicts(keys, values, max_size)


class _Text(Gen):
    def __init__(self, alphabet: Gen, min_size: int, max_size: int, typical_max: int) -> None:
        self.alphabet, self.min_size, self.max_size, self.typical_max = alphabet, min_size, max_size, typical_max

    def draw(self, rng, fk):
        n = _draw_size(rng, self.min_size, self.max_size, self.typical_max)
        return "".join(self.alphabet.draw(rng, fk) for _ in range(n))

    def _strategy(self):
        return st.text(self.alphabet.strategy(), min_size=self.min_size, max_size=self.max_size)


def text(alphabet: Gen, *, min_size: int = 0, max_size: int = 32, typical_max: int = 16) -> Gen:
    """Strings of characters drawn from `alphabet` (a Gen of one-character strings)."""
    return _Text(alphabet, min_size, max_size, typical_max)


class _Characters(Gen):
    """Characters from a list of code-point ranges; the strategy uses Hypothesis's own characters()
    when given (it shrinks toward '0'), else samples the ranges."""

    def __init__(self, ranges: Sequence[tuple[int, int]], strategy: Optional[SearchStrategy]) -> None:
        self.ranges = list(ranges)
        self.sizes = [b - a + 1 for a, b in self.ranges]
        self.given = strategy

    def draw(self, rng, fk):
        # Pick a range first (so small scripts are as likely as huge ones), then a code point.
        i = rng.randrange(len(self.ranges))
        return chr(self.ranges[i][0] + rng.randrange(self.sizes[i]))

    def _strategy(self):
        if self.given is not None:
            return self.given
        return st.one_of(*(st.integers(a, b).map(chr) for a, b in self.ranges))


def characters(ranges: Sequence[tuple[int, int]], *, strategy: Optional[SearchStrategy] = None) -> Gen:
    return _Characters(ranges, strategy)


class _Binary(Gen):
    def __init__(self, min_size: int, max_size: int, typical_max: int) -> None:
        self.min_size, self.max_size, self.typical_max = min_size, max_size, typical_max

    def draw(self, rng, fk):
        return rng.randbytes(_draw_size(rng, self.min_size, self.max_size, self.typical_max))

    def _strategy(self):
        return st.binary(min_size=self.min_size, max_size=self.max_size)


def binary(*, min_size: int = 0, max_size: int = 64, typical_max: int = 32) -> Gen:
    return _Binary(min_size, max_size, typical_max)


class _Realistic(Gen):
    def __init__(self, fn: Callable[[random.Random, Fakers], Any], fallback: Gen) -> None:
        self.fn, self.fallback = fn, fallback

    def draw(self, rng, fk):
        return self.fn(rng, fk)

    def _strategy(self):
        return self.fallback.strategy()


def realistic(fn: Callable[[random.Random, Fakers], Any], fallback: Gen) -> Gen:
    """draw() calls `fn(rng, fakers)` (faker-made realism); the strategy is `fallback`'s, which
    must cover everything `fn` can return, shrinkably."""
    return _Realistic(fn, fallback)


class _FromStrategy(Gen):
    """The child placeholder inside `recursive` on the Hypothesis side."""

    def __init__(self, strategy: SearchStrategy) -> None:
        self.given = strategy

    def draw(self, rng, fk):
        raise TypeError("a strategy placeholder cannot be drawn from")

    def _strategy(self):
        return self.given


class _DepthLimited(Gen):
    """The child placeholder inside `recursive` on the draw side: deeper levels favour leaves."""

    def __init__(self, owner: "_Recursive", depth: int) -> None:
        self.owner, self.depth = owner, depth

    def draw(self, rng, fk):
        return self.owner.draw_at(rng, fk, self.depth)

    def _strategy(self):
        return self.owner.strategy()


class _Recursive(Gen):
    def __init__(self, base: Gen, extend: Callable[[Gen], Gen], max_depth: int, max_leaves: int) -> None:
        self.base, self.extend, self.max_depth, self.max_leaves = base, extend, max_depth, max_leaves
        self._levels: dict[int, Gen] = {}

    def draw_at(self, rng, fk, depth: int):
        if depth >= self.max_depth or rng.random() < 0.35 + 0.15 * depth:
            return self.base.draw(rng, fk)
        level = self._levels.get(depth)
        if level is None:
            level = self._levels[depth] = self.extend(_DepthLimited(self, depth + 1))
        return level.draw(rng, fk)

    def draw(self, rng, fk):
        return self.draw_at(rng, fk, 0)

    def _strategy(self):
        return st.recursive(self.base.strategy(), lambda s: self.extend(_FromStrategy(s)).strategy(),
                            max_leaves=self.max_leaves)


def recursive(base: Gen, extend: Callable[[Gen], Gen], *, max_depth: int = 4, max_leaves: int = 24) -> Gen:
    """Trees: leaves from `base`, inner nodes from `extend(child_gen)` (like st.recursive)."""
    return _Recursive(base, extend, max_depth, max_leaves)
