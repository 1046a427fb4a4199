"""The projected truth's transaction path against the plain one.

projected_truth.py `_apply_txn` does the interpreter's steps in line, counts the row events as the
images go and come, and keeps what it looks up per table until a DDL or a new note of changed
images. Here it is held against the same transactions applied change by change through `_drop` and
`_add`, with the row events counted afterwards from the entries (`key_of`), over histories with
every kind of DDL, renames and key moves, with the note of changed images started afresh every few
events as the checkpoint check does: the counts, the changed images, the rows and the row events
are the same after every event.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from ticdc_conformance.checks.key_updates import moves_handle_key
from ticdc_conformance.checks.projected_truth import ProjectedTruth
from ticdc_contract.model import Op, Transaction
from ticdc_generators.scenarios import get_scenario


class _ChangeByChange(ProjectedTruth):
    def _apply_txn(self, txn: Transaction) -> None:
        self.check_tables(txn)
        names = [(ch.table.schema, ch.table.table) for ch in txn.changes]
        olds, news = [], []
        for ch, name in zip(txn.changes, names):
            old = None
            if ch.before is not None:
                key = self.schemas[name].row_key(ch.before)
                self.rows[name].pop(key, None)
                old = self._drop(name, key)
            olds.append(old)
        for ch, name in zip(txn.changes, names):
            new = None
            if ch.after is not None:
                key = self.schemas[name].row_key(ch.after)
                self._drop(name, key)
                row = self.rows[name][key] = dict(ch.after)
                new = self._add(name, key, row)
            news.append(new)
        raw = bool(self.options.get("output-raw-change-event"))
        expected: Counter = Counter()
        for ch, name, old, new in zip(txn.changes, names, olds, news):
            if ch.op is Op.DELETE:
                entries: tuple = (old,)
            elif ch.op is Op.UPDATE and not raw and moves_handle_key(ch):
                entries = (old, new)
            else:
                entries = (new,)
            for entry in entries:
                expected[(name, self.key_of(name, {} if entry is None else entry[1]))] += 1
        self.expected = dict(expected)


def _changed(truth: ProjectedTruth) -> dict:
    return {name: images for name, images in truth.dirty.items() if images}


def _rows(truth: ProjectedTruth) -> dict:
    return {name: {key: (row, proj, image) for key, (row, proj, image) in rows.items()}
            for name, rows in truth.proj.items() if rows}


@pytest.mark.parametrize("scenario", ["ddl-evolution", "keys", "multi-table"])
@pytest.mark.parametrize("protocol,options", [("canal-json", {}), ("canal-json", {"output-raw-change-event": True}),
                                              ("debezium", {})])
def test_the_transaction_path_is_the_change_by_change_one(scenario, protocol, options) -> None:
    history = list(get_scenario(scenario).history(1, None, "UTC"))
    fast, plain = ProjectedTruth(protocol, options, {}), _ChangeByChange(protocol, options, {})
    txns = 0
    for n, event in enumerate(history):
        fast.apply(event)
        plain.apply(event)
        if isinstance(event, Transaction):
            txns += 1
            assert fast.expected == plain.expected, n
        if n % 5 == 4:  # a checkpoint: both sides compared, the note of changed images started afresh
            assert _changed(fast) == _changed(plain), n
            assert fast.counts == plain.counts and _rows(fast) == _rows(plain) and fast.rows == plain.rows, n
            fast.dirty, plain.dirty = defaultdict(set), defaultdict(set)
    assert txns > 20 and _rows(fast) == _rows(plain)
