"""`SinkSimulator.run_into` hands the writer the fields of exactly the records `run` yields, in
the same order, whatever the delivery (failovers, interleaving, bootstraps) or an observer; and
`RecordFileWriter.write_fields` writes the files `write` writes."""
from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter
from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import Sent, SinkSimulator

CASES = [
    ("smoke", "canal-json", {}),
    ("smoke", "open-protocol", {"max_batch_size": 3}),
    ("smoke", "simple-json", {"send_bootstrap_in_msg_count": 7}),
    ("smoke", "simple-avro", {"failovers": 2, "failover_spacing": 30}),
    ("smoke", "canal-json", {"failovers": 3, "failover_spacing": 40, "checkpoint_lag": 2, "interleave_tables": True}),
    ("smoke", "debezium", {"debezium_disable_schema": True}),
    ("smoke", "canal-json", {"large_message_handle_option": "handle-key-only", "max_message_bytes": 2048}),
    ("large", "open-protocol", {}),
    ("large", "simple-json", {}),
]


def _history(scenario: str, time_zone: str):
    return get_scenario(scenario).history(1, 3000 if scenario == "large" else None, time_zone)


@pytest.mark.parametrize("observe", [False, True], ids=["plain", "observed"])
@pytest.mark.parametrize("scenario, encoding, overrides", CASES)
def test_run_into_writes_the_records_run_yields(scenario, encoding, overrides, observe):
    config = config_for(scenario, encoding, **overrides)
    expected = list(SinkSimulator(config, seed=3).run(_history(scenario, config.time_zone)))
    seen: list[Sent] = []
    simulator = SinkSimulator(config, seed=3, observer=seen.append if observe else None)
    written: list[KafkaRecord] = []
    simulator.run_into(_history(scenario, config.time_zone), lambda *fields: written.append(KafkaRecord(*fields)))
    assert written == expected
    observed = [written.index(r) for sent in seen for r in sent.records]
    assert observed == sorted(set(observed)) and (observed or not observe)
    # once run_into returns, run yields its records again
    count = len(written)
    assert all(isinstance(r, KafkaRecord) for r in simulator.run(iter(()))) and len(written) == count


def test_write_fields_writes_the_files_write_writes(tmp_path: Path):
    config = config_for("smoke", "canal-json")
    records = list(SinkSimulator(config, seed=1).run(_history("smoke", config.time_zone)))
    with RecordFileWriter(tmp_path / "a") as a:
        for r in records:
            a.write(r)
    with RecordFileWriter(tmp_path / "b") as b:
        for r in records:
            b.write_fields(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp_ms, r.headers)
    assert a.count == b.count == len(records)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
