"""The reference consumer's rules, each shown on a hand-built record stream.

Records are made by the protocols' own encoders, one per topic-partition, and fed to the
sequential consumer in exactly the order a test chooses: re-sends, watermark regressions, DDL
copies on every partition, row events that wait for a BOOTSTRAP, a consumer joining mid-stream.
"""
import json
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from tests.helpers import message_record
from ticdc_conformance.consumers.rules.ddl_semantics import DDLPlan, DDLRecord, PartitionsUnknown, effects_of
from ticdc_conformance.consumers.rules.tables import ConsumerTables
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer
from ticdc_contract.model import DDL, Column, DDLType, Index, Op, RowChange, TableSchema
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tidb_types import int_type, varchar
from ticdc_contract.tso import compose
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent, DDLEvent, RowEvent, WatermarkEvent

TOPIC = "t"
T = TableSchema("s", "t", 100, (Column("id", int_type(), nullable=False), Column("v", varchar(8))),
                (Index("PRIMARY", ("id",), primary=True, unique=True),), schema_version=compose(1000, 0),
                pk_is_handle=True)
NO_KEY = TableSchema("s", "bag", 102, (Column("label", varchar(8)), Column("n", int_type())), (),
                     schema_version=compose(1000, 0))


def ts(n: int) -> int:
    """Commit ts n: one millisecond apart, so Kafka timestamps follow commit order."""
    return compose(2000 + n, 1)


class Topic:
    """One topic's partitions, each with its own encoder, producing records on demand."""

    def __init__(self, protocol: str, partitions: int = 2, **cfg) -> None:
        self.config = SinkConfig(protocol=protocol, topic=TOPIC, partition_num=partitions, **cfg)
        module = encoder_module(protocol)
        self.encoders = [module.new_encoder(self.config, TOPIC, p) for p in range(partitions)]
        self.offsets = [0] * partitions

    def send(self, p: int, *events) -> list[KafkaRecord]:
        enc, messages = self.encoders[p], []
        for e in events:
            messages += enc.encode(e)
        messages += enc.flush()
        out = []
        for m in messages:
            out.append(message_record(m, topic=TOPIC, partition=p, offset=self.offsets[p]))
            self.offsets[p] += 1
        return out

    def consumer(self, out: Path | None = None) -> LocalConsumer:
        return LocalConsumer(self.config.protocol, self.config.ticdc_options(),
                             [(TOPIC, p) for p in range(len(self.encoders))], out=out)


def insert(id_, v, at, table=T):
    return RowEvent(RowChange(table, Op.INSERT, None, {"id": id_, "v": v}), ts(at), ts(at) - 1)


def update(id_, old, new, at):
    return RowEvent(RowChange(T, Op.UPDATE, {"id": id_, "v": old}, {"id": id_, "v": new}), ts(at), ts(at) - 1)


def wm(at):
    return WatermarkEvent(ts(at))


def feed(consumer, *batches):
    for batch in batches:
        for r in batch:
            consumer.feed(r)
    return consumer


def rows(consumer, table=("s", "t")):
    tr = consumer.tables.rows.get(table)
    if tr is None:
        return {}
    return {e.image.get("id", e.image.get("label")): e.image for e in tr.rows.values()}


def canal() -> Topic:
    return Topic("canal-json", enable_tidb_extension=True)


# --- watermarks and duplicates -------------------------------------------------------------------
def test_duplicate_below_the_watermark_is_dropped():
    t = canal()
    c = feed(t.consumer(), t.send(0, insert(1, "a", 10), update(1, "a", "b", 20), wm(20)), t.send(1, wm(20)))
    assert rows(c)[1]["v"] == "b" and c.applied_wm == ts(20)
    # A restart re-sends the INSERT at ts 10; applying it would put back the old image.
    feed(c, t.send(0, insert(1, "a", 10)))
    assert rows(c)[1]["v"] == "b"
    assert c.figures["rows_dropped_below_watermark"] == 1


