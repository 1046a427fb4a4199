"""The sink simulator's scheduling: dispatch, broadcast, watermarks, key-update splitting, bootstrap.

The protocol encoder is replaced by one that writes each event's kind into the message, so these
tests see exactly what the simulator sent where, independent of any protocol's bytes.
"""

from dataclasses import replace

import pytest

from ticdc_contract.model import (
    DDL,
    Column,
    DDLType,
    Index,
    Op,
    Partition,
    Partitioning,
    RowChange,
    TableSchema,
    Transaction,
)
from ticdc_contract.tidb_types import int_type, varchar
from ticdc_contract.tso import compose
from ticdc_generators.protocols import EncoderModule
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator
from ticdc_generators.sink.config import DispatchRule, SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, WatermarkEvent


class Tagging:
    def __init__(self, *_):
        pass

    def encode(self, ev):
        if isinstance(ev, RowEvent):
            ch = ev.change
            row = ch.after if ch.after is not None else ch.before
            tag = f"{ch.op.value}:{row['id']}:{ev.commit_ts}"
            ts = ev.commit_ts
        elif isinstance(ev, DDLEvent):
            tag, ts = f"ddl:{ev.ddl.commit_ts}", ev.ddl.commit_ts
        elif isinstance(ev, WatermarkEvent):
            tag, ts = f"wm:{ev.ts}", ev.ts
        else:
            assert isinstance(ev, BootstrapEvent)
            tag, ts = f"boot:{ev.table.table}", 0
        return [Message(None, tag.encode(), (), ts)]

    def flush(self):
        return []


def simulator(ddl_everywhere=True, bootstrap=False, **cfg):
    config = SinkConfig(protocol="simple", topic="t", dispatchers=(DispatchRule(partition="index-value"),),
                        **{"partition_num": 3, **cfg})
    sim = SinkSimulator(config)
    sim.module = EncoderModule("tagging", Tagging, lambda c: ddl_everywhere, lambda c: True, bootstrap)
    return sim


T = TableSchema("s", "t", 1, (Column("id", int_type(), nullable=False), Column("v", varchar(8))),
                (Index("PRIMARY", ("id",), primary=True, unique=True),), schema_version=compose(1000, 1))


def ts(ms, logical=1):
    return compose(ms, logical)


def history():
    yield DDL(ts(1000, 2), DDLType.CREATE_TABLE, "CREATE TABLE s.t", "s", "t", T, None)
    for i in range(1, 7):
        yield Transaction(ts(1000 + 400 * i), ts(1000 + 400 * i, 2),
                          (RowChange(T, Op.INSERT, None, {"id": i, "v": "x"}),))
    yield Transaction(ts(4000), ts(4000, 2), (
        RowChange(T, Op.UPDATE, {"id": 1, "v": "x"}, {"id": 100, "v": "y"}),
        RowChange(T, Op.UPDATE, {"id": 2, "v": "x"}, {"id": 2, "v": "z"}),
    ))


def by_partition(records):
    out = {}
    for r in records:
        out.setdefault(r.partition, []).append(r)
    return out


def tags(records):
    return [r.value.decode() for r in records]


def test_offsets_are_contiguous_per_partition_and_timestamps_come_from_the_tso():
    recs = list(simulator().run(history()))
    for p, rs in by_partition(recs).items():
        assert [r.offset for r in rs] == list(range(len(rs)))
    row = next(r for r in recs if r.value.startswith(b"insert:1:"))
    assert row.timestamp_ms == 1400


def test_ddl_goes_to_every_partition_or_to_partition_zero():
    everywhere = by_partition(simulator(ddl_everywhere=True).run(history()))
    assert all(tags(rs).count(f"ddl:{ts(1000, 2)}") == 1 for rs in everywhere.values())
    assert sorted(everywhere) == [0, 1, 2]
    first_only = by_partition(simulator(ddl_everywhere=False).run(history()))
    assert [p for p, rs in first_only.items() if f"ddl:{ts(1000, 2)}" in tags(rs)] == [0]


