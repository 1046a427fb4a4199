"""`ticdc-conformance fuzz` as a user runs it: a short run on a correct consumer exits 0 and says
what it drew; a broken one exits 1 with the seed, the replay command and the saved case, which
`--replay` runs again; progress lines in a log; errors name the option."""
from __future__ import annotations

import io
import json
import re

import pytest
from click.testing import CliRunner

from ticdc_conformance.cli import main
from ticdc_conformance.fuzz import Progress

from .broken import REFERENCE


def _fuzz(*args: str):
    return CliRunner().invoke(main, ["fuzz", *args], catch_exceptions=False)


def test_a_correct_consumer_passes_a_short_run(tmp_path):
    r = _fuzz("--consumer", REFERENCE, "--protocol", "open-protocol", "--examples", "3", "--seed", "5",
              "--work", str(tmp_path / "w"), "--database", str(tmp_path / "db"), "--regressions", str(tmp_path / "r"))
    assert r.exit_code == 0, r.output
    assert "open-protocol: 3 examples" in r.output and "(seed 5): no failure" in r.output
    assert not (tmp_path / "r").exists()


def test_encodings_side_by_side_print_each_output_whole(tmp_path):
    import subprocess

    from tests.conftest import CLI, ROOT
    from ticdc_contract.protocols import ENCODINGS

    def fuzz(consumer: str, run: str, *more: str) -> subprocess.CompletedProcess:
        return subprocess.run([*CLI, "fuzz", "--consumer", consumer, "--protocol", "all", "--examples", "2",
                               "--seed", "5", "--jobs", "2", "--work", str(tmp_path / run),
                               "--regressions", str(tmp_path / run / "r"), *more],
                              capture_output=True, text=True, cwd=ROOT)

    passed = fuzz(REFERENCE, "pass", "--database", str(tmp_path / "db"))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "2 side by side" in passed.stdout.splitlines()[0]
    blocks = re.split(r"^--- (\S+) \(exit (\d+)\) ---$", passed.stdout, flags=re.M)[1:]
    assert sorted(blocks[0::3]) == sorted(ENCODINGS) and set(blocks[1::3]) == {"0"}
    for encoding, block in zip(blocks[0::3], blocks[2::3]):  # each block is that encoding's run alone
        assert f"{encoding}: 2 examples" in block and "(seed 5): no failure" in block, block
        assert not any(f"{other}: 2 examples" in block for other in ENCODINGS if other != encoding)
    # A consumer that fails every example: every encoding's failure is printed, and the exit is 1.
    failed = fuzz("cmd:false", "fail", "--shrink-examples", "0", "--no-database")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert sorted(re.findall(r"^FAILED (\S+)", failed.stdout, flags=re.M)) == sorted(ENCODINGS), failed.stdout


@pytest.mark.slow  # shrinking takes a minute
def test_a_failure_is_printed_saved_and_replayed(tmp_path):
    spec = "python:tests.consumers.streaming.partition_watermark:PartitionWatermark"
    r = _fuzz("--consumer", spec, "--protocol", "canal-json", "--examples", "40", "--seed", "1",
              "--work", str(tmp_path / "w"), "--no-database", "--regressions", str(tmp_path / "r"))
    assert r.exit_code == 1, r.output
    assert "FAILED canal-json" in r.output and "seed 1" in r.output
    saved = re.search(r"saved: (\S+)", r.output).group(1)
    doc = json.loads((tmp_path / "r" / "canal-json" / saved.rsplit("/", 1)[1] / "case.json").read_text())
    assert doc["found"]["consumer"] == spec and doc["schedule"] and doc["config"]["protocol"] == "canal-json"
    again = _fuzz("--replay", saved, "--consumer", spec, "--work", str(tmp_path / "w2"))
    assert again.exit_code == 1 and "NOT conformant" in again.output
    reference = _fuzz("--replay", str(tmp_path / "r"), "--consumer", REFERENCE, "--work", str(tmp_path / "w3"))
    assert reference.exit_code == 0 and "passes" in reference.output


def test_the_refind_command_shrinks_to_the_same_case(tmp_path):
    """A count of shrinking examples (--shrink-examples) decides the shrunk case, not the machine's
    speed: the printed re-find command, which carries the count spent, saves the same case."""
    spec = "python:tests.consumers.streaming.partition_watermark:PartitionWatermark"
    first = _fuzz("--consumer", spec, "--protocol", "canal-json", "--examples", "40", "--seed", "1",
                  "--shrink-examples", "15", "--work", str(tmp_path / "w"), "--no-database",
                  "--regressions", str(tmp_path / "r1"))
    assert first.exit_code == 1, first.output
    refind = re.search(r"re-find: ticdc-conformance fuzz (.+)", first.output).group(1).split()
    assert refind[-2:] == ["--shrink-examples", "15"], refind
    again = _fuzz(*[a.strip("'") for a in refind], "--work", str(tmp_path / "w2"), "--no-database",
                  "--regressions", str(tmp_path / "r2"))
    assert again.exit_code == 1, again.output
    saved = [re.search(r"saved: \S+/(case-\w+)", r.output).group(1) for r in (first, again)]
    assert saved[0] == saved[1]
    assert re.search(r"case: .+", first.output).group(0) == re.search(r"case: .+", again.output).group(0)


def test_replay_of_a_folder_without_cases_names_it(tmp_path):
    r = CliRunner().invoke(main, ["fuzz", "--replay", str(tmp_path), "--consumer", REFERENCE])
    assert r.exit_code == 2 and "no regression case" in r.output


def test_a_case_that_does_not_read_back_is_exit_3(tmp_path):
    (tmp_path / "canal-json" / "case-x").mkdir(parents=True)
    (tmp_path / "canal-json" / "case-x" / "case.json").write_text("{}")
    r = CliRunner().invoke(main, ["fuzz", "--replay", str(tmp_path), "--consumer", REFERENCE,
                                  "--work", str(tmp_path / "w")])
    assert r.exit_code == 3 and "not a regression case written by `fuzz`" in r.output


def test_a_bad_budget_names_the_option():
    r = CliRunner().invoke(main, ["fuzz", "--consumer", REFERENCE, "--budget", "soon"])
    assert r.exit_code == 2 and "--budget 'soon'" in r.output


def test_a_bad_progress_interval_names_the_variable():
    r = CliRunner().invoke(main, ["fuzz", "--consumer", REFERENCE, "--budget", "1s"],
                           env={"TICDC_PROGRESS_EVERY_S": "-3"})
    assert r.exit_code == 2 and "TICDC_PROGRESS_EVERY_S='-3'" in r.output


def test_progress_in_a_log_is_a_line_per_interval():
    out = io.StringIO()
    p = Progress(out, terminal=False, every_s=0)
    p.start("canal-json (x)", 30, None)
    p.tick(4, 0, "drawing")
    p.stop("done")
    lines = out.getvalue().splitlines()
    assert lines[0] == "fuzz canal-json (x): started"
    assert re.fullmatch(r"fuzz canal-json \(x\): 4 examples, 0 failing, drawing, \d+s of 30s", lines[1])
    assert lines[-1] == "fuzz canal-json (x): done"


def test_reusing_the_database_needs_one():
    r = CliRunner().invoke(main, ["fuzz", "--consumer", REFERENCE, "--examples", "1", "--no-database",
                                  "--reuse-database"])
    assert r.exit_code == 2 and "--reuse-database" in r.output and "--no-database" in r.output
