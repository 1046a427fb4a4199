"""The schema strategies: types TiDB accepts, values of their domains, tables of every key shape,
rows valid for their table."""
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from ticdc_contract.model import ROWID
from ticdc_contract.type_catalogue import check_type
from ticdc_generators.strategies import KeyShape, check_row, columns, table_schemas, table_specs, tidb_types, values
from ticdc_generators.strategies.names import name_key
from ticdc_generators.strategies.rows import rows
from ticdc_generators.strategies.schemas import MAX_INDEX_KEY_BYTES, index_bytes
from ticdc_generators.strategies.types import FAMILIES, is_key_type
from ticdc_generators.upstream import Upstream
from ticdc_generators.values import domain_for

FIRST_HIT = settings(database=None, phases=[Phase.generate], max_examples=500, deadline=None)


@given(tidb_types())
def test_types_are_declarations_tidb_accepts(t):
    check_type(t)
    domain_for(t)
    assert t.sql()


@pytest.mark.parametrize("wanted", [
    ("unsigned integer", lambda t: t.is_integer and t.unsigned),
    ("BOOL", lambda t: t.is_bool),
    ("FLOAT(M,D)", lambda t: t.base == "float" and t.decimal is not None),
    ("DECIMAL(M,D) with a scale", lambda t: t.base == "decimal" and t.scale > 0),
    ("fsp 6", lambda t: t.base in ("datetime", "timestamp", "time") and t.fsp == 6),
    ("a stated charset", lambda t: t.is_text and t.charset not in (None, "utf8mb4")),
    ("a case-insensitive collation", lambda t: t.is_text and (t.collate or "").endswith("_ci")),
    ("ENUM of several members", lambda t: t.base == "enum" and len(t.elements) > 2),
    ("SET", lambda t: t.base == "set"),
    ("BIT(n>1)", lambda t: t.base == "bit" and t.effective_flen > 1),
    ("JSON", lambda t: t.base == "json"),
    ("a BLOB", lambda t: t.base.endswith("blob")),
], ids=lambda w: w[0])
def test_the_whole_catalogue_is_reachable(wanted):
    find(tidb_types(), wanted[1], settings=FIRST_HIT)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_alone(family):
    find(tidb_types(families=(family,)), lambda t: True, settings=FIRST_HIT)


@given(st.data())
def test_values_belong_to_the_domain(data):
    t = data.draw(tidb_types())
    nullable = data.draw(st.booleans())
    v = data.draw(values(t, nullable=nullable))
    domain_for(t, nullable=nullable).validate(v)


@given(columns())
def test_column_defaults_are_values_of_the_column(col):
    check_type(col.type)
    if col.has_default:
        domain_for(col.type, nullable=col.nullable).validate(col.default)
        assert not (col.type.is_blob_family or col.type.base == "json")


@given(table_specs())
def test_table_specs_are_tables_tidb_creates(spec):
    names = [name_key(c.name) for c in spec.columns]
    assert len(set(names)) == len(names)
    assert len({name_key(ix.name) for ix in spec.indexes}) == len(spec.indexes)
    t = spec.to_schema()
    assert bool(t.handle_key) == (spec.shape is not KeyShape.NO_KEY)
    for c in spec.columns:
        check_type(c.type)
        if c.name in t.handle_key:
            assert not c.nullable and is_key_type(c.type)
    for ix in spec.indexes:
        assert sum(index_bytes(t.column(c).type) for c in ix.columns) <= MAX_INDEX_KEY_BYTES
        if (ix.unique or ix.primary) and spec.partitioned:
            assert spec.partition_column in ix.columns
    if spec.shape is KeyShape.INT_HANDLE:
        assert t.pk_is_handle and len(t.handle_key) == 1 and t.column(t.handle_key[0]).type.is_integer
    else:
        assert not t.pk_is_handle
    if spec.shape in (KeyShape.UNIQUE_NOT_NULL, KeyShape.NO_KEY):
        assert t.primary_key is None
    if spec.partitioned:
        bounds = [b for b in spec.partition_bounds if b is not None]
        assert bounds == sorted(set(bounds)) and None not in spec.partition_bounds[:-1]
        assert t.column(spec.partition_column).type.is_integer
    up = Upstream(1_000_000)
    up.create_schema(spec.schema)
    [ddl] = spec.create(up)
    assert ddl.table_after.column_names == t.column_names


# Partitioning is on an integer column of the key: a CLUSTERED key (one non-integer column) and
# tables without a key are never partitioned.
SHAPES = [(shape, False) for shape in KeyShape] + [
    (shape, True) for shape in KeyShape if shape not in (KeyShape.CLUSTERED, KeyShape.NO_KEY)]


@pytest.mark.parametrize("shape, partitioned", SHAPES,
                         ids=[f"{s.value}-{'partitioned' if p else 'plain'}" for s, p in SHAPES])
def test_every_key_shape_is_generated(shape, partitioned):
    spec = find(table_specs(shapes=(shape,), partitioned=partitioned), lambda s: s.partitioned == partitioned,
                settings=FIRST_HIT)
    assert spec.shape is shape


def test_composite_clustered_and_nonclustered_keys_are_generated():
    for clustered in (True, False):
        find(table_specs(shapes=(KeyShape.COMPOSITE,)), lambda s: s.indexes[0].clustered is clustered,
             settings=FIRST_HIT)


@given(st.data())
def test_rows_are_valid_for_their_table(data):
    t = data.draw(table_schemas())
    batch = data.draw(st.lists(rows(t), max_size=3))
    for row in batch:
        assert list(row) == list(t.column_names)
        # (A table without a handle key: the upstream gives each row a hidden row ID when it is written.)
        check_row(t, row if t.handle_key else {**row, ROWID: 1})
