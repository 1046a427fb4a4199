"""Simple's timing rules in the stream lint (protocols/simple/lint_timing.py): WATERMARK about every
second (SIMPLE-WATERMARK-3), a BOOTSTRAP of each table every send-bootstrap-interval-in-sec
(SIMPLE-BOOTSTRAP-1), none for a table without DML for 30 minutes (SIMPLE-BOOTSTRAP-10).

The simulator's streams keep them, with and without changefeed restarts, even with no tolerance at
all; streams broken on purpose (watermarks or BOOTSTRAPs dropped, messages re-sent with later build
times) are caught at the record that shows the breach, and a breach just before a restart is info.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Callable

import pytest

from ticdc_conformance.lint import SettingsError, lint, load_settings
from ticdc_conformance.protocols.simple import lint_timing as simple_timing
from ticdc_contract.record import KafkaRecord

from .test_lint import renumber, simulate
from .test_lint_canal_simple import go_json

TIMING = ("SIMPLE-WATERMARK-3", "SIMPLE-BOOTSTRAP-1", "SIMPLE-BOOTSTRAP-10")
ROWS = ("INSERT", "UPDATE", "DELETE")
DDL = ("CREATE", "RENAME", "CINDEX", "DINDEX", "ERASE", "TRUNCATE", "ALTER", "QUERY")
Found = tuple[str, str, str, int, int]  # rule, level, topic, partition, offset


def timing(records: list[KafkaRecord], settings) -> list[Found]:
    return [(f.rule, f.level, f.topic, f.partition, f.offset) for f in lint(records, settings).findings.kept
            if f.rule in TIMING]


def msg(r: KafkaRecord) -> dict:
    return json.loads(r.value)


def renumbered(records: list[KafkaRecord]) -> list[KafkaRecord]:
    for topic, partition in sorted({(r.topic, r.partition) for r in records}):
        records = renumber(records, topic, partition)
    return records


def with_build(r: KafkaRecord, build: int) -> KafkaRecord:
    doc = msg(r)
    doc["buildTs"] = build
    return replace(r, value=go_json(doc).encode())


def index(records: list[KafkaRecord], partition: int, want: Callable[[dict], bool], last: bool = False) -> int:
    hits = [i for i, r in enumerate(records) if r.partition == partition and want(msg(r))]
    return hits[-1] if last else hits[0]


def of(*types: str, table: str = "") -> Callable[[dict], bool]:
    return lambda m: m["type"] in types and (not table or m.get("table") == table
                                             or m.get("tableSchema", {}).get("table") == table)


# --- the simulator keeps them ---------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-WATERMARK-3", "SIMPLE-BOOTSTRAP-1", "SIMPLE-BOOTSTRAP-10")
@pytest.mark.parametrize("scenario", ["smoke", "replays", "ddl-evolution"])
@pytest.mark.parametrize("encoding, overrides", [
    ("simple-json", {}),
    ("simple-json", {"failovers": 2}),
    ("simple-avro", {"failovers": 2, "send_bootstrap_interval_in_sec": 1}),
    ("simple-json", {"failovers": 3, "checkpoint_lag": 0, "send_bootstrap_interval_in_sec": 1,
                     "send_all_bootstrap_at_start": True, "interleave_tables": True}),
])
def test_the_simulators_streams_keep_the_timing_rules_even_without_tolerance(scenario, encoding, overrides,
                                                                           monkeypatch):
    records, settings = simulate(scenario, encoding, **overrides)
    assert timing(records, settings) == []
    # The simulator's cadence is exact: no slack is needed for its streams (the slack is for TiCDC's
    # tickers and wall clock).
    monkeypatch.setattr(simple_timing, "WATERMARK_SLACK_MS", 0)
    monkeypatch.setattr(simple_timing, "BOOTSTRAP_SLACK_MS", 0)
    assert timing(records, settings) == []


# --- SIMPLE-WATERMARK-3 ---------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-WATERMARK-3")
def test_watermarks_dropped_for_seconds_are_caught_in_every_partition():
    records, settings = simulate("smoke", "simple-json")
    builds = sorted({msg(r)["buildTs"] for r in records if msg(r)["type"] == "WATERMARK"})
    gap = (builds[4], builds[12])  # eight watermark periods without a watermark
    records = renumbered([r for r in records
                          if not (msg(r)["type"] == "WATERMARK" and gap[0] < msg(r)["buildTs"] < gap[1])])
    found = timing(records, settings)
    assert {f[3] for f in found} == {0, 1, 2}
    limit = settings.watermark_interval_ms + simple_timing.WATERMARK_SLACK_MS
    by_offset = {(r.partition, r.offset): r for r in records}
    for rule, level, _, partition, offset in found:
        assert (rule, level) == ("SIMPLE-WATERMARK-3", "required")
        part = [r for r in records if r.partition == partition and r.offset <= offset]
        last_wm = max(msg(r)["buildTs"] for r in part if msg(r)["type"] == "WATERMARK")
        since = [msg(r)["buildTs"] for r in part if msg(r)["type"] in ROWS + DDL and msg(r)["buildTs"] > last_wm]
        breach = msg(by_offset[(partition, offset)])["buildTs"]
        # an earlier event already two periods late, and this one later still, no watermark between
        assert any(b - last_wm >= limit and b < breach for b in since[:-1])
        assert last_wm == gap[0]


def _late_resends(records: list[KafkaRecord], partition: int, before: int) -> tuple[list[KafkaRecord], int]:
    """Two copies of the partition's first row, re-sent just before record `before` and built 2.5 s and
    3 s after the partition's watermark preceding it; (records, index of the second copy)."""
    wm = index(records[:before], partition, of("WATERMARK"), last=True)
    row = records[index(records, partition, of(*ROWS))]
    build = msg(records[wm])["buildTs"]
    copies = [with_build(row, build + 2500), with_build(row, build + 3000)]
    return renumbered(records[:before] + copies + records[before:]), before + 1


