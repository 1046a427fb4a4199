"""Partition dispatch must give the partition numbers real TiCDC gives.

Expected partitions are the ones TiCDC's own dispatcher tests assert (tiflow
cdc/sink/dmlsink/mq/dispatcher/partition/*_test.go, ticdc downstreamadapter/sink/eventrouter/partition/*_test.go),
all with 16 partitions.
"""
import pytest

from ticdc_contract.model import Column, Index, TableSchema
from ticdc_contract.tidb_types import int_type
from ticdc_generators.sink.config import DispatchRule, SinkConfig
from ticdc_generators.sink.dispatch import PositionInertia, Router


def table(name, cols, indexes, schema="test"):
    return TableSchema(schema, name, 100, tuple(Column(c, int_type(), nullable=False) for c in cols),
                       tuple(indexes), schema_version=1)


def router(partition, **kw):
    return Router(SinkConfig(protocol="open-protocol", partition_num=16,
                             dispatchers=(DispatchRule(partition=partition, **kw),)))


@pytest.mark.parametrize("name,expected", [("t1", 15), ("t2", 5), ("t3", 3)])
@pytest.mark.rules("SIMPLE-DISPATCH-1")
def test_table_dispatcher_matches_ticdc(name, expected):
    t = table(name, ["a"], [])
    for ts in (1, 2, 3):
        assert router("table").partition_for(t, {"a": 1}, ts, 16) == expected
    assert router("default").partition_for(t, {"a": 1}, 1, 16) == expected


T1 = table("t1", ["a", "b"], [Index("PRIMARY", ("a",), primary=True, unique=True)])
T2 = table("t2", ["a", "b"], [Index("PRIMARY", ("a", "b"), primary=True, unique=True)])


@pytest.mark.parametrize("t,row,expected", [
    (T1, {"a": 11, "b": 12}, 2), (T1, {"a": 22, "b": 22}, 11), (T1, {"a": 11, "b": 33}, 2),
    (T2, {"a": 11, "b": 22}, 5), (T2, {"a": 11, "b": 0}, 14), (T2, {"a": 11, "b": 33}, 2),
])
@pytest.mark.rules("OPEN-DISPATCH-1", "OPEN-DISPATCH-2", "SIMPLE-DISPATCH-1")
def test_index_value_dispatcher_matches_ticdc(t, row, expected):
    assert router("index-value").partition_for(t, row, 1, 16) == expected


@pytest.mark.rules("OPEN-DISPATCH-1", "SIMPLE-DISPATCH-1")
def test_index_value_with_named_unique_index_matches_ticdc():
    t = table("t1", ["COL2", "Col1", "col3"], [Index("index1", ("COL2", "Col1"), unique=True)])
    t = TableSchema(t.schema, t.table, t.table_id,
                    tuple(Column(c.name, c.type, nullable=c.name == "col3") for c in t.columns),
                    t.indexes, 1)
    row = {"COL2": 22, "Col1": 11, "col3": 33}
    assert router("index-value", index="index1").partition_for(t, row, 33, 16) == 5
    assert router("index-value", index="INDEX1").partition_for(t, row, 33, 16) == 5
    assert router("index-value").partition_for(t, row, 33, 16) == 5  # the NOT NULL unique key is the handle
    with pytest.raises(ValueError, match="index 'index2' not found"):
        router("index-value", index="index2").partition_for(t, row, 33, 16)


@pytest.mark.rules("SIMPLE-DISPATCH-1")
def test_columns_dispatcher_matches_ticdc():
    t = table("t1", ["col1", "col2", "col3"], [])
    row = {"col2": 11, "col1": 22, "col3": 33}
    assert router("columns", columns=("col2", "col1")).partition_for(t, row, 1, 16) == 15
    assert router("columns", columns=("COL2", "Col1")).partition_for(t, row, 1, 16) == 15
    renamed = table("t1", ["Col1", "COL2", "col3"], [])
    assert router("columns", columns=("col2", "col1")).partition_for(
        renamed, {"COL2": 11, "Col1": 22, "col3": 33}, 1, 16) == 5
    with pytest.raises(ValueError, match="not found"):
        router("columns", columns=("col2", "col-not-found")).partition_for(t, row, 1, 16)


@pytest.mark.rules("SIMPLE-DISPATCH-1")
def test_ts_dispatcher_is_commit_ts_modulo():
    assert router("ts").partition_for(T1, {"a": 1}, 35, 16) == 3


def test_position_inertia_xors_crc_of_each_write():
    import zlib
    h = PositionInertia()
    h.write(b"ab", b"c")
    h.write(b"d")
    assert h.value == zlib.crc32(b"abc") ^ zlib.crc32(b"d")


def test_topic_expression():
    r = Router(SinkConfig(protocol="canal-json", topic="default",
                          dispatchers=(DispatchRule(matcher=("test.*",), topic="{schema}_{table}"),)))
    assert r.topic_for(T1) == "test_t1"
    other = TableSchema("other", "x", 1, T1.columns, T1.indexes, 1)
    assert r.topic_for(other) == "default"


def test_matchers_are_table_filters_case_insensitive_unless_configured():
    # TiCDC event_router.go: tableFilter.Parse(matcher), CaseInsensitive unless case-sensitive.
    from ticdc_contract.model import Column, Index, TableSchema
    from ticdc_contract.tidb_types import int_type
    from ticdc_generators.sink.config import DispatchRule, SinkConfig

    t = TableSchema(schema="Test", table="Orders", table_id=1, columns=(Column("id", int_type(), nullable=False),),
                    indexes=(Index("PRIMARY", ("id",), primary=True),), schema_version=1, pk_is_handle=True)
    rules = (DispatchRule(matcher=("test.orders", "!test.o*"), topic="negated"),
             DispatchRule(matcher=("test.ord[a-z]rs",), topic="by-class"))
    assert Router(SinkConfig(protocol="canal-json", dispatchers=rules)).topic_for(t) == "by-class"
    sensitive = SinkConfig(protocol="canal-json", dispatchers=rules, case_sensitive=True)
    assert Router(sensitive).topic_for(t) == "ticdc-test"


def test_an_invalid_dispatcher_matcher_is_a_config_error():
    import pytest

    from ticdc_generators.sink.changefeed import ChangefeedConfigError, parse_changefeed
    from ticdc_generators.sink.config import SinkConfig

    with pytest.raises(ChangefeedConfigError, match="not a valid table filter"):
        parse_changefeed("[sink]\ndispatchers = [{matcher = ['test'], topic = 'x'}]\n", SinkConfig(protocol="canal-json"))
