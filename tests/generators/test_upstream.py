"""The upstream TiDB model and the state interpreter: DDL semantics, collapsing, history queries."""
import pytest

from ticdc_contract.model import Column, DDLType, Index, Op, Partition, Partitioning
from ticdc_contract.state import replay
from ticdc_contract.tidb_types import TiDBType, int_type, varchar
from ticdc_generators.upstream import Rejected, TxnBuilder, Upstream


def cols(*names):
    return [Column(n, int_type(), nullable=(i != 0)) for i, n in enumerate(names)]


PK = Index("PRIMARY", ("id",), primary=True, unique=True)


@pytest.fixture
def up():
    u = Upstream(1_000_000, keep_history=True)
    u.create_schema("d")
    u.create_table("d", "t", cols("id", "a"), [PK], pk_is_handle=True)
    return u


def insert(u, table, *rows, ms=10):
    tx = TxnBuilder()
    t = u.table("d", table)
    for r in rows:
        tx.insert(t, r)
    return u.commit(tx, ms)


def test_transaction_collapses_changes_per_row(up):
    insert(up, "t", {"id": 1, "a": 1}, {"id": 2, "a": 2}, {"id": 3, "a": 3})
    t = up.table("d", "t")
    tx = TxnBuilder()
    tx.insert(t, {"id": 10, "a": 0})
    tx.update(t, {"id": 10, "a": 0}, {"id": 10, "a": 5})  # insert+update -> insert
    tx.update(t, {"id": 1, "a": 1}, {"id": 1, "a": 7})
    tx.update(t, {"id": 1, "a": 7}, {"id": 1, "a": 8})  # update+update -> update(first before, last after)
    tx.delete(t, {"id": 2, "a": 2})
    tx.insert(t, {"id": 2, "a": 9})  # delete+insert -> update
    tx.insert(t, {"id": 11, "a": 0})
    tx.delete(t, {"id": 11, "a": 0})  # insert+delete -> nothing
    tx.update(t, {"id": 3, "a": 3}, {"id": 30, "a": 3})  # key change stays one update
    ch = {(c.op, (c.before or {}).get("id"), (c.after or {}).get("id")): c for c in up.commit(tx).changes}
    assert set(ch) == {(Op.INSERT, None, 10), (Op.UPDATE, 1, 1), (Op.UPDATE, 2, 2), (Op.UPDATE, 3, 30)}
    assert ch[(Op.INSERT, None, 10)].after == {"id": 10, "a": 5}
    assert ch[(Op.UPDATE, 1, 1)].before == {"id": 1, "a": 1} and ch[(Op.UPDATE, 1, 1)].after["a"] == 8
    assert sorted(up.rows("d", "t")) == [(1,), (2,), (10,), (30,)]


def test_duplicate_keys_and_unique_violations_are_rejected(up):
    insert(up, "t", {"id": 1, "a": 1})
    with pytest.raises(Rejected, match="duplicate"):
        insert(up, "t", {"id": 1, "a": 2})
    insert(up, "t", {"id": 2, "a": 1})
    with pytest.raises(Rejected, match="duplicate entry"):
        up.add_index("d", "t", Index("ua", ("a",), unique=True))
    up.add_index("d", "t", Index("ia", ("a",)))


def test_ddl_changes_rows_as_tidb_does(up):
    insert(up, "t", {"id": 1, "a": 1}, {"id": 2, "a": 2})
    [ddl] = up.add_column("d", "t", Column("c", varchar(8), default="x", has_default=True))
    assert ddl.ddl_type is DDLType.ADD_COLUMN and ddl.table_after.schema_version < ddl.commit_ts
    assert up.rows("d", "t")[(1,)] == {"id": 1, "a": 1, "c": "x"}
    up.drop_column("d", "t", "a")
    assert up.rows("d", "t")[(2,)] == {"id": 2, "c": "x"}
    with pytest.raises(Rejected, match="lossless"):
        up.modify_column("d", "t", "c", Column("c", varchar(4)))
    up.modify_column("d", "t", "c", Column("c", varchar(64)))
    old_id = up.table("d", "t").table_id
    [tr] = up.truncate_table("d", "t")
    assert tr.table_after.table_id != old_id and up.rows("d", "t") == {}


def test_rename_keeps_rows_and_schema_version(up):
    insert(up, "t", {"id": 1, "a": 1})
    version = up.table("d", "t").schema_version
    [r] = up.rename_table("d", "t", "d", "t2")
    assert r.table_after.schema_version == version
    assert up.rows("d", "t2") == {(1,): {"id": 1, "a": 1}}
    with pytest.raises(Rejected):
        up.table("d", "t")