@pytest.mark.rules("SIMPLE-WATERMARK-3", "KAFKA-DELIVERY-1")
def test_a_partition_moving_on_without_a_watermark_is_caught_and_is_info_just_before_a_restart():
    records, settings = simulate("smoke", "simple-json")
    next_wm = index(records, 1, lambda m: m["type"] == "WATERMARK" and m["buildTs"] > msg(records[0])["buildTs"]
                    + 5000)
    broken, i = _late_resends(records, 1, next_wm)
    r = broken[i]
    assert timing(broken, settings) == [("SIMPLE-WATERMARK-3", "required", r.topic, 1, r.offset)]

    records, settings = simulate("smoke", "simple-json", failovers=2)
    wms = [(i, msg(r)["commitTs"]) for i, r in enumerate(records) if r.partition == 1 and msg(r)["type"] == "WATERMARK"]
    restart = next(i for (_, before), (i, ts) in zip(wms, wms[1:]) if ts <= before)
    broken, i = _late_resends(records, 1, restart)
    r = broken[i]
    assert timing(broken, settings) == [("SIMPLE-WATERMARK-3", "info", r.topic, 1, r.offset)]


# --- SIMPLE-BOOTSTRAP-1 ---------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-BOOTSTRAP-1")
def test_bootstraps_missing_for_longer_than_the_interval_are_caught_at_the_first_late_row():
    records, settings = simulate("smoke", "simple-json", send_bootstrap_interval_in_sec=1)
    firsts = {index(records, p, of("BOOTSTRAP", table="orders")) for p in range(3)}
    records = renumbered([r for i, r in enumerate(records)
                          if i in firsts or not of("BOOTSTRAP", table="orders")(msg(r))])
    found = timing(records, settings)
    assert found and all(f[:2] == ("SIMPLE-BOOTSTRAP-1", "required") for f in found)
    limit = settings.bootstrap_interval_ms + simple_timing.BOOTSTRAP_SLACK_MS
    for partition in range(3):
        rows = [(r.offset, msg(r)["buildTs"]) for r in records if r.partition == partition
                and of(*ROWS, table="orders")(msg(r))]
        announced = rows[0][1]  # the row the partition's only BOOTSTRAP of the table came with
        late = next((offset for offset, build in rows if build - announced >= limit), None)
        mine = [f[4] for f in found if f[3] == partition]
        assert (mine[:1] == [late]) if late is not None else mine == []
    assert any(f[3] == 0 for f in found)


