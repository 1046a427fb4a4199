"""Named scenarios: deterministic per seed, accepted by the upstream model, and covering what they promise."""
import resource
import subprocess
import sys
from typing import Any

import orjson
import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.checks.key_updates import delivered_changes
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_contract.canonical import value_to_json
from ticdc_contract.model import DDL, DDLType, Op, Transaction
from ticdc_contract.state import replay
from ticdc_generators.pipeline import config_for, encoding_names
from ticdc_generators.scenarios import SCENARIOS, get_scenario
from ticdc_generators.simulator import SinkSimulator
from ticdc_generators.values import domain_for

SMALL = ["smoke", "types", "keys", "ddl-evolution", "multi-table", "wide-rows"]


def history(name, seed=1, events=None):
    return list(get_scenario(name).history(seed, events))


def test_every_scenario_is_listed_with_a_one_line_description():
    out = subprocess.run(CLI + ["scenarios"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    for name in ("smoke", "types", "keys", "ddl-evolution", "multi-table", "wide-rows", "large"):
        assert name in SCENARIOS and name in out
        assert "\n" not in SCENARIOS[name].description


def test_every_scenario_name_finds_its_class_and_large_alone_imports_neither_faker_nor_hypothesis():
    for name in SCENARIOS:
        assert SCENARIOS[name].name == name
    code = ("import sys; from ticdc_generators.scenarios import get_scenario; get_scenario('large'); "
            "print(sorted({'faker', 'hypothesis'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", SMALL + ["large"])
def test_same_seed_same_history_other_seed_other_history(name):
    n = 2000 if name == "large" else None
    assert history(name, 3, n) == history(name, 3, n)
    assert history(name, 3, n) != history(name, 4, n)


@pytest.mark.parametrize("name", SMALL)
def test_commit_ts_increase_and_schema_versions_precede_their_ddl(name):
    last = 0
    for e in history(name):
        assert e.commit_ts >= last
        if isinstance(e, Transaction):
            assert e.commit_ts > last and e.start_ts < e.commit_ts
        elif e.table_after is not None and e.ddl_type is not DDLType.RENAME_TABLE:
            assert e.table_after.schema_version < e.commit_ts
        last = e.commit_ts


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("encoding", encoding_names())
def test_every_encoding_encodes_every_scenario(name, encoding):
    """Every record decodes with the reference decoder of its protocol, and the rows decoded are
    the DML of the history: each delivered at least once, with its image as the protocol carries
    it, and no row the history lacks."""
    config = config_for(name, encoding)
    options = config.ticdc_options()
    protocol = protocol_spec(config.protocol)
    events = history(name)

    expected: dict[tuple, Any] = {}
    keys: dict[tuple, tuple[str, ...]] = {}  # (schema, table, commit ts) -> the table's handle key then
    for e in events:
        if isinstance(e, Transaction):
            for change in e.changes:
                for part in delivered_changes(change, config.output_raw_change_event):
                    image = part.after if part.after is not None else part.before
                    shown = project_truth_row(part.table, _canonical(part.table, image), config.protocol, options)
                    keys[(part.table.schema, part.table.table, e.commit_ts)] = part.table.handle_key
                    expected[_row_identity(part.table.schema, part.table.table, part.op.value, e.commit_ts,
                                           part.table.handle_key, shown)] = (
                        None if part.after is None else shown)

    decoders: dict[tuple[str, int], Any] = {}
    delivered: set[tuple] = set()
    for record in SinkSimulator(config).run(events):
        decoder = decoders.setdefault((record.topic, record.partition), protocol.new_decoder(options))
        for ev in decoder.decode(record):
            if not isinstance(ev, DecodedRow):
                continue
            key = keys.get((ev.schema, ev.table, ev.commit_ts), ())
            identity = _row_identity(ev.schema, ev.table, ev.op, ev.commit_ts, key,
                                     ev.after if ev.after is not None else ev.before)
            assert identity in expected, f"a row the history lacks: {identity}"
            assert ev.after == expected[identity], identity
            delivered.add(identity)
    assert delivered == set(expected)


def _canonical(table: Any, image: dict) -> dict:
    return {c.name: value_to_json(c.type, image[c.name]) for c in table.columns if c.name in image}


def _row_identity(schema: str, table: str, op: str, commit_ts: Any, key: tuple, image: dict) -> tuple:
    """A row event told apart from the others: its table, operation and commit ts, and its handle
    key's values (the whole image for a table without one)."""
    shown = {k: image[k] for k in key} if key else image
    return schema, table, op, commit_ts, orjson.dumps(shown, option=orjson.OPT_SORT_KEYS)


def test_types_scenario_writes_every_edge_value_and_null_in_every_nullable_column():
    events = history("types")
    seen: dict[tuple, list] = {}
    for e in events:
        if isinstance(e, Transaction):
            for ch in e.changes:
                for col, v in (ch.after or {}).items():
                    seen.setdefault((ch.table.table, col), []).append(v)
    tables = {e.table_after.table: e.table_after for e in events if isinstance(e, DDL) and e.table_after}
    assert len(tables) >= 4
    for t in tables.values():
        for c in t.columns[1:]:
            if c.generated is not None:
                continue
            values = seen[(t.table, c.name)]
            assert None in values, f"{t.table}.{c.name} never NULL"
            for edge in domain_for(c.type, nullable=True).edges():
                assert edge in values, f"{t.table}.{c.name} ({c.type.sql()}) never holds edge {edge!r}"


def test_keys_scenario_covers_every_key_shape_with_key_changing_updates():
    events = history("keys")
    tables = {e.table_after.table: e.table_after for e in events if isinstance(e, DDL) and e.table_after}
    assert tables["int_handle"].pk_is_handle
    assert tables["varchar_pk"].primary_key.columns == ("code",) and not tables["varchar_pk"].pk_is_handle
    assert len(tables["composite_pk"].primary_key.columns) == 2
    assert tables["unique_only"].primary_key is None and tables["unique_only"].handle_key == ("tenant", "email")
    assert tables["partitioned"].partitioning is not None
    moved = {ch.table.table for e in events if isinstance(e, Transaction) for ch in e.changes
             if ch.op is Op.UPDATE and ch.table.key_of(ch.before) != ch.table.key_of(ch.after)}
    assert moved == set(tables) - {"no_key"}
    assert tables["no_key"].handle_key == () and tables["no_key"].indexes == ()
    no_key_ops = {ch.op for e in events if isinstance(e, Transaction) for ch in e.changes if ch.table.table == "no_key"}
    assert no_key_ops == {Op.INSERT, Op.UPDATE, Op.DELETE}
    partitions = {ch.physical_id for e in events if isinstance(e, Transaction) for ch in e.changes
                  if ch.table.table == "partitioned"}
    assert len(partitions) == 3 and tables["partitioned"].table_id not in partitions


def test_ddl_evolution_runs_every_ddl_a_consumer_sees():
    kinds = {e.ddl_type for e in history("ddl-evolution") if isinstance(e, DDL)}
    assert kinds >= {
        DDLType.CREATE_SCHEMA, DDLType.DROP_SCHEMA, DDLType.CREATE_TABLE, DDLType.DROP_TABLE, DDLType.TRUNCATE_TABLE,
        DDLType.RENAME_TABLE, DDLType.ADD_COLUMN, DDLType.DROP_COLUMN, DDLType.MODIFY_COLUMN, DDLType.ADD_INDEX,
        DDLType.DROP_INDEX, DDLType.ADD_PRIMARY_KEY, DDLType.DROP_PRIMARY_KEY, DDLType.SET_DEFAULT_VALUE,
        DDLType.MODIFY_TABLE_COMMENT, DDLType.MODIFY_TABLE_CHARSET_AND_COLLATE, DDLType.ADD_TABLE_PARTITION,
        DDLType.DROP_TABLE_PARTITION, DDLType.TRUNCATE_TABLE_PARTITION, DDLType.EXCHANGE_TABLE_PARTITION}


def test_multi_table_jobs_share_a_commit_ts():
    ddls = [e for e in history("multi-table") if isinstance(e, DDL)]
    creates = [d for d in ddls if d.ddl_type is DDLType.CREATE_TABLE]
    assert len(creates) == 12 and len({d.commit_ts for d in creates}) == 3
    renames = [d for d in ddls if d.ddl_type is DDLType.RENAME_TABLE]
    assert len(renames) == 2 and len({d.commit_ts for d in renames}) == 1
    spanning = [e for e in history("multi-table") if isinstance(e, Transaction)
                and len({ch.table.qualified_name for ch in e.changes}) > 1]
    assert spanning


def test_wide_rows_has_wide_tables_and_large_values():
    events = history("wide-rows")
    widest = max(len(e.table_after.columns) for e in events if isinstance(e, DDL) and e.table_after)
    assert widest > 100
    biggest = max(len(ch.after["blob"]) for e in events if isinstance(e, Transaction)
                  for ch in e.changes if ch.table.table == "big_values")
    assert biggest >= 256 * 1024


@pytest.mark.parametrize("name", SMALL)
def test_truth_at_every_commit_ts_equals_a_replay_of_the_prefix(name):
    events = history(name)
    full = replay(events, keep_history=True)
    for i in range(0, len(events), max(1, len(events) // 15)):
        prefix = replay(events[: i + 1], keep_history=False)
        ts = events[i].commit_ts
        if i + 1 < len(events) and events[i + 1].commit_ts == ts:
            continue  # multi-table job: the prefix ends inside it
        for name_ in set(prefix.schemas) | set(full.schemas):
            assert full.rows_at(*name_, ts) == (prefix.rows.get(name_) if name_ in prefix.schemas else None)


def test_large_streams_with_a_bounded_working_set():
    scenario = get_scenario("large")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n = 0
    for e in scenario.history(1, 30_000):
        if isinstance(e, Transaction):
            n += len(e.changes)
    assert 30_000 <= n < 30_010
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB


def test_generated_columns_are_computed_and_only_stored_ones_are_replicated():
    import orjson
    events = history("types")
    rows = [ch.after for e in events if isinstance(e, Transaction) for ch in e.changes if ch.after is not None]
    assert all(r["gen_stored"] == r["id"] * 2 + 1 and r["gen_virtual"] == r["id"] - 1 for r in rows)
    sent = [orjson.loads(r.value) for r in SinkSimulator(config_for("types", "canal-json")).run(events)]
    data = [d for m in sent if m.get("type") == "INSERT" for d in m["data"]]
    assert data and all("gen_stored" in d and "gen_virtual" not in d for d in data)
