"""`ticdc-conformance lint` end to end: every named scenario in every encoding of the default matrix
lints clean (the `replays` scenario's restarts are reported as replays, not violations), and the
command reads record files with their manifest, reads Kafka through the transport, reports broken
and hostile streams with coordinates and exits 1, and refuses unreadable input with exit 2."""
from __future__ import annotations

import json
import sys
import types
from dataclasses import replace

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ticdc_conformance.transport
from ticdc_conformance.cli import main
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.lint import lint
from ticdc_conformance.lint.settings import make_settings
from ticdc_conformance.protocols.open_protocol import new_decoder
from ticdc_contract.record_files import iter_record_files, records_to_table
from ticdc_generators.pipeline import config_for, encoding_names, generate
from ticdc_generators.scenarios import SCENARIOS, get_scenario
from ticdc_generators.simulator import SinkSimulator

SCENARIO_NAMES = sorted(SCENARIOS)
# The scenarios that take long enough to keep out of the quick runs; `large` at a small size.
SLOW = {"large": 2000, "types": None, "wide-rows": None}


def _lint_simulated(scenario: str, encoding: str, seed: int = 1, events=None):
    cfg = config_for(scenario, encoding)
    sim = SinkSimulator(cfg, seed=seed)
    records = list(sim.run(get_scenario(scenario).history(seed, events, cfg.time_zone)))
    # The topics' partitions known up front, as a manifest gives them, so every broadcast is judged.
    result = lint(records, make_settings(cfg.protocol, cfg.ticdc_options(), sim.topics()))
    return result, sim


def _matrix():
    for scenario in SCENARIO_NAMES:
        marks = [pytest.mark.slow] if scenario in SLOW else []
        for encoding in encoding_names():
            yield pytest.param(scenario, encoding, marks=marks, id=f"{scenario}-{encoding}")


@pytest.mark.rules("OPEN-ORDER-1", "OPEN-WATERMARK-2", "OPEN-BROADCAST-1", "OPEN-BROADCAST-2", "OPEN-DISPATCH-1",
                   "CANAL-WATERMARK-3", "CANAL-DISPATCH-1", "DBZ-WATERMARK-1", "DBZ-BROADCAST-1",
                   "SIMPLE-ORDER-1", "SIMPLE-ORDER-2", "SIMPLE-WATERMARK-1", "SIMPLE-BROADCAST-1",
                   "SIMPLE-BROADCAST-2", "SIMPLE-DISPATCH-1", "SIMPLE-BOOTSTRAP-8", "SIMPLE-SCHEMAVERSION-3",
                   "KAFKA-DELIVERY-1")
@pytest.mark.parametrize("scenario, encoding", list(_matrix()))
def test_every_scenario_in_every_encoding_lints_clean(scenario, encoding):
    result, sim = _lint_simulated(scenario, encoding, events=SLOW.get(scenario))
    violations = [f.line() for f in result.findings.kept if f.level != "info"]
    assert violations == []
    totals = result.summary["totals"]
    assert totals["records"] == sum(p.next_offset for p in sim.partitions.values())
    assert totals["unjudged"] == 0
    if sim.restarts:
        # Every restart falls back to an older checkpoint on every partition and resends rows.
        assert totals["replays"] >= len(sim.restarts) and totals["resent"] > 0
        assert result.findings.count("info", "KAFKA-DELIVERY-1") == totals["replays"]
    else:
        assert totals["replays"] == totals["resent"] == 0 and result.findings.count() == 0


@pytest.mark.rules("KAFKA-DELIVERY-1", "CONSUMER-DEDUP-1")
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("encoding", ["open-protocol", "simple-avro"])
def test_the_replays_scenario_lints_clean_for_other_seeds(seed, encoding):
    result, sim = _lint_simulated("replays", encoding, seed)
    assert not result.failed and result.findings.count("recommended") == 0
    assert sim.restarts and result.summary["totals"]["replays"] >= len(sim.restarts)


# --- the command ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke-open")
    generate("smoke", 1, config_for("smoke", "open-protocol", max_batch_size=1), out)
    return out


def cli(*args: str):
    return CliRunner().invoke(main, ["lint", *args])


def test_a_generated_run_lints_clean_with_its_manifest_found_beside_the_records(run_dir):
    out = cli("--records", str(run_dir / "records"))
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[-1].startswith("PASS: 0 required")
    as_json = cli("--records", str(run_dir / "records"), "--format", "json")
    report = json.loads(as_json.output)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert report["passed"] and report["findings"] == []
    assert report["summary"]["totals"]["records"] == manifest["records"]
    assert report["summary"]["encoding"] == "open-protocol"


