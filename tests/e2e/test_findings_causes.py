"""Findings lead to causes: the reference consumer's output, broken in one way, is reported under the
rule of that cause, with a message naming what upstream did (the DELETE, the UPDATE, the DDL, its
commit ts) and the record that carried it.

Each case takes the sequential reference consumer (`consume_local`) on a generated stream and
breaks one thing: a row or a column added to its final tables, a table added, or a DDL it does not
apply (TRUNCATE, DROP, RENAME; the ddl-evolution and multi-table scenarios of seed 1 run them); the
keys scenario has a table without a key."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.checks.differential import check_final_state, load_truth_tables
from ticdc_conformance.checks.locate import decoded_events, locate_findings, record_coordinates
from ticdc_conformance.checks.selection import consumer_table, selectors
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer, consume_local
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_contract.canonical import key_order_token
from ticdc_generators.pipeline import config_for, generate

ENCODING = "open-protocol"


def _case(root: Path, scenario: str) -> Path:
    case = root / scenario
    generate(scenario, 1, config_for(scenario, ENCODING), case)
    return case


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("causes")
    out = {}
    for scenario in ("smoke", "ddl-evolution", "multi-table", "keys"):
        case = _case(root, scenario)
        consume_local(case / "records", _manifest(case), case / "reference")
        out[scenario] = case
    return out


def _manifest(case: Path) -> dict:
    return json.loads((case / "manifest.json").read_text())


def _rows(path: Path) -> list[dict]:
    """The JSON lines of a file (split on newlines only: a value may hold U+2028, which splitlines splits on)."""
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def _history(case: Path) -> list[dict]:
    return _rows(case / "truth" / "history.ndjson")


def _copy(case: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(case / "reference", out)
    return out


def _final_findings(case: Path, out: Path) -> list:
    manifest = _manifest(case)
    verdicts = check_final_state(case / "truth", out, manifest["protocol"], manifest["sink"])
    return locate_findings([f for v in verdicts for f in v.findings], case, manifest)


def _checkpoint_findings(case: Path, out: Path) -> list:
    manifest = _manifest(case)
    return locate_findings(check_checkpoints(case / "truth", out, manifest).findings, case, manifest)


def _view(case: Path, table: str):
    return consumer_table(load_truth_tables(case / "truth")[table], selectors(_manifest(case)["sink"]))


def _projected(case: Path, table: str, image: dict) -> dict:
    manifest = _manifest(case)
    return project_truth_row(_view(case, table), image, manifest["protocol"], manifest["sink"])


def _final_keys(case: Path, table: str) -> set[str]:
    view = _view(case, table)
    rows = _rows(case / "truth" / "final" / f"{table}.ndjson")
    return {key_order_token([_projected(case, table, r)[c] for c in view.handle_key]) for r in rows}


def _append(out: Path, table: str, row: dict) -> None:
    with open(out / "final" / f"{table}.ndjson", "a") as f:
        f.write(json.dumps(row) + "\n")


def _last_changes(case: Path) -> dict[tuple[str, str], tuple[int, dict]]:
    """Per (table, key) the last upstream change that touched the key as its old image."""
    last = {}
    for event in _history(case):
        if event["kind"] != "txn":
            continue
        for ch in event["changes"]:
            if ch["before"] is not None:
                view = _view(case, ch["table"])
                key = [_projected(case, ch["table"], ch["before"])[c] for c in view.handle_key]
                last[(ch["table"], key_order_token(key))] = (event["commit_ts"], ch, key)
    return last


def _carries(case: Path, record: str, table: str, commit_ts: int, key: list) -> bool:
    """The record named carries a row event of `table` at `commit_ts` whose old image has `key`."""
    first = record_coordinates(record)[0]
    view = _view(case, table)
    for ev in decoded_events(case, _manifest(case)):
        if ev["kind"] == "row" and f"{ev['topic']}/{ev['partition']}@{ev['offset']}" == first \
                and f"{ev['schema']}.{ev['table']}" == table and ev["commit_ts"] == commit_ts:
            image = ev["before"] or ev["after"]
            if [image.get(c) for c in view.handle_key] == key:
                return True
    return False


# --- rows the consumer keeps ---------------------------------------------------------------------

@pytest.mark.rules("CONSUMER-DELETE-1")
def test_a_kept_deleted_row_is_a_missed_delete_naming_its_commit_ts_and_record(cases, tmp_path):
    case = cases["smoke"]
    last = _last_changes(case)
    (table, token), (ts, ch, key) = next(
        (slot, v) for slot, v in last.items() if v[1]["op"] == "delete" and slot[1] not in _final_keys(case, slot[0]))
    out = _copy(case, tmp_path)
    _append(out, table, _projected(case, table, ch["before"]))
    [f] = _final_findings(case, out)
    assert (f.rule, f.table, f.key, f.commit_ts) == ("CONSUMER-DELETE-1", table, key, ts), f.render()
    assert f.message == f"upstream deleted this row at ts {ts}; the DELETE was not applied"
    assert f.record and _carries(case, f.record, table, ts, key), f.render()
    assert "a lost delete?" not in f.render() and "not named" not in f.render()


@pytest.mark.rules("CONSUMER-UPDATE-1")
def test_an_old_image_left_by_a_key_changing_update_is_named_with_both_keys(cases, tmp_path):
    case = cases["smoke"]
    last = _last_changes(case)
    moved = [(slot, v) for slot, v in last.items() if v[1]["op"] == "update" and v[1]["after"] is not None
             and slot[1] not in _final_keys(case, slot[0])]
    assert moved, "smoke seed 1 has no UPDATE that moves a row to another key"
    (table, token), (ts, ch, key) = moved[0]
    new_key = [_projected(case, table, ch["after"])[c] for c in _view(case, table).handle_key]
    out = _copy(case, tmp_path)
    _append(out, table, _projected(case, table, ch["before"]))
    [f] = _final_findings(case, out)
    assert (f.rule, f.key, f.commit_ts) == ("CONSUMER-UPDATE-1", key, ts), f.render()
    assert f.message == (f"the old image of the UPDATE at ts {ts} that moved the key from "
                         f"{json.dumps(key, separators=(',', ':'), ensure_ascii=False)} to "
                         f"{json.dumps(new_key, separators=(',', ':'), ensure_ascii=False)} was never removed")
    assert f.record and _carries(case, f.record, table, ts, key), f.render()
    assert "CONSUMER-DEDUP-1" not in f.render()


@pytest.mark.rules("CONSUMER-UPDATE-1")
def test_an_old_image_kept_beside_the_new_one_under_the_same_key_is_the_update_not_a_resend(cases, tmp_path):
    case = cases["smoke"]
    table = "smoke.orders"
    keys = _final_keys(case, table)
    last = {}  # per key still there at the end, its last UPDATE that kept the key
    for event in _history(case):
        for ch in event.get("changes", []):
            if ch["table"] == table and ch["before"] is not None and ch["after"] is not None:
                before, after = _projected(case, table, ch["before"]), _projected(case, table, ch["after"])
                if before["id"] == after["id"] and before != after and key_order_token([before["id"]]) in keys:
                    last[before["id"]] = (event["commit_ts"], before)
    assert last, "smoke seed 1 has no UPDATE that keeps its key"
    key, (ts, before) = sorted(last.items())[0]
    out = _copy(case, tmp_path)
    _append(out, table, before)
    [f] = _final_findings(case, out)
    assert (f.rule, f.key, f.commit_ts) == ("CONSUMER-UPDATE-1", [key], ts), f.render()
    assert f.message.startswith(f"the old image of the UPDATE at ts {ts} was never removed (the consumer's "
                                "table holds this key 2 times, with different images)"), f.message


@pytest.mark.rules("CONSUMER-ROW-1")
def test_a_row_under_a_key_upstream_never_wrote_says_so_and_why_it_names_no_record(cases, tmp_path):
    case = cases["smoke"]
    out = _copy(case, tmp_path)
    row = _rows(out / "final" / "smoke.orders.ndjson")[0]
    row["id"] = -999_999_999  # no scenario key is negative in smoke.orders
    _append(out, "smoke.orders", row)
    [f] = _final_findings(case, out)
    assert (f.rule, f.key, f.message) == ("CONSUMER-ROW-1", [-999_999_999], "upstream never had a row under this key")
    assert "commit ts and record not named: upstream never wrote this key" in f.render()


@pytest.mark.rules("CONSUMER-DEDUP-1")
def test_the_same_row_held_twice_is_an_event_applied_twice(cases, tmp_path):
    case = cases["smoke"]
    out = _copy(case, tmp_path)
    row = _rows(out / "final" / "smoke.orders.ndjson")[0]
    _append(out, "smoke.orders", row)
    [f] = _final_findings(case, out)
    assert (f.rule, f.key) == ("CONSUMER-DEDUP-1", [row["id"]])
    assert f.message == "the consumer's table holds this row 2 times under one key: a row event applied more than once"


# --- columns and tables --------------------------------------------------------------------------

@pytest.mark.rules("CONSUMER-COLUMN-1")
def test_an_extra_column_is_one_finding_per_table_and_column_with_the_first_key(cases, tmp_path):
    case = cases["smoke"]
    out = _copy(case, tmp_path)
    path = out / "final" / "smoke.orders.ndjson"
    rows = _rows(path)
    path.write_text("".join(json.dumps(dict(r, bogus=1)) + "\n" for r in rows))
    findings = _final_findings(case, out)
    assert [(f.rule, f.table, f.key) for f in findings] == [("CONSUMER-COLUMN-1", "smoke.orders", [rows[0]["id"]])]
    assert "a column 'bogus' the table does not have" in findings[0].message


@pytest.mark.rules("CONSUMER-TABLE-1")
def test_every_final_file_is_judged_a_table_upstream_never_created_and_a_name_that_is_no_table(cases, tmp_path):
    case = cases["smoke"]
    out = _copy(case, tmp_path)
    (out / "final" / "smoke.ghost.ndjson").write_text('{"id": 1}\n{"id": 2}\n')
    (out / "final" / "ghost.ndjson").write_text("")
    findings = {f.table: f for f in _final_findings(case, out)}
    assert set(findings) == {"smoke.ghost", "final/ghost.ndjson"}
    ghost = findings["smoke.ghost"]
    assert ghost.rule == "CONSUMER-TABLE-1" and "with 2 row(s)" in ghost.message
    assert ghost.message.endswith("upstream never created this table"), ghost.message
    assert "upstream never created this table: no record carries it" in ghost.render()
    assert findings["final/ghost.ndjson"].rule == "CONSUMER-OUTPUT-1"


# --- DDLs the consumer ignores -------------------------------------------------------------------

def _ignoring(prefixes: tuple[str, ...]) -> type:
    class IgnoresDDL(LocalConsumer):
        """Logs the DDL as applied but leaves its tables as they were."""

        def apply_ddl(self, ev):
            if not ev["query"].startswith(prefixes):
                return super().apply_ddl(ev)
            real = self.tables.apply_effect
            self.tables.apply_effect = lambda effect: None
            try:
                super().apply_ddl(ev)
            finally:
                self.tables.apply_effect = real
    return IgnoresDDL


def _ddl(case: Path, prefix: str) -> dict:
    return next(e for e in _history(case) if e["kind"] == "ddl" and e["query"].startswith(prefix))


def _ddl_records(case: Path, ddl: dict) -> list[str]:
    return [f"{ev['topic']}/{ev['partition']}@{ev['offset']}" for ev in decoded_events(case, _manifest(case))
            if ev["kind"] == "ddl" and (ev["commit_ts"], ev["query"]) == (ddl["commit_ts"], ddl["query"])]


@pytest.mark.rules("CONSUMER-DDL-3", "CONSUMER-CHECKPOINT-1")
def test_an_ignored_truncate_is_one_finding_naming_the_ddl_its_ts_record_and_rows(cases, tmp_path):
    case = cases["ddl-evolution"]
    truncate = _ddl(case, "TRUNCATE TABLE")
    out = tmp_path / "out"
    consume_local(case / "records", _manifest(case), out, _ignoring(("TRUNCATE TABLE",)))
    findings = _final_findings(case, out)
    [f] = [f for f in findings if f.rule == "CONSUMER-DDL-3"]
    table = f"{truncate['schema']}.{truncate['table']}"
    assert (f.table, f.commit_ts, f.ddl, f.key) == (table, truncate["commit_ts"], truncate["query"], None)
    assert f"upstream's DDL at ts {truncate['commit_ts']} ({truncate['query']}) truncated them" in f.message
    held = len(_rows(out / "final" / f"{table}.ndjson"))
    kept = held - len(_final_keys(case, table))
    assert f.message.startswith(f"{kept} row(s) still in the consumer's table") and kept > 0, f.message
    assert record_coordinates(f.record)[0] == _ddl_records(case, truncate)[0]
    assert not [g for g in findings if g.rule in ("CONSUMER-ROW-1", "CONSUMER-STATE-1")], [g.render() for g in findings]
    # At the checkpoint after it: the same cause, and what the consumer applied since its tables were right.
    at = [g for g in _checkpoint_findings(case, out) if g.rule == "CONSUMER-CHECKPOINT-1" and g.ddl]
    assert at, "no checkpoint finding names the TRUNCATE"
    g = at[0]
    assert (g.table, g.commit_ts, g.ddl) == (table, truncate["commit_ts"], truncate["query"])
    assert f"at checkpoint {g.checkpoint}: " in g.message and "since checkpoint " in g.message
    since = g.message.split("; since checkpoint ", 1)[1]
    assert "the consumer applied " in since and f"DDL at ts {truncate['commit_ts']} (TRUNCATE TABLE" in since, since


@pytest.mark.rules("CONSUMER-TABLE-1")
def test_an_ignored_drop_leaves_a_table_named_with_the_drop_its_ts_and_record(cases, tmp_path):
    case = cases["ddl-evolution"]
    drop = _ddl(case, "DROP TABLE")
    out = tmp_path / "out"
    consume_local(case / "records", _manifest(case), out, _ignoring(("DROP TABLE", "DROP DATABASE")))
    table = f"{drop['schema']}.{drop['table']}"
    [f] = [f for f in _final_findings(case, out) if f.table == table]
    assert (f.rule, f.commit_ts, f.ddl) == ("CONSUMER-TABLE-1", drop["commit_ts"], drop["query"])
    assert f.message.endswith(f"upstream dropped this table at ts {drop['commit_ts']} ({drop['query']})"), f.message
    assert record_coordinates(f.record)[0] == _ddl_records(case, drop)[0]


@pytest.mark.rules("CONSUMER-TABLE-1")
def test_an_ignored_rename_leaves_the_old_table_named_with_its_new_name_at_the_end_and_at_checkpoints(cases, tmp_path):
    case = cases["multi-table"]
    rename = _ddl(case, "RENAME TABLE")
    out = tmp_path / "out"
    consume_local(case / "records", _manifest(case), out, _ignoring(("RENAME TABLE",)))
    old = rename["query"].split(" TO ")[0].removeprefix("RENAME TABLE ").replace("`", "")
    new = f"{rename['schema']}.{rename['table']}"
    said = f"upstream renamed this table to {new} at ts {rename['commit_ts']} ({rename['query']})"
    [f] = [f for f in _final_findings(case, out) if f.table == old]
    rows = len(_rows(out / "final" / f"{old}.ndjson"))
    assert f.rule == "CONSUMER-TABLE-1" and f"with {rows} row(s)" in f.message and f.message.endswith(said), f.message
    assert (f.commit_ts, f.ddl) == (rename["commit_ts"], rename["query"])
    assert record_coordinates(f.record)[0] == _ddl_records(case, rename)[0]
    at = [g for g in _checkpoint_findings(case, out) if g.rule == "CONSUMER-TABLE-1"]
    [g] = [g for g in at if g.table == old]  # one finding per table, at the first checkpoint past the RENAME
    assert said in g.message and g.checkpoint >= rename["commit_ts"] and "since checkpoint " in g.message, g.message


def test_no_finding_of_the_broken_cases_is_left_without_a_commit_ts_and_record_or_a_reason(cases, tmp_path):
    case = cases["ddl-evolution"]
    out = tmp_path / "out"
    consume_local(case / "records", _manifest(case), out, _ignoring(("TRUNCATE TABLE", "RENAME TABLE")))
    findings = _final_findings(case, out) + _checkpoint_findings(case, out)
    assert Counter(f.rule for f in findings)["CONSUMER-TABLE-1"] >= 1
    for f in findings:
        text = f.render()
        assert "unknown" not in text, text
        assert (f.commit_ts is not None and f.record) or f.unlocated, text


@pytest.mark.rules("CONSUMER-DEDUP-1")
def test_a_row_of_a_table_without_a_key_held_twice_is_located_at_the_change_that_wrote_it(cases, tmp_path):
    case = cases["keys"]
    [table] = [name for name in load_truth_tables(case / "truth")
               if not _view(case, name).handle_key and (case / "truth" / "final" / f"{name}.ndjson").exists()]
    out = _copy(case, tmp_path)
    row = _rows(out / "final" / f"{table}.ndjson")[0]
    _append(out, table, row)
    [f] = _final_findings(case, out)
    assert (f.rule, f.key) == ("CONSUMER-DEDUP-1", None) and "a row event applied more than once" in f.message
    wrote = [e["commit_ts"] for e in _history(case) if e["kind"] == "txn"
             for ch in e["changes"] if ch["table"] == table and ch["after"] is not None
             and _projected(case, table, ch["after"]) == row]
    assert wrote and f.commit_ts == wrote[-1], f.render()
    assert "not told apart from the others of its transaction" in f.render()


def test_a_transaction_applied_out_of_order_names_the_record_of_its_commit_ts(cases, tmp_path):
    case = cases["ddl-evolution"]
    out = _copy(case, tmp_path)
    lines = (out / "applied.ndjson").read_bytes().split(b"\n")
    txns = [i for i, line in enumerate(lines) if b'"kind":"txn"' in line]
    a, b = next((x, y) for x, y in zip(txns, txns[1:]) if y == x + 1)
    lines[a], lines[b] = lines[b], lines[a]
    (out / "applied.ndjson").write_bytes(b"\n".join(lines))
    [order] = [f for f in _checkpoint_findings(case, out) if f.rule == "CONSUMER-ORDER-1"]
    first = record_coordinates(order.record)[0]
    assert any(ev["kind"] == "row" and ev["commit_ts"] == order.commit_ts
               and f"{ev['topic']}/{ev['partition']}@{ev['offset']}" == first
               for ev in decoded_events(case, _manifest(case))), order.render()


@pytest.mark.rules("CONSUMER-COLUMN-1", "CONSUMER-TABLE-1")
def test_at_checkpoints_an_extra_column_and_a_table_upstream_never_created_are_judged(cases, tmp_path):
    case = cases["smoke"]
    out = _copy(case, tmp_path)
    path = out / "states" / "smoke.orders.ndjson"
    lines = _rows(path)
    path.write_text("".join(json.dumps(dict(doc, row=dict(doc["row"], bogus=1))) + "\n" for doc in lines))
    (out / "states" / "smoke.ghost.ndjson").write_text(json.dumps(dict(lines[0], to=None)) + "\n")
    findings = _checkpoint_findings(case, out)
    assert Counter(f.rule for f in findings) == {"CONSUMER-COLUMN-1": 1, "CONSUMER-TABLE-1": 1}, \
        [f.render() for f in findings]
    column = next(f for f in findings if f.rule == "CONSUMER-COLUMN-1")
    assert column.table == "smoke.orders" and "a column 'bogus' the table does not have" in column.message
    ghost = next(f for f in findings if f.rule == "CONSUMER-TABLE-1")
    assert ghost.table == "smoke.ghost" and ghost.checkpoint == lines[0]["from"]
    assert "upstream never created this table" in ghost.message and "with 1 row(s)" in ghost.message
