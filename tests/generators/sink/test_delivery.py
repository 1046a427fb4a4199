"""Delivery as TiCDC's Kafka sink does it: replays after restarts, tables interleaved between
checkpoints, send-all-bootstrap-at-start.

Most tests swap the protocol encoder for one that remembers each event it was handed, so the
records map straight back to the simulator's events (no decoding); the byte-level tests wrap the
real encoders.
"""
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache

import pytest

from ticdc_conformance.checks.key_updates import delivered_changes
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema, Transaction
from ticdc_contract.state import replay
from ticdc_contract.tidb_types import int_type, varchar
from ticdc_contract.tso import compose
from ticdc_generators.pipeline import config_for, encoding_names
from ticdc_generators.protocols import EncoderModule
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator, split_if_key_changed
from ticdc_generators.sink.config import SIMULATOR_SETTINGS, DispatchRule, SinkConfig
from ticdc_generators.sink.delivery import DML_EVENT_MAX_ROWS, InterleaveWindow, table_pieces
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, Message, RowEvent, WatermarkEvent
from ticdc_generators.sink.failover import FailoverSchedule

SEEDS = [1, 2, 3]


# --- harness ------------------------------------------------------------------------------
@dataclass
class Sent:
    topic: str
    partition: int
    offset: int
    event: object
    key: object = None


class Recording:
    """An encoder module whose messages carry the index of the event they stand for."""

    def __init__(self, like: EncoderModule) -> None:
        self.events: list = []
        log = self.events

        class Encoder:
            def __init__(self, *_):
                pass

            def encode(self, ev):
                log.append(ev)
                return [Message(None, str(len(log) - 1).encode(), (), 0)]

            def flush(self):
                return []

        self.module = replace(like, new_encoder=Encoder)


def simulate(scenario="replays", encoding="simple-json", seed=1, **overrides):
    """(records as Sent, the simulator, the history) with recorded events; one run per set of
    arguments is shared by the tests, which only read it."""
    return _simulate(scenario, encoding, seed, tuple(sorted(overrides.items())))


@lru_cache(maxsize=None)
def _simulate(scenario, encoding, seed, overrides):
    config = config_for(scenario, encoding, **dict(overrides))
    sim = SinkSimulator(config, seed=seed)
    rec = Recording(sim.module)
    sim.module = rec.module
    history = list(get_scenario(scenario).history(seed))
    sent = [Sent(r.topic, r.partition, r.offset, rec.events[int(r.value)]) for r in sim.run(history)]
    return sent, sim, history


def tap(sim: SinkSimulator, seen) -> None:
    """Keeps the simulator's real encoders and calls seen(event, messages) for every event."""
    real = sim.module

    class Tap:
        def __init__(self, *args):
            self.inner = real.new_encoder(*args)

        def encode(self, ev):
            out = self.inner.encode(ev)
            seen(ev, out)
            return out

        def flush(self):
            return self.inner.flush()

    sim.module = replace(real, new_encoder=Tap)


def row_id(ev: RowEvent) -> tuple:
    ch = ev.change
    image = ch.after if ch.after is not None else ch.before
    return ch.table.qualified_name, ch.op, ev.commit_ts, ch.table.key_of(image)


def per_partition(sent):
    out = defaultdict(list)
    for s in sent:
        out[(s.topic, s.partition)].append(s)
    return out


def first_sent_rows(sent):
    seen, out = set(), []
    for s in sent:
        if isinstance(s.event, RowEvent) and row_id(s.event) not in seen:
            seen.add(row_id(s.event))
            out.append(s)
    return out


def runs(sent, sim):
    """Per partition, the records of each changefeed run (split at the restarts' offsets)."""
    out = {}
    for key, recs in per_partition(sent).items():
        cuts = [r.offsets.get(key, 0) for r in sim.restarts] + [len(recs)]
        starts = [0] + cuts[:-1]
        out[key] = [recs[a:b] for a, b in zip(starts, cuts)]
    return out


