"""Any scenario can be delivered at least once: `--failovers` restarts the simulated changefeed
(replays from the checkpoint) and `--interleave-tables` interleaves tables within a partition."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import CLI, ROOT

ARGS = ["--failovers", "2", "--failover-spacing", "15", "--interleave-tables"]


def test_failovers_on_any_scenario_reach_the_manifest(tmp_path):
    done = subprocess.run([*CLI, "generate", "--scenario", "keys", "--protocol", "canal-json", *ARGS,
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    generator = json.loads((tmp_path / "manifest.json").read_text())["generator"]
    assert (generator["failovers"], generator["failover_spacing"], generator["interleave_tables"]) == (2, 15, True)
    assert len(generator["restarts"]) == 2


def test_a_consumer_that_reapplies_replays_is_caught_and_the_replay_command_keeps_the_options(tmp_path):
    broken = f"{sys.executable} {ROOT / 'tests/consumers/reapplies_replays.py'}"
    done = subprocess.run([*CLI, "run", "--scenario", "keys", "--protocol", "canal-json", *ARGS,
                           "--consumer", broken, "--work", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CONSUMER-DEDUP-1" in done.stdout
    assert "--failovers 2 --failover-spacing 15 --interleave-tables" in done.stdout


def test_the_reference_consumer_is_conformant_under_failovers(tmp_path):
    done = subprocess.run([*CLI, "run", "--scenario", "keys", "--protocol", "all", *ARGS, "--consumer", "local",
                           "--work", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
