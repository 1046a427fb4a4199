"""A column-selected changefeed end to end: generate, consume with the local reference consumer,
check at the selection's fidelity. The smoke tables keep their keys and lose other columns."""
import json
import subprocess

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.checks.differential import check_final_state
from ticdc_generators.pipeline import encoding_names
from ticdc_generators.scenarios.smoke import customers_table, orders_table

# Modelled on TiCDC's column_selector integration test: a table-specific selector first, then a
# wider one (which must not match the first table, since TiCDC verifies every matching selector).
CHANGEFEED = """
[sink]
column-selectors = [
    {matcher = ['smoke.orders'], columns = ['*', '!note', '!receipt']},
    {matcher = ['smoke.*', '!smoke.orders'], columns = ['code', 'name', 'b*', 'visits']},
]
"""
DROPPED = {"smoke.orders": {"note", "receipt"}, "smoke.customers": {"last_seen", "avatar", "points"}}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("selectors")
    toml = tmp / "changefeed.toml"
    toml.write_text(CHANGEFEED)
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "all", "--consumer", "local",
                                 "--changefeed", str(toml), "--work", str(tmp / "w")],
                          capture_output=True, text=True, cwd=ROOT)
    [case] = (tmp / "w").glob("smoke-seed1-*")  # the changefeed's options digest names the folder
    return case, proc


def test_the_dropped_columns_are_the_smoke_tables_non_key_columns():
    for t in (orders_table(1), customers_table(1)):
        assert DROPPED[t.qualified_name] < set(t.column_names)
        assert not DROPPED[t.qualified_name] & set(t.handle_key)


def test_every_encoding_conforms_at_the_selections_fidelity(run):
    _, proc = run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("conformant") == len(encoding_names()) and "NOT conformant" not in proc.stdout


@pytest.mark.parametrize("encoding", encoding_names())
def test_no_record_carries_a_dropped_value_and_the_check_depends_on_the_projection(run, encoding):
    case, _ = run
    manifest = json.loads((case / encoding / "manifest.json").read_text())
    first = {"matcher": ["smoke.orders"], "columns": ["*", "!note", "!receipt"]}
    assert manifest["sink"]["column-selectors"][0] == first
    # The consumer's tables hold nothing in the dropped columns ...
    for name, dropped in DROPPED.items():
        rows = [json.loads(line) for line in (case / encoding / "consumer" / "final" / f"{name}.ndjson").open()]
        assert rows and all(r.get(c) is None for r in rows for c in dropped)
    # ... so judged against the whole truth, the same output would not conform.
    whole = dict(manifest["sink"], **{"column-selectors": []})
    verdicts = check_final_state(case / encoding / "truth", case / encoding / "consumer", manifest["protocol"], whole)
    assert any(v.findings for v in verdicts)


def test_a_selection_that_drops_the_key_is_refused(tmp_path):
    toml = tmp_path / "changefeed.toml"
    toml.write_text("[sink]\ncolumn-selectors = [{matcher = ['smoke.orders'], columns = ['customer', 'amount']}]\n")
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", "local",
                                 "--changefeed", str(toml), "--work", str(tmp_path / "w")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0
    assert "[CDC:ErrColumnSelectorFailed]" in proc.stderr and "`smoke`.`orders`" in proc.stderr
