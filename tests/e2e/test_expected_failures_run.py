"""`run` and `check` with `--expected-failures FILE` (docs/expected-failures.md) on a consumer that never
applies a DELETE: red without a list, green with a list naming its failures, exit 6 with an entry
that no longer fails, and `--update-expected-failures` rewrites the list so the next run is green.

One real `run` of one encoding on the smoke scenario; the other verdicts judge the same consumer
output again with `check`, which takes the same list options and exits the same way."""
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.conftest import CLI, ROOT
from ticdc_conformance.cli import main
from ticdc_conformance.findings.outcome import EXIT_STALE_EXPECTED_FAILURES

BROKEN = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"
# What that consumer fails on smoke/canal-json: the deletes it drops, the old images of key-changing
# updates it keeps, and the same seen at the checkpoints of its applied log.
FAILING_RULES = ("CONSUMER-DELETE-1", "CONSUMER-UPDATE-1", "CONSUMER-LOSS-1", "CONSUMER-CHECKPOINT-1")


def cli(*args, cwd=ROOT):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
def test_expected_failures_gate_a_broken_consumer(tmp_path):
    work, listed = tmp_path / "w", tmp_path / "expected.txt"
    run = ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", BROKEN, "--work", str(work)]

    red = cli(*run)
    assert red.returncode == 1, red.stdout + red.stderr
    case = work / "smoke-seed1" / "canal-json"
    check = ["check", "--case", str(case)]

    # A list naming every failure, in the three spellings: a check id, a case glob with a message
    # prefix, a bare rule id.
    listed.write_text("# what our consumer is known to get wrong\n"
                      "smoke/canal-json::CONSUMER-DELETE-1\n"
                      "*/canal-json::CONSUMER-UPDATE-1  the old image of the UPDATE\n"
                      "CONSUMER-LOSS-1\n"
                      "\n"
                      "smoke/canal-json::CONSUMER-CHECKPOINT-1\n")
    green = cli(*run, "--expected-failures", str(listed))
    assert green.returncode == 0, green.stdout + green.stderr
    out = green.stdout
    assert "every failure expected" in out
    assert f"expected  {listed}:2  smoke/canal-json::CONSUMER-DELETE-1  (" in out
    assert f"expected  {listed}:4  CONSUMER-LOSS-1  (" in out
    assert "UNEXPECTED" not in out and "STALE" not in out

    # An entry for a rule that does not fail: stale, exit 6, named by file and line.
    listed.write_text(listed.read_text() + "smoke/canal-json::CONSUMER-ORDER-1\n")
    stale = cli(*check, "--expected-failures", str(listed))
    assert stale.returncode == EXIT_STALE_EXPECTED_FAILURES, stale.stdout + stale.stderr
    assert (f"STALE  {listed}:7  smoke/canal-json::CONSUMER-ORDER-1: now passes: remove it or run with "
            f"--update-expected-failures") in stale.stdout

    # A list missing a failure: that one fails the run as without a list, listed per rule.
    listed.write_text(listed.read_text().replace("CONSUMER-LOSS-1\n", ""))
    unexpected = cli(*check, "--expected-failures", str(listed))
    assert unexpected.returncode == 1, unexpected.stdout + unexpected.stderr
    assert "UNEXPECTED  CONSUMER-LOSS-1: " in unexpected.stdout and "in smoke/canal-json" in unexpected.stdout

    # The update removes the stale entry, adds the missing one, keeps the rest as written.
    updated = cli(*check, "--expected-failures", str(listed), "--update-expected-failures")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert f"updated {listed}: 1 stale entry removed, 1 added" in updated.stdout
    assert listed.read_text() == ("# what our consumer is known to get wrong\n"
                                  "smoke/canal-json::CONSUMER-DELETE-1\n"
                                  "*/canal-json::CONSUMER-UPDATE-1  the old image of the UPDATE\n"
                                  "\n"
                                  "smoke/canal-json::CONSUMER-CHECKPOINT-1\n"
                                  "smoke/canal-json::CONSUMER-LOSS-1\n")
    again = cli(*run, "--expected-failures", str(listed), "--report", str(tmp_path / "r"))
    assert again.returncode == 0, again.stdout + again.stderr
    # The replay command of a failure is the run's, list or not.
    assert "replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json --consumer" \
        in red.stdout
    summary = json.loads(next((tmp_path / "r").glob("*.summary.json")).read_text())
    assert summary["results"][0]["case_id"] == "smoke/canal-json"
    # The reports carry the judgement: every failure expected, by the entry that expects it.
    judged = summary["expected_failures"]
    assert judged["ok"] is True and judged["unexpected"] == [] and judged["stale"] == []
    assert {e["check"].split("::")[1] for e in judged["expected"]} == set(FAILING_RULES)


def test_a_bad_list_is_refused_before_anything_runs(tmp_path):
    listed = tmp_path / "expected.txt"
    listed.write_text("smoke/canal-json::CONSUMER-DELET-1\n")
    r = CliRunner().invoke(main, ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", "local",
                                  "--work", str(tmp_path / "w"), "--expected-failures", str(listed)])
    assert r.exit_code == 2, r.output
    assert f"{listed}:1: unknown rule id 'CONSUMER-DELET-1'" in " ".join(r.output.split())
    assert not (tmp_path / "w").exists()
    missing = CliRunner().invoke(main, ["check", "--case", str(tmp_path), "--expected-failures",
                                        str(tmp_path / "none.txt")])
    assert missing.exit_code == 2 and "no such file (--update-expected-failures writes it)" in missing.output
    alone = CliRunner().invoke(main, ["check", "--case", str(tmp_path), "--update-expected-failures"])
    assert alone.exit_code == 2 and "--update-expected-failures needs --expected-failures FILE" in alone.output
