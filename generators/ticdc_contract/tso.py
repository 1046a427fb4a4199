"""TiDB's TSO: a 64-bit timestamp `physical_ms << 18 | logical` handed out by PD."""
from __future__ import annotations

LOGICAL_BITS = 18
LOGICAL_MASK = (1 << LOGICAL_BITS) - 1


def compose(physical_ms: int, logical: int) -> int:
    if not 0 <= logical <= LOGICAL_MASK:
        raise ValueError(f"logical part {logical} outside [0, {LOGICAL_MASK}]")
    return (physical_ms << LOGICAL_BITS) | logical


def physical_ms(ts: int) -> int:
    return ts >> LOGICAL_BITS


def logical(ts: int) -> int:
    return ts & LOGICAL_MASK


class TSOClock:
    """A deterministic PD clock: strictly increasing TSOs whose physical part advances as told.

    Like PD, several TSOs within one millisecond differ only in the logical part.
    """

    def __init__(self, start_physical_ms: int) -> None:
        self._physical = start_physical_ms
        self._logical = 0

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("a TSO clock never moves back")
        if ms:
            self._physical += ms
            self._logical = 0

    def next(self) -> int:
        self._logical += 1
        if self._logical > LOGICAL_MASK:
            self._physical += 1
            self._logical = 1
        return compose(self._physical, self._logical)

    def peek(self) -> int:
        """The largest TSO handed out so far (a safe resolved ts once everything up to it is sent)."""
        return compose(self._physical, self._logical)
