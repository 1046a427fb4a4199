"""The simulator's public observation hook (`SinkSimulator(observer=...)`): it sees every event
sent with the records that carry it, in send order, and changes nothing of what is sent."""
from __future__ import annotations

import pytest

from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import Sent, SinkSimulator
from ticdc_generators.sink.events import DDLEvent, RowEvent, WatermarkEvent


def _run(encoding: str, observer=None, **overrides):
    config = config_for("smoke", encoding, **overrides)
    history = get_scenario("smoke").history(1, 60, config.time_zone)
    return list(SinkSimulator(config, seed=1, observer=observer).run(history))


@pytest.mark.parametrize("encoding, overrides", [
    ("canal-json", {}), ("simple-json", {}), ("open-protocol", {}), ("debezium", {"failovers": 2})])
def test_the_observer_sees_every_event_in_send_order_and_changes_no_record(encoding, overrides):
    seen: list[Sent] = []
    records = _run(encoding, seen.append, **overrides)
    assert records == _run(encoding, **overrides)
    observed = [r for sent in seen for r in sent.records]
    positions = [records.index(r) for r in observed]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert all((r.topic, r.partition) == (sent.topic, sent.partition) for sent in seen for r in sent.records)
    kinds = {type(sent.event) for sent in seen}
    assert {RowEvent, DDLEvent, WatermarkEvent} <= kinds


def test_a_row_event_comes_with_the_upstream_change_it_was_made_from():
    seen: list[Sent] = []
    _run("canal-json", seen.append)
    rows = [sent for sent in seen if isinstance(sent.event, RowEvent)]
    assert rows and all(sent.upstream_change is not None for sent in rows)
    assert all(sent.upstream_change.op == sent.event.change.op for sent in rows)
    assert all(sent.upstream_change is None for sent in seen if not isinstance(sent.event, RowEvent))
