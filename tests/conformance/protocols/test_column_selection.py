"""The decode side's reading of `sink.column-selectors` (protocols/common/column_selection.py)
agrees with the simulator's (generators/ticdc_generators/sink/column_selector.py): for every table
both name the same selected columns, or both say no selector matches."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ticdc_conformance.checks.selection import unjudged_columns
from ticdc_conformance.protocols.common.column_selection import consumer_table, selectors
from ticdc_contract.model import Column, Index, TableSchema
from ticdc_contract.tidb_types import TiDBType
from ticdc_generators.sink.column_selector import ColumnSelectors
from ticdc_generators.strategies import table_schemas

# Selector lists as a manifest's `sink` carries them: TiCDC's TestNewColumnSelector rules, and
# rules with exclusions, regular expressions, quoted names and mixed case.
RULE_SETS = (
    [],
    [{"matcher": ["test.*"], "columns": ["a", "b"]}, {"matcher": ["test1.*"], "columns": ["*", "!a"]},
     {"matcher": ["test2.*"], "columns": ["co*", "!col2"]}, {"matcher": ["test3.*"], "columns": ["co?1"]}],
    [{"matcher": ["d0.*", "!d0.t1"], "columns": ["*", "!c*"]}, {"matcher": ["*.*"], "columns": ["id", "k*"]}],
    [{"matcher": ["/^D[0-9]$/.t?"], "columns": ["/^[a-c]/", "ID"]}],
    [{"matcher": ["`Test`.*", "d1.*"], "columns": ["[!c]*"]}, {"matcher": ["test.*"], "columns": ["*"]}],
)


def _both(table: TableSchema, rules: list, case_sensitive: bool):
    options = {"column-selectors": rules, "case-sensitive": case_sensitive}
    return selectors(options).selected(table), ColumnSelectors.from_options(options).selected(table)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=table_schemas(schema="d0"),
       schema=st.sampled_from(["d0", "D0", "d1", "test", "Test", "test1", "test2", "test3"]),
       rules=st.sampled_from(RULE_SETS), case_sensitive=st.booleans())
def test_both_sides_select_the_same_columns_of_generated_tables(table, schema, rules, case_sensitive):
    decoded, simulated = _both(replace(table, schema=schema), rules, case_sensitive)
    assert decoded == simulated


def _table(schema: str, name: str, columns: tuple[str, ...]) -> TableSchema:
    int_type = TiDBType("int")
    return TableSchema(schema, name, 1, tuple(Column(c, int_type, nullable=c != columns[0]) for c in columns),
                       (Index("PRIMARY", (columns[0],), primary=True, unique=True),), 1)


@pytest.mark.parametrize("schema, name, kept", [
    ("test", "t1", {"a", "b"}), ("test1", "t1", {"b", "c", "d", "col", "col1", "col2"}),
    ("test2", "t1", {"col", "col1"}),
    ("test3", "t1", {"col1"}), ("test4", "t1", None)])
def test_the_first_matching_selector_decides(schema, name, kept):  # TiCDC TestColumnSelectorGetSelector
    table = _table(schema, name, ("a", "b", "c", "d", "col", "col1", "col2"))
    decoded, simulated = _both(table, RULE_SETS[1], False)
    assert decoded == simulated == (None if kept is None else frozenset(kept))


def test_matchers_follow_case_sensitive_and_columns_never_do():
    table = _table("Test", "T1", ("ID", "a"))
    rules = [{"matcher": ["test.t1"], "columns": ["id"]}]
    assert _both(table, rules, False) == (frozenset({"ID"}), frozenset({"ID"}))
    assert _both(table, rules, True) == (None, None)


def test_the_consumer_table_keeps_the_selected_columns_and_the_keys_they_hold():
    table = _table("test", "t1", ("a", "b", "c"))
    table = replace(table, indexes=(*table.indexes, Index("uk", ("c",), unique=True)))
    chosen = selectors({"column-selectors": [{"matcher": ["test.*"], "columns": ["a", "b"]}]})
    view = consumer_table(table, chosen)
    assert view.column_names == ("a", "b") and [ix.name for ix in view.indexes] == ["PRIMARY"]
    assert unjudged_columns(table, chosen) == {"c"}
    assert consumer_table(table, selectors({})) is table
