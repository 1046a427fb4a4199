"""Scenario `large` calls random.Random._randbelow for randint/randrange: the same numbers."""
from __future__ import annotations

import random

from ticdc_generators.scenarios.large import _draws


def test_randbelow_shortcut_gives_randint_and_randrange_numbers():
    ranges = [(1, 8), (0, 3), (-10**13, 10**13), (0, 9999), (0, 10**9), (0, 2**32 - 1), (0, 64), (1, 64)]
    for seed in range(5):
        ref, mine = random.Random(seed), random.Random(seed)
        below, random_ = _draws(mine)
        for i in range(400):
            lo, hi = ranges[i % len(ranges)]
            assert lo + below(hi + 1 - lo) == ref.randint(lo, hi)
            n = 1 + i % 400
            assert below(n) == ref.randrange(n)
            assert random_() == ref.random()