# --- at-least-once ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_every_dml_of_the_truth_is_delivered_and_nothing_else(seed):
    sent, sim, history = simulate(seed=seed)
    assert len(sim.restarts) == 3
    expected = set()
    for e in history:
        if isinstance(e, Transaction):
            for ch in e.changes:
                # The decode side's statement of what a change becomes, not the simulator's own split.
                for part in delivered_changes(ch, sim.config.output_raw_change_event):
                    expected.add(row_id(RowEvent(part, e.commit_ts, e.start_ts)))
    delivered = [row_id(s.event) for s in sent if isinstance(s.event, RowEvent)]
    assert set(delivered) == expected
    assert len(delivered) > len(expected)  # some were sent again


@pytest.mark.parametrize("encoding", ["canal-json", "debezium", "simple-json", "simple-avro"])
def test_replayed_rows_and_ddl_are_encoded_as_the_first_time(encoding):
    config = config_for("replays", encoding)
    sim = SinkSimulator(config, seed=2)
    produced: list[tuple[object, list[Message]]] = []
    tap(sim, lambda ev, out: produced.append((ev, out)))
    list(sim.run(get_scenario("replays").history(2)))
    first: dict = {}
    repeats = 0
    for ev, msgs in produced:
        if isinstance(ev, RowEvent):
            ident = row_id(ev)
        elif isinstance(ev, DDLEvent):
            ident = ("ddl", ev.ddl.commit_ts, ev.ddl.query)
        else:
            continue
        body = [(m.key, m.value, m.headers) for m in msgs]
        if ident in first:
            repeats += 1
            assert body == first[ident], ident
        else:
            first[ident] = body
    assert repeats > 0


def test_a_restart_sends_every_ddl_and_row_above_its_checkpoint_again():
    resent_ddl = 0
    for seed in SEEDS:
        sent, sim, history = simulate(seed=seed)
        ddls = [e.commit_ts for e in history if isinstance(e, DDL)]
        per_run = runs(sent, sim)
        for key, run_list in per_run.items():
            for n, recs in enumerate(run_list[1:]):
                checkpoint = sim.restarts[n].checkpoint_ts
                sent_ts = [s.event.commit_ts if isinstance(s.event, RowEvent) else s.event.ddl.commit_ts
                           for s in recs if isinstance(s.event, (RowEvent, DDLEvent))]
                got = [s.event.ddl.commit_ts for s in recs if isinstance(s.event, DDLEvent)]
                # DDL never waits in flight: every one between the checkpoint and the run's last event is there
                assert got == [ts for ts in ddls if checkpoint < ts <= max(sent_ts, default=0)]
                resent_ddl += sum(1 for ts in got if any(isinstance(s.event, DDLEvent) and s.event.ddl.commit_ts == ts
                                                           for r in run_list[:n + 1] for s in r))
        # the last run fails no more: every row above its checkpoint is in it
        last = sim.restarts[-1].checkpoint_ts
        final = {row_id(s.event) for rs in per_run.values() for s in rs[-1] if isinstance(s.event, RowEvent)}
        assert final == {row_id(s.event) for s in sent if isinstance(s.event, RowEvent) and s.event.commit_ts > last}
    assert resent_ddl > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_row_always_goes_to_the_same_partition(seed):
    sent, _, _ = simulate(seed=seed)
    where = defaultdict(set)
    for s in sent:
        if isinstance(s.event, RowEvent):
            table, _, _, key = row_id(s.event)
            where[(table, key)].add(s.partition)
    assert where and all(len(p) == 1 for p in where.values())


# --- ordering -----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_first_sent_rows_keep_commit_order_per_partition_and_table(seed):
    sent, _, _ = simulate(seed=seed)
    last = {}
    for s in first_sent_rows(sent):
        k = (s.partition, s.event.change.table.qualified_name)
        assert s.event.commit_ts >= last.get(k, 0)
        last[k] = s.event.commit_ts


