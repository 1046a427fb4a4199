"""The consumer under test behind one adapter (consumers/adapters/): what `--consumer` names, what
each adapter declares its output shows, how a run ends, and that the checks follow the declaration
rather than the files an output folder happens to hold."""
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.consumers.adapters import (
    FINAL_STATE_ONLY,
    Capabilities,
    ProgramConsumer,
    RunOptions,
    SequentialConsumer,
    SparkConsumer,
    Stream,
    adapter_for,
)
from ticdc_conformance.findings.outcome import CONSUMER_ERROR
from ticdc_conformance.findings.outcome import FINAL_STATE_ONLY as FINAL_STATE_ONLY_OUTCOME
from ticdc_conformance.runner import run_encoding
from ticdc_generators.pipeline import config_for, generate

FINAL_ONLY = ROOT / "tests" / "consumers" / "final_only.py"
BOTH = Capabilities(applied_log=True, states=True)


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> Path:
    """One generated stream with watermarks (smoke, canal-json), read by every run of this module."""
    folder = tmp_path_factory.mktemp("case")
    generate("smoke", 1, config_for("smoke", "canal-json"), folder)
    return folder


def _out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    return out


def test_adapter_for_names_the_reference_consumers_and_takes_anything_else_as_a_command():
    assert isinstance(adapter_for("local"), SequentialConsumer)
    spark = adapter_for("spark", master="local[1]")
    assert isinstance(spark, SparkConsumer) and spark.spec == "spark"
    program = adapter_for("python 'my consumer.py' --fast")
    assert isinstance(program, ProgramConsumer)
    assert program.argv == ["python", "my consumer.py", "--fast"]
    assert program.spec == "python 'my consumer.py' --fast"  # replay commands repeat it as given


@pytest.mark.parametrize("command", ["", "   ", "python 'unclosed"])
def test_adapter_for_refuses_a_command_that_names_no_program(command):
    with pytest.raises(ValueError):
        adapter_for(command)


def test_the_reference_consumers_declare_applied_log_and_states():
    for adapter in (SequentialConsumer(), SparkConsumer()):
        assert adapter.capabilities == BOTH
        assert not adapter.capabilities.final_state_only
        assert not adapter.capabilities.restarts


def test_the_sequential_consumer_shows_what_it_declares(case, tmp_path):
    out = _out(tmp_path)
    run = SequentialConsumer().run(Stream.of_case(case), out)
    assert run.finished and run.error is None
    assert run.shows == BOTH and run.out == out and run.log is None
    assert run.missing_outputs() == []
    assert run.figures["checkpoints"] > 0  # the stream carries watermarks, so the log holds checkpoints


def test_a_program_declares_by_its_output_what_it_shows(case, tmp_path):
    out = _out(tmp_path)
    run = ProgramConsumer(f"{sys.executable} {FINAL_ONLY}").run(Stream.of_case(case), out)
    assert run.finished, run.error
    assert run.shows == FINAL_STATE_ONLY and run.shows.final_state_only
    assert run.log == case / "consumer.log" and run.log.exists()
    assert run.missing_outputs() == []


def test_a_program_that_fails_ends_its_run_with_the_error_and_its_log(case, tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent("""
        import sys
        print("cannot read the records", file=sys.stderr)
        sys.exit(3)
    """))
    run = ProgramConsumer(f"{sys.executable} {script}").run(Stream.of_case(case), _out(tmp_path))
    assert not run.finished
    assert "exited with 3" in run.error and str(run.log) in run.error
    assert "cannot read the records" in run.error


def test_a_program_past_its_time_limit_ends_its_run_with_the_error(case, tmp_path):
    run = ProgramConsumer(f"{sys.executable} -c 'import time; time.sleep(60)'").run(
        Stream.of_case(case), _out(tmp_path), RunOptions(timeout_s=0.5))
    assert not run.finished
    assert "did not finish within 0.5s" in run.error


def test_the_checkpoint_check_follows_the_declaration_not_the_files(case, tmp_path):
    """The sequential consumer writes applied.ndjson and states/ either way; declared as showing its
    final state only, its output is not held at checkpoints, and declared without states, its tables
    are not compared at them."""
    out = _out(tmp_path)
    SequentialConsumer().run(Stream.of_case(case), out)
    manifest = Stream.of_case(case).manifest
    assert check_checkpoints(case / "truth", out, manifest, BOTH).checkpoints > 0
    assert not check_checkpoints(case / "truth", out, manifest, FINAL_STATE_ONLY).checked
    no_states = check_checkpoints(case / "truth", out, manifest, Capabilities(applied_log=True, states=False))
    assert no_states.checked and "no states/" in no_states.note


class _FinalOnlySequential(SequentialConsumer):
    """The sequential consumer declared to show its final tables only: a Python class as consumer."""

    spec = "sequential, final state only"
    capabilities = FINAL_STATE_ONLY

    def run(self, stream, out, options=RunOptions()):
        run = super().run(stream, out, options)
        run.shows = self.capabilities
        return run


class _LosesItsLog(SequentialConsumer):
    """Declares an applied log, but leaves none behind."""

    spec = "sequential without its log"

    def run(self, stream, out, options=RunOptions()):
        run = super().run(stream, out, options)
        (out / "applied.ndjson").unlink()
        shutil.rmtree(out / "states")
        return run


def test_a_run_is_judged_on_what_its_adapter_declares(tmp_path):
    result = run_encoding("smoke", 1, "canal-json", tmp_path, consumer=_FinalOnlySequential())
    assert result.outcome == FINAL_STATE_ONLY_OUTCOME and result.exit_code == 4
    assert (result.case / "consumer" / "applied.ndjson").exists()  # written, yet not what it declared
    assert result.consumer == "sequential, final state only"


def test_output_an_adapter_declares_but_does_not_write_is_a_consumer_error(tmp_path):
    result = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer=_LosesItsLog())
    assert result.outcome == CONSUMER_ERROR and result.exit_code == 3
    assert "declares its final tables, an applied log, its states at checkpoints" in result.error
    assert "applied.ndjson" in result.error and "states" in result.error


@pytest.mark.spark
def test_the_spark_consumer_shows_what_it_declares(case, tmp_path, spark):
    out = _out(tmp_path)
    run = adapter_for("spark", spark=spark).run(Stream.of_case(case), out)
    assert run.finished, run.error
    assert run.shows == BOTH and run.missing_outputs() == []
    assert run.figures["checkpoints"] > 0
