"""The divergence plot's geometry: points inside the frame, axes with round ticks, one chart per stream."""
import pytest

from tests.report.builders import STEP, TS, result
from ticdc_conformance.report.plot import chart, divergence_charts, nice_step


@pytest.mark.parametrize("span,step", [(54, 20), (21.2, 5), (1, 0.2), (0.3, 0.1), (1000, 200), (0, 1)])
def test_ticks_are_one_two_or_five_times_a_power_of_ten(span, step):
    assert nice_step(span) == pytest.approx(step)


@pytest.mark.parametrize("rows", [[0], [0, 0, 0], [5], [0, 3, 54, 54]])
def test_every_point_lies_in_the_frame(rows):
    c = chart("smoke", [("smoke/canal-json", [(TS + i * STEP, n) for i, n in enumerate(rows)])])
    [series] = c.series
    for p in series.points:
        assert c.left <= p.x <= c.right and c.top <= p.y <= c.bottom, p
    assert series.points[0].x == c.left and series.peak == max(rows)
    assert c.y_ticks[0] == (c.bottom, "0") and float(c.y_ticks[-1][1]) >= max(rows)
    assert float(c.x_ticks[-1][1]) >= (len(rows) - 1) * 0.3  # 300 ms between checkpoints


def test_one_chart_per_scenario_and_seed_of_the_cases_that_showed_their_tables():
    results = [result("canal-json", divergence=[0, 2]), result("debezium", divergence=[0, 1]),
               result("open-protocol", error="crashed"), result("simple-json", shows_log=False),
               result("canal-json", scenario="ddl-evolution", divergence=[1])]
    charts = divergence_charts(results)
    assert [(c.title, [s.case for s in c.series]) for c in charts] == [
        ("scenario smoke, seed 1", ["smoke/canal-json", "smoke/debezium"]),
        ("scenario ddl-evolution, seed 1", ["ddl-evolution/canal-json"])]
    first, second = charts[0].series
    assert first.width > second.width  # coinciding lines stay visible: the first is drawn widest