@pytest.mark.parametrize("seed", SEEDS)
def test_no_first_sent_row_is_below_an_earlier_watermark_of_its_partition(seed):
    sent, _, _ = simulate(seed=seed)
    firsts = {id(s) for s in first_sent_rows(sent)}
    for recs in per_partition(sent).values():
        mark = 0
        for s in recs:
            if isinstance(s.event, WatermarkEvent):
                mark = max(mark, s.event.ts)
            elif id(s) in firsts:
                assert s.event.commit_ts > mark


@pytest.mark.parametrize("seed", SEEDS)
def test_watermarks_fall_back_only_as_the_first_watermark_after_a_restart(seed):
    sent, sim, _ = simulate(seed=seed)
    fallbacks = 0
    for key, run_list in runs(sent, sim).items():
        previous = None
        for n, recs in enumerate(run_list):
            marks = [s.event.ts for s in recs if isinstance(s.event, WatermarkEvent)]
            assert marks == sorted(marks), "a watermark fell back inside one run"
            if n > 0:
                assert marks[0] == sim.restarts[n - 1].checkpoint_ts
            if previous is not None and marks and marks[0] < previous:
                fallbacks += 1
            previous = marks[-1] if marks else previous
    assert fallbacks > 0


def test_checkpoint_lag_zero_restarts_from_the_last_checkpoint_without_a_fall_back():
    sent, sim, _ = simulate(checkpoint_lag=0)
    assert len(sim.restarts) == 3
    for recs in per_partition(sent).values():
        marks = [s.event.ts for s in recs if isinstance(s.event, WatermarkEvent)]
        assert marks == sorted(marks)


@pytest.mark.parametrize("seed", SEEDS)
def test_ddl_is_a_barrier_inside_every_run(seed):
    sent, sim, _ = simulate(seed=seed)
    for run_list in runs(sent, sim).values():
        for recs in run_list:
            ddl_seen = 0
            for i, s in enumerate(recs):
                if isinstance(s.event, DDLEvent):
                    ts = s.event.ddl.commit_ts
                    assert all(r.event.commit_ts < ts for r in recs[ddl_seen:i] if isinstance(r.event, RowEvent))
                    assert all(r.event.commit_ts > ts for r in recs[i:] if isinstance(r.event, RowEvent))
                    ddl_seen = i


def _inversions(sent):
    """Rows sent after a row of another table with a higher commit ts, per partition."""
    count = 0
    for recs in per_partition(sent).values():
        top = {}
        for s in recs:
            if not isinstance(s.event, RowEvent):
                continue
            table = s.event.change.table.qualified_name
            if any(ts > s.event.commit_ts for t, ts in top.items() if t != table):
                count += 1
            top[table] = max(top.get(table, 0), s.event.commit_ts)
    return count


@pytest.mark.parametrize("seed", SEEDS)
def test_tables_interleave_between_checkpoints_keeping_each_tables_transactions_whole(seed):
    sent, _, _ = simulate(seed=seed, failovers=0)
    assert _inversions(sent) > 0
    for recs in per_partition(sent).values():
        rows = [s.event for s in recs if isinstance(s.event, RowEvent)]
        groups = [(ev.commit_ts, ev.change.table.table_id) for ev in rows]
        # each (transaction, table) piece is contiguous in the partition
        seen = set()
        for i, g in enumerate(groups):
            if i and groups[i - 1] == g:
                continue
            assert g not in seen, f"rows of transaction {g[0]} on table {g[1]} were split"
            seen.add(g)
        # nothing crosses a watermark
        mark = 0
        for s in recs:
            if isinstance(s.event, WatermarkEvent):
                mark = s.event.ts
            elif isinstance(s.event, RowEvent):
                assert s.event.commit_ts > mark


def test_without_interleaving_rows_follow_commit_order_in_every_partition():
    sent, _, _ = simulate(interleave_tables=False, failovers=0)
    assert _inversions(sent) == 0


