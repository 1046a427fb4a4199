"""Bad input to the suite itself gets one clear error naming what to fix, never a traceback:
changefeed TOMLs and sink URIs with values of the wrong type or options in the wrong section,
and record files a reference consumer cannot read (docs/errors.md, "Bad input to the suite")."""
from __future__ import annotations

import typing

import pytest
from click.testing import CliRunner

from ticdc_conformance.cli import main
from ticdc_generators.sink import changefeed as cf
from ticdc_generators.sink.config import ENUMERATIONS, SinkConfig

BASE = SinkConfig(protocol="canal-json")
FIELD_TYPES = typing.get_type_hints(SinkConfig)


def _applied_options() -> list[tuple[tuple[str, ...], str, str]]:
    """(section path, option, SinkConfig field) of every option the loader applies, from its own table."""
    return [(path, key, kind) for path, known in cf._SECTIONS.items() for key, kind in known.items()
            if kind != cf.NO_EFFECT]


def _toml(path: tuple[str, ...], key: str, value: str) -> str:
    return (f"[{'.'.join(path)}]\n" if path else "") + f"{key} = {value}\n"


def _wrong_toml_values(field: str) -> list[tuple[str, str]]:
    """(TOML literal of a wrong value, what the message must say is expected)."""
    kind = FIELD_TYPES[field]
    if field in ENUMERATIONS:
        return [("'no-such-word'", "not one of"), ("1", "not one of")]
    if kind is bool:
        return [("'yes'", "not a boolean"), ("1", "not a boolean")]
    if kind is int:
        return [("'3'", "not an integer"), ("true", "not an integer"), ("1.5", "not an integer")]
    return [("1", "not a string"), ("[]", "not a string")]


def _cli_error(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    return result.output


def _cases_toml():
    for path, key, field in _applied_options():
        for literal, expected in _wrong_toml_values(field):
            yield pytest.param(path, key, literal, expected, id=f"{'.'.join(path + (key,))}={literal}")


@pytest.mark.parametrize("path,key,literal,expected", list(_cases_toml()))
def test_every_typed_toml_option_refuses_a_value_of_another_type(path, key, literal, expected):
    with pytest.raises(cf.ChangefeedConfigError) as e:
        cf.parse_changefeed(_toml(path, key, literal), BASE, source="changefeed TOML my.toml")
    message = str(e.value)
    assert message.startswith("changefeed TOML my.toml: ")
    assert repr(".".join(path + (key,))) in message and expected in message


@pytest.mark.parametrize("path,key,field", _applied_options())
def test_every_applied_option_placed_elsewhere_is_told_where_it_belongs(path, key, field):
    homes = [p for p, known in cf._SECTIONS.items() if key in known]
    for wrong in cf._SECTIONS:
        if wrong in homes:
            continue
        with pytest.raises(cf.ChangefeedConfigError) as e:
            cf.parse_changefeed(_toml(wrong, key, "1"), BASE)
        belongs = str(e.value).split("it belongs in ", 1)[1]
        assert all(cf._section_name(home) in belongs for home in homes), (wrong, str(e.value))


def _cases_uri():
    for key, field in cf._URI.items():
        kind = FIELD_TYPES[field]
        if field in ENUMERATIONS:
            yield pytest.param(key, "no-such-word", "not one of", id=key)
        elif kind is bool:
            yield from (pytest.param(key, bad, "not a boolean as TiCDC reads it", id=f"{key}={bad}")
                        for bad in ("yes", "on", "", "tRUE"))
        elif kind is int:
            yield from (pytest.param(key, bad, "not an integer as TiCDC reads it", id=f"{key}={bad}")
                        for bad in ("three", "1_000", " 4", "4.0", ""))


@pytest.mark.parametrize("key,bad,expected", list(_cases_uri()))
def test_every_typed_sink_uri_parameter_refuses_what_go_does_not_parse(key, bad, expected):
    uri = f"kafka://h/t?protocol=canal-json&{key}={bad}"
    with pytest.raises(cf.ChangefeedConfigError) as e:
        cf.parse_sink_uri(uri, BASE)
    assert str(e.value).startswith(f"sink URI {uri}: parameter {key} ") and expected in str(e.value)


@pytest.mark.parametrize("text,value", [(t, True) for t in ("1", "t", "T", "TRUE", "true", "True")]
                         + [(t, False) for t in ("0", "f", "F", "FALSE", "false", "False")])
def test_sink_uri_booleans_read_as_go_reads_them(text, value):
    cfg = cf.parse_sink_uri(f"kafka://h/t?protocol=canal-json&enable-tidb-extension={text}", BASE).sink
    assert cfg.enable_tidb_extension is value


def test_sink_uri_integers_take_a_sign_as_go_does():
    # "+" in a query is a space (Go url.ParseQuery too): the sign is written %2B
    assert cf.parse_sink_uri("kafka://h/t?protocol=canal-json&partition-num=%2B4", BASE).sink.partition_num == 4


def test_the_cli_refuses_a_mistyped_toml_option_naming_option_file_and_type(tmp_path):
    toml = tmp_path / "changefeed.toml"
    toml.write_text('[sink]\nprotocol = "canal-json"\n[sink.kafka-config.codec-config]\nenable-tidb-extension = "yes"\n')
    out = _cli_error(["generate", "--protocol", "canal-json", "--changefeed", str(toml), "--out", str(tmp_path / "o")])
    assert str(toml) in out and "'sink.kafka-config.codec-config.enable-tidb-extension'" in out
    assert "not a boolean" in out
    assert not (tmp_path / "o").exists()


def test_the_cli_tells_a_misplaced_option_where_it_belongs(tmp_path):
    toml = tmp_path / "changefeed.toml"
    toml.write_text('protocol = "canal-json"\n[sink.kafka-config]\nenable-tidb-extension = true\n'
                    '[sink]\nintegrity-check-level = "correctness"\n')
    out = " ".join(_cli_error(["generate", "--protocol", "canal-json", "--changefeed", str(toml),
                               "--out", str(tmp_path / "o")]).split())
    assert "'protocol': TiCDC has no such option in the top level; it belongs in [sink]" in out
    assert "it belongs in [sink.kafka-config.codec-config]" in out
    assert "'sink.integrity-check-level'" in out and "it belongs in [integrity]" in out


def test_the_cli_refuses_a_sink_uri_boolean_go_would_not_parse(tmp_path):
    out = _cli_error(["generate", "--protocol", "canal-json", "--out", str(tmp_path / "o"),
                      "--sink-uri", "kafka://h/t?protocol=canal-json&enable-tidb-extension=yes"])
    assert "enable-tidb-extension=yes" in out and "strconv.ParseBool" in out
