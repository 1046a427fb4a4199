"""Folding a session's journal into the output folder: applied.ndjson keeps the checkpoints a tables
answer was asked for, states/ runs each row version from the answer that first held it to the first
that no longer did, final/ is the last answer, and a crash cuts the journal back to the last commit."""
import orjson

from ticdc_conformance.consumers.adapters.session_fold import Journal, fold


def _journal(tmp_path, lines):
    journal = Journal(tmp_path / "journal.ndjson")
    for line in lines:
        journal.add(orjson.dumps(line))
    return journal


def _row(table, row):
    return {"type": "row", "schema": "s", "table": table, "row": row}


def _tables(w, n=1):
    return {"type": "tables", "id": n, "checkpoint": w}


def _read(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_states_run_from_the_answer_that_first_held_a_row_to_the_first_that_did_not(tmp_path):
    txn = {"type": "txn", "commit_ts": 5, "rows": [{"schema": "s", "table": "t", "op": "insert", "before": None,
                                                    "after": {"id": 1}}]}
    journal = _journal(tmp_path, [
        txn, {"type": "checkpoint", "ts": 10}, {"type": "checkpoint", "ts": 12},  # 10: no tables asked
        _row("t", {"id": 1, "v": "a"}), _row("t", {"id": 2, "v": "b"}), _row("k", {"x": 1}), _row("k", {"x": 1}),
        _tables(12),
        {"type": "checkpoint", "ts": 20},
        _row("t", {"v": "a", "id": 1}), _row("t", {"id": 2, "v": "c"}), _row("k", {"x": 1}), _row("e", None),
        _tables(20),
        _row("t", {"id": 1, "v": "a"}), _row("t", {"id": 2, "v": "c"}), _row("t", {"id": 3, "v": "late"}),
        _row("k", {"x": 1}), _row("e", None),
        _tables(20),  # the answer at the end, at no new checkpoint: final/ only
    ])
    out = tmp_path / "out"
    figures = fold(journal, out)
    applied = _read(out / "applied.ndjson")
    assert [e["kind"] for e in applied] == ["txn", "checkpoint", "checkpoint"]
    assert [e["ts"] for e in applied if e["kind"] == "checkpoint"] == [12, 20]
    assert applied[0]["rows"][0]["after"] == {"id": 1}
    assert (figures.checkpoints_kept, figures.checkpoints_left_out, figures.tables_answers) == (2, 1, 3)
    t = sorted((s["from"], s["to"] or 0, s["row"]["id"], s["row"]["v"]) for s in _read(out / "states" / "s.t.ndjson"))
    assert t == [(12, 0, 1, "a"), (12, 20, 2, "b"), (20, 0, 2, "c")]  # key order does not make a new version
    k = sorted((s["from"], s["to"] or 0) for s in _read(out / "states" / "s.k.ndjson"))
    assert k == [(12, 0), (12, 20)]  # one of two identical rows of a key-less table went at 20
    assert sorted(r["id"] for r in _read(out / "final" / "s.t.ndjson")) == [1, 2, 3]
    assert _read(out / "final" / "s.k.ndjson") == [{"x": 1}]
    assert (out / "final" / "s.e.ndjson").read_bytes() == b""  # an existing empty table


def test_a_crash_cuts_the_journal_back_to_the_last_commit(tmp_path):
    journal = _journal(tmp_path, [{"type": "checkpoint", "ts": 1}])
    journal.mark()
    journal.add(b'{"type":"checkpoint","ts":2}')
    journal.add(b'{"type":"checkpoint","ts":3}')
    journal.cut()
    journal.add(b'{"type":"checkpoint","ts":4}')
    assert [line["ts"] for line in journal.lines()] == [1, 4]
    assert journal.discarded == 2