def test_a_key_update_splits_per_table_with_the_insert_after_that_tables_rows():
    t1 = TableSchema("s", "a", 1, (Column("id", int_type(), nullable=False), Column("v", varchar(8))),
                     (Index("PRIMARY", ("id",), primary=True, unique=True),), schema_version=1)
    t2 = replace(t1, table="b", table_id=2)
    txn = Transaction(compose(1000, 1), compose(1000, 2), (
        RowChange(t1, Op.UPDATE, {"id": 1, "v": "x"}, {"id": 9, "v": "x"}),
        RowChange(t2, Op.INSERT, None, {"id": 1, "v": "y"}),
        RowChange(t1, Op.INSERT, None, {"id": 2, "v": "z"}),
    ))
    pieces = table_pieces(txn, lambda c: split_if_key_changed(c, False))
    assert [(tid, [(c.op, (c.after or c.before)["id"]) for c in rows]) for tid, (_, rows) in pieces] == [
        (1, [(Op.DELETE, 1), (Op.INSERT, 2), (Op.INSERT, 9)]), (2, [(Op.INSERT, 1)])]


def test_a_large_transaction_on_one_table_is_cut_into_dml_event_pieces():
    t = TableSchema("s", "a", 1, (Column("id", int_type(), nullable=False),),
                    (Index("PRIMARY", ("id",), primary=True, unique=True),), schema_version=1)
    n = DML_EVENT_MAX_ROWS + 10
    txn = Transaction(1, 2, tuple(RowChange(t, Op.INSERT, None, {"id": i}) for i in range(n)))
    pieces = table_pieces(txn, lambda c: (c, None))
    assert [len(rows) for _, (_, rows) in pieces] == [DML_EVENT_MAX_ROWS, 10]
    assert [c.after["id"] for _, (_, rows) in pieces for c in rows] == list(range(n))


def test_the_window_keeps_each_tables_order_and_takes_every_piece_once():
    import random
    window = InterleaveWindow(random.Random(4))
    items = [(tid, (f"txn{tid}-{i}", ())) for i in range(5) for tid in (1, 2, 3)]
    window.add(items)
    order = [txn for txn, _ in window.drain()]
    assert sorted(order) == sorted(txn for _, (txn, _) in items)
    for tid in (1, 2, 3):
        mine = [o for o in order if o.startswith(f"txn{tid}-")]
        assert mine == [f"txn{tid}-{i}" for i in range(5)]
    assert order != [txn for _, (txn, _) in items] and len(window) == 0


def test_failover_schedule_places_the_restarts_it_was_given_around_the_spacing():
    import random
    sched = FailoverSchedule(4, 10, random.Random(1))
    hits = [i for i in range(1, 200) if sched.due()]
    assert len(hits) == 4
    gaps = [b - a for a, b in zip([0] + hits, hits)]
    assert all(5 <= g <= 15 for g in gaps)
    assert not FailoverSchedule(0, 10, random.Random(1)).due()


# --- BOOTSTRAP ----------------------------------------------------------------------------
def _existing_tables(history, ts):
    return replay((e for e in history if isinstance(e, DDL) and e.commit_ts <= ts), keep_history=False).schemas


@pytest.mark.parametrize("seed", SEEDS)
def test_send_all_bootstrap_at_start_puts_every_existing_table_before_any_dml_of_a_restart(seed):
    sent, sim, history = simulate(seed=seed)
    config = sim.config
    for key, run_list in runs(sent, sim).items():
        assert not any(isinstance(s.event, BootstrapEvent) and s.event.at_start for s in run_list[0])
        for n, recs in enumerate(run_list[1:]):
            existing = _existing_tables(history, sim.restarts[n].checkpoint_ts)
            first_row = next((i for i, s in enumerate(recs) if isinstance(s.event, RowEvent)), len(recs))
            at_start = [s.event.table for s in recs if isinstance(s.event, BootstrapEvent) and s.event.at_start]
            assert all(isinstance(s.event, BootstrapEvent) and s.event.at_start
                       for s in recs[:len(at_start)]), "at-start BOOTSTRAPs come before anything else"
            assert len(at_start) <= first_row
            if key[0] != config.topic:
                assert not at_start
                continue
            # one per physical table (new TiCDC lists partitions), each as the table was then
            expected = sorted((t.qualified_name, t.schema_version) for t in existing.values()
                              for _ in range(len(t.partitioning.partitions) if t.partitioning else 1))
            assert sorted((t.qualified_name, t.schema_version) for t in at_start) == expected


