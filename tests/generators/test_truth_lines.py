"""The truth writer's transaction lines (truth.txn_line_bytes) are `dumps_line(history_line(txn))`:
for every scenario's transactions, and for images the fast path must hand to row_to_json (keys in
another order, a column missing, an extra key, a mapping that is not a dict); and the table states
the truth writer and the upstream model apply transactions to."""
from __future__ import annotations

from types import MappingProxyType

import pytest

from ticdc_contract.canonical import dumps_line
from ticdc_contract.model import RowChange, Transaction
from ticdc_contract.state import TableStates
from ticdc_contract.truth import history_line, txn_line_bytes
from ticdc_generators.scenarios import SCENARIOS, get_scenario


def _transactions(name: str):
    events = 2_000 if name == "large" else None
    return [e for e in get_scenario(name).history(1, events=events) if isinstance(e, Transaction)]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_txn_lines_equal_the_history_line_written_out(name):
    txns = _transactions(name)
    assert txns
    for txn in txns:
        assert txn_line_bytes(txn) == dumps_line(history_line(txn)), txn


def _reshaped(image, i: int):
    """An image with the same values in a shape the fast path does not take as it is."""
    if image is None:
        return None
    items = list(image.items())
    if i % 4 == 0:
        return dict(reversed(items))
    if i % 4 == 1:
        return dict(items[1:])  # a column missing: row_to_json writes it as null
    if i % 4 == 2:
        return dict(items + [("not_a_column", b"\x00")])
    return MappingProxyType(dict(items))


@pytest.mark.parametrize("name", ["types", "keys", "large"])
def test_txn_lines_of_images_in_other_shapes(name):
    taken = 0
    for i, txn in enumerate(_transactions(name)):
        changes = tuple(RowChange(ch.table, ch.op, _reshaped(ch.before, i), _reshaped(ch.after, i + 1))
                        for ch in txn.changes)
        reshaped = Transaction(txn.start_ts, txn.commit_ts, changes)
        try:
            expected = dumps_line(history_line(reshaped))
        except (KeyError, ValueError):  # a missing column the table has no default for, or a row ID lost
            continue
        taken += 1
        assert txn_line_bytes(reshaped) == expected, reshaped
    assert taken > 10


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_table_states_without_history_hold_the_rows_the_logged_path_holds(name):
    """TableStates applies transactions in line when it keeps no history: the same rows as the
    path that logs every change."""
    events = 2_000 if name == "large" else None
    plain, logged = TableStates(), TableStates(keep_history=True)
    for event in get_scenario(name).history(1, events=events):
        plain.apply(event)
        logged.apply(event)
        if isinstance(event, Transaction):
            assert plain.rows == logged.rows and plain.schemas == logged.schemas


def test_a_table_states_subclass_with_its_own_put_sees_every_change():
    class Counting(TableStates):
        def __init__(self) -> None:
            super().__init__()
            self.puts = 0

        def _put(self, name, key, row, ts) -> None:
            self.puts += 1
            super()._put(name, key, row, ts)

    states = Counting()
    changes = 0
    for event in get_scenario("large").history(1, events=500):
        states.apply(event)
        if isinstance(event, Transaction):
            changes += sum((ch.before is not None) + (ch.after is not None) for ch in event.changes)
    assert changes and states.puts == changes
