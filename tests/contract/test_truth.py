"""The truth files hold the whole history: `read_history` gives back, field for field, the events
`TruthWriter` wrote, so the checks can replay upstream from a case folder without the generator."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from ticdc_contract.model import DDL, ROWID, DDLType, Transaction
from ticdc_contract.truth import OldTruthError, TruthWriter, read_history
from ticdc_generators.scenarios import SCENARIOS, get_scenario
from ticdc_generators.strategies import histories


def _written_and_read(history, directory: Path) -> list:
    writer = TruthWriter(directory)
    for _ in writer.tee(history):
        pass
    writer.close()
    return list(read_history(directory))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_history_reads_back_equal(scenario, tmp_path):
    history = list(get_scenario(scenario).history(1, 400 if scenario == "large" else None, "UTC"))
    assert _written_and_read(history, tmp_path) == history


def test_the_history_read_back_holds_what_the_truth_needed_to_carry(tmp_path):
    # What a history line did not hold before the reader existed: ADD COLUMN backfills, the table
    # before a DDL, both tables of an EXCHANGE PARTITION, table collations, hidden row IDs.
    history = list(get_scenario("ddl-evolution").history(1, None, "UTC"))
    back = _written_and_read(history, tmp_path)
    ddls = [e for e in back if isinstance(e, DDL)]
    assert any(d.backfill for d in ddls)
    assert any(d.ddl_type is DDLType.EXCHANGE_TABLE_PARTITION and d.other_after is not None for d in ddls)
    assert any(d.table_after is not None and d.table_after.collate != "utf8mb4_bin" for d in ddls)
    keys = _written_and_read(list(get_scenario("keys").history(1, None, "UTC")), tmp_path / "keys")
    keyless = [ch for e in keys if isinstance(e, Transaction) for ch in e.changes if not ch.table.handle_key]
    assert keyless and all(ROWID in (ch.after or ch.before) for ch in keyless)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(max_steps=10))
def test_generated_histories_read_back_equal(history):
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        assert _written_and_read(history, Path(directory)) == list(history)


def test_a_truth_written_before_the_lines_held_whole_events_is_refused_by_name(tmp_path):
    history = list(get_scenario("smoke").history(1, 20, "UTC"))
    _written_and_read(history, tmp_path)
    lines = (tmp_path / "history.ndjson").read_bytes().splitlines(keepends=True)
    old = [orjson.dumps({k: v for k, v in orjson.loads(line).items()
                         if k not in ("table_before", "backfill", "other_before", "other_after")}) + b"\n"
           for line in lines]
    (tmp_path / "history.ndjson").write_bytes(b"".join(old))
    with pytest.raises(OldTruthError, match=r"history.ndjson line 1 has no table_before.*generate the case again"):
        list(read_history(tmp_path))