def test_a_table_created_after_the_checkpoint_gets_its_bootstrap_before_its_first_row():
    checked = 0
    for seed in SEEDS:
        sent, sim, history = simulate(seed=seed)
        audit_ts = next(e.commit_ts for e in history if isinstance(e, DDL) and e.table == "audit")
        for key, run_list in runs(sent, sim).items():
            for n, recs in enumerate(run_list[1:]):
                if sim.restarts[n].checkpoint_ts >= audit_ts:
                    continue
                assert "ledger.audit" not in {s.event.table.qualified_name for s in recs
                                              if isinstance(s.event, BootstrapEvent) and s.event.at_start}
                rows = [i for i, s in enumerate(recs)
                        if isinstance(s.event, RowEvent) and s.event.change.table.table == "audit"]
                if rows:
                    checked += 1
                    assert any(isinstance(s.event, BootstrapEvent) and s.event.table.table == "audit"
                               and not s.event.at_start for s in recs[:rows[0]])
    assert checked > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_each_tables_first_row_of_every_run_is_preceded_by_a_bootstrap(seed):
    sent, sim, _ = simulate(seed=seed, send_all_bootstrap_at_start=False)
    for run_list in runs(sent, sim).values():
        for recs in run_list:
            booted = set()
            for s in recs:
                if isinstance(s.event, BootstrapEvent):
                    assert not s.event.at_start
                    booted.add(s.event.table.qualified_name)
                elif isinstance(s.event, RowEvent):
                    assert s.event.change.table.qualified_name in booted


def test_no_at_start_bootstrap_for_protocols_without_bootstrap_or_when_bootstrap_is_off():
    for overrides in ({"send_bootstrap_in_msg_count": 0}, {"send_bootstrap_interval_in_sec": 0}):
        sent, _, _ = simulate(**overrides)
        assert not any(isinstance(s.event, BootstrapEvent) for s in sent)
    sent, _, _ = simulate(encoding="canal-json")
    assert not any(isinstance(s.event, BootstrapEvent) for s in sent)


@pytest.mark.parametrize("profile", ["ticdc", "tiflow"])
def test_at_start_bootstraps_go_the_ddl_way_with_a_null_key(profile):
    config = config_for("replays", "simple-json", version_profile=profile, send_bootstrap_to_all_partition=False,
                        dispatchers=(DispatchRule(partition="index-value", topic="{schema}_{table}"),))
    sim = SinkSimulator(config, seed=1)
    records = list(sim.run(get_scenario("replays").history(1)))
    boots = [r for r in records if b'"BOOTSTRAP"' in r.value]
    at_start = [r for r in boots if r.key is None]
    worker = [r for r in boots if r.key == b""]
    assert at_start and worker and len(at_start) + len(worker) == len(boots)
    # the bootstrap worker honours send-bootstrap-to-all-partition; the DDL way broadcasts
    assert {r.partition for r in worker} == {0}
    assert {r.partition for r in at_start} == set(range(config.partition_num))
    topics = {r.topic for r in at_start}
    if profile == "ticdc":
        assert topics == {config.topic}
    else:
        assert config.topic not in topics and {"shop_orders", "ledger_entries"} <= topics


