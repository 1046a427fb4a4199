"""`run`: generate -> consume -> check for every encoding; reports; broken consumers are caught."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.consumers.spark.job import consume
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.events import DecodedWatermark
from ticdc_conformance.findings.outcome import overall_exit
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.watermarks import carries_watermarks
from ticdc_conformance.runner import FINDINGS_SHOWN_PER_RULE, run_encoding
from ticdc_contract.record_files import iter_record_files
from ticdc_generators.pipeline import config_for, encoding_names, generate

BROKEN = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"


@pytest.mark.parametrize("encoding", encoding_names())
def test_local_reference_consumer_conforms(tmp_path, encoding):
    result = run_encoding("smoke", 1, encoding, tmp_path, consumer="local")
    assert result.conformant, result.render()
    assert sum(t.actual_rows for t in result.tables) > 10


def test_broken_consumer_that_ignores_deletes_is_reported(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", BROKEN,
                                 "--work", str(tmp_path / "w"), "--report", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "NOT conformant" in proc.stdout
    assert "[CONSUMER-DELETE-1]" in proc.stdout and "the DELETE was not applied" in proc.stdout
    assert "smoke.orders key=" in proc.stdout or "smoke.customers key=" in proc.stdout
    assert "replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json --consumer" in proc.stdout
    junit = ET.parse(tmp_path / "r" / "smoke-seed1-canal-json.junit.xml").getroot()
    failed = {c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None}
    assert "smoke/canal-json::CONSUMER-DELETE-1" in failed and junit.get("failures") == str(len(failed))


def test_consumer_that_crashes_is_an_error_not_a_pass(tmp_path):
    crash = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    result = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer=crash)
    assert not result.conformant and "exited with 3" in result.error


def _corrupt(records_dir, partition, offset, value):
    path = records_dir / f"ticdc-smoke-{partition}.parquet"
    table = pq.read_table(path)
    values = table.column("value").to_pylist()
    values[offset] = value
    table = table.set_column(table.schema.get_field_index("value"), "value", pa.array(values, pa.binary()))
    pq.write_table(table, path)


@pytest.mark.parametrize("encoding", encoding_names())
def test_invalid_record_is_reported_with_its_coordinates_local(tmp_path, encoding):
    m = generate("smoke", 1, config_for("smoke", encoding), tmp_path)
    _corrupt(tmp_path / "records", 1, 5, b"\x00\x00\x00\x00\x00\x00\x00\xffnot a valid record {")
    with pytest.raises(ConsumerError, match=r"ticdc-smoke/1@5"):
        consume_local(tmp_path / "records", m, tmp_path / "out")


@pytest.mark.spark
def test_invalid_record_is_reported_with_its_coordinates_spark(tmp_path, spark):
    m = generate("smoke", 1, config_for("smoke", "simple-json"), tmp_path)
    _corrupt(tmp_path / "records", 2, 3, b'{"version":1,"type":"INSERT",')
    with pytest.raises(ConsumerError) as info:
        consume(spark, tmp_path / "records", m, tmp_path / "out", tmp_path / "work")
    assert "ticdc-smoke/2@3" in str(info.value) and "1 record(s) could not be decoded as simple" in str(info.value)


# --- fresh output ------------------------------------------------------------------------------
def _run(tmp_path, *args, protocol="canal-json", scenario="smoke"):
    return subprocess.run(CLI + ["run", "--scenario", scenario, "--protocol", protocol, "--work", str(tmp_path / "w"),
                                 *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def test_nothing_an_earlier_run_left_is_read(tmp_path):
    """A conformant run, then a consumer that writes nothing into the same --work: a consumer error,
    not the earlier run's verdict."""
    assert _run(tmp_path, "--consumer", "local").returncode == 0
    stale = tmp_path / "w" / "smoke-seed1" / "canal-json" / "consumer" / "final"
    assert any(stale.iterdir())
    proc = _run(tmp_path, "--consumer", "true")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "consumer error" in proc.stdout and "wrote no" in proc.stdout
    assert not stale.exists() and not any((stale.parent).iterdir())


def test_case_folders_and_reports_carry_scenario_seed_encoding_and_options(tmp_path):
    plain = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer="local")
    shanghai = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer="local",
                            config=config_for("smoke", "open-protocol", time_zone="Asia/Shanghai"))
    seed2 = run_encoding("smoke", 2, "open-protocol", tmp_path, consumer="local")
    assert plain.case == tmp_path / "smoke-seed1" / "open-protocol"
    assert seed2.case == tmp_path / "smoke-seed2" / "open-protocol"
    assert re.fullmatch(r"smoke-seed1-[0-9a-f]{8}", shanghai.case.parent.name) and shanghai.case.name == "open-protocol"
    for r in (plain, shanghai, seed2):
        assert json.loads((r.case / "result.json").read_text())["case"] == str(r.case)
        assert json.loads((r.case / "manifest.json").read_text())["seed"] == r.seed
    assert _run(tmp_path, "--consumer", "local", "--report", tmp_path / "r").returncode == 0
    assert _run(tmp_path, "--consumer", "local", "--failovers", "2", "--report", tmp_path / "r").returncode == 0
    names = sorted(p.name for p in (tmp_path / "r").glob("*.summary.json"))
    [digest] = re.findall(r"^smoke-seed1-canal-json-([0-9a-f]{8})\.summary\.json$", names[0])
    assert names[1] == "smoke-seed1-canal-json.summary.json"
    [failovers] = json.loads((tmp_path / "r" / names[0]).read_text())["results"]
    assert "--failovers 2" in failovers["replay"]
    assert failovers["case"] == str(tmp_path / "w" / f"smoke-seed1-{digest}" / "canal-json")