def test_replayed_event_never_applied_is_kept_and_a_waiting_copy_is_dropped():
    t = canal()
    c = feed(t.consumer(), t.send(0, insert(1, "a", 10), wm(10)), t.send(1, wm(10)))
    assert set(rows(c)) == {1}
    # Partition 0 runs ahead (watermark 30) while partition 1 lags at 10: the global watermark is 10.
    feed(c, t.send(0, insert(2, "b", 20), wm(30)))
    assert set(rows(c)) == {1}
    # TiCDC restarts from checkpoint 10: partition 0's watermark falls back, ts 20 comes again (a copy
    # of a waiting event) and ts 25, which was never sent, arrives although partition 0 was at 30.
    feed(c, t.send(0, wm(10), insert(2, "b", 20), insert(3, "c", 25)), t.send(1, insert(4, "d", 22), wm(30)))
    feed(c, t.send(0, wm(30)))
    assert set(rows(c)) == {1, 2, 3, 4}
    assert c.buffer.copies_dropped == 1 and c.figures["rows_dropped_below_watermark"] == 0
    assert c.figures["transactions_applied"] == 4  # ts 10, 20, 22, 25: the copy of 20 once


def test_watermark_regression_is_tolerated_and_logged(tmp_path):
    t = canal()
    c = feed(t.consumer(tmp_path), t.send(0, insert(1, "a", 10), wm(30)), t.send(1, wm(30)))
    regressed = t.send(0, wm(20))
    feed(c, regressed)
    assert c.watermarks.marks[(TOPIC, 0)] == ts(30) and c.applied_wm == ts(30)
    assert c.watermarks.regressions == 1
    logged = c.watermarks.regression_log[0]
    assert (logged.partition, logged.offset, logged.ts, logged.kept) == (0, regressed[0].offset, ts(20), ts(30))
    figures = c.write(tmp_path)
    assert figures["watermark_regressions"] == 1 and figures["watermark_regression_log"][0]["ts"] == ts(20)
    checkpoints = [json.loads(line)["ts"] for line in (tmp_path / "applied.ndjson").read_text().splitlines()
                   if '"checkpoint"' in line]
    assert checkpoints == [ts(30)]  # the global watermark never moved back


def test_global_watermark_is_the_minimum_over_partitions():
    t = canal()
    c = feed(t.consumer(), t.send(0, insert(1, "a", 10), wm(40)), t.send(1, insert(2, "b", 30), wm(20)))
    assert set(rows(c)) == {1} and c.applied_wm == ts(20)
    feed(c, t.send(1, wm(40)))
    assert set(rows(c)) == {1, 2} and c.applied_wm == ts(40)


# --- DDL -----------------------------------------------------------------------------------------
def truncate(at):
    return DDLEvent(DDL(ts(at), DDLType.TRUNCATE_TABLE, "TRUNCATE TABLE `s`.`t`", "s", "t", T, T))


def test_ddl_from_every_partition_is_applied_once_as_a_barrier(tmp_path):
    t = Topic("open-protocol")  # Open Protocol broadcasts DDL to every partition
    c = t.consumer(tmp_path)
    # Partition 0 carries the TRUNCATE at 15 before partition 1 has delivered its row at 12: the
    # row is older than the DDL, so it is applied first and truncated away.
    feed(c, t.send(0, insert(1, "a", 10), truncate(15), insert(3, "c", 20), wm(20)),
         t.send(1, insert(2, "b", 12), truncate(15), wm(20)))
    assert set(rows(c)) == {3}
    assert c.figures["ddl_applied"] == 1 and c.ddl_queue.copies_dropped == 1
    c.write(tmp_path)
    kinds = [(d["kind"], d.get("commit_ts", d.get("ts"))) for d in
             map(json.loads, (tmp_path / "applied.ndjson").read_text().splitlines())]
    assert kinds == [("txn", ts(10)), ("txn", ts(12)), ("ddl", ts(15)), ("txn", ts(20)), ("checkpoint", ts(20))]
    # A re-send of the DDL after it was applied is dropped too.
    feed(c, t.send(1, truncate(15)))
    assert c.figures["ddl_dropped_below_watermark"] == 1 and c.figures["ddl_applied"] == 1


