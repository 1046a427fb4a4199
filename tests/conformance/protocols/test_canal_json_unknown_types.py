"""A Canal-JSON stream may name MySQL types spec 003's tables do not list (official Canal, a captured
MySQL changefeed): the decoder carries such a column's values as the message gives them and marks
its type unknown, instead of rejecting the record; the lint still names the type as no TiDB type."""
from __future__ import annotations

import orjson
import pytest

from tests.helpers import assert_decode_error, kafka_record
from ticdc_conformance.events import DecodedRow
from ticdc_conformance.lint import lint
from ticdc_conformance.lint.settings import make_settings
from ticdc_conformance.protocols.canal_json import new_decoder
from ticdc_conformance.protocols.canal_json.mysql_type import BINARY_TYPES as CANAL_BINARY_TYPES
from ticdc_conformance.protocols.canal_json.mysql_type import KNOWN_TYPES, parse_mysql_type
from ticdc_conformance.protocols.canal_json.mysql_type import TEXT_TYPES as CANAL_TEXT_TYPES
from ticdc_contract.tidb_types import ALL_BASE_TYPES, BINARY_TYPES, STRING_TYPES

OTHER = 1111  # java.sql.Types.OTHER, what official Canal writes for a type it has no code for

# Hand-written, in the shape of spec 003's DML example, with TiDB's extension.
INSERT = {
    "id": 0, "database": "shop", "table": "places", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
    "es": 1639633094670, "ts": 1639633095489, "sql": "",
    "sqlType": {"id": 4, "spot": OTHER, "ratio": OTHER, "open": OTHER, "stock": 4},
    "mysqlType": {"id": "int", "spot": "geometry", "ratio": "double precision", "open": "bool",
                  "stock": "mediumint unsigned zerofill"},
    "old": None,
    "data": [{"id": "7", "spot": "POINT(1 2)", "ratio": "0.25", "open": "1", "stock": "0000042"}],
    "_tidb": {"commitTs": 429918007904436226},
}
OPTIONS = {"enable-tidb-extension": True}


def test_names_outside_spec_003s_tables_parse_as_unknown_types():
    assert parse_mysql_type("geometry").known is False
    double = parse_mysql_type("double precision")
    assert (double.base, double.known) == ("double precision", False)
    assert parse_mysql_type("BOOL").base == "bool"
    stock = parse_mysql_type("mediumint unsigned zerofill")
    assert (stock.base, stock.known, stock.unsigned, stock.zerofill) == ("mediumint", True, True, True)
    assert parse_mysql_type("int(10) unsigned").known


@pytest.mark.parametrize("fast_path", [True, False])
def test_an_unknown_type_is_carried_as_the_message_gives_it(fast_path):
    decoder = new_decoder({**OPTIONS, "fast-path": fast_path})
    [row] = decoder.decode(kafka_record(INSERT))
    assert row == DecodedRow(schema="shop", table="places", op="insert", commit_ts=429918007904436226,
                             after={"id": 7, "spot": "POINT(1 2)", "ratio": "0.25", "open": "1", "stock": 42},
                             before=None, key_columns=("id",))


def test_the_read_message_marks_the_column_type_unknown():
    read = new_decoder(OPTIONS).read(kafka_record(INSERT))
    assert read.error is None
    types = {name: parse_mysql_type(text) for name, text in read.message.fields["mysqlType"].items()}
    assert [name for name, t in types.items() if not t.known] == ["spot", "ratio", "open"]


def test_an_unknown_types_value_must_still_be_text_or_null():
    bad = {**INSERT, "data": [{**INSERT["data"][0], "spot": 12}]}
    assert_decode_error(new_decoder(OPTIONS), kafka_record(bad), r"'spot': value must be a JSON string or null")
    null = {**INSERT, "data": [{**INSERT["data"][0], "spot": None}]}
    [row] = new_decoder(OPTIONS).decode(kafka_record(null))
    assert row.after["spot"] is None


def test_the_lint_names_the_type_and_the_record_still_decodes():
    settings = make_settings("canal-json", OPTIONS, {"t": 1})
    result = lint([kafka_record(orjson.dumps(INSERT), topic="t")], settings)
    rules = result.findings.by_rule()
    assert "CANAL-MYSQLTYPE-1" in rules and "CANAL-EVENTS-1" not in rules, rules
    assert result.summary["totals"]["rows"] == 1


def test_the_decoders_type_names_are_the_contracts():
    """The decoder states spec 003's type names itself; they are the TiDB types the generator writes."""
    assert KNOWN_TYPES == frozenset(ALL_BASE_TYPES)
    assert CANAL_BINARY_TYPES == frozenset(BINARY_TYPES) and CANAL_TEXT_TYPES == frozenset(STRING_TYPES)
