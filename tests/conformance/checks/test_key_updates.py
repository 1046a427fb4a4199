"""The decode side's reading of how a key-changing UPDATE is delivered (checks/key_updates.py)
agrees with the sink simulator's split (generators/ticdc_generators/simulator.py), written
apart on purpose: the checks must not take their expectation from the code they judge."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from ticdc_conformance.checks.key_updates import delivered_changes, moves_handle_key
from ticdc_contract.model import Op, RowChange, Transaction
from ticdc_generators.scenarios import SCENARIOS, get_scenario
from ticdc_generators.simulator import split_if_key_changed
from ticdc_generators.strategies import histories


def _simulated(change: RowChange, raw: bool) -> tuple[RowChange, ...]:
    return tuple(part for part in split_if_key_changed(change, raw) if part is not None)


def _disagreements(changes, raw: bool) -> list[RowChange]:
    return [c for c in changes if delivered_changes(c, raw) != _simulated(c, raw)]


def _changes(history) -> list[RowChange]:
    return [c for event in history if isinstance(event, Transaction) for c in event.changes]


@pytest.mark.parametrize("scenario", sorted(set(SCENARIOS) - {"large"}))
def test_both_sides_deliver_the_same_row_events_for_every_scenario_change(scenario):
    changes = _changes(get_scenario(scenario).history(1, None, "UTC"))
    assert changes
    for raw in (False, True):
        assert _disagreements(changes, raw) == []


def test_the_scenarios_hold_key_moving_updates_so_the_agreement_is_tested_on_them():
    changes = _changes(get_scenario("keys").history(1, None, "UTC"))
    moving = [c for c in changes if moves_handle_key(c)]
    assert moving
    assert all(len(delivered_changes(c, False)) == 2 for c in moving)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(max_steps=8, ddl=False))
def test_both_sides_deliver_the_same_row_events_for_generated_histories(history):
    for raw in (False, True):
        assert _disagreements(_changes(history), raw) == []


def test_a_key_moving_update_is_a_delete_of_the_old_row_and_an_insert_of_the_new_one():
    history = get_scenario("keys").history(1, None, "UTC")
    change = next(c for c in _changes(history) if moves_handle_key(c))
    delete, insert = delivered_changes(change, False)
    assert (delete.op, delete.before, delete.after) == (Op.DELETE, change.before, None)
    assert (insert.op, insert.before, insert.after) == (Op.INSERT, None, change.after)
    assert delivered_changes(change, True) == (change,)
