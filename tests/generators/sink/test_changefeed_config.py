"""Changefeed TOML and sink URI: TiCDC's own vocabulary in, SinkConfig out, nothing silently ignored."""

import tomllib
from typing import Any, Iterator

import pytest

from tests.conftest import SHARED
from ticdc_generators.sink.changefeed import ChangefeedConfigError, parse_changefeed, parse_sink_uri
from ticdc_generators.sink.config import SinkConfig

REFERENCE = SHARED / "reference"
TOMLS = sorted(REFERENCE.glob("*/tests/integration_tests/**/*.toml"))
BASE = SinkConfig(protocol="simple")


def test_the_reference_configs_are_found():
    assert len(TOMLS) >= 20


def _options(table: dict, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every option a TOML sets, by key path; an array (dispatchers, column selectors) is one option."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _options(value, path + (key,))
        else:
            yield path + (key,), value


@pytest.mark.parametrize("path", TOMLS, ids=lambda p: str(p.relative_to(REFERENCE)))
def test_every_reference_changefeed_toml_is_understood(path):
    """Each option the TOML sets (read here with tomllib, apart from the parser) is in the
    SinkConfig under its TiCDC name, or listed as without effect on Kafka output."""
    text = path.read_text()
    cf = parse_changefeed(text, BASE)
    s = cf.sink
    options = list(_options(tomllib.loads(text)))
    assert options, "a reference TOML sets something"
    for keys, value in options:
        name = ".".join(keys)
        if keys == ("sink", "dispatchers"):
            assert [(r.matcher, r.partition, r.index, r.columns, r.topic) for r in s.dispatchers] == [
                (tuple(d["matcher"]), d.get("partition", d.get("dispatcher", "default")), d.get("index", ""),
                 tuple(d.get("columns", ())), d.get("topic", "")) for d in value], name
        elif keys == ("sink", "column-selectors"):
            assert [(c.matcher, c.columns) for c in s.column_selectors] == [
                (tuple(c["matcher"]), tuple(c["columns"])) for c in value], name
        elif keys == ("filter", "rules"):
            assert value == ["*.*"], "the simulator replicates every table"
        elif name in cf.without_effect or keys[0] in cf.without_effect:
            field = keys[-1].replace("-", "_")
            assert not hasattr(s, field) or getattr(s, field) == getattr(BASE, field), name
        else:
            assert getattr(s, keys[-1].replace("-", "_")) == value, name
    set_here = {".".join(k) for k, _ in options}
    assert {n for n in cf.without_effect if n not in set_here} <= {k[0] for k, _ in options}


def test_applied_options_land_under_their_names():
    cf = parse_changefeed("""
force-replicate = true
[integrity]
integrity-check-level = "correctness"
[sink]
protocol = "canal-json"
send-bootstrap-in-msg-count = 7
dispatchers = [
    {matcher = ['dispatcher.index'], partition = "index-value", index = "idx_a"},
    {matcher = ['test.*'], topic = "{schema}_{table}"},
    {matcher = ['old.*'], dispatcher = "ts"},
]
[sink.kafka-config]
partition-num = 6
kafka-version = "2.4.0"
[sink.kafka-config.codec-config]
enable-tidb-extension = true
[sink.open]
output-old-value = false
""", BASE)
    s = cf.sink
    assert (s.protocol, s.partition_num, s.enable_tidb_extension, s.output_old_value, s.send_bootstrap_in_msg_count) \
        == ("canal-json", 6, True, False, 7)
    assert [(r.matcher, r.partition, r.index, r.topic) for r in s.dispatchers] == [
        (("dispatcher.index",), "index-value", "idx_a", ""), (("test.*",), "default", "", "{schema}_{table}"),
        (("old.*",), "ts", "", "")]
    assert s.integrity_check_level == "correctness"
    assert "sink.kafka-config.kafka-version" in cf.without_effect


@pytest.mark.parametrize("text,message", [
    ("[sink]\nprotocl = 'canal-json'\n", "unknown changefeed option 'sink.protocl'"),
    ("[sink.kafka-config.codec-config]\nenable-tidb-extention = true\n", "unknown changefeed option"),
    ("bogus = 1\n", "unknown changefeed option 'bogus'"),
    ("[sink]\ndispatchers = [{matcher=['*.*'], partition='ts', dispatcher='table'}]\n", "cannot be configured both"),
    ("[sink]\nprotocol = 'maxwell'\n", "'sink.protocol' is 'maxwell', not one of 'open-protocol'"),
    ("[sink.kafka-config.large-message-handle]\nlarge-message-handle-option = 'claim-check'\n",
     "claim-check-storage-uri is empty"),
    ("[sink.kafka-config.large-message-handle]\nlarge-message-handle-compression = 'zstd'\n", "large-message-handle-compression' is 'zstd', not one of 'none', 'snappy', 'lz4'"),
    ("[sink]\nprotocol = 'debezium'\n[sink.kafka-config.large-message-handle]\nlarge-message-handle-option = "
     "'handle-key-only'\n", "it's not supported"),
    ("[sink]\ncolumn-selectors = [{matcher = ['test.*']}]\n", "needs both matcher and columns"),
    ("[filter]\nrules = ['test.*']\n", "narrows which tables"),
    ("[sink\n", "does not parse"),
])
def test_bad_or_unsimulated_options_get_a_clear_message(text, message):
    with pytest.raises(ChangefeedConfigError, match=message):
        parse_changefeed(text, BASE)


def test_defaults_of_unsimulated_options_are_accepted():
    cf = parse_changefeed("[sink.kafka-config.large-message-handle]\nlarge-message-handle-option = 'none'\n", BASE)
    assert cf.sink == BASE


def test_sink_uri():
    cf = parse_sink_uri("kafka://127.0.0.1:9092/topic-name?kafka-version=2.4.0&protocol=canal-json"
                        "&enable-tidb-extension=true&partition-num=4&max-message-bytes=1048576", BASE)
    s = cf.sink
    assert (s.topic, s.protocol, s.enable_tidb_extension, s.partition_num, s.max_message_bytes) == \
        ("topic-name", "canal-json", True, 4, 1048576)
    with pytest.raises(ChangefeedConfigError, match="unknown sink URI parameter 'protocl'"):
        parse_sink_uri("kafka://h/t?protocl=canal-json", BASE)
    with pytest.raises(ChangefeedConfigError, match="partition-num is .three., not an integer"):
        parse_sink_uri("kafka://h/t?partition-num=three", BASE)
    with pytest.raises(ChangefeedConfigError, match="not a Kafka sink"):
        parse_sink_uri("mysql://root@h:3306/", BASE)


def test_sink_uri_codec_parameters_land_under_their_names():
    cf = parse_sink_uri("kafka://127.0.0.1:9092/t?protocol=debezium&debezium-include-start-ts=true"
                        "&debezium-disable-schema=true&only-output-updated-columns=true&max-retry=3", BASE)
    s = cf.sink
    assert (s.protocol, s.debezium_include_start_ts, s.debezium_disable_schema, s.only_output_updated_columns) == \
        ("debezium", True, True, True)
    assert cf.without_effect == ["max-retry"]


def test_debezium_section_include_start_ts():
    cf = parse_changefeed("[sink]\nprotocol = 'debezium'\n[sink.debezium]\ninclude-start-ts = true\n", BASE)
    assert cf.sink.debezium_include_start_ts is True


def test_unsimulated_sink_uri_parameter_is_refused_unless_default():
    assert parse_sink_uri("kafka://h/t?protocol=canal-json&output-row-key=false", BASE).sink.protocol == "canal-json"
    with pytest.raises(ChangefeedConfigError, match="parameter output-row-key=true changes the Kafka output"):
        parse_sink_uri("kafka://h/t?protocol=canal-json&output-row-key=true", BASE)