def test_temporal_states_close_and_open_lines_at_checkpoints(tmp_path):
    t = canal()
    c = feed(t.consumer(tmp_path), t.send(0, insert(1, "a", 10), wm(10)), t.send(1, wm(10)),
             t.send(0, update(1, "a", "b", 20), insert(2, "x", 20), wm(30)), t.send(1, wm(30)),
             t.send(0, wm(40)), t.send(1, wm(40)))
    c.write(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "states" / "s.t.ndjson").read_text().splitlines()]
    assert lines == [
        {"from": ts(10), "to": ts(30), "row": {"id": 1, "v": "a"}},
        {"from": ts(30), "to": None, "row": {"id": 1, "v": "b"}},
        {"from": ts(30), "to": None, "row": {"id": 2, "v": "x"}},
    ]
    final = [json.loads(x) for x in (tmp_path / "final" / "s.t.ndjson").read_text().splitlines()]
    assert final == [{"id": 1, "v": "b"}, {"id": 2, "v": "x"}]


# --- Simple: schemas and BOOTSTRAP -----------------------------------------------------------------
def test_simple_row_events_wait_for_their_bootstrap():
    t = Topic("simple")
    c = t.consumer()
    # The row reaches partition 0 before any schema: it waits in the decoder, and partition 0's
    # watermark waits with it, although both partitions announce 10.
    feed(c, t.send(0, insert(1, "a", 10), wm(10)), t.send(1, wm(10)))
    assert rows(c) == {} and c.applied_wm == 0
    assert c.decoders.decoders[(TOPIC, 0)].held_count == 1
    feed(c, t.send(0, BootstrapEvent(T)))
    assert rows(c) == {1: {"id": 1, "v": "a"}} and c.applied_wm == ts(10)


def test_consumer_joining_mid_stream_recovers_after_the_next_bootstrap():
    t = Topic("simple", partitions=1)
    stream = (t.send(0, BootstrapEvent(T), insert(1, "a", 10), insert(2, "b", 11), wm(11))
              + t.send(0, update(2, "b", "B", 12), insert(3, "c", 13), wm(13))
              + t.send(0, BootstrapEvent(T), insert(4, "d", 14), wm(14)))
    joined_at = 4  # right after the first watermark: the first BOOTSTRAP and rows 1, 2 are missed
    second_bootstrap = 7
    c = feed(t.consumer(), stream[joined_at:second_bootstrap])
    # Until then the update of row 2 and row 3 wait, and so does the watermark (13).
    assert rows(c) == {} and c.applied_wm == 0
    feed(c, stream[second_bootstrap:second_bootstrap + 1])
    assert rows(c) == {2: {"id": 2, "v": "B"}, 3: {"id": 3, "v": "c"}} and c.applied_wm == ts(13)
    feed(c, stream[second_bootstrap + 1:])
    assert rows(c)[4] == {"id": 4, "v": "d"} and c.applied_wm == ts(14)


# --- without watermarks, key-less tables ---------------------------------------------------------------
def test_without_watermarks_events_apply_in_arrival_order(tmp_path):
    t = Topic("canal-json")  # no TiDB extension: no commit ts, no watermark
    c = feed(t.consumer(tmp_path), t.send(1, insert(2, "b", 20)), t.send(0, insert(1, "a", 10)),
             t.send(0, update(1, "a", "z", 30)))
    assert rows(c) == {1: {"id": 1, "v": "z"}, 2: {"id": 2, "v": "b"}}
    figures = c.write(tmp_path)
    assert figures["ordering"].startswith("arrival") and figures["checkpoints"] == 0


def bag(label, n, at):
    return RowEvent(RowChange(NO_KEY, Op.INSERT, None, {"label": label, "n": n}), ts(at), ts(at) - 1)


