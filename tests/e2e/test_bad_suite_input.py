"""Bad input to the suite itself gets one clear error naming what to fix, never a traceback:
changefeed TOMLs and sink URIs with values of the wrong type or options in the wrong section,
and record files a reference consumer cannot read (docs/errors.md, "Bad input to the suite")."""
from __future__ import annotations

import shutil
import subprocess
import typing

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.conftest import CLI
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


def test_a_toml_only_option_in_a_sink_uri_is_told_its_toml_section():
    toml_only = [(path, key) for path, known in cf._SECTIONS.items() for key, kind in known.items()
                 if kind != cf.NO_EFFECT and key not in cf._URI]
    assert toml_only
    for path, key in toml_only:
        with pytest.raises(cf.ChangefeedConfigError) as e:
            cf.parse_sink_uri(f"kafka://h/t?{key}=1", BASE)
        assert f"unknown sink URI parameter {key!r}; it is a changefeed TOML option of " in str(e.value)
        assert cf._section_name(path) in str(e.value)


@pytest.mark.parametrize("text,value", [(t, True) for t in ("1", "t", "T", "TRUE", "true", "True")]
                         + [(t, False) for t in ("0", "f", "F", "FALSE", "false", "False")])
def test_sink_uri_booleans_read_as_go_reads_them(text, value):
    cfg = cf.parse_sink_uri(f"kafka://h/t?protocol=canal-json&enable-tidb-extension={text}", BASE).sink
    assert cfg.enable_tidb_extension is value


def test_sink_uri_integers_take_a_sign_as_go_does():
    # "+" in a query is a space (Go url.ParseQuery too): the sign is written %2B
    assert cf.parse_sink_uri("kafka://h/t?protocol=canal-json&partition-num=%2B4", BASE).sink.partition_num == 4


def _generate_with_changefeed(tmp_path, text: str) -> tuple:
    """(the TOML's path, the one error `generate` gives for it)."""
    toml = tmp_path / "changefeed.toml"
    toml.write_text(text)
    out = _cli_error(["generate", "--protocol", "canal-json", "--changefeed", str(toml), "--out", str(tmp_path / "o")])
    return toml, " ".join(out.split())


@pytest.mark.parametrize("text,expected", [
    ('[sink]\nprotocol = "canal-json"\n[sink.kafka-config.codec-config]\nenable-tidb-extension = "yes"\n',
     ["'sink.kafka-config.codec-config.enable-tidb-extension' is 'yes' (a string), not a boolean"]),
    ('[sink]\ndispatchers = [{matcher = ["*.*"], partition = "by-moon-phase"}]\n',
     ["sink.dispatchers[0].partition is 'by-moon-phase', not one of", "'index-value'"]),
])
def test_the_cli_refuses_a_mistyped_toml_option_naming_option_file_and_type(tmp_path, text, expected):
    toml, out = _generate_with_changefeed(tmp_path, text)
    assert out.startswith("Usage:") and f"Error: changefeed TOML {toml}: " in out
    assert all(e in out for e in expected), out
    assert not (tmp_path / "o").exists()


def test_the_cli_tells_a_misplaced_option_where_it_belongs(tmp_path):
    _, out = _generate_with_changefeed(tmp_path, 'protocol = "canal-json"\n[sink.kafka-config]\n'
                                                 'enable-tidb-extension = true\n[sink]\nintegrity-check-level = "correctness"\n')
    assert "'protocol': TiCDC has no such option in the top level; it belongs in [sink]" in out
    assert "it belongs in [sink.kafka-config.codec-config]" in out
    assert "'sink.integrity-check-level'" in out and "it belongs in [integrity]" in out


def test_the_cli_refuses_a_sink_uri_boolean_go_would_not_parse(tmp_path):
    out = _cli_error(["generate", "--protocol", "canal-json", "--out", str(tmp_path / "o"),
                      "--sink-uri", "kafka://h/t?protocol=canal-json&enable-tidb-extension=yes"])
    assert "enable-tidb-extension=yes" in out and "strconv.ParseBool" in out


