"""The checkpoint check end to end: the reference consumer is conformant at every checkpoint, and
deliberately broken consumers are caught with the rule they break."""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from tests.conftest import CLI, ROOT
from tests.helpers import checked_both_ways
from ticdc_conformance.checks.checkpoints import CheckpointCheck, _States, check_checkpoints
from ticdc_conformance.checks.differential import check_final_state, load_truth_tables
from ticdc_conformance.checks.locate import decoded_events, decoded_rows, locate_findings, record_coordinates
from ticdc_conformance.checks.selection import consumer_table, selectors
from ticdc_conformance.runner import run_encoding


def consumer(name: str) -> str:
    return f"{sys.executable} {ROOT / 'tests' / 'consumers' / f'{name}.py'}"


@pytest.mark.parametrize("scenario,encoding", [
    ("ddl-evolution", "open-protocol"), ("ddl-evolution", "canal-json"), ("ddl-evolution", "debezium"),
    ("ddl-evolution", "simple-json"), ("ddl-evolution", "simple-avro"), ("multi-table", "simple-avro"),
    ("replays", "open-protocol"), ("replays", "simple-json"),
])
def test_reference_consumer_is_conformant_at_every_checkpoint(tmp_path, scenario, encoding):
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer="local")
    assert result.conformant, result.render()
    assert result.checkpoints.checked and result.checkpoints.checkpoints >= 10, result.checkpoint_summary
    figures = json.loads((result.case / "consumer" / "consumer.json").read_text())
    if scenario == "replays":  # the restarts were met: regressions tolerated, re-sends dropped
        assert figures["watermark_regressions"] > 0
        assert figures["rows_dropped_below_watermark"] + figures["row_copies_dropped_while_waiting"] > 0


@pytest.mark.parametrize("broken,scenario,encoding,rule", [
    ("applies_ddl_twice", "ddl-evolution", "open-protocol", "CONSUMER-DDL-1"),
    ("reapplies_replays", "replays", "open-protocol", "CONSUMER-DEDUP-1"),
    ("drops_replays", "replays", "canal-json", "CONSUMER-LOSS-1"),
])
def test_broken_consumer_is_caught_with_its_rule(tmp_path, broken, scenario, encoding, rule):
    result = run_encoding(scenario, 1, encoding, tmp_path, consumer=consumer(broken))
    assert result.error is None, result.error
    assert not result.conformant
    rules = Counter(f.rule for f in result.checkpoints.findings)
    assert rules[rule] > 0, result.render()
    text = result.render()
    assert f"[{rule}]" in text and f"replay: ticdc-conformance run --scenario {scenario} --seed 1" in text


def test_reapplied_replays_leave_final_tables_right_but_fail_the_checkpoint_check(tmp_path):
    result = run_encoding("replays", 1, "open-protocol", tmp_path, consumer=consumer("reapplies_replays"))
    assert not [f for t in result.tables for f in t.findings]  # the final state alone cannot tell
    assert {f.rule for f in result.checkpoints.findings} == {"CONSUMER-DEDUP-1"}


def test_a_transaction_applied_twice_is_reported_per_table_with_that_table_key_and_record(tmp_path):
    result = run_encoding("replays", 1, "open-protocol", tmp_path, consumer=consumer("reapplies_replays"))
    case = result.case
    manifest = json.loads((case / "manifest.json").read_text())
    tables = load_truth_tables(case / "truth")
    keys = {name: consumer_table(t, selectors(manifest["sink"])).handle_key for name, t in tables.items()}
    dedup = [f for f in result.checkpoints.findings if f.rule == "CONSUMER-DEDUP-1"]
    # The scenario's transactions span tables: a finding per table, none naming two.
    assert len({f.commit_ts for f in dedup}) < len(dedup), result.render()
    rows = list(decoded_rows(case, manifest))
    for f in dedup:
        assert f.table in tables and f.key is not None and f.record, f.render()
        # The record named carries a row event of that table, with that key, at that commit ts.
        first = record_coordinates(f.record)[0]
        carried = [ev for ev in rows if f"{ev['topic']}/{ev['partition']}@{ev['offset']}" == first
                   and f"{ev['schema']}.{ev['table']}" == f.table and ev["commit_ts"] == f.commit_ts]
        assert any([(ev["after"] or ev["before"])[c] for c in keys[f.table]] == f.key for ev in carried), f.render()