def test_watermarks_are_broadcast_monotonic_and_end_above_the_last_commit():
    parts = by_partition(simulator().run(history()))
    last_commit = ts(4000, 2)
    for rs in parts.values():
        marks = [int(t[3:]) for t in tags(rs) if t.startswith("wm:")]
        assert marks == sorted(marks) and len(marks) >= 3
        assert marks[-1] >= last_commit
    all_marks = [sorted(int(t[3:]) for t in tags(rs) if t.startswith("wm:")) for rs in parts.values()]
    assert all(m == all_marks[0] for m in all_marks)


def test_no_row_is_sent_below_an_earlier_watermark_of_its_partition():
    for rs in by_partition(simulator().run(history())).values():
        wm = 0
        for t in tags(rs):
            if t.startswith("wm:"):
                wm = int(t[3:])
            elif t.startswith(("insert", "update", "delete")):
                assert int(t.rsplit(":", 1)[1]) > wm


def test_key_update_splits_into_delete_then_deferred_insert():
    recs = list(simulator().run(history()))
    last_txn = [t for t in tags(recs) if t.endswith(f":{ts(4000, 2)}") and not t.startswith("wm:")]
    assert last_txn == [f"delete:1:{ts(4000, 2)}", f"update:2:{ts(4000, 2)}", f"insert:100:{ts(4000, 2)}"]


def test_output_raw_change_event_keeps_the_key_update_whole():
    recs = list(simulator(output_raw_change_event=True).run(history()))
    assert f"update:100:{ts(4000, 2)}" in tags(recs)
    assert f"delete:1:{ts(4000, 2)}" not in tags(recs)


def test_bootstrap_precedes_a_tables_first_row_in_every_partition():
    parts = by_partition(simulator(bootstrap=True).run(history()))
    for rs in parts.values():
        t = tags(rs)
        assert t.count("boot:t") >= 1
        first_row = next(i for i, x in enumerate(t) if x.startswith("insert"))
        assert t.index("boot:t") < first_row


def test_bootstrap_to_partition_zero_only():
    parts = by_partition(simulator(bootstrap=True, send_bootstrap_to_all_partition=False).run(history()))
    assert [p for p, rs in parts.items() if "boot:t" in tags(rs)] == [0]


def test_bootstrap_repeats_every_msg_count_rows():
    parts = by_partition(simulator(bootstrap=True, send_bootstrap_in_msg_count=2).run(history()))
    # 9 row events: the first sends one, then every 2 further rows another -> 5 rounds per partition.
    assert all(tags(rs).count("boot:t") == 5 for rs in parts.values())


def _boots_before_rows(version_profile, *versions):
    """Per row event of one partition (in order), how many BOOTSTRAPs came since the row before it,
    for a table written under each version in turn (two rows per version, one millisecond apart)."""
    def events():
        yield DDL(ts(1000, 2), DDLType.CREATE_TABLE, "CREATE TABLE s.t", "s", "t", T, None)
        for i, version in enumerate(versions):
            for j in (0, 1):
                yield Transaction(ts(2000 + 10 * i + j), ts(2000 + 10 * i + j, 2),
                                  (RowChange(version, Op.INSERT, None, {"id": 10 * i + j * 100 - 50, "v": "x"}),))
    sim = simulator(bootstrap=True, partition_num=1, version_profile=version_profile)
    out, since = [], 0
    for t in tags(sim.run(events())):
        if t.startswith("boot:"):
            since += 1
        elif t.startswith("insert"):
            out.append(since)
            since = 0
    return out


@pytest.mark.parametrize("profile", ["ticdc", "tiflow"])
def test_bootstrap_follows_the_table_id_not_the_name(profile):
    # TiCDC pkg/sink/codec/bootstraper.go keys a table by its ID: one that took another ID (TRUNCATE,
    # the normal table of EXCHANGE PARTITION) is a new table, whose first row sends a BOOTSTRAP at
    # once; a RENAME keeps the ID, and the next BOOTSTRAP comes at its cadence.
    new_id = replace(T, table_id=9, schema_version=compose(1500, 1))
    renamed = replace(T, table="u")
    assert _boots_before_rows(profile, T, new_id) == [1, 0, 1, 0]
    assert _boots_before_rows(profile, T, renamed) == [1, 0, 0, 0]


