"""The encodings against each other at their common fidelity: every scenario agrees, a tampered
record or a missing lowering is caught with the rule, type, column, key and records."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance import cross_encoding
from ticdc_conformance.checks.locate import decoded_rows
from ticdc_conformance.cross_encoding import CrossCheck, check_encodings_agree
from ticdc_generators.pipeline import encoding_names

SCENARIOS = ["smoke", "types", "keys", "ddl-evolution", "multi-table", "wide-rows", "replays"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_encoding_agrees_with_every_other(tmp_path, scenario):
    verdict = check_encodings_agree(scenario, 1, tmp_path)
    assert verdict.agree, verdict.render()
    assert set(verdict.events) == set(encoding_names())
    assert len(set(verdict.events.values())) == 1 and min(verdict.events.values()) > 0, verdict.events


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    work = tmp_path_factory.mktemp("cross")
    assert check_encodings_agree("smoke", 1, work).agree
    return {enc: (work / "smoke-seed1" / enc, json.loads((work / "smoke-seed1" / enc / "manifest.json").read_text()))
            for enc in encoding_names()}


def test_a_tampered_value_in_one_encoding_is_named(tmp_path, smoke):
    smoke = {enc: (shutil.copytree(case, tmp_path / enc), manifest) for enc, (case, manifest) in smoke.items()}
    case, manifest = smoke["simple-json"]
    first = next(ev for ev in decoded_rows(case, manifest) if ev["table"] == "orders" and ev["op"] == "insert")
    amount = first["after"]["amount"]
    wrong = amount[:-1] + ("1" if amount[-1] != "1" else "2")
    path = next(p for p in sorted((case / "records").glob("*.parquet"))
                if first["topic"] in p.name and p.name.endswith(f"-{first['partition']}.parquet"))
    table = pq.read_table(path)
    values = table.column("value").to_pylist()
    values[first["offset"]] = values[first["offset"]].replace(f'"{amount}"'.encode(), f'"{wrong}"'.encode())
    pq.write_table(table.set_column(table.schema.get_field_index("value"), "value", pa.array(values, pa.binary())),
                   path)

    verdict = CrossCheck("smoke", 1, smoke).run()
    assert not verdict.agree
    [f] = verdict.findings
    # Simple's mysqlType table gives Avro types: a JSON value answers to the rule for `data`.
    assert f.rule == "SIMPLE-DML-2" and f.table == "smoke.orders" and f.key == [first["after"]["id"]]
    assert f.commit_ts == first["commit_ts"]
    assert f"simple-json {first['topic']}/{first['partition']}@{first['offset']}" in f.record
    # At the common fidelity a DECIMAL is Debezium's float64 (spec 000), whoever read it.
    meet, meet_wrong = (orjson.dumps(float(x)).decode() for x in (amount, wrong))
    text = verdict.render()
    for part in ("[SIMPLE-DML-2]", "SIMPLE-DML-2 (required", "amount DECIMAL(20,6)",
                 f"simple-json read {meet_wrong}", f"read {meet}", f"commit ts {first['commit_ts']}", "seed 1",
                 f"root['amount']: {meet} -> {meet_wrong}",
                 "replay: ticdc-conformance differential --scenario smoke --seed 1"):
        assert part in text, (part, text)


def test_without_the_meet_the_lossy_types_disagree(smoke, monkeypatch):
    """The comparison is sensitive: without lowering to the common fidelity, Debezium's DECIMAL
    floats stand out, named by the rule of its type mapping."""
    monkeypatch.setattr(cross_encoding, "lowering", lambda protocol, options: (lambda column, value: value))
    verdict = CrossCheck("smoke", 1, smoke).run()
    assert not verdict.agree
    assert {f.rule for f in verdict.findings} == {"DBZ-TYPEMAP-4"}
    assert all(re.search(r"(amount|balance) DECIMAL\(20,6\)", f.message) and "debezium read" in f.message
               for f in verdict.findings)


def test_a_row_event_missing_from_one_encoding_is_named(smoke, monkeypatch):
    real = cross_encoding.decoded_rows

    def losing(case, manifest):
        rows = real(case, manifest)
        if manifest["encoding"] == "canal-json":
            next(rows)  # the first row event is lost
        return rows

    monkeypatch.setattr(cross_encoding, "decoded_rows", losing)
    verdict = CrossCheck("smoke", 1, smoke).run()
    [f] = verdict.findings
    assert f.rule == "CANAL-DML-1" and "read from none of canal-json's records" in f.message
    assert f.commit_ts is not None and f.key is not None


def test_cli_differential_exits_0_and_writes_its_report(tmp_path):
    proc = subprocess.run(CLI + ["differential", "--scenario", "keys", "--seed", "2", "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "encodings agree at their common fidelity (scenario keys, seed 2)" in proc.stdout
    report = json.loads((tmp_path / "r" / "differential-keys-seed2.json").read_text())
    assert report["agree"] is True and report["replay"] == "ticdc-conformance differential --scenario keys --seed 2"


def test_each_encoding_is_generated_into_an_emptied_folder(tmp_path):
    """A records file an earlier, larger run left behind is never read as this run's."""
    stale = tmp_path / "smoke-seed1" / "canal-json" / "records" / "stale-partition.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"not a parquet file")
    verdict = check_encodings_agree("smoke", 1, tmp_path, encodings=["canal-json", "open-protocol"])
    assert verdict.agree, verdict.render()
    assert not stale.exists()
