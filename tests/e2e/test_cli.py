"""The `ticdc-conformance` root gathers subcommands each package defines next to what it runs; the
commands that choose a consumer go through the adapters (consumers/adapters/)."""
import json
import re
import zipfile

import click
import pytest
from click.testing import CliRunner

from ticdc_conformance.cli import main
from ticdc_conformance.command_line import resolve_encodings
from ticdc_generators.pipeline import config_for, generate

# Each subcommand and the module that defines it.
HOMES = {
    "scenarios": "ticdc_conformance.run_command",
    "generate": "ticdc_conformance.run_command",
    "run": "ticdc_conformance.run_command",
    "check": "ticdc_conformance.run_command",
    "differential": "ticdc_conformance.run_command",
    "consume": "ticdc_conformance.consumers.command",
    "py-files": "ticdc_conformance.consumers.command",
    "golden": "ticdc_conformance.golden.command",
    "fidelity": "ticdc_conformance.fidelity.command",
    "bench": "ticdc_conformance.bench.command",
    "rules": "ticdc_conformance.rules.command",
    "lint": "ticdc_conformance.lint.command",
    "kafka": "ticdc_conformance.kafka_command",
    "fuzz": "ticdc_conformance.fuzz_command",
}


def test_every_subcommand_is_defined_next_to_its_package():
    ctx = click.Context(main)
    commands = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}
    assert {name: cmd.callback.__module__ for name, cmd in commands.items()} == HOMES


def test_consume_runs_the_sequential_consumer_through_its_adapter(tmp_path):
    generate("smoke", 1, config_for("smoke", "simple-json"), tmp_path / "case")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["consume", "--engine", "local", "--records", str(tmp_path / "case" / "records"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["ordering"] == "watermark" and figures["checkpoints"] > 0
    assert (out / "final").is_dir() and (out / "applied.ndjson").is_file() and (out / "states").is_dir()


def test_py_files_zips_the_spark_job_it_names(tmp_path):
    target = tmp_path / "ticdc-conformance.zip"
    result = CliRunner().invoke(main, ["py-files", str(target)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(target) as z:
        names = set(z.namelist())
    assert "ticdc_conformance/consumers/spark/job.py" in names
    assert "ticdc_contract/model.py" in names
    assert not any(n.startswith("ticdc_generators/") for n in names)  # the consumer needs none of it
    assert "consumers/spark/job.py --records RECORDS --out OUT" in result.output


def test_run_refuses_a_consumer_command_that_names_no_program(tmp_path):
    result = CliRunner().invoke(main, ["run", "--protocol", "canal-json", "--consumer", " ", "--work", str(tmp_path)])
    assert result.exit_code == 2
    assert "--consumer" in result.output and "empty" in result.output
    assert not any(tmp_path.iterdir())  # refused before anything was generated


@pytest.mark.parametrize("protocol, encoding, encodings", [
    ("all", None, ["open-protocol", "canal-json", "debezium", "simple-json", "simple-avro"]),
    ("all", "avro", ["open-protocol", "canal-json", "debezium", "simple-json", "simple-avro"]),
    ("simple", None, ["simple-json"]),
    ("simple", "avro", ["simple-avro"]),
    ("simple-avro", None, ["simple-avro"]),
    ("canal-json", None, ["canal-json"]),
])
def test_protocol_and_encoding_name_the_encodings_to_run(protocol, encoding, encodings):
    assert resolve_encodings(protocol, encoding) == encodings


@pytest.mark.parametrize("protocol, encoding, message", [
    ("canal-json", "avro", "--encoding applies to the simple protocol only, not canal-json"),
    ("avro", None, "unknown protocol 'avro'; expected all, open-protocol, canal-json, debezium, simple-json, "
                   "simple-avro or simple"),
])
def test_a_protocol_that_names_no_encoding_is_refused(protocol, encoding, message):
    with pytest.raises(click.BadParameter, match=re.escape(message)):
        resolve_encodings(protocol, encoding)


def test_rules_takes_a_protocol_as_run_does(tmp_path):
    simple = CliRunner().invoke(main, ["rules", "--protocol", "simple", "--format", "json"])
    simple_json = CliRunner().invoke(main, ["rules", "--protocol", "simple-json", "--format", "json"])
    assert simple.exit_code == simple_json.exit_code == 0
    assert simple.output == simple_json.output and json.loads(simple.output)
    unknown = CliRunner().invoke(main, ["rules", "--protocol", "avro"])
    assert unknown.exit_code == 2 and "unknown protocol 'avro'" in unknown.output