def test_tiflow_bootstraps_each_partition_on_its_first_row_new_ticdc_the_table_once():
    # tiflow keys by the row's physical table ID (RowChangedEvent.GetTableID), new TiCDC by the
    # table's ID (TableInfo.TableName.TableID).
    ranged = replace(T, partitioning=Partitioning("id", (Partition("p0", 2, 0), Partition("p1", 3, None))))
    assert _boots_before_rows("tiflow", ranged) == [1, 1]
    assert _boots_before_rows("ticdc", ranged) == [1, 0]


def test_bootstrap_disabled_when_both_cadences_are_zero():
    parts = by_partition(simulator(bootstrap=True, send_bootstrap_in_msg_count=0,
                                   send_bootstrap_interval_in_sec=0).run(history()))
    assert not any("boot:t" in tags(rs) for rs in parts.values())


@pytest.mark.parametrize("seed", [1, 7])
def test_smoke_history_is_deterministic_per_seed(seed):
    def txns(s):
        return [e for e in get_scenario("smoke").history(s)]
    a, b = txns(seed), txns(seed)
    assert a == b
    assert txns(seed + 1) != a


def test_smoke_history_has_what_the_scenario_promises():
    events = list(get_scenario("smoke").history(1))
    txns = [e for e in events if isinstance(e, Transaction)]
    ddls = [e for e in events if isinstance(e, DDL)]
    assert 95 <= len(txns) <= 105
    assert [d.ddl_type for d in ddls].count(DDLType.ADD_COLUMN) == 1
    assert 0 < events.index(next(d for d in ddls if d.ddl_type is DDLType.ADD_COLUMN)) < len(events) - 1
    ops = {c.op for t in txns for c in t.changes}
    assert ops == {Op.INSERT, Op.UPDATE, Op.DELETE}
    key_updates = [c for t in txns for c in t.changes
                   if c.op is Op.UPDATE and c.table.key_of(c.before) != c.table.key_of(c.after)]
    assert {c.table.table for c in key_updates} == {"orders", "customers"}
    commit = [e.commit_ts for e in events]
    assert commit == sorted(commit) and len(set(commit)) == len(commit)
    values = [v for t in txns for c in t.changes for v in (c.after or {}).values()]
    assert 2**64 - 1 in values and None in values and bytes(range(256)) in values


def test_bootstrap_needs_both_cadences_above_zero():
    # TiCDC pkg/config/sink.go ShouldSendBootstrapMsg: interval > 0 && msg count > 0.
    for cadence in ({"send_bootstrap_interval_in_sec": 0}, {"send_bootstrap_in_msg_count": 0}):
        parts = by_partition(simulator(bootstrap=True, **cadence).run(history()))
        assert not any("boot:t" in tags(rs) for rs in parts.values())


def test_defaults_never_restart_and_keep_send_order():
    sim = simulator()
    first = tags(sim.run(history()))
    assert sim.restarts == []
    assert first == tags(simulator().run(history()))


def test_a_restart_before_any_checkpoint_goes_back_to_the_start_and_resends_everything():
    sim = simulator(failovers=1, failover_spacing=2, checkpoint_lag=1)
    recs = list(sim.run(history()))
    (restart,) = sim.restarts
    events = list(history())
    assert restart.checkpoint_ts == events[0].commit_ts - 1
    sent_rows = [t for t in tags(recs) if t.startswith(("insert", "update", "delete"))]
    for p, rs in by_partition(recs).items():
        after = tags(rs[restart.offsets.get(("t", p), 0):])
        # the restarted changefeed reports its checkpoint first, then the DDL comes again
        assert after[0] == f"wm:{restart.checkpoint_ts}"
        assert after.count(f"ddl:{ts(1000, 2)}") == 1 and tags(rs).count(f"ddl:{ts(1000, 2)}") == 2
    resent = [t for p, rs in by_partition(recs).items() for t in tags(rs[restart.offsets.get(("t", p), 0):])
              if t.startswith(("insert", "update", "delete"))]
    assert sorted(set(sent_rows)) == sorted(resent)  # every row comes (again) after the restart
    assert len(sent_rows) > len(resent)
