"""Without commit ts the verdict demands no order the stream cannot tell (checks/arrival_order.py).

Canal-JSON and Debezium without `enable-tidb-extension`: the reference consumers are conformant on
every scenario and seed, rows tied to an event of the same millisecond are reported undecidable
(each naming two records of one Kafka timestamp), and a consumer wrong beyond the tie still fails.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ticdc_conformance.consumers.rules.ddl_semantics import RenameTable, effects_of
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer, consume_local
from ticdc_conformance.runner import check_outputs, run_encoding
from ticdc_generators.pipeline import configure
from ticdc_generators.scenarios import SCENARIOS

PROTOCOLS = ("canal-json", "debezium")
# The matrix's seeds: 1-5 by default, so that CI stays within its time; TICDC_MATRIX_SEEDS=20 runs
# seeds 1-20 (the whole matrix, about 13 minutes for the sequential consumer on this machine).
SEEDS = range(1, int(os.environ.get("TICDC_MATRIX_SEEDS", "5")) + 1)
LARGE_EVENTS = 2000  # `large` at a reduced size: the matrix is about order, not volume
FAST = [("multi-table", 1, "canal-json"), ("multi-table", 2, "canal-json"), ("multi-table", 1, "debezium"),
        ("multi-table", 2, "debezium"), ("ddl-evolution", 7, "canal-json"),
        ("replays", 5, "canal-json")]  # a CREATE TABLE re-sent after rows of a later millisecond


def _run(tmp_path: Path, scenario: str, seed: int, protocol: str, consumer: str = "local", spark=None):
    config = configure(scenario, protocol, "UTC", None, f"kafka://h/t?protocol={protocol}&enable-tidb-extension=false")
    return run_encoding(scenario, seed, protocol, tmp_path, consumer=consumer, spark=spark, config=config,
                        events=LARGE_EVENTS if scenario == "large" else None)


def _timestamps(case: Path) -> dict[str, int]:
    """topic/partition/offset -> Kafka timestamp (ms) of every record."""
    out = {}
    for path in case.glob("records/*.parquet"):
        t = pq.read_table(path, columns=["topic", "partition", "offset", "timestamp"]).to_pylist()
        out.update({f"{r['topic']}/{r['partition']}/{r['offset']}": int(r["timestamp"].timestamp() * 1000 + 0.5)
                    for r in t})
    return out


def _assert_ties_are_real(result) -> None:
    """Every undecidable row names two records that carry one Kafka timestamp."""
    stamps = _timestamps(result.case)
    for u in result.undecidable:
        records = re.findall(r"record (\S+/\d+/\d+)\)", u["reason"])
        assert len(records) == 2, u
        assert stamps[records[0]] == stamps[records[1]], u
        assert f"Kafka timestamp {stamps[records[0]]} ms" in u["reason"], u


@pytest.mark.parametrize("scenario,seed,protocol", FAST)
def test_sequential_consumer_conformant_where_ties_exist(tmp_path, scenario, seed, protocol):
    result = _run(tmp_path, scenario, seed, protocol)
    assert result.error is None, result.error
    assert result.conformant, result.render()
    _assert_ties_are_real(result)
    if scenario == "replays":
        figures = json.loads((result.case / "consumer" / "consumer.json").read_text())
        assert figures["ddl_copies_dropped"] > 0, "the re-sent DDLs were recognised as copies"
    if protocol == "debezium":
        # TiCDC's Debezium always writes source.commit_ts: its consumer can know every order.
        assert result.undecidable == []


def test_rename_tie_reported_as_undecidable(tmp_path):
    result = _run(tmp_path, "multi-table", 1, "canal-json")
    assert result.undecidable, "the RENAME shares its millisecond with an UPDATE of the renamed table"
    assert all("RENAME TABLE" in u["reason"] for u in result.undecidable)
    assert {"key", "reason", "table"} == set(result.undecidable[0])


class _IgnoresRename(LocalConsumer):
    """Applies every DDL but RENAME: rows stay under the old name, later rows go to the new one."""

    def apply_ddl(self, ev: dict) -> None:
        if any(isinstance(e, RenameTable) for e in effects_of(ev["query"], ev["schema"], ev["table"])):
            self.figures["ddl_applied"] += 1
            return
        super().apply_ddl(ev)


def test_consumer_wrong_beyond_the_tie_still_fails(tmp_path):
    good = _run(tmp_path, "multi-table", 1, "canal-json")
    assert good.conformant and good.undecidable
    out = tmp_path / "ignores-rename"
    consume_local(good.case / "records", json.loads((good.case / "manifest.json").read_text()), out,
                  consumer_cls=_IgnoresRename)
    bad = check_outputs(good.case, out)
    assert not bad.conformant
    undecided = {(u["table"], repr(u["key"])) for u in bad.undecidable}
    beyond = [f for f in bad.findings if (f.table, repr(f.key)) not in undecided]
    assert beyond, "rows the RENAME moved and no tie touches are judged"


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_sequential_consumer_matrix(tmp_path, scenario, protocol):
    failed = []
    for seed in SEEDS:
        result = _run(tmp_path / str(seed), scenario, seed, protocol)
        if not result.conformant:
            failed.append(result.render())
        else:
            _assert_ties_are_real(result)
    assert not failed, "\n".join(failed)


@pytest.mark.spark
@pytest.mark.parametrize("scenario,seed,protocol", FAST[:2] + FAST[4:])
def test_spark_consumer_conformant_where_ties_exist(tmp_path, spark, scenario, seed, protocol):
    result = _run(tmp_path, scenario, seed, protocol, consumer="spark", spark=spark)
    assert result.error is None, result.error
    assert result.conformant, result.render()
    _assert_ties_are_real(result)


@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_spark_drops_re_sent_ddl_copies_as_the_sequential_consumer_does(tmp_path, spark):
    from ticdc_conformance.consumers.spark.job import consume

    good = _run(tmp_path, "replays", 5, "canal-json")
    manifest = json.loads((good.case / "manifest.json").read_text())
    local, remote = tmp_path / "local", tmp_path / "spark"
    local_figures = consume_local(good.case / "records", manifest, local)
    spark_figures = consume(spark, good.case / "records", manifest, remote, tmp_path / "work", run_dir=good.case)
    assert local_figures["ddl_copies_dropped"] > 0
    assert (remote / "applied.ndjson").read_bytes() == (local / "applied.ndjson").read_bytes()
    assert ({p.name: p.read_bytes() for p in (remote / "final").glob("*.ndjson")}
            == {p.name: p.read_bytes() for p in (local / "final").glob("*.ndjson")})
    assert {k: v for k, v in spark_figures.items() if k not in ("records", "events")} == local_figures
