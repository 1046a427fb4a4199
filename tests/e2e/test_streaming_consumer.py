"""Consumers fed over the testee protocol (docs/testee-protocol.md): the streaming reference consumer
as a program (`cmd:`) and as a class (`python:`) conforms on every encoding under every kind of
schedule, restarts by stop and by crash included; a consumer that breaks the protocol is a consumer
error naming the line and the log; a crash discards what the consumer had not committed."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.delivery import Schedule
from ticdc_conformance.runner import run_encoding

ENCODINGS = ["canal-json", "debezium", "open-protocol", "simple-avro", "simple-json"]
CMD = f"cmd:{sys.executable} -m ticdc_conformance.consumers.streaming"
PYTHON = "python:ticdc_conformance.consumers.streaming:StreamingConsumer"
FAULTY = Path(__file__).resolve().parents[1] / "conformance" / "consumers" / "streaming" / "faulty.py"
SCHEDULES = ["timestamp:seed=1", "round-robin:seed=2,batch=1-16", "random:seed=3",
             "random:seed=4,batch=1-8,restarts=3,restart=crash", "round-robin:seed=5,restarts=3,restart=stop"]


def _run(tmp_path, consumer, encoding="canal-json", schedule=None, timeout_s=120.0, scenario="smoke"):
    return run_encoding(scenario, 1, encoding, tmp_path / "w", adapter_for(consumer),
                        schedule=Schedule.parse(schedule) if schedule else None, consumer_timeout_s=timeout_s)


def _figures(result):
    return json.loads((result.case / "consumer" / "consumer.json").read_text())


# --- the reference consumer conforms ------------------------------------------------------------------
@pytest.mark.parametrize("consumer,encoding,schedule", [
    (CMD, "canal-json", None),
    (PYTHON, "open-protocol", "random:seed=4,batch=1-8,restarts=3,restart=crash"),
    (PYTHON, "simple-avro", "round-robin:seed=5,restarts=3,restart=stop"),
])
def test_the_streaming_consumer_conforms(tmp_path, consumer, encoding, schedule):
    result = _run(tmp_path, consumer, encoding, schedule)
    assert result.outcome == "conformant", result.render()
    assert result.ordering_verified and result.checkpoints.checkpoints > 0
    figures = _figures(result)
    if schedule and "restarts=3" in schedule:
        assert figures["restarts"] == 3 and figures["commits"] >= 1
        assert figures["crashes" if "crash" in schedule else "stops"] == 3
    assert figures["records_delivered"] >= result.records


@pytest.mark.slow
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("consumer", [CMD, PYTHON], ids=["cmd", "python"])
def test_the_streaming_consumer_conforms_on_every_encoding_and_schedule(tmp_path, consumer, encoding, schedule):
    result = _run(tmp_path, consumer, encoding, schedule)
    assert result.outcome == "conformant", result.render()
    assert result.replay_command.endswith(f"--schedule {schedule}")


@pytest.mark.parametrize("schedule", ["timestamp:seed=1,late-join", "random:seed=2,late-join,restarts=2,restart=crash"])
def test_a_late_join_starts_from_the_snapshot(tmp_path, schedule):
    result = _run(tmp_path, PYTHON, "open-protocol", schedule)
    assert result.outcome == "conformant", result.render()
    figures = _figures(result)
    assert figures["late_join_checkpoint_ts"] is not None and figures["snapshot_rows"] > 0
    assert figures["records_delivered"] < result.records  # it joined after the start


# --- a crash discards what was not committed ---------------------------------------------------
def test_a_crash_loses_what_the_consumer_committed_but_did_not_keep(tmp_path):
    """The faulty consumer answers commit with the offsets it received but keeps nothing durable:
    after a crash the suite delivers from those offsets, and what it held is gone."""
    result = _run(tmp_path, f"cmd:{sys.executable} {FAULTY} overcommits", "open-protocol",
                  "round-robin:seed=1,batch=1-8,restarts=2,restart=crash,commit-every=2")
    assert result.outcome == "NOT conformant", result.render()
    rules = {f.rule for f in result.findings}
    assert rules & {"CONSUMER-LOSS-1", "CONSUMER-CHECKPOINT-1"}, rules
    assert _figures(result)["crashes"] == 2


@pytest.mark.parametrize("encoding,schedule,left_out,starts", [
    ("simple-json", "random:seed=1,restarts=2,restart=crash", "restarts", 1),
    # The header named the late join before the consumer said what it supports: it starts afresh.
    ("open-protocol", "timestamp:seed=1,late-join", "late-join", 2),
])
def test_a_schedule_needing_what_the_consumer_does_not_declare_runs_without_it(tmp_path, encoding, schedule,
                                                                                left_out, starts):
    result = _run(tmp_path, "python:tests.conformance.consumers.streaming.faulty:NoRestarts", encoding, schedule)
    assert result.outcome == "conformant", result.render()
    assert any(f"does not declare {left_out}" in note and "ran as " in note for note in result.notes), result.notes
    figures = _figures(result)
    assert (figures["restarts"], figures["starts"], figures["late_join_checkpoint_ts"]) == (0, starts, None)
    assert figures["records_delivered"] == result.records


# --- protocol errors ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,expected", [
    ("not-json", "output line 2 is not a protocol line (not JSON"),
    ("wrong-id", "it answered synced id 101"),
    ("bad-line", "a txn line needs 'rows'"),
    ("exit-early", "its output ended before the answer to sync id 1"),
])
def test_a_protocol_error_names_the_line_the_request_and_the_log(tmp_path, mode, expected):
    result = _run(tmp_path, f"cmd:{sys.executable} {FAULTY} {mode}")
    assert result.outcome == "consumer error", result.render()
    log = result.case / "consumer.log"
    assert expected in result.error and f"its output: {log}" in result.error, result.error
    assert "Traceback" not in result.error


def test_offsets_above_what_was_delivered_are_an_error(tmp_path):
    result = _run(tmp_path, f"cmd:{sys.executable} {FAULTY} offsets-above", schedule="timestamp:seed=1,restarts=1")
    assert result.outcome == "consumer error", result.render()
    assert "above what was delivered" in result.error and "committed" in result.error


def test_a_consumer_that_hangs_is_killed_at_the_deadline(tmp_path):
    result = _run(tmp_path, f"cmd:{sys.executable} {FAULTY} hang", timeout_s=3)
    assert result.outcome == "consumer error"
    assert "no line within 3s (--consumer-timeout) while waiting for the answer to sync id 1" in result.error


def test_a_class_answering_with_decimals_is_read_with_every_digit(tmp_path):
    result = _run(tmp_path, "python:tests.conformance.consumers.streaming.decimal_values:DecimalValues",
                  schedule="random:seed=4,batch=1-8,restarts=2,restart=crash")
    assert result.outcome == "conformant", result.render()
    final = (result.case / "consumer" / "final" / "smoke.orders.ndjson").read_bytes()
    assert b'"amount":99999999999999.999999' in final or b'"amount":-99999999999999.999999' in final, final[:400]


def test_a_class_that_raises_is_an_error_with_its_traceback_in_the_log(tmp_path):
    result = _run(tmp_path, "python:tests.conformance.consumers.streaming.faulty:NotJson")
    assert result.outcome == "consumer error"
    assert "handle() answered the sync request id 1 with a line that is not JSON" in result.error
    assert "Traceback" in (result.case / "consumer.log").read_text() and "Traceback" not in result.error


def test_a_class_that_hangs_is_a_timeout(tmp_path):
    result = _run(tmp_path, "python:tests.conformance.consumers.streaming.faulty:Hang", timeout_s=2)
    assert result.outcome == "consumer error" and "it took no input within 2s" in result.error


# --- the command line -------------------------------------------------------------------------
def test_run_with_a_schedule_and_a_declining_consumer(tmp_path):
    """`--schedule` reaches the consumer and its replay command; a consumer that answers unsupported is
    `not applicable`, never a pass; a run that judged nothing else exits 5 (nothing judged)."""
    unsupported = f"cmd:{sys.executable} {FAULTY} unsupported"
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", unsupported,
                                 "--schedule", "round-robin:batch=1-4", "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "not applicable: declines every encoding (a test consumer)" in proc.stdout
    assert "nothing judged: the consumer declined every case" in proc.stderr
    [summary] = (tmp_path / "r").glob("*.summary.json")
    doc = json.loads(summary.read_text())
    assert (doc["not_applicable"], doc["passed"], doc["conformant"]) == (1, 0, False)
    [result] = doc["results"]
    assert result["outcome"] == "not applicable" and result["conformant"] is False
    assert result["schedule"] == "round-robin:seed=1,batch=1-4"  # the seed is the run's
    junit = ET.parse(next((tmp_path / "r").glob("*.junit.xml"))).getroot()
    cases = list(junit.iter("testcase"))
    assert cases and all(c.find("skipped") is not None for c in cases) and junit.get("skipped") == str(len(cases))

    bad = subprocess.run(CLI + ["run", "--consumer", unsupported, "--schedule", "sideways"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "unknown delivery schedule kind 'sideways'" in bad.stderr
    missing = subprocess.run(CLI + ["run", "--consumer", "python:no_such_module:Consumer"], capture_output=True,
                             text=True, cwd=ROOT, timeout=120)
    assert missing.returncode == 2 and "cannot import Consumer from no_such_module" in missing.stderr


def test_tables_on_request_are_asked_mid_stream_and_at_the_end_only(tmp_path):
    """With tables=on-request the only states are the schedule's mid-stream answer and the end's:
    the checks still hold the consumer to them, and to its whole applied log."""
    from ticdc_conformance.consumers.adapters import RunOptions, Stream
    from ticdc_conformance.runner import check_outputs
    from ticdc_generators.pipeline import config_for, generate

    case = tmp_path / "case"
    generate("smoke", 1, config_for("smoke", "open-protocol"), case)
    out = case / "consumer"
    out.mkdir()
    run = adapter_for(PYTHON).run(Stream.of_case(case), out, RunOptions(timeout_s=60, tables="on-request"))
    assert run.error is None, run.error
    figures = json.loads((out / "consumer.json").read_text())
    assert figures["tables_asked"] == 2 and figures["fold"]["checkpoints_kept"] in (1, 2)
    result = check_outputs(case, out)
    assert result.outcome == "conformant" and result.checkpoints.checkpoints >= 1, result.render()
