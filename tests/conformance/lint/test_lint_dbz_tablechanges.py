"""The lint's check of a Debezium DDL's column metadata against its statement
(protocols/debezium/lint_columns.py, lint/ddl_columns.py): charsetName (DBZ-TYPEMAP-9), enumValues
(DBZ-TYPEMAP-10) and temporal defaultValueExpression (DBZ-TYPEMAP-11).

The scenarios' statements never state a collation without a charset, a backslash-escaped ENUM member
or a zero-date default, so those cases are built here: the Debezium encoder writes a CREATE TABLE
that states them, appended to the smoke stream's partitions, and the lint must pass it as written and
catch each field broken the way Debezium's own connector would write it.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.helpers import message_record
from ticdc_conformance.lint import lint
from ticdc_conformance.lint.ddl_columns import stated_columns
from ticdc_contract.model import DDL, Column, DDLType, Index, TableSchema
from ticdc_contract.record import KafkaRecord
from ticdc_contract.tidb_types import TiDBType
from ticdc_generators.pipeline import config_for
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.events import DDLEvent

from .test_lint import simulate

RULES = ("DBZ-TYPEMAP-9", "DBZ-TYPEMAP-10", "DBZ-TYPEMAP-11")
# The spec's cases (spec 000, "Data type mapping"): a utf8_unicode_ci column without charset, the
# ENUM ("c,\'d','g,''h"), a zero-date default '1000-00-00 01:00:00.000' (TiCDC's test
# tests/integration_tests/debezium02/sql/default_value_all_zero_time.sql puts it on a DATE column).
QUERY = ("CREATE TABLE `smoke`.`typemap` (`id` INT NOT NULL, "
         "`name` VARCHAR(500) NOT NULL COLLATE utf8_unicode_ci, "
         "`kind` ENUM('c,\\'d','g,''h') COLLATE utf8_unicode_ci NOT NULL DEFAULT 'g,''h', "
         "`d` DATE DEFAULT '1000-00-00 01:00:00.000', "
         "`t` TIME DEFAULT '1000-00-00 01:00:00.000', "
         "`dt` DATETIME(3) NULL DEFAULT CURRENT_TIMESTAMP(3), "
         "`note` TEXT CHARACTER SET latin1, "
         "PRIMARY KEY (`id`))")
COLUMNS = (
    Column("id", TiDBType("int"), nullable=False),
    Column("name", TiDBType("varchar", flen=500, collate="utf8_unicode_ci"), nullable=False),
    Column("kind", TiDBType("enum", collate="utf8_unicode_ci", elements=("c,'d", "g,'h")), nullable=False,
           default="g,'h", has_default=True),
    # TiDB stores a DATE default as the date: the model's canonical value
    Column("d", TiDBType("date"), default="1000-00-00", has_default=True),
    Column("t", TiDBType("time"), default="01:00:00", has_default=True),
    Column("dt", TiDBType("datetime", decimal=3), default="CURRENT_TIMESTAMP(3)", has_default=True),
    Column("note", TiDBType("text", charset="latin1", collate="latin1_bin")),
)


def _with_ddl() -> tuple[list[KafkaRecord], object, dict[tuple[str, int], int]]:
    """The smoke stream with the CREATE TABLE above appended to every partition, as the encoder writes
    it; (records, settings, index of the new record by partition)."""
    records, settings = simulate("smoke", "debezium")
    ts = (max(r.timestamp_ms for r in records) + 1) << 18
    table = TableSchema("smoke", "typemap", 900, COLUMNS, (Index("PRIMARY", ("id",), primary=True),), ts)
    ddl = DDL(ts, DDLType.CREATE_TABLE, QUERY, "smoke", "typemap", table, None)
    cfg = config_for("smoke", "debezium")
    added = {}
    for topic, count in settings.topics.items():
        for partition in range(count):
            offset = 1 + max(r.offset for r in records if (r.topic, r.partition) == (topic, partition))
            encoder = encoder_module("debezium").new_encoder(cfg, topic, partition)
            (m,) = encoder.encode(DDLEvent(ddl))
            added[(topic, partition)] = len(records)
            records.append(message_record(m, topic=topic, partition=partition, offset=offset))
    return records, settings, added


def _column(record: KafkaRecord, name: str) -> dict:
    doc = json.loads(record.value)
    return next(c for c in doc["payload"]["tableChanges"][0]["table"]["columns"] if c["name"] == name)


def _edit_column(record: KafkaRecord, name: str, field: str, value) -> KafkaRecord:
    doc = json.loads(record.value)
    column = next(c for c in doc["payload"]["tableChanges"][0]["table"]["columns"] if c["name"] == name)
    column[field] = value
    return replace(record, value=json.dumps(doc).encode())


def _findings(records, settings, level: str = "required") -> list[tuple[str, str, int, int]]:
    return [(f.rule, f.topic, f.partition, f.offset) for f in lint(records, settings).findings.kept
            if f.level == level or (level == "any" and f.rule in RULES)]


@pytest.mark.rules("DBZ-TYPEMAP-9", "DBZ-TYPEMAP-10", "DBZ-TYPEMAP-11")
@pytest.mark.parametrize("scenario", ["smoke", "replays", "ddl-evolution", "types"])
def test_the_simulators_debezium_ddl_columns_pass(scenario):
    records, settings = simulate(scenario, "debezium")
    assert _findings(records, settings, "any") == []


@pytest.mark.rules("DBZ-TYPEMAP-9", "DBZ-TYPEMAP-10", "DBZ-TYPEMAP-11")
def test_the_encoders_ddl_for_the_specs_cases_passes_and_says_what_tidb_recorded():
    records, settings, added = _with_ddl()
    assert _findings(records, settings) == []
    record = records[added[("ticdc-smoke", 0)]]
    # DBZ-TYPEMAP-9: the charset TiDB derives from utf8_unicode_ci, not Debezium's utf8mb4
    assert _column(record, "name")["charsetName"] == "utf8"
    assert _column(record, "note")["charsetName"] == "latin1"
    assert _column(record, "id")["charsetName"] is None
    # DBZ-TYPEMAP-10: the spec's ('c,\'d', 'g,''h') as TiDB stores the members
    assert _column(record, "kind")["enumValues"] == ["'c,'d'", "'g,'h'"]
    # DBZ-TYPEMAP-11: the DATE keeps the date, TIME the statement's literal, NOW() the epoch
    assert _column(record, "d")["defaultValueExpression"] == "1000-00-00"
    assert _column(record, "t")["defaultValueExpression"] == "1000-00-00 01:00:00.000"
    assert _column(record, "dt")["defaultValueExpression"] == "1970-01-01 00:00:00"


@pytest.mark.parametrize("column, field, value, rule", [
    # what Debezium's connector writes where TiCDC differs (spec 000's list)
    pytest.param("name", "charsetName", "utf8mb4", "DBZ-TYPEMAP-9", marks=pytest.mark.rules("DBZ-TYPEMAP-9")),
    pytest.param("note", "charsetName", "utf8mb4", "DBZ-TYPEMAP-9", marks=pytest.mark.rules("DBZ-TYPEMAP-9")),
    pytest.param("id", "charsetName", "utf8mb4", "DBZ-TYPEMAP-9", marks=pytest.mark.rules("DBZ-TYPEMAP-9")),
    pytest.param("kind", "enumValues", ["'c,\\'d'", "'g,''h'"], "DBZ-TYPEMAP-10",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-10")),
    pytest.param("kind", "enumValues", ["'c,'d'"], "DBZ-TYPEMAP-10", marks=pytest.mark.rules("DBZ-TYPEMAP-10")),
    pytest.param("d", "defaultValueExpression", "1000-00-00 01:00:00.000", "DBZ-TYPEMAP-11",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-11")),
    pytest.param("t", "defaultValueExpression", "01:00:00", "DBZ-TYPEMAP-11", marks=pytest.mark.rules("DBZ-TYPEMAP-11")),
    pytest.param("dt", "defaultValueExpression", "CURRENT_TIMESTAMP(3)", "DBZ-TYPEMAP-11",
                 marks=pytest.mark.rules("DBZ-TYPEMAP-11")),
])
def test_a_broken_column_of_the_specs_cases_is_caught_at_its_record(column, field, value, rule):
    records, settings, added = _with_ddl()
    i = added[("ticdc-smoke", 1)]
    records[i] = _edit_column(records[i], column, field, value)
    r = records[i]
    assert _findings(records, settings) == [(rule, r.topic, r.partition, r.offset)]
    (finding,) = [f for f in lint(records, settings).findings.kept if f.rule == rule]
    assert column in finding.message and field in finding.message


def _scenario_ddl(scenario: str, query_start: str) -> tuple[list[KafkaRecord], object, int]:
    records, settings = simulate(scenario, "debezium")
    for i, r in enumerate(records):
        payload = json.loads(r.value).get("payload") or {}
        if r.partition == 2 and str(payload.get("ddl", "")).startswith(query_start):
            return records, settings, i
    raise AssertionError(f"no DDL {query_start!r} on partition 2")


@pytest.mark.rules("DBZ-TYPEMAP-9", "DBZ-TYPEMAP-11")
@pytest.mark.parametrize("scenario, query, column, field, value, rule", [
    ("smoke", "CREATE TABLE `smoke`.`orders`", "id", "charsetName", "utf8mb4", "DBZ-TYPEMAP-9"),
    ("replays", "CREATE TABLE `shop`.`orders`", "placed_at", "defaultValueExpression", "2020-01-01 00:00:00",
     "DBZ-TYPEMAP-11"),
    ("ddl-evolution", "ALTER TABLE `evo`.`accounts` MODIFY COLUMN `balance`", "balance", "charsetName", "utf8",
     "DBZ-TYPEMAP-9"),
])
def test_the_check_runs_on_every_debezium_ddl_of_the_scenarios(scenario, query, column, field, value, rule):
    records, settings, i = _scenario_ddl(scenario, query)
    records[i] = _edit_column(records[i], column, field, value)
    r = records[i]
    assert _findings(records, settings) == [(rule, r.topic, r.partition, r.offset)]


def test_a_column_the_statement_does_not_define_is_not_judged():
    # ADD INDEX defines no column: its tableChanges come from TiDB's column info alone
    records, settings, i = _scenario_ddl("ddl-evolution", "ALTER TABLE `evo`.`accounts` ADD INDEX")
    records[i] = _edit_column(records[i], "id", "charsetName", "utf8mb4")
    assert [f for f in _findings(records, settings) if f[0] in RULES] == []


# --- the statement reader ----------------------------------------------------------------------------
def test_the_statement_reader_takes_charsets_members_and_defaults_as_tidb_records_them():
    stated = stated_columns(QUERY)
    assert stated.table_charset is None
    name, kind, note = stated.columns["name"], stated.columns["kind"], stated.columns["note"]
    assert (name.charset, name.collate_charset) == (None, "utf8")  # COLLATE after NOT NULL counts too
    assert kind.elements == ("c,'d", "g,'h")
    assert note.charset == "latin1"
    assert stated.columns["d"].default.value == "1000-00-00 01:00:00.000"
    assert set(stated.columns) == {"id", "name", "kind", "d", "t", "dt", "note"}  # not the PRIMARY KEY item


def test_the_statement_reader_reads_alter_table_column_definitions_and_table_charsets():
    alter = stated_columns("ALTER TABLE `a`.`b` ADD COLUMN `c` SET('x ','y') CHARSET ascii, "
                           "MODIFY `m` VARCHAR(3) COLLATE gbk_bin, CHANGE COLUMN `o` `n` NCHAR(2), ADD INDEX i (`c`)")
    assert set(alter.columns) == {"c", "m", "n"}
    assert alter.columns["c"].elements == ("x", "y") and alter.columns["c"].charset == "ascii"
    assert alter.columns["m"].collate_charset == "gbk"
    assert alter.columns["n"].charset == "utf8"  # NATIONAL CHAR's charset
    create = stated_columns("CREATE TABLE t (a VARCHAR(3), b INT) DEFAULT CHARSET = latin1")
    assert create.table_charset == "latin1"
    assert stated_columns("CREATE TABLE t (a VARCHAR(3)) COLLATE utf8_general_ci").table_charset == "utf8"
    assert stated_columns("DROP TABLE t").columns == {}
    assert stated_columns("CREATE TABLE t (a VARCHAR(3) CHARSET utf16)").columns["a"].unknown_charset
