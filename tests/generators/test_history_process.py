"""`generate` with the history drawn in a child process (history_process.py) writes the files one
process writes, byte for byte, for every scenario; a failure on either side is an error that names
it, and leaves no process behind."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.processes import killed_mid_stream
from ticdc_generators import history_process
from ticdc_generators.errors import ChangefeedFailure
from ticdc_generators.history_process import HistoryProcess, HistoryProcessError, worth_a_process
from ticdc_generators.pipeline import config_for, generate
from ticdc_generators.scenarios import SCENARIOS

# Every scenario, each under an encoding and delivery that exercise it: DDLs with table versions
# (Simple's schema messages tell versions apart by identity), every value type, failovers that send
# events again, claim-check storage.
CASES = [
    ("smoke", "canal-json", {"failovers": 2, "failover_spacing": 30}),
    ("types", "simple-avro", {}),
    ("types", "debezium", {}),
    ("keys", "open-protocol", {}),
    ("ddl-evolution", "simple-json", {"send_bootstrap_in_msg_count": 7}),
    ("ddl-evolution", "canal-json", {}),
    ("multi-table", "debezium", {"interleave_tables": True}),
    ("wide-rows", "open-protocol", {"large_message_handle_option": "claim-check",
                                    "claim_check_storage_uri": "file:///tmp/cc", "max_message_bytes": 2048}),
    ("large", "simple-json", {}),
    ("replays", "canal-json", {}),
]


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_cases_cover_every_scenario():
    assert {c[0] for c in CASES} == set(SCENARIOS)


@pytest.mark.parametrize("scenario, encoding, overrides", CASES)
def test_two_processes_write_the_files_one_writes(tmp_path, scenario, encoding, overrides):
    events = 4000 if scenario == "large" else None
    config = config_for(scenario, encoding, **overrides)
    one = generate(scenario, 5, config, tmp_path / "one", events=events, processes=1)
    two = generate(scenario, 5, config, tmp_path / "two", events=events, processes=2)
    assert two == one  # the manifest, last commit ts included
    digests = _digests(tmp_path / "one")
    assert any(name.startswith("truth/") for name in digests) and any(name.startswith("records/") for name in digests)
    assert _digests(tmp_path / "two") == digests


def test_a_large_case_takes_two_processes_by_default_and_a_small_one_does_not(monkeypatch):
    monkeypatch.setattr(history_process, "usable_cores", lambda: 2)
    assert worth_a_process(history_process.TWO_PROCESSES_FROM)
    assert not worth_a_process(history_process.TWO_PROCESSES_FROM - 1)
    assert not worth_a_process(None)  # a scenario of no stated size
    monkeypatch.setattr(history_process, "usable_cores", lambda: 1)
    assert not worth_a_process(10 * history_process.TWO_PROCESSES_FROM)


def test_generate_chooses_by_the_scenario_size(tmp_path, monkeypatch):
    started: list[tuple] = []
    real = history_process.HistoryProcess.__init__

    def spy(self, *args, **kwargs):
        started.append(args)
        real(self, *args, **kwargs)

    monkeypatch.setattr(history_process.HistoryProcess, "__init__", spy)
    monkeypatch.setattr(history_process, "usable_cores", lambda: 2)
    monkeypatch.setattr(history_process, "TWO_PROCESSES_FROM", 2000)
    generate("large", 1, config_for("large", "canal-json"), tmp_path / "a", events=1999)
    assert started == []
    generate("large", 1, config_for("large", "canal-json"), tmp_path / "b", events=2000)
    assert [a[0] for a in started] == ["large"]
    generate("smoke", 1, config_for("smoke", "canal-json"), tmp_path / "c")  # not sized: one process
    generate("smoke", 1, config_for("smoke", "canal-json"), tmp_path / "d", events=50_000)  # which it ignores
    assert len(started) == 1


def test_an_error_drawing_the_history_is_raised_as_one_process_raises_it(tmp_path, no_process_left):
    config = config_for("large", "canal-json")
    wrong: Any = "3000"  # a size given as text: the history's first comparison with it fails
    with pytest.raises(TypeError) as single:
        generate("large", 1, config, tmp_path / "one", events=wrong, processes=1)
    with pytest.raises(TypeError) as double:
        generate("large", 1, config, tmp_path / "two", events=wrong, processes=2)
    assert str(double.value) == str(single.value)
    assert any("raised in the process drawing the history of scenario 'large'" in n
               for n in getattr(double.value, "__notes__", []))


def test_a_child_that_dies_mid_stream_is_an_error_naming_it(tmp_path, no_process_left):
    message = killed_mid_stream(HistoryProcess("large", 1, 200_000, "UTC", tmp_path / "truth"), HistoryProcessError)
    assert "the history of scenario 'large' (seed 1, 200000 row events)" in message


def test_a_failing_simulation_stops_the_child(tmp_path, no_process_left):
    # Debezium's messages do not fit in 64 bytes: the simulated changefeed fails at the first row.
    config = config_for("large", "debezium", max_message_bytes=64)
    with pytest.raises(ChangefeedFailure):
        generate("large", 1, config, tmp_path / "case", events=200_000, processes=2)


def test_leaving_the_stream_early_stops_the_child(tmp_path, no_process_left):
    with HistoryProcess("large", 1, 1_000_000, "UTC", tmp_path / "truth") as history:
        for n, _ in enumerate(history):
            if n == 10:
                break