def test_keyless_rows_are_a_multiset_and_a_replayed_copy_still_goes():
    t = canal()
    c = t.consumer()
    # Two identical rows in one transaction are two rows; after a watermark regression the same
    # transaction re-sent is a copy of what waits.
    feed(c, t.send(0, bag("x", 1, 10), bag("x", 1, 10), wm(5)), t.send(0, wm(3), bag("x", 1, 10)))
    feed(c, t.send(0, wm(10)), t.send(1, wm(10)))
    entries = list(c.tables.rows[("s", "bag")].rows.values())
    assert [(e.image, e.count) for e in entries] == [({"label": "x", "n": 1}, 2)]
    assert c.buffer.copies_dropped == 1


# --- what DDL does to rows -----------------------------------------------------------------------------
EVENTS_DDL = ("CREATE TABLE `s`.`ev` (`seq` INT NOT NULL, `k` VARCHAR(8), PRIMARY KEY (`seq`)) "
              "PARTITION BY RANGE (`seq`) (PARTITION `p0` VALUES LESS THAN (100), PARTITION `p1` VALUES LESS THAN "
              "(MAXVALUE))")


def _txn(tables, name, *images):
    key = json.dumps
    evs = [{"schema": name[0], "table": name[1], "op": "insert", "before": None, "after": key(i),
            "columns": key(list(i)), "key_columns": key(["seq"])} for i in images]
    tables.apply_txn(evs)


def test_partition_ddl_and_rename_follow_the_partition_definitions_of_the_queries():
    ddls = [DDLRecord(1, "s", "ev", EVENTS_DDL),
            DDLRecord(2, "s", "st", "CREATE TABLE `s`.`st` (`seq` INT NOT NULL, `k` VARCHAR(8), PRIMARY KEY (`seq`))"),
            DDLRecord(5, "s", "ev", "ALTER TABLE `s`.`ev` TRUNCATE PARTITION `p0`"),
            DDLRecord(7, "s", "ev", "ALTER TABLE `s`.`ev` EXCHANGE PARTITION `p1` WITH TABLE `s`.`st`"),
            DDLRecord(8, "s", "ev", "ALTER TABLE `s`.`ev` ADD COLUMN `w` INT NOT NULL DEFAULT 7"),
            DDLRecord(9, "s", "ev2", "RENAME TABLE `s`.`ev` TO `s`.`ev2`")]
    tables = ConsumerTables()
    for d in ddls[:2]:
        for e in effects_of(d.query, d.schema, d.table):
            tables.apply_effect(e)
    _txn(tables, ("s", "ev"), {"seq": 5, "k": "a"}, {"seq": 150, "k": "b"})
    _txn(tables, ("s", "st"), {"seq": 300, "k": "c"})
    for d in ddls[2:]:
        for e in effects_of(d.query, d.schema, d.table):
            tables.apply_effect(e)
    images = {n: sorted((e.image for e in tr.rows.values()), key=lambda r: r["seq"]) for n, tr in tables.rows.items()}
    # p0 (seq < 100) truncated; p1 (seq 150) and s.st (seq 300) swapped; the column backfilled; renamed.
    assert images == {("s", "ev2"): [{"seq": 300, "k": "c", "w": 7}], ("s", "st"): [{"seq": 150, "k": "b"}]}
    # The plan form gives every row version the same fate.
    plan = DDLPlan(ddls)
    assert plan.fate(("s", "ev"), 3, {"seq": 5, "k": "a"}) is None
    assert plan.fate(("s", "ev"), 3, {"seq": 150, "k": "b"}) == (("s", "st"), {"seq": 150, "k": "b"})
    assert plan.fate(("s", "st"), 3, {"seq": 300, "k": "c"}) == (("s", "ev2"), {"seq": 300, "k": "c", "w": 7})
    assert plan.fate(("s", "st"), 3, {"seq": 300, "k": "c"}, until=7) == (("s", "ev"), {"seq": 300, "k": "c"})


