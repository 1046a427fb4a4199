"""The fuzz budgets, in one place: how long `fuzz` runs per encoding and how big its histories
are, by profile. `ticdc-conformance fuzz --profile NAME` and the CI stage (.ci/stages.py) read
them; `--budget` / `--examples` override the time and the example count.

- `ci`: every change; a short budget per encoding (five encodings in under three minutes);
- `nightly`: a long budget per encoding, longer histories.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Budget:
    seconds: Optional[float] = None  # stop drawing new examples after this long (None: no limit)
    examples: Optional[int] = None  # stop after this many examples (None: no limit)
    max_steps: int = 10  # steps of a drawn history (histories(max_steps=...))
    shrink_seconds: float = 60.0  # at most this long spent shrinking a failure
    # At most this many examples spent shrinking (None: no count): unlike the time, a count shrinks
    # to the same case on a loaded machine as on an idle one.
    shrink_examples: Optional[int] = None

    def __post_init__(self) -> None:
        if self.seconds is None and self.examples is None:
            raise ValueError("a fuzz budget needs a time (--budget) or an example count (--examples)")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError(f"--budget must be positive, got {self.seconds}s")
        if self.examples is not None and self.examples < 1:
            raise ValueError(f"--examples must be at least 1, got {self.examples}")
        if self.shrink_examples is not None and self.shrink_examples < 0:
            raise ValueError(f"--shrink-examples must be at least 0, got {self.shrink_examples}")

    def describe(self) -> str:
        parts = ([f"{self.seconds:g}s"] if self.seconds is not None else []) \
            + ([f"{self.examples} examples"] if self.examples is not None else [])
        return " or ".join(parts) + f", histories of up to {self.max_steps} steps"


PROFILES = {
    "ci": Budget(seconds=25, max_steps=10, shrink_seconds=60),
    "nightly": Budget(seconds=600, max_steps=25, shrink_seconds=300),
}
DEFAULT_PROFILE = "ci"


def parse_duration(text: str) -> float:
    """`90`, `90s`, `10m`, `1h` -> seconds; ValueError naming the text otherwise."""
    units = {"s": 1, "m": 60, "h": 3600}
    t = text.strip().lower()
    scale = units.get(t[-1:], None)
    number = t[:-1] if scale else t
    try:
        value = float(number) * (scale or 1)
    except ValueError:
        raise ValueError(f"--budget {text!r}: expected a duration such as 90s, 10m or 1h") from None
    if value <= 0:
        raise ValueError(f"--budget {text!r}: must be positive")
    return value