def test_multi_table_ddl_shares_one_commit_ts(up):
    made = up.create_tables([
        dict(schema="d", table="x", columns=cols("id"), indexes=[PK], pk_is_handle=True, partitioning=None, comment=""),
        dict(schema="d", table="y", columns=cols("id"), indexes=[PK], pk_is_handle=True, partitioning=None, comment=""),
    ])
    assert [d.ddl_type for d in made] == [DDLType.CREATE_TABLE] * 2 and made[0].commit_ts == made[1].commit_ts
    renamed = up.rename_tables([(("d", "x"), ("d", "x2")), (("d", "y"), ("d", "y2"))])
    assert len({d.commit_ts for d in renamed}) == 1 and {d.table for d in renamed} == {"x2", "y2"}


def ranged(table_id_base):
    return lambda tid: Partitioning("id", (Partition("p0", tid + 1, 100), Partition("p1", tid + 2, 200)))


def test_partition_ddl_removes_and_swaps_rows():
    u = Upstream(1_000_000, keep_history=True)
    u.create_schema("d")
    u.create_table("d", "pt", cols("id", "a"), [PK], pk_is_handle=True, partitioning=ranged(0))
    u.create_table("d", "nt", cols("id", "a"), [PK], pk_is_handle=True)
    insert(u, "pt", {"id": 5, "a": 0}, {"id": 150, "a": 0})
    with pytest.raises(Rejected, match="no partition"):
        insert(u, "pt", {"id": 500, "a": 0})
    u.add_partition("d", "pt", "p2", None)
    insert(u, "pt", {"id": 500, "a": 0})
    change = insert(u, "pt", {"id": 6, "a": 1}).changes[0]
    assert change.physical_id == u.table("d", "pt").partitioning.partitions[0].partition_id
    u.drop_partition("d", "pt", "p2")
    assert sorted(u.rows("d", "pt")) == [(5,), (6,), (150,)]
    u.truncate_partition("d", "pt", "p1")
    assert sorted(u.rows("d", "pt")) == [(5,), (6,)]
    insert(u, "nt", {"id": 120, "a": 9})
    with pytest.raises(Rejected, match="does not match"):
        u.exchange_partition("d", "pt", "p0", "d", "nt")
    nt_id = u.table("d", "nt").table_id
    p1_id = u.table("d", "pt").partitioning.partitions[1].partition_id
    [ex] = u.exchange_partition("d", "pt", "p1", "d", "nt")
    assert ex.ddl_type is DDLType.EXCHANGE_TABLE_PARTITION
    assert sorted(u.rows("d", "pt")) == [(5,), (6,), (120,)] and u.rows("d", "nt") == {}
    assert u.table("d", "nt").table_id == p1_id and u.table("d", "pt").partitioning.partitions[1].partition_id == nt_id


def test_history_answers_state_and_schema_at_any_ts(up):
    t1 = insert(up, "t", {"id": 1, "a": 1}).commit_ts
    [add] = up.add_column("d", "t", Column("c", TiDBType("int")))
    t = up.table("d", "t")
    tx = TxnBuilder()
    tx.update(t, {"id": 1, "a": 1, "c": None}, {"id": 1, "a": 2, "c": 3})
    t2 = up.commit(tx, 5).commit_ts
    [drop] = up.drop_table("d", "t")
    s = up.state
    assert s.rows_at("d", "t", t1) == {(1,): {"id": 1, "a": 1}}
    assert s.rows_at("d", "t", add.commit_ts) == {(1,): {"id": 1, "a": 1, "c": None}}
    assert s.rows_at("d", "t", t2) == {(1,): {"id": 1, "a": 2, "c": 3}}
    assert s.rows_at("d", "t", drop.commit_ts) is None
    assert s.rows_at("d", "t", t1 - 1000) == {}
    assert s.schema_at("d", "t", t1).column_names == ("id", "a")
    assert s.schema_at("d", "t", t2).column_names == ("id", "a", "c")


def test_replaying_the_history_reproduces_the_state(up):
    events = []
    events += [d for d in up.add_index("d", "t", Index("ia", ("a",)))]
    events.append(insert(up, "t", {"id": 1, "a": 1}))
    events += up.rename_table("d", "t", "d", "u")
    replayed = replay([*_bootstrap_events(), *events])
    assert replayed.rows == up.state.rows


def _bootstrap_events():
    u = Upstream(1_000_000)
    return u.create_schema("d") + u.create_table("d", "t", cols("id", "a"), [PK], pk_is_handle=True)


def test_clustered_primary_key_cannot_be_dropped_added_one_can():
    u = Upstream(1_000_000)
    u.create_schema("d")
    u.create_table("d", "k", cols("id", "u"), [PK], pk_is_handle=True)
    with pytest.raises(Rejected, match="clustered"):
        u.drop_index("d", "k", "PRIMARY")
    u.create_table("d", "n", [Column("u", int_type(), nullable=False), Column("v", int_type())],
                   [Index("uk", ("u",), unique=True)])
    u.add_index("d", "n", Index("PRIMARY", ("v",), primary=True, unique=True))
    assert u.table("d", "n").handle_key == ("v",)
    u.drop_index("d", "n", "PRIMARY")
    assert u.table("d", "n").handle_key == ("u",)