def test_a_ddl_never_applied_names_its_table_and_the_records_that_carried_it(tmp_path, smoke_case):
    out = tmp_path / "consumer"
    shutil.copytree(smoke_case / "consumer", out)
    _drop_a_ddl(out)
    manifest = json.loads((smoke_case / "manifest.json").read_text())
    verdict = check_checkpoints(smoke_case / "truth", out, manifest)
    missed = [f for f in locate_findings(verdict.findings, smoke_case, manifest) if f.rule == "CONSUMER-DDL-1"]
    assert missed and all(f.table == "smoke.orders" and f.ddl for f in missed), [f.render() for f in missed]
    ddls = [ev for ev in decoded_events(smoke_case, manifest) if ev["kind"] == "ddl"]
    for f in missed:
        carried = [f"{ev['topic']}/{ev['partition']}@{ev['offset']}" for ev in ddls
                   if (ev["commit_ts"], ev["query"]) == (f.commit_ts, f.ddl)]
        # Canal-JSON sends a DDL to partition 0 only: one record, no copies.
        assert carried and record_coordinates(f.record) == carried and "copies" not in f.record, f.record


def test_cli_results_table_counts_the_findings_not_listed(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "replays", "--protocol", "canal-json",
                                 "--consumer", consumer("drops_replays"), "--work", str(tmp_path / "w")],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [more] = re.findall(r"; (\d+) more finding\(s\) not listed", proc.stdout)
    # The terminal shows the first findings of each rule; the case's result.json holds every one listed.
    [result] = (tmp_path / "w").glob("replays-seed1*/canal-json/result.json")
    summary = json.loads(result.read_text())
    listed = sum(len(t["findings"]) for t in summary["tables"]) + len(summary["checkpoints"]["findings"])
    [row] = [line for line in proc.stdout.splitlines() if line.startswith("│ canal-json")]
    assert int(more) > 0 and int(more) == summary["checkpoints"]["suppressed_findings"]
    assert row.split("│")[5].strip() == str(listed + int(more)), proc.stdout


def test_consumer_writing_final_only_is_judged_on_its_final_state_only(tmp_path):
    """On a stream with watermarks its tables are right, but the order is not shown: exit 4 unless accepted."""
    result = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=consumer("final_only"))
    assert not result.findings and not result.conformant and result.outcome == "final state only", result.render()
    assert not result.checkpoints.checked and "not possible" in result.checkpoints.note
    assert "final state only: ordering not verified" in result.render()
    accepted = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=consumer("final_only"), final_state_only=True)
    assert accepted.conformant and accepted.outcome == "conformant (final state only)", accepted.render()


