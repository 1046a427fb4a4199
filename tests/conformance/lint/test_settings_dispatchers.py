"""The lint's reading of `[[sink.dispatchers]]` (lint/settings.py) picks, for every table, the rule
the simulator's router picks (generators/ticdc_generators/sink/dispatch.py): the first whose
matcher accepts the table, case-insensitively unless `case-sensitive`. Both read the matchers with
the contract's table filter; which rule applies is decided on each side on its own."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ticdc_conformance.lint.settings import make_settings
from ticdc_generators.sink.config import DispatchRule, SinkConfig
from ticdc_generators.sink.dispatch import Router
from ticdc_generators.strategies import table_schemas

# `ts` spreads one row's changes over partitions, `table` keeps them in one: the lint's verdict
# for a table tells which of the two rules it matched.
RULE_SETS = (
    (),
    (DispatchRule(("d0.t1",), "ts"), DispatchRule(("d0.*",), "table"), DispatchRule(("*.*",), "ts")),
    (DispatchRule(("D0.T?", "!d0.t0"), "ts"), DispatchRule(("/^d[01]$/.*",), "table")),
    (DispatchRule(("test.*",), "table"), DispatchRule(("`Test`.*", "d1.*"), "ts")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=table_schemas(schema="d0"), schema=st.sampled_from(["d0", "D0", "d1", "test", "Test"]),
       rules=st.sampled_from(RULE_SETS), case_sensitive=st.booleans())
def test_the_lint_and_the_router_pick_the_same_dispatcher(table, schema, rules, case_sensitive):
    table = replace(table, schema=schema)
    config = SinkConfig(protocol="canal-json", topic="t", dispatchers=rules, case_sensitive=case_sensitive)
    lint = make_settings("canal-json", config.ticdc_options(), {"t": 3})
    rule = Router(config).rule_for(table)
    assert lint.keeps_rows_in_place(table.schema, table.table) == (rule is None or rule.partition != "ts")