def test_generate_refuses_a_folder_that_is_not_empty(tmp_path):
    out = tmp_path / "case"
    gen = CLI + ["generate", "--scenario", "smoke", "--protocol", "open-protocol", "--out", str(out)]
    assert subprocess.run(gen, capture_output=True, cwd=ROOT).returncode == 0
    proc = subprocess.run(gen, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "is not empty" in proc.stderr and "--replace" in proc.stderr, proc.stderr
    (out / "consumer").mkdir()
    (out / "consumer" / "stale.txt").write_text("from an earlier run")
    proc = subprocess.run(gen + ["--replace"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "records", "truth"]


def test_generate_replace_empties_only_a_generate_output(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    proc = subprocess.run(CLI + ["generate", "--protocol", "open-protocol", "--out", str(mine), "--replace"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "refuses to empty" in proc.stderr and "notes.txt" in proc.stderr, proc.stderr
    assert (mine / "notes.txt").read_text() == "keep me"
    (tmp_path / "manifest.json").write_text("{}")  # looks generated, but it is the current folder
    proc = subprocess.run(CLI + ["generate", "--protocol", "open-protocol", "--out", ".", "--replace"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2 and "the current folder" in proc.stderr, proc.stderr
    assert (mine / "notes.txt").exists()


# --- output summarized per rule ----------------------------------------------------------------
def test_run_prints_the_first_findings_of_each_rule_and_keeps_them_all_in_json(tmp_path):
    proc = _run(tmp_path, "--consumer", BROKEN, "--report", tmp_path / "r")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "w" / "smoke-seed1" / "canal-json" / "result.json").read_text())
    [summarized] = json.loads((tmp_path / "r" / "smoke-seed1-canal-json.summary.json").read_text())["results"]
    assert summarized.pop("checks") and summarized == result  # the summary adds the case's checks
    every = [f["rule"] for t in result["tables"] for f in t["findings"]] + \
        [f["rule"] for f in result["checkpoints"]["findings"]]
    printed = Counter(re.findall(r"^  \[([A-Z0-9-]+)\]", proc.stdout, re.M))
    cut = 0
    for rule, n in Counter(every).items():
        assert printed[rule] == min(n, FINDINGS_SHOWN_PER_RULE), rule
        if n > FINDINGS_SHOWN_PER_RULE:
            cut += 1
            assert f"… {n - FINDINGS_SHOWN_PER_RULE} more {rule} findings" in proc.stdout
    assert cut > 0, "no rule had more findings than are shown: the test shows nothing"
    assert (f"(the first {FINDINGS_SHOWN_PER_RULE} findings of each rule are shown; every finding is in "
            f"{tmp_path / 'w' / 'smoke-seed1' / 'canal-json' / 'result.json'} and "
            f"{tmp_path / 'r' / 'smoke-seed1-canal-json.summary.json'})") in proc.stdout


# --- final state only --------------------------------------------------------------------------
FINAL_ONLY = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'final_only.py'}"
NO_CHECKPOINTS = """
import json, sys
sys.path.insert(0, {consumers!r})
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer
from _common import run

class NoCheckpoints(LocalConsumer):
    # Applies correctly and writes an applied log, but none of its checkpoints.
    def write(self, out):
        figures = super().write(out)
        log = out / "applied.ndjson"
        log.write_text("".join(l for l in log.read_text().splitlines(True) if '"checkpoint"' not in l))
        return figures

run(NoCheckpoints)
"""


@pytest.mark.parametrize("encoding", ["simple-json", "open-protocol"])
def test_a_final_only_consumer_on_a_stream_with_watermarks_is_final_state_only(tmp_path, encoding):
    proc = _run(tmp_path, "--consumer", FINAL_ONLY, "--report", tmp_path / "r", protocol=encoding)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"{encoding}: final state only: ordering not verified" in proc.stdout
    [row] = [line for line in proc.stdout.splitlines() if line.startswith(f"│ {encoding}")]
    assert row.split("│")[6].strip() == "final state only"
    summary = json.loads((tmp_path / "r" / f"smoke-seed1-{encoding}.summary.json").read_text())
    [r] = summary["results"]
    assert (r["outcome"], r["exit_code"], r["final_state_only"], r["ordering_verified"], r["conformant"]) == \
        ("final state only", 4, True, False, False)
    assert summary["exit_code"] == 4 and not summary["conformant"]
    junit = ET.parse(tmp_path / "r" / f"smoke-seed1-{encoding}.junit.xml").getroot()
    failure = junit.find(f".//testcase[@name='smoke/{encoding}::final-state-only']/failure")
    assert junit.get("failures") == "1" and "ordering not verified" in failure.get("message")
    # The rules judged from the applied log alone were not judged: skipped, saying why.
    order = junit.find(f".//testcase[@name='smoke/{encoding}::CONSUMER-ORDER-1']/skipped")
    assert order is not None and "not judged" in order.get("message")

    accepted = _run(tmp_path, "--consumer", FINAL_ONLY, "--final-state-only", "--report", tmp_path / "a",
                    protocol=encoding)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "conformant (final state only): ordering not verified, accepted by --final-state-only" in accepted.stdout
    [r] = json.loads((tmp_path / "a" / f"smoke-seed1-{encoding}.summary.json").read_text())["results"]
    assert (r["outcome"], r["exit_code"], r["final_state_only"], r["final_state_only_accepted"]) == \
        ("conformant (final state only)", 0, True, True)
    junit = ET.parse(tmp_path / "a" / f"smoke-seed1-{encoding}.junit.xml").getroot()
    assert junit.get("failures") == "0" and "accepted by --final-state-only" in junit.find(".//testcase/system-out").text


def test_an_applied_log_without_checkpoints_is_final_state_only(tmp_path):
    script = tmp_path / "no_checkpoints.py"
    script.write_text(NO_CHECKPOINTS.format(consumers=str(ROOT / "tests" / "consumers")))
    result = run_encoding("smoke", 1, "simple-json", tmp_path, consumer=f"{sys.executable} {script}")
    assert (result.case / "consumer" / "applied.ndjson").stat().st_size > 0
    assert result.outcome == "final state only" and result.exit_code == 4 and not result.conformant, result.render()
    assert not result.ordering_verified


@pytest.mark.parametrize("encoding", ["canal-json", "debezium"])
def test_a_final_only_consumer_of_a_stream_without_watermarks_conforms(tmp_path, encoding):
    uri = f"kafka://h/t?protocol={encoding}&enable-tidb-extension=false"
    proc = _run(tmp_path, "--consumer", FINAL_ONLY, "--sink-uri", uri, "--report", tmp_path / "r", protocol=encoding)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [summary] = (tmp_path / "r").glob("*.summary.json")
    [r] = json.loads(summary.read_text())["results"]
    assert (r["outcome"], r["watermarks"], r["final_state_only"]) == ("conformant", False, False)


@pytest.mark.parametrize("encoding,extension", [(e, x) for e in encoding_names() for x in (False, True)])
def test_whether_a_stream_carries_watermarks_is_what_its_decoded_records_hold(tmp_path, encoding, extension):
    """carries_watermarks reads the manifest's sink options; the decoders find a watermark in the
    records exactly when it says so."""
    m = generate("smoke", 1, config_for("smoke", encoding, enable_tidb_extension=extension), tmp_path)
    decoders = {}
    decoded = [ev for r in iter_record_files(tmp_path / "records")
               for ev in decoders.setdefault((r.topic, r.partition),
                                             protocol_spec(m["protocol"]).new_decoder(m["sink"])).decode(r)]
    assert any(isinstance(ev, DecodedWatermark) for ev in decoded) is carries_watermarks(m["protocol"], m["sink"])
    assert carries_watermarks(m["protocol"], m["sink"]) is (extension or encoding in ("open-protocol", "simple-json",
                                                                                       "simple-avro"))


def test_the_most_severe_outcome_gives_the_exit_status():
    assert overall_exit([]) == 0 and overall_exit([0, 0]) == 0
    assert overall_exit([0, 4]) == 4 and overall_exit([4, 1, 0]) == 1 and overall_exit([1, 3, 4]) == 3


def test_the_pytest_fixture_fails_a_final_state_only_consumer_unless_told(tmp_path):
    (tmp_path / "test_my_consumer.py").write_text(
        "def test_my_consumer(ticdc_conformance):\n"
        f"    result = ticdc_conformance.run('simple-json', consumer={FINAL_ONLY!r})\n"
        "    assert result.conformant, result.outcome\n")
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_consumer.py"]
    strict = subprocess.run(pytest_cmd, capture_output=True, text=True, cwd=tmp_path)
    assert strict.returncode == 1 and "AssertionError: final state only" in strict.stdout, strict.stdout
    accepted = subprocess.run(pytest_cmd + ["--ticdc-final-state-only"], capture_output=True, text=True, cwd=tmp_path)
    assert accepted.returncode == 0 and "1 passed" in accepted.stdout, accepted.stdout
