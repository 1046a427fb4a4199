"""`run`: generate -> consume -> check for every encoding; reports; broken consumers are caught."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.consumer.local import consume_local
from ticdc_conformance.consumer.spark_job import consume
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.runner import run_encoding
from ticdc_generators.pipeline import config_for, encoding_names, generate

from ..conftest import CLI, ROOT

BROKEN = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"


@pytest.mark.parametrize("encoding", encoding_names())
def test_local_reference_consumer_conforms(tmp_path, encoding):
    result = run_encoding("smoke", 1, encoding, tmp_path, consumer="local")
    assert result.conformant, result.render()
    assert sum(t.actual_rows for t in result.tables) > 10


@pytest.mark.spark
def test_cli_run_all_encodings_on_spark_writes_reports(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "all", "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for enc in encoding_names():
        assert enc in proc.stdout
    assert proc.stdout.count("conformant") >= 5 and "NOT conformant" not in proc.stdout
    suite = ET.parse(tmp_path / "r" / "smoke-seed1.junit.xml").getroot()
    assert suite.get("tests") == "5" and suite.get("failures") == "0" and suite.get("errors") == "0"
    summary = json.loads((tmp_path / "r" / "smoke-seed1.summary.json").read_text())
    assert summary["conformant"] is True
    assert {r["encoding"] for r in summary["results"]} == set(encoding_names())


def test_broken_consumer_that_ignores_deletes_is_reported(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", BROKEN,
                                 "--work", str(tmp_path / "w"), "--report", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "NOT conformant" in proc.stdout
    assert "[CONSUMER-STATE-1]" in proc.stdout and "a lost delete?" in proc.stdout
    assert "smoke.orders key=" in proc.stdout or "smoke.customers key=" in proc.stdout
    assert "replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json --consumer" in proc.stdout
    suite = ET.parse(tmp_path / "r" / "smoke-seed1.junit.xml").getroot()
    assert suite.get("failures") == "1"


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
