"""The geometry of the HTML report's plot: rows differing at every checkpoint over commit ts, one
line per case, one chart per scenario and seed (the cases of one stream share their commit ts).

No plotting library draws it: the report is one static file that opens anywhere without network or
dependencies, so this module computes the coordinates and the template writes the SVG elements.
A commit ts is a TSO (physical milliseconds << 18 | logical); the x axis is the physical time since
the chart's first checkpoint, in seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ticdc_conformance.runner import EncodingResult

WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 40  # margins: room for the axis labels
# Distinct on white and for the common colour-vision deficiencies (Okabe-Ito).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
LOGICAL_BITS = 18


def physical_ms(ts: int) -> int:
    return ts >> LOGICAL_BITS


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    ts: int
    rows: int


@dataclass
class Series:
    case: str
    colour: str
    points: list[Point] = field(default_factory=list)

    width: float = 2.0  # stroke width: earlier series are drawn wider, so coinciding lines stay visible
    dash: str = ""  # stroke-dasharray, "" for a solid line

    @property
    def path(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def peak(self) -> int:
        return max((p.rows for p in self.points), default=0)


@dataclass
class Chart:
    title: str
    series: list[Series]
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    right: int = WIDTH - RIGHT


def nice_step(span: float, ticks: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten that cuts `span` into about `ticks` parts."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = _power(raw)
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _power(x: float) -> float:
    """The largest power of ten not above x (x > 0)."""
    p = 1.0
    while p * 10 <= x:
        p *= 10
    while p > x:
        p /= 10
    return p


def _ticks(top: float, step: float) -> list[float]:
    n = int(top / step + 1e-9)
    return [i * step for i in range(n + 1)]


def _label(v: float) -> str:
    return f"{v:g}"


def chart(title: str, cases: Sequence[tuple[str, list[tuple[int, int]]]]) -> Chart:
    """A chart of (case id, [(checkpoint ts, rows differing)]) series."""
    start = min(physical_ms(ts) for _, points in cases for ts, _ in points)
    end = max(physical_ms(ts) for _, points in cases for ts, _ in points)
    peak = max(rows for _, points in cases for _, rows in points)
    x_step = nice_step((end - start) / 1000 or 1.0)
    x_top = max(x_step, -(-((end - start) / 1000) // x_step) * x_step)
    y_step = max(1.0, nice_step(peak or 1))
    y_top = max(y_step, -(-peak // y_step) * y_step)
    c = Chart(title, [], [], [])

    def x(ts: int) -> float:
        return c.left + (physical_ms(ts) - start) / 1000 / x_top * (c.right - c.left)

    def y(rows: float) -> float:
        return c.bottom - rows / y_top * (c.bottom - c.top)

    c.x_ticks = [(c.left + v / x_top * (c.right - c.left), _label(v)) for v in _ticks(x_top, x_step)]
    c.y_ticks = [(y(v), _label(v)) for v in _ticks(y_top, y_step)]
    for i, (case, points) in enumerate(cases):
        # Cases of one stream often diverge alike; the later lines are drawn thinner over the earlier
        # ones (and dashed beyond the palette) so every case stays visible where they coincide.
        c.series.append(Series(case, COLOURS[i % len(COLOURS)], [Point(x(ts), y(rows), ts, rows) for ts, rows in points],
                               width=2.0 + 2.5 * (len(cases) - 1 - i),
                               dash="" if i < len(COLOURS) else "6 3"))
    return c


def divergence_charts(results: Sequence[EncodingResult]) -> list[Chart]:
    """One chart per scenario and seed, of the cases whose tables were compared at checkpoints."""
    groups: dict[tuple[str, int], list[tuple[str, list[tuple[int, int]]]]] = {}
    for r in results:
        c = r.checkpoints
        if c is not None and c.checked and c.divergence:
            groups.setdefault((r.scenario, r.seed), []).append((r.case_id, [tuple(p) for p in c.divergence]))
    return [chart(f"scenario {scenario}, seed {seed}", cases) for (scenario, seed), cases in groups.items()]
