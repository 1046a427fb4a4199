"""Progress of a fuzz run, in the terms of its examples: the shared progress (ticdc_conformance/
progress.py) of a bar on a terminal, otherwise a plain line at least every 30 seconds (CI logs), so
a long budget never looks hung."""
from __future__ import annotations

from typing import Optional, TextIO

from ticdc_conformance.progress import Progress as _Progress


class Progress(_Progress):
    """`start` an encoding, `tick` after every example, `stop` at its end."""

    def __init__(self, stream: Optional[TextIO] = None, terminal: Optional[bool] = None,
                 every_s: Optional[float] = None) -> None:
        super().__init__("fuzz", stream, terminal, every_s)
        self._seconds: Optional[float] = None

    def start(self, label: str, seconds: Optional[float], examples: Optional[int]) -> None:  # type: ignore[override]
        self._seconds = seconds
        super().start(label, total=seconds if seconds is not None else examples, budget_s=seconds)

    def tick(self, examples: int, failures: int, phase: str, not_applicable: int = 0) -> None:
        status = f"{examples} examples, {failures} failing" + (f", {not_applicable} not applicable"
                                                               if not_applicable else "") + f", {phase}"
        # The bar runs on the time budget when there is one, else on the examples drawn.
        done = min(self.elapsed(), self._seconds) if self._seconds is not None else examples
        self.update(status, completed=done)