@pytest.mark.rules("SIMPLE-BOOTSTRAP-1", "KAFKA-DELIVERY-1")
def test_a_late_row_without_bootstrap_is_info_when_a_restart_follows():
    def late_row(records: list[KafkaRecord], before: int) -> tuple[list[KafkaRecord], KafkaRecord]:
        row = records[index(records, 2, of(*ROWS, table="customers"))]
        latest = max(msg(r)["buildTs"] for r in records[:before])
        copy = with_build(row, latest + 10_000)  # re-sent, built 10 s after anything before it
        out = renumbered(records[:before] + [copy] + records[before:])
        return out, out[before]

    records, settings = simulate("smoke", "simple-json", send_bootstrap_interval_in_sec=1)
    mid = index(records, 2, lambda m: m["type"] == "WATERMARK" and m["buildTs"] > msg(records[0])["buildTs"] + 5000)
    broken, r = late_row(records, mid)
    assert ("SIMPLE-BOOTSTRAP-1", "required", r.topic, 2, r.offset) in timing(broken, settings)

    records, settings = simulate("smoke", "simple-json", send_bootstrap_interval_in_sec=1, failovers=2)
    wms = [(i, msg(r)["commitTs"]) for i, r in enumerate(records) if r.partition == 2 and msg(r)["type"] == "WATERMARK"]
    restart = next(i for (_, before), (i, ts) in zip(wms, wms[1:]) if ts <= before)
    broken, r = late_row(records, restart)
    found = timing(broken, settings)
    assert ("SIMPLE-BOOTSTRAP-1", "info", r.topic, 2, r.offset) in found
    assert [f for f in found if f[1] == "required"] == []


# --- SIMPLE-BOOTSTRAP-10 --------------------------------------------------------------------------
_INACTIVE = simple_timing.INACTIVE_MS + simple_timing.INACTIVE_SLACK_MS


def _idle_bootstrap(records: list[KafkaRecord], after_dml_ms: int) -> tuple[list[KafkaRecord], KafkaRecord]:
    """A BOOTSTRAP of smoke.orders appended to partition 1, built `after_dml_ms` after the table's last
    DML in the topic."""
    last_dml = max(msg(r)["buildTs"] for r in records if of(*ROWS, table="orders")(msg(r)))
    bootstrap = records[index(records, 1, of("BOOTSTRAP", table="orders"))]
    offset = 1 + max(r.offset for r in records if r.partition == 1)
    copy = replace(with_build(bootstrap, last_dml + after_dml_ms), offset=offset)
    return records + [copy], copy


@pytest.mark.rules("SIMPLE-BOOTSTRAP-10")
def test_a_bootstrap_of_a_table_inactive_for_30_minutes_is_caught_unless_a_dml_follows():
    records, settings = simulate("smoke", "simple-json")
    broken, b = _idle_bootstrap(records, _INACTIVE + 60_000)
    assert timing(broken, settings) == [("SIMPLE-BOOTSTRAP-10", "required", b.topic, 1, b.offset)]
    # inside the 30 minutes (and the bootstrap worker's GC tick): not judged
    assert timing(_idle_bootstrap(records, _INACTIVE - 1000)[0], settings) == []
    # the BOOTSTRAP a new DML brings: a DML of the table follows it (here on its partition, which
    # also makes it the BOOTSTRAP SIMPLE-BOOTSTRAP-1 times that partition's rows of the table from)
    row = records[index(records, 1, of(*ROWS, table="orders"))]
    woken = broken + [replace(with_build(row, msg(b)["buildTs"]), offset=b.offset + 1)]
    assert timing(woken, settings) == []