# --- determinism and settings -------------------------------------------------------------
@pytest.mark.parametrize("encoding", encoding_names())
def test_same_seed_gives_identical_records_other_seed_other_records(encoding):
    def records(seed):
        sim = SinkSimulator(config_for("replays", encoding), seed=seed)
        return list(sim.run(get_scenario("replays").history(seed)))

    a = records(5)
    assert a == records(5)
    assert a != records(6)


def test_the_delivery_seed_alone_changes_restarts_and_interleaving():
    def records(seed):
        sim = SinkSimulator(config_for("replays", "canal-json"), seed=seed)
        return list(sim.run(get_scenario("replays").history(1))), sim.restarts

    (a, ra), (b, rb) = records(1), records(2)
    assert a != b and ra != rb


def test_only_the_replays_scenario_changes_delivery_and_no_setting_is_a_ticdc_option():
    smoke = config_for("smoke", "simple-json")
    assert (smoke.interleave_tables, smoke.failovers, smoke.send_all_bootstrap_at_start) == (False, 0, False)
    cfg = config_for("replays", "simple-json")
    assert cfg.interleave_tables and cfg.failovers == 3 and cfg.send_all_bootstrap_at_start
    options = cfg.ticdc_options()
    assert not {name.replace("_", "-") for name in SIMULATOR_SETTINGS} & set(options)
    assert options["send-all-bootstrap-at-start"] is True


@pytest.mark.parametrize("bad", [{"failovers": -1}, {"failover_spacing": 0}, {"checkpoint_lag": -2}])
def test_bad_delivery_settings_are_refused(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        SinkConfig(protocol="simple", **bad)


def test_generate_records_the_restarts_in_the_manifest(tmp_path):
    from ticdc_generators.pipeline import generate
    manifest = generate("replays", 1, config_for("replays", "canal-json"), tmp_path)
    gen = manifest["generator"]
    assert gen["failovers"] == 3 and gen["interleave_tables"] is True and len(gen["restarts"]) == 3
    assert "failovers" not in manifest["sink"]


def test_every_encoding_encodes_the_replays_scenario_with_real_encoders():
    history = list(get_scenario("replays").history(1))
    for encoding in encoding_names():
        sim = SinkSimulator(config_for("replays", encoding), seed=1)
        records = list(sim.run(history))
        per = defaultdict(list)
        for r in records:
            per[(r.topic, r.partition)].append(r.offset)
        assert all(o == list(range(len(o))) for o in per.values())
        assert len(sim.restarts) == 3 and len(per) >= get_scenario("replays").partition_num


def test_open_protocol_loses_the_message_being_filled_and_sends_its_rows_with_the_replay():
    """Read back with the project's Open Protocol decoder: every row of the history arrives,
    although rows the encoder had taken into an unfinished message never left it."""
    from ticdc_conformance.events import DecodedRow
    from ticdc_conformance.protocols.open_protocol.decoder import new_decoder

    history = list(get_scenario("replays").history(1))
    sim = SinkSimulator(config_for("replays", "open-protocol"), seed=1)
    encoded = []
    tap(sim, lambda ev, out: encoded.append(ev) if isinstance(ev, RowEvent) else None)
    decoder = new_decoder()
    rows = [ev for r in sim.run(history) for ev in decoder.decode(r) if isinstance(ev, DecodedRow)]
    assert len(sim.restarts) == 3 and len(rows) < len(encoded)
    got = {(f"{r.schema}.{r.table}", r.op, r.commit_ts,
            tuple((r.after if r.after is not None else r.before)[c] for c in r.key_columns)) for r in rows}
    expected = {(q, op.value, ts, key) for q, op, ts, key in (row_id(ev) for ev in encoded)}
    assert got == expected


def test_ddl_types_in_the_replays_history():
    kinds = [e.ddl_type for e in get_scenario("replays").history(1) if isinstance(e, DDL)]
    assert kinds.count(DDLType.CREATE_TABLE) == 6 and DDLType.ADD_COLUMN in kinds
