"""Spark asked of an installation without PySpark (the base install, `pip install ticdc-conformance`)
ends in one line naming the `[spark]` extra and what to do instead, exit 2, before anything runs.
PySpark is installed where the suite's tests run, so its absence is simulated: require_spark looks
it up with importlib.util.find_spec, which is made to find no `pyspark` here."""
from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from ticdc_conformance.cli import main
from ticdc_conformance.errors import SPARK_EXTRA

_find_spec = importlib.util.find_spec


@pytest.fixture
def no_pyspark(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name.partition(".")[0] == "pyspark" else _find_spec(name, *a, **k))


def _invoke(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


@pytest.mark.parametrize("consumer, names", [
    (None, "the reference Spark consumer (`--consumer spark`, the default of `run`)"),
    ("spark:my_job:tables", "'spark:my_job:tables': a PySpark function"),
], ids=["default-consumer", "spark-function"])
def test_run_refuses_spark_consumers_without_pyspark(no_pyspark, tmp_path, consumer, names):
    args = ["run", "--scenario", "smoke", "--protocol", "canal-json", "--work", str(tmp_path / "work")]
    result = _invoke(args + (["--consumer", consumer] if consumer else []))
    assert result.exit_code == 2, result.output
    assert names in result.output and SPARK_EXTRA in result.output and "cmd:CMD" in result.output
    assert not (tmp_path / "work").exists(), "refused before any encoding was generated"


def test_consume_and_bench_refuse_spark_without_pyspark(no_pyspark, tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    (tmp_path / "manifest.json").write_text('{"protocol": "canal-json", "topics": {}, "sink": {}}')
    consume = _invoke(["consume", "--records", str(records), "--out", str(tmp_path / "out")])
    assert consume.exit_code == 2 and SPARK_EXTRA in consume.output and "--engine local" in consume.output
    bench = _invoke(["bench", "consume", "--work", str(tmp_path / "bench"), "--events", "10"])
    assert bench.exit_code == 2 and SPARK_EXTRA in bench.output and "bench decode" in bench.output
    assert not (tmp_path / "bench").exists(), "refused before the inputs were generated"


def test_a_failed_pyspark_import_elsewhere_is_one_line(monkeypatch):
    """A command without its own check that imports PySpark: the root command says what to install."""
    import ticdc_conformance.fidelity.command as fidelity_command

    def imports_pyspark(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'pyspark'", name="pyspark")

    monkeypatch.setattr(fidelity_command.fidelity, "callback", imports_pyspark)
    result = _invoke(["fidelity"])
    assert result.exit_code == 2 and result.output.strip() == (
        f"error: this command needs PySpark, which is not installed here: {SPARK_EXTRA} "
        "(Spark also needs a Java 17 runtime)")
