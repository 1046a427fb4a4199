"""The checkpoint check end to end: the reference consumer is conformant at every checkpoint, and
deliberately broken consumers are caught with the rule they break."""
import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.runner import run_encoding

from ..conftest import CLI, ROOT


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
    figures = json.loads((tmp_path / scenario / encoding / "consumer" / "consumer.json").read_text())
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


def test_consumer_writing_final_only_is_judged_on_its_final_state(tmp_path):
    result = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=consumer("final_only"))
    assert result.conformant, result.render()
    assert not result.checkpoints.checked and "not possible" in result.checkpoints.note
    assert "checkpoints: not checked" in result.render()


def test_cli_report_carries_the_checkpoint_verdict(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "ddl-evolution", "--protocol", "open-protocol",
                                 "--consumer", consumer("applies_ddl_twice"), "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[CONSUMER-DDL-1]" in proc.stdout
    summary = json.loads((tmp_path / "r" / "ddl-evolution-seed1.summary.json").read_text())
    verdict = summary["results"][0]["checkpoints"]
    assert verdict["checked"] and verdict["checkpoints"] > 0
    assert any(f["rule"] == "CONSUMER-DDL-1" for f in verdict["findings"])


@pytest.fixture(scope="module")
def smoke_case(tmp_path_factory):
    """A smoke run by the reference consumer; tests tamper with copies of its output."""
    work = tmp_path_factory.mktemp("smoke")
    result = run_encoding("smoke", 1, "canal-json", work, consumer="local")
    assert result.conformant and result.checkpoints.checked
    return work / "smoke" / "canal-json"


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
    verdict = check_checkpoints(smoke_case / "truth", out, json.loads((smoke_case / "manifest.json").read_text()))
    assert rule in {f.rule for f in verdict.findings}, [f.render() for f in verdict.findings]