def test_a_partition_ddl_without_known_partitions_is_refused():
    tables = ConsumerTables()
    _txn(tables, ("s", "ev"), {"seq": 5, "k": "a"})
    (drop,) = effects_of("ALTER TABLE `s`.`ev` DROP PARTITION `p0`", "s", "ev")
    with pytest.raises(PartitionsUnknown, match="s.ev"):
        tables.apply_effect(drop)


def test_handle_key_change_rekeys_rows():
    tables = ConsumerTables()
    ev = {"schema": "s", "table": "tags", "op": "insert", "before": None, "columns": '["tag","w"]'}
    tables.apply_txn([dict(ev, after='{"tag":"x","w":1}', key_columns='["tag"]')])
    # ADD PRIMARY KEY (tag, w): later messages name both columns; the update finds the same row.
    tables.apply_txn([dict(ev, op="update", before='{"tag":"x","w":1}', after='{"tag":"x","w":2}',
                           key_columns='["tag","w"]')])
    images = [e.image for e in tables.rows[("s", "tags")].rows.values()]
    assert images == [{"tag": "x", "w": 2}]


def test_add_column_backfill_values_are_canonical():
    q = ("ALTER TABLE t ADD COLUMN d DECIMAL(10,3) NOT NULL DEFAULT -1.5, ADD COLUMN b BINARY(2) DEFAULT 0x41, "
         "ADD COLUMN dt DATETIME(3) DEFAULT '2020-01-01 00:00:00', ADD COLUMN n DATETIME DEFAULT CURRENT_TIMESTAMP, "
         "ADD COLUMN z INT NOT NULL, ADD COLUMN g INT AS (z + 1) VIRTUAL")
    got = {e.column: (e.value, e.unknown is not None, e.virtual) for e in effects_of(q, "s", "t")}
    assert got == {"d": ("-1.500", False, False), "b": ("QQA=", False, False),
                   "dt": ("2020-01-01 00:00:00.000", False, False), "n": (None, True, False),
                   "z": (0, False, False), "g": (None, False, True)}


def test_applied_log_rows_carry_canonical_images(tmp_path):
    t = canal()
    c = feed(t.consumer(tmp_path), t.send(0, insert(1, "a", 10), wm(10)), t.send(1, wm(10)))
    c.write(tmp_path)
    txn = orjson.loads((tmp_path / "applied.ndjson").read_text().splitlines()[0])
    assert txn == {"kind": "txn", "commit_ts": ts(10),
                   "rows": [{"schema": "s", "table": "t", "op": "insert", "before": None, "after": {"id": 1, "v": "a"}}]}
    table = pq.read_table(tmp_path / "applied.parquet").to_pylist()
    assert [(r["kind"], r["ts"]) for r in table] == [("txn", ts(10)), ("checkpoint", ts(10))]
    states = pq.read_table(tmp_path / "states.parquet").to_pylist()
    assert states == [{"schema": "s", "table": "t", "from": ts(10), "to": None, "row": '{"id":1,"v":"a"}'}]


def test_a_dropped_column_is_not_brought_back_by_an_older_row_arriving_late():
    tables = ConsumerTables()
    _txn(tables, ("s", "ev"), {"seq": 1, "k": "a"})
    (drop,) = effects_of("ALTER TABLE `s`.`ev` DROP COLUMN `k`", "s", "ev")
    tables.apply_effect(drop)
    # In arrival order (no commit ts) a row written before the DROP may come after it.
    _txn(tables, ("s", "ev"), {"seq": 2, "k": "b"})
    assert tables.metas[("s", "ev")].columns == ["seq"]
    (add,) = effects_of("ALTER TABLE `s`.`ev` ADD COLUMN `k` INT DEFAULT 0", "s", "ev")
    tables.apply_effect(add)
    assert tables.metas[("s", "ev")].columns == ["seq", "k"]