def test_cli_report_carries_the_checkpoint_verdict(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "ddl-evolution", "--protocol", "open-protocol",
                                 "--consumer", consumer("applies_ddl_twice"), "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[CONSUMER-DDL-1]" in proc.stdout
    summary = json.loads((tmp_path / "r" / "ddl-evolution-seed1-open-protocol.summary.json").read_text())
    verdict = summary["results"][0]["checkpoints"]
    assert verdict["checked"] and verdict["checkpoints"] > 0
    assert any(f["rule"] == "CONSUMER-DDL-1" for f in verdict["findings"])


@pytest.fixture(scope="module")
def smoke_case(tmp_path_factory):
    """A smoke run by the reference consumer; tests tamper with copies of its output."""
    work = tmp_path_factory.mktemp("smoke")
    result = run_encoding("smoke", 1, "canal-json", work, consumer="local")
    assert result.conformant and result.checkpoints.checked
    return result.case


def test_the_check_holds_the_current_row_images_only(tmp_path, smoke_case):
    """Memory follows the tables, not the stream: an image whose count is back at zero (a row since
    updated or deleted) is forgotten, on the upstream side and on the consumer's."""
    manifest = json.loads((smoke_case / "manifest.json").read_text())
    check = CheckpointCheck(smoke_case / "truth", smoke_case / "consumer", manifest)
    assert check.run().checked and not check.findings.items
    states = _States(smoke_case / "consumer" / "states", tmp_path / "states.db", check.hidden)
    for w in check.checkpoints:
        states.advance(w)
    lines = sum(len(_lines(p)) for p in (smoke_case / "consumer" / "states").glob("*.ndjson"))
    for side in (check.truth.counts, states.counts):
        held = {name: c for name, c in side.items() if c}
        assert all(n > 0 for c in held.values() for n in c.values())
        assert {name: sum(c.values()) for name, c in held.items()} == \
            {name: len(rows) for name, rows in check.truth.proj.items() if rows}
        assert lines > sum(len(c) for c in held.values())  # rows did change: there were images to forget
    states.close()


def _lines(path):
    return path.read_text().splitlines()


def _tamper_state(out):
    path = sorted((out / "states").glob("*.ndjson"))[0]
    lines = _lines(path)
    doc = json.loads(lines[0])
    column = next(iter(doc["row"]))
    doc["row"][column] = "tampered"
    lines[0] = json.dumps(doc)
    path.write_text("\n".join(lines) + "\n")


def _checkpoint_back(out):
    lines = _lines(out / "applied.ndjson")
    cps = [i for i, line in enumerate(lines) if '"checkpoint"' in line]
    lines.insert(cps[2] + 1, lines[cps[0]])
    (out / "applied.ndjson").write_text("\n".join(lines) + "\n")


def _drop_a_ddl(out):
    lines = [line for line in _lines(out / "applied.ndjson") if '"kind":"ddl"' not in line or "orders" not in line]
    (out / "applied.ndjson").write_text("\n".join(lines) + "\n")


def _stray_state_line(out):
    path = sorted((out / "states").glob("*.ndjson"))[0]
    doc = json.loads(_lines(path)[0])
    doc["from"] += 1
    with open(path, "a") as f:
        f.write(json.dumps(doc) + "\n")


def _apply_early(out):
    lines = _lines(out / "applied.ndjson")
    cps = [i for i, line in enumerate(lines) if '"checkpoint"' in line]
    txn = next(i for i in range(cps[3], len(lines)) if '"kind":"txn"' in lines[i])
    lines.insert(cps[2], lines.pop(txn))  # applied before checkpoint 2, whose watermark is below it
    (out / "applied.ndjson").write_text("\n".join(lines) + "\n")


def _swap_transactions(out):
    lines = _lines(out / "applied.ndjson")
    txns = [i for i, line in enumerate(lines) if '"kind":"txn"' in line]
    a, b = next((x, y) for x, y in zip(txns, txns[1:]) if y == x + 1)
    lines[a], lines[b] = lines[b], lines[a]
    (out / "applied.ndjson").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("tamper,rule", [
    (_tamper_state, "CONSUMER-CHECKPOINT-1"), (_checkpoint_back, "CONSUMER-WATERMARK-1"),
    (_drop_a_ddl, "CONSUMER-DDL-1"), (_stray_state_line, "CONSUMER-OUTPUT-1"),
    (_apply_early, "CONSUMER-WATERMARK-1"), (_swap_transactions, "CONSUMER-ORDER-1"),
])
def test_the_checker_names_the_rule_a_tampered_output_breaks(tmp_path, smoke_case, tamper, rule):
    out = tmp_path / "consumer"
    shutil.copytree(smoke_case / "consumer", out)
    tamper(out)
    verdict = checked_both_ways(smoke_case / "truth", out, json.loads((smoke_case / "manifest.json").read_text()))
    assert rule in {f.rule for f in verdict.findings}, [f.render() for f in verdict.findings]


# Lines a consumer may write that are JSON but not in the documented form: each is named with its
# file and line (CONSUMER-OUTPUT-1), never a crash of the check.
MALFORMED_LOG = [
    ('[1]', "a JSON list, not an object"),
    ('{"kind":"checkpoint"}', 'checkpoint without an integer "ts"'),
    ('{"kind":"checkpoint","ts":"abc"}', 'checkpoint without an integer "ts"'),
    # JSON integers have no bound and are read whole: one beyond the TSOs is named, not a crash.
    ('{"kind":"checkpoint","ts":123456789012345678901234567890}', '"ts" is beyond the TSOs'),
    ('{"kind":"checkpoint","ts":9223372036854775808}', '"ts" is beyond the TSOs'),
    ('{"kind":"txn","commit_ts":"x","rows":[]}', '"commit_ts" is neither an integer nor null'),
    ('{"kind":"txn","commit_ts":true,"rows":[]}', '"commit_ts" is neither an integer nor null'),
    ('{"kind":"txn","commit_ts":5,"rows":5}', 'txn without a "rows" list'),
    ('{"kind":"txn","commit_ts":5,"rows":[{"schema":"smoke"}]}', "txn row 0 is not an object naming"),
    ('{"kind":"txn","commit_ts":5,"rows":[{"schema":"s","table":"t","op":"upsert","before":null,"after":{}}]}',
     "op 'upsert'"),
    ('{"kind":"txn","commit_ts":5,"rows":[{"schema":"s","table":"t","op":"insert"}]}',
     "before and after are row objects or null"),
    ('{"kind":"ddl","commit_ts":5}', 'ddl without a "query" string'),
    ('{"kind":"ddl","commit_ts":5,"query":"DROP TABLE t","schema":7}', "schema or table is not a string"),
]


@pytest.mark.parametrize("line,problem", MALFORMED_LOG)
def test_a_malformed_applied_log_line_is_named_not_a_crash(tmp_path, smoke_case, line, problem):
    out = tmp_path / "consumer"
    shutil.copytree(smoke_case / "consumer", out)
    lines = _lines(out / "applied.ndjson")
    lines.insert(3, line)
    (out / "applied.ndjson").write_text("\n".join(lines) + "\n")
    verdict = checked_both_ways(smoke_case / "truth", out, json.loads((smoke_case / "manifest.json").read_text()))
    [finding] = verdict.findings
    assert finding.rule == "CONSUMER-OUTPUT-1" and "applied.ndjson line 4: " in finding.message, finding.message
    assert finding.table == "applied.ndjson"
    assert problem in finding.message, finding.message


@pytest.mark.parametrize("line", ['{"from":1,"to":"2","row":{}}', '{"from":1.5,"to":null,"row":{}}',
                                  '{"from":1,"to":null,"row":[]}', '7', '{"from":1,"row":{}}',
                                  '{"from":1,"to":123456789012345678901234567890,"row":{}}',
                                  '{"from":-9223372036854775809,"to":null,"row":{}}', '{"from":1,"to":NaN,"row":{}}'])
def test_a_malformed_state_line_is_named_not_a_crash(tmp_path, smoke_case, line):
    out = tmp_path / "consumer"
    shutil.copytree(smoke_case / "consumer", out)
    path = sorted((out / "states").glob("*.ndjson"))[0]
    n = len(_lines(path))
    with open(path, "a") as f:
        f.write(line + "\n")
    verdict = checked_both_ways(smoke_case / "truth", out, json.loads((smoke_case / "manifest.json").read_text()))
    [finding] = verdict.findings
    assert finding.rule == "CONSUMER-OUTPUT-1" and f"states/{path.name} line {n + 1}: not a state line" in finding.message
    assert finding.table == path.name[: -len(".ndjson")]  # the table whose file holds the line


@pytest.mark.parametrize("line,problem", [('{"code": truncated', "not JSON"), ('[1, 2]', "must be a JSON object, got list")])
def test_a_malformed_final_line_is_named_and_its_table_not_compared(tmp_path, smoke_case, line, problem):
    out = tmp_path / "consumer"
    shutil.copytree(smoke_case / "consumer", out)
    path = out / "final" / "smoke.customers.ndjson"
    n = len(_lines(path))
    with open(path, "a") as f:
        f.write(line + "\n")
    manifest = json.loads((smoke_case / "manifest.json").read_text())
    verdicts = {v.table: v for v in check_final_state(smoke_case / "truth", out, manifest["protocol"], manifest["sink"])}
    [finding] = verdicts["smoke.customers"].findings
    assert finding.rule == "CONSUMER-OUTPUT-1"
    assert finding.message.startswith(f"final/smoke.customers.ndjson line {n + 1}: {problem}"), finding.message
    assert not verdicts["smoke.orders"].findings