# --- record files a reference consumer cannot read ---------------------------------------------------
@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A generated case (records, manifest, truth) to damage copies of."""
    from ticdc_generators.pipeline import config_for, generate

    out = tmp_path_factory.mktemp("case")
    generate("smoke", 1, config_for("smoke", "canal-json"), out)
    return out


FILE = "ticdc-smoke-0.parquet"


def _table(records):
    return pq.read_table(records / FILE)


def _with_column(records, name, values, type_):
    t = _table(records)
    at = t.schema.get_field_index(name)
    pq.write_table(t.set_column(at, pa.field(name, type_), pa.array(values, type_)), records / FILE)


def _set_partition(records, row, value):
    partitions = _table(records).column("partition").to_pylist()
    partitions[row] = value
    _with_column(records, "partition", partitions, pa.int32())


def _drop_row(records, row):
    t = _table(records)
    pq.write_table(pa.concat_tables([t.slice(0, row), t.slice(row + 1)]), records / FILE)


def _swap_rows(records, row):
    t = _table(records)
    pq.write_table(pa.concat_tables([t.slice(0, row), t.slice(row + 1, 1), t.slice(row, 1), t.slice(row + 2)]),
                   records / FILE)


DAMAGE = {
    # name: (damage, what the message must name besides the file)
    "truncated": (lambda r: (r / FILE).write_bytes((r / FILE).read_bytes()[:400]), "not a readable Parquet file"),
    "garbage": (lambda r: (r / FILE).write_bytes(b"PAR1 but no Parquet " * 8), "not a readable Parquet file"),
    "empty": (lambda r: (r / FILE).write_bytes(b""), "(0 bytes"),
    "missing column": (lambda r: pq.write_table(_table(r).drop_columns(["offset"]), r / FILE), "no column 'offset'"),
    "mistyped column": (lambda r: _with_column(r, "offset", [str(o) for o in _table(r).column("offset").to_pylist()],
                                               pa.string()), "column 'offset' is string, not int64"),
    "null partition": (lambda r: _set_partition(r, 3, None), "row 3: partition is null"),
    "null offset": (lambda r: _with_column(r, "offset", [None] + _table(r).column("offset").to_pylist()[1:],
                                           pa.int64()), "row 0: offset is null"),
    "offset gap": (lambda r: _drop_row(r, 5), "row 5 (ticdc-smoke/0@6): offset after 4 leaves a gap: offset 5 is missing"),
    "offsets out of order": (lambda r: _swap_rows(r, 5), "row 5 (ticdc-smoke/0@6): offset after 4 leaves a gap"),
    "row of another partition": (lambda r: _set_partition(r, 7, 1),
                                 "row 7 (ticdc-smoke/1@7) is filed under ticdc-smoke/0"),
    "file of another partition": (lambda r: _with_column(r, "partition", [2] * _table(r).num_rows, pa.int32()),
                                  "row 0 (ticdc-smoke/2@0) is of partition 2, but the file is named for partition 0"),
}


def _damaged(case, tmp_path, damage):
    shutil.copytree(case, tmp_path / "case")
    damage(tmp_path / "case" / "records")
    return tmp_path / "case" / "records"


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_consume_local_names_the_file_and_record_of_a_bad_record_file(case, tmp_path, name):
    damage, expected = DAMAGE[name]
    records = _damaged(case, tmp_path, damage)
    out = _cli_error(["consume", "--engine", "local", "--records", str(records), "--out", str(tmp_path / "out")])
    assert out.startswith(f"error: {records / FILE}: ") and expected in out, out
    assert out.count("\n") == 1  # one clean line


@pytest.mark.parametrize("name", ["truncated", "garbage", "empty", "missing column", "mistyped column", "null partition",
                                  "row of another partition"])
def test_lint_reads_record_files_with_the_same_checks(case, tmp_path, name):
    from ticdc_conformance.lint import LintInputError, RecordFiles

    damage, expected = DAMAGE[name]
    records = _damaged(case, tmp_path, damage)
    with pytest.raises(LintInputError) as e:
        list(RecordFiles(records))
    assert str(e.value).startswith(f"{records / FILE}: ") and expected in str(e.value)


def test_lint_allows_the_offset_gaps_a_kafka_topic_may_have(case, tmp_path):
    from ticdc_conformance.lint import RecordFiles

    records = _damaged(case, tmp_path, lambda r: _drop_row(r, 5))
    assert len(list(RecordFiles(records))) == sum(pq.read_metadata(p).num_rows for p in records.glob("*.parquet"))


def test_two_files_of_one_partition_are_refused(case, tmp_path):
    records = _damaged(case, tmp_path, lambda r: shutil.copy(r / FILE, r / "copy.parquet"))
    out = _cli_error(["consume", "--engine", "local", "--records", str(records), "--out", str(tmp_path / "out")])
    assert "holds ticdc-smoke/0, as" in out and "one file per topic-partition" in out


@pytest.mark.parametrize("name", ["empty", "missing column"])
def test_consume_spark_names_a_bad_record_file_before_spark_starts(case, tmp_path, name):
    damage, expected = DAMAGE[name]
    records = _damaged(case, tmp_path, damage)
    proc = subprocess.run(CLI + ["consume", "--engine", "spark", "--records", str(records), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"error: {records / FILE}: " in proc.stderr and expected in proc.stderr
    # No JVM was started: its start-up notes would be in the scratch folder's Spark log.
    spark_log = tmp_path / "o" / "work" / "spark.log"
    assert not spark_log.exists() or spark_log.stat().st_size == 0, spark_log.read_text()[:2000]


@pytest.mark.parametrize("manifest,expected", [(None, "No such file"), ("{not json", "Expecting property name"),
                                               ('{"protocol": "canal-json"}', "no topics, sink")])
def test_consume_names_a_missing_or_bad_manifest(case, tmp_path, manifest, expected):
    shutil.copytree(case / "records", tmp_path / "records")
    if manifest is not None:
        (tmp_path / "manifest.json").write_text(manifest)
    out = _cli_error(["consume", "--engine", "local", "--records", str(tmp_path / "records"), "--out", str(tmp_path / "o")])
    assert out.startswith(f"error: {tmp_path / 'manifest.json'}: not a manifest written by `generate`: ")
    assert expected in out


def test_a_dispatcher_naming_a_missing_index_fails_the_changefeed_cleanly(tmp_path):
    _, out = _generate_with_changefeed(
        tmp_path, '[sink]\ndispatchers = [{matcher = ["*.*"], partition = "index-value", index = "nope"}]\n')
    assert "the simulated TiCDC changefeed fails" in out and "index 'nope' not found in" in out