@pytest.mark.rules("SIMPLE-BOOTSTRAP-10")
def test_the_wake_up_bootstrap_goes_to_every_partition_and_the_new_dml_to_one():
    records, settings = simulate("smoke", "simple-json")
    last_dml = max(msg(r)["buildTs"] for r in records if of(*ROWS, table="orders")(msg(r)))
    bootstrap = records[index(records, 1, of("BOOTSTRAP", table="orders"))]
    ends = {p: max(r.offset for r in records if r.partition == p) for p in range(3)}
    build = last_dml + _INACTIVE + 60_000
    woken = records + [replace(with_build(bootstrap, build), partition=p, offset=ends[p] + 1) for p in range(3)]
    row = records[index(records, 2, of(*ROWS, table="orders"))]
    woken.append(replace(with_build(row, build), offset=ends[2] + 2))
    assert timing(woken, settings) == []
    # without the DML every partition's copy is caught
    assert [f[3] for f in timing(woken[:-1], settings)] == [0, 1, 2]


@pytest.mark.rules("SIMPLE-BOOTSTRAP-10")
def test_a_second_idle_bootstrap_before_any_dml_shows_the_first_was_no_wake_up():
    records, settings = simulate("smoke", "simple-json")
    once, first = _idle_bootstrap(records, _INACTIVE + 60_000)
    twice, second = _idle_bootstrap(once, _INACTIVE + 120_000)
    assert timing(twice, settings) == [("SIMPLE-BOOTSTRAP-10", "required", first.topic, 1, first.offset),
                                       ("SIMPLE-BOOTSTRAP-10", "required", second.topic, 1, second.offset)]


@pytest.mark.rules("SIMPLE-BOOTSTRAP-10", "KAFKA-DELIVERY-1")
def test_an_idle_bootstrap_a_restart_sends_is_not_judged():
    records, settings = simulate("smoke", "simple-json")
    broken, b = _idle_bootstrap(records, _INACTIVE + 60_000)
    # the restarted changefeed's first WATERMARK: its checkpoint, not above the last one
    last_wm = records[index(records, 1, of("WATERMARK"), last=True)]
    broken.append(replace(last_wm, offset=b.offset + 1))
    assert timing(broken, settings) == []


# --- settings -------------------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-WATERMARK-3")
def test_the_watermark_period_comes_from_the_manifest(tmp_path):
    records, settings = simulate("smoke", "simple-json")
    next_wm = index(records, 1, lambda m: m["type"] == "WATERMARK" and m["buildTs"] > msg(records[0])["buildTs"]
                    + 5000)
    broken, i = _late_resends(records, 1, next_wm)  # events 2.5 s and 3 s after a watermark
    manifest = tmp_path / "manifest.json"
    for period, caught in ((1000, True), (2000, False)):
        manifest.write_text(json.dumps({"protocol": "simple", "sink": {"encoding-format": "json"},
                                        "generator": {"watermark_interval_ms": period}}))
        loaded = load_settings(None, manifest=manifest)
        assert loaded.watermark_interval_ms == period
        assert bool(timing(broken, replace(settings, watermark_interval_ms=period))) is caught
    manifest.write_text(json.dumps({"protocol": "simple", "generator": {"watermark_interval_ms": "1s"}}))
    with pytest.raises(SettingsError, match="watermark_interval_ms"):
        load_settings(None, manifest=manifest)
    manifest.write_text(json.dumps({"protocol": "simple"}))
    assert load_settings(None, manifest=manifest).watermark_interval_ms == 1000  # spec 004: 1 second