def _write(records, directory):
    directory.mkdir()
    for key in sorted({(r.topic, r.partition) for r in records}):
        part = sorted((r for r in records if (r.topic, r.partition) == key), key=lambda r: r.offset)
        pq.write_table(records_to_table(part), directory / f"{key[0]}-{key[1]}.parquet")
    return directory


@pytest.mark.rules("OPEN-DISPATCH-1", "OPEN-FRAMING-1")
def test_a_broken_stream_fails_with_rule_and_coordinates_in_json(run_dir, tmp_path):
    records = list(iter_record_files(run_dir / "records"))
    # A hostile record at the end of partition 1, and partition 2's last record carrying a copy of
    # a row event first sent on partition 0.
    decoders = {p: new_decoder() for p in range(3)}
    rows = [(events[0].commit_ts, r) for r in records for events in [decoders[r.partition].decode(r)]
            if isinstance(events[0], DecodedRow)]
    # The last row event of the run (at the final watermark, so it is not below it) sent again on
    # the next partition, and a hostile record on another.
    ts, last_row = max(rows, key=lambda x: (x[0], x[1].partition, x[1].offset))
    target, hostile = (last_row.partition + 1) % 3, (last_row.partition + 2) % 3
    end = {p: max(r.offset for r in records if r.partition == p) + 1 for p in range(3)}
    moved = replace(last_row, partition=target, offset=end[target])
    garbage = replace(records[0], partition=hostile, offset=end[hostile], key=b"\xff" * 12, value=b"\x00junk")
    broken = _write(records + [garbage, moved], tmp_path / "records")
    out = cli("--records", str(broken), "--manifest", str(run_dir / "manifest.json"), "--format", "json")
    assert out.exit_code == 1, out.output
    report = json.loads(out.output)
    found = {(f["rule"], f["partition"], f["offset"]) for f in report["findings"] if f["level"] == "required"}
    assert found == {("OPEN-FRAMING-1", hostile, end[hostile]), ("OPEN-DISPATCH-1", target, end[target])}
    assert not report["passed"] and report["findings_total"] == 2
    text = cli("--records", str(broken), "--manifest", str(run_dir / "manifest.json"))
    assert text.exit_code == 1 and f"ticdc-smoke/{hostile}@{end[hostile]}" in text.output
    assert text.output.splitlines()[-1].startswith("FAIL: 2 required")


def test_unreadable_input_and_contradicting_options_exit_2(run_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    out = cli("--records", str(tmp_path / "empty"), "--protocol", "canal-json")
    assert out.exit_code == 2 and "no record files" in out.output
    out = cli("--records", str(run_dir / "records"), "--protocol", "debezium")
    assert out.exit_code == 2 and "open-protocol run" in out.output
    assert cli("--kafka", "localhost:1").exit_code == 2
    assert cli("--protocol", "open-protocol").exit_code == 2
    out = cli("--records", str(run_dir / "records"), "--sink-option", "large-message-handle-compression=zip")
    assert out.exit_code == 2 and "zip" in out.output


def test_kafka_streams_are_read_through_the_transport(run_dir, monkeypatch):
    """`--kafka` reads through ticdc_conformance.transport.kafka_io; a stand-in serves the run's records
    so the wiring is tested without a broker (tests/e2e with a real broker cover the transport)."""
    records = list(iter_record_files(run_dir / "records"))
    asked = []

    def kafka_records(bootstrap, topic, partitions=None):
        asked.append((bootstrap, topic, list(partitions)))
        return iter([r for r in records if r.topic == topic and (partitions is None or r.partition in partitions)])

    def cluster_metadata(bootstrap, topic=None):
        partitions = {p: None for p in sorted({r.partition for r in records if r.topic == topic})}
        return types.SimpleNamespace(topics={topic: types.SimpleNamespace(partitions=partitions, error=None)})

    fake = types.ModuleType("ticdc_conformance.transport.kafka_io")
    fake.kafka_records, fake.cluster_metadata = kafka_records, cluster_metadata
    monkeypatch.setitem(sys.modules, "ticdc_conformance.transport.kafka_io", fake)
    monkeypatch.setattr(ticdc_conformance.transport, "kafka_io", fake, raising=False)
    out = cli("--kafka", "broker:9092", "--topic", "ticdc-smoke", "--manifest", str(run_dir / "manifest.json"))
    assert out.exit_code == 0, out.output
    assert f"{len(records)} record(s) in 3 partition(s)" in out.output
    assert asked == [("broker:9092", "ticdc-smoke", [p]) for p in range(3)]
    # Without a manifest the partitions come from the topic's metadata.
    out = cli("--kafka", "broker:9092", "--topic", "ticdc-smoke", "--protocol", "open-protocol")
    assert out.exit_code == 0, out.output
    assert asked[3:] == [("broker:9092", "ticdc-smoke", [p]) for p in range(3)]
