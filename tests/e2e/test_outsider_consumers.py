"""Consumers written from the documents alone (tests/consumers/), each run through `run` as any
consumer under test is: the verdict must never pass a broken one nor fail a correct one.

Exit codes and verdict words are `run`'s (docs/consumer-protocol.md): 0 conformant, 1 findings,
3 consumer error, 4 final state only.
"""
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_generators.pipeline import encoding_names

CONSUMERS = ROOT / "tests" / "consumers"
GOJSON = CONSUMERS / "go" / "gojson"


def consumer(name: str, *options: str) -> str:
    return " ".join([sys.executable, str(CONSUMERS / f"{name}.py"), *options])


def no_extension(protocol: str) -> list[str]:
    return ["--protocol", protocol,
            "--sink-uri", f"kafka://127.0.0.1:9092/t?protocol={protocol}&enable-tidb-extension=false"]


class Run:
    def __init__(self, proc: subprocess.CompletedProcess, work: Path, report: Path) -> None:
        self.code = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.work = work
        summaries = sorted(report.glob("*.summary.json"))
        self.results = [r for s in summaries for r in json.loads(s.read_text())["results"]]

    def findings(self) -> list[dict]:
        """Every finding of every encoding, wherever the summary lists it (final state, checkpoints)."""
        found: list[dict] = []

        def walk(node) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("rule"), str) and "message" in node:
                    found.append(node)
                for key, value in node.items():
                    if key != "undecidable":
                        walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)
        walk(self.results)
        return found

    def outcomes(self) -> list[str]:
        """The verdict of each encoding, in the words of the results table."""
        return [r.get("outcome") for r in self.results]

    def rules(self) -> set[str]:
        return {f["rule"] for f in self.findings()}

    def final_rows(self, table: str) -> list[dict]:
        """The rows the consumer wrote for `table` (a `<schema>.<table>` name) in this run."""
        paths = sorted(self.work.rglob(f"final/{table}.ndjson"))
        assert paths, f"the consumer wrote no final/{table}.ndjson under {self.work}"
        return [json.loads(line) for line in paths[0].read_text().split("\n") if line.strip()]

    def __repr__(self) -> str:
        return f"exit {self.code}\n{self.output[-6000:]}"


def run(tmp_path: Path, *args: str, work: Path | None = None) -> Run:
    work = work or tmp_path / "work"
    report = tmp_path / f"report{len(list(tmp_path.glob('report*')))}"
    proc = subprocess.run(CLI + ["run", *args, "--work", str(work), "--report", str(report)],
                          capture_output=True, text=True, cwd=ROOT)
    return Run(proc, work, report)


def assert_conformant(result: Run) -> None:
    assert result.code == 0, result
    assert result.outcomes() and set(result.outcomes()) == {"conformant"}, result
    assert result.findings() == [], result


def _ddl_reader():
    spec = importlib.util.spec_from_file_location("outsider_ddl", CONSUMERS / "_ddl.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_consumers_read_members_and_fsp_from_the_ddl_as_mysql_writes_them():
    ddl = _ddl_reader()
    tables = ddl.Tables()
    tables.apply(r"CREATE TABLE `s`.`t` (`id` INT NOT NULL, `e` ENUM('it''s','back\\slash','say \"hi\"'), "
                 "`d` DATETIME(4), `f` FLOAT UNSIGNED, PRIMARY KEY (`id`))", "s")
    assert tables.column("s", "t", "e").args == ("it's", "back\\slash", 'say "hi"')
    assert tables.column("s", "t", "d").fsp == 4 and tables.column("s", "t", "f").unsigned
    tables.apply("ALTER TABLE `t` MODIFY COLUMN `d` DATETIME, ADD COLUMN `x` SET('a','b'), DROP INDEX `ix`", "s")
    tables.apply("RENAME TABLE `s`.`t` TO `s2`.`u`", "s")
    assert tables.column("s2", "u", "d").fsp == 0 and tables.column("s2", "u", "x").args == ("a", "b")
    assert tables.column("s", "t", "d") is None


def test_stale_output_of_an_earlier_run_is_never_read(tmp_path):
    work = tmp_path / "work"
    first = run(tmp_path, "--scenario", "smoke", "--protocol", "canal-json", "--consumer", "local", work=work)
    assert_conformant(first)
    stale = run(tmp_path, "--scenario", "smoke", "--protocol", "canal-json", "--consumer", "true", work=work)
    assert stale.code == 3, stale
    assert stale.outcomes() == ["consumer error"], stale


@pytest.mark.rules("CONSUMER-TABLE-1")
def test_a_table_upstream_never_created_is_a_finding(tmp_path):
    result = run(tmp_path, "--scenario", "smoke", "--protocol", "canal-json", "--consumer", consumer("extra_table"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    ghosts = [f for f in result.findings() if f["rule"] == "CONSUMER-TABLE-1"]
    assert ghosts and all(f["table"] == "smoke.ghost" for f in ghosts), result
    assert "never created" in ghosts[0]["message"], ghosts[0]


@pytest.mark.rules("CONSUMER-TABLE-1")
def test_a_table_renamed_away_that_the_consumer_kept_is_a_finding(tmp_path):
    result = run(tmp_path, "--scenario", "multi-table", "--protocol", "canal-json",
                 "--consumer", consumer("ignores_rename"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    kept = {f["table"]: f["message"] for f in result.findings() if f["rule"] == "CONSUMER-TABLE-1"}
    assert {"sales.t0", "stock.t0"} <= set(kept), result
    assert re.search(r"renamed\b.* to \W?sales\W+orders\W? at .*\d{15}", kept["sales.t0"]), kept["sales.t0"]
    assert re.search(r"renamed\b.* to \W?stock\W+items\W? at .*\d{15}", kept["stock.t0"]), kept["stock.t0"]
    assert len(result.final_rows("sales.t0")) > 0
    # Row events it filed under the old name are that same mistake, not re-sends or losses.
    assert not {"CONSUMER-DEDUP-1", "CONSUMER-LOSS-1"} & {f["rule"] for f in result.findings()}, result
    applied_to_old = [f["message"] for f in result.findings()
                      if f["rule"] == "CONSUMER-TABLE-1" and "applied to this table" in f["message"]]
    assert applied_to_old and all("renamed this table to" in m for m in applied_to_old), applied_to_old


@pytest.mark.parametrize("variant", [(), ("--applied-log",)], ids=["final-only", "applied-log-without-checkpoints"])
def test_a_consumer_ignoring_watermarks_is_final_state_only(tmp_path, variant):
    args = ["--scenario", "smoke", "--protocol", "canal-json", "--consumer", consumer("ignores_watermarks", *variant)]
    strict = run(tmp_path, *args)
    assert strict.code == 4, strict
    assert strict.outcomes() == ["final state only"] and "final state only" in strict.output, strict
    assert strict.findings() == [], strict
    accepted = run(tmp_path, *args, "--final-state-only", work=tmp_path / "work2")
    assert accepted.code == 0, accepted
    assert accepted.outcomes() == ["conformant (final state only)"], accepted
    assert "conformant (final state only)" in accepted.output, accepted


def test_enum_and_set_names_resolved_from_the_ddl_are_accepted(tmp_path):
    result = run(tmp_path, "--scenario", "types", "--protocol", "canal-json", "--consumer", consumer("enum_names"))
    assert_conformant(result)
    rows = [r for r in result.final_rows("types.t3") if r["c85_enum"] is not None]
    assert rows and all(r["c85_enum"] in ("a", "b", "c") for r in rows)


def test_datetime_and_time_with_the_declared_fsp_are_accepted(tmp_path):
    result = run(tmp_path, "--scenario", "types", "--protocol", "debezium", "--consumer", consumer("declared_fsp"))
    assert_conformant(result)
    printed = [r["c63_datetime"] for r in result.final_rows("types.t2") if r["c63_datetime"]]
    assert printed and not any("." in v for v in printed)  # DATETIME (fsp 0): no fraction at all


@pytest.fixture(scope="module")
def gojson(tmp_path_factory) -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain (`go`) on PATH to build tests/consumers/go/gojson")
    binary = tmp_path_factory.mktemp("gojson") / "gojson"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=GOJSON, check=True, capture_output=True)
    return binary


def test_the_go_writer_prints_numbers_as_go_does(tmp_path, gojson):
    sample = tmp_path / "sample.ndjson"
    sample.write_text('{"d":9.223372036854776e+18,"f":16777215.0,"u":18446744073709551615,"s":"x"}\n')
    subprocess.run([str(gojson), str(sample)], check=True)
    assert sample.read_text() == '{"d":9223372036854776000,"f":16777215,"s":"x","u":18446744073709551615}\n'


@pytest.mark.parametrize("encoding", encoding_names())
def test_numbers_printed_by_a_go_json_writer_are_accepted(tmp_path, gojson, encoding):
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding,
                 "--consumer", consumer("go_numbers", "--writer", str(gojson)))
    assert_conformant(result)
    doubles = [r["c13_double"] for r in result.final_rows("types.t0") if r["c13_double"] is not None]
    # Go prints an integral float64 below 1e21 without a fraction: it reads back as an int here
    assert any(isinstance(v, int) for v in doubles), doubles
    assert not any(isinstance(v, float) and v.is_integer() and abs(v) < 1e21 for v in doubles), doubles


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("protocol", ["canal-json", "debezium"])
def test_the_reference_consumer_passes_the_no_extension_tie(tmp_path, protocol, seed):
    # Without commit ts the RENAME on one partition and an UPDATE on another carry the same Kafka
    # timestamp: no consumer can know their order, so the verdict may not demand it.
    result = run(tmp_path, "--scenario", "multi-table", "--seed", str(seed), *no_extension(protocol),
                 "--consumer", "local")
    assert_conformant(result)


# Debezium's DECIMAL is a double; CI runs Canal-JSON, the others nightly.
@pytest.mark.parametrize("encoding", ["canal-json", *(pytest.param(e, marks=pytest.mark.nightly)
                                                      for e in ("open-protocol", "simple-json"))])
def test_a_decimal_printed_as_a_number_with_every_digit_is_accepted(tmp_path, encoding):
    # JSON numbers have no fixed precision: 99999999999999.999999 printed as a number (simplejson's
    # Decimal, Jackson's BigDecimal) is upstream's DECIMAL(20,6), though no float64 holds it.
    result = run(tmp_path, "--scenario", "smoke", "--protocol", encoding, "--consumer", consumer("decimal_numbers"))
    assert_conformant(result)
    [final] = [p for p in result.work.rglob("final/smoke.orders.ndjson") if "truth" not in p.parts]
    amounts = [re.search(rb'"amount":(-?[0-9.]+)[,}]', line) for line in final.read_bytes().splitlines()]
    assert amounts and all(amounts), final.read_text()[:500]  # numbers, not strings
    assert any(len(m.group(1).lstrip(b"-").replace(b".", b"")) > 17 for m in amounts), amounts


@pytest.mark.rules("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")
def test_a_decimal_read_into_a_float64_is_still_caught(tmp_path):
    result = run(tmp_path, "--scenario", "smoke", "--protocol", "canal-json", "--consumer", consumer("decimal_as_double"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    rounded = [f for f in result.findings() if f["rule"] in ("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")]
    assert rounded and all(set(f["diff"]) <= {"root['amount']", "root['balance']"} for f in rounded), rounded


@pytest.mark.rules("CONSUMER-STATE-1")
def test_a_float_widened_to_float64_is_still_caught(tmp_path):
    result = run(tmp_path, "--scenario", "types", "--protocol", "canal-json", "--consumer", consumer("widens_float"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    assert "CONSUMER-STATE-1" in result.rules(), result
    widened = [f for f in result.findings() if f["rule"] == "CONSUMER-STATE-1" and f["table"] == "types.t0"]
    assert widened, result


@pytest.mark.parametrize("encoding", ["canal-json", *(pytest.param(e, marks=pytest.mark.nightly)
                                                      for e in ("open-protocol", "simple-json"))])
def test_iso_8601_datetimes_and_utc_instants_are_accepted(tmp_path, encoding):
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding, "--time-zone", "Asia/Shanghai",
                 "--consumer", consumer("iso_temporal"))
    assert_conformant(result)
    printed = [v for r in result.final_rows("types.t2") for v in r.values() if isinstance(v, str)]
    assert any(v.endswith("Z") for v in printed) and any("T" in v and not v.endswith("Z") for v in printed), printed


@pytest.mark.rules("CONSUMER-STATE-1")
def test_a_timestamp_written_in_utc_in_a_shanghai_run_is_still_caught(tmp_path):
    result = run(tmp_path, "--scenario", "types", "--protocol", "canal-json", "--time-zone", "Asia/Shanghai",
                 "--consumer", consumer("timestamp_in_utc"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    assert "CONSUMER-STATE-1" in result.rules(), result
    assert any(f["table"] in ("types.t2", "types.t3") for f in result.findings() if f["rule"] == "CONSUMER-STATE-1")


@pytest.mark.parametrize("encoding", ["canal-json", *(pytest.param(e, marks=pytest.mark.nightly)
                                                      for e in ("open-protocol", "debezium", "simple-json"))])
def test_json_documents_held_as_json_values_are_accepted(tmp_path, encoding):
    # The document is the value, not TiDB's text of it: parsed and written into the row as JSON.
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding, "--consumer", consumer("json_documents"))
    assert_conformant(result)
    documents = [r["c96_json"] for r in result.final_rows("types.t4")]
    assert any(isinstance(d, dict) for d in documents) and any(isinstance(d, list) for d in documents), documents[:5]


@pytest.mark.rules("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")
def test_json_documents_read_as_javascript_numbers_are_still_caught(tmp_path):
    result = run(tmp_path, "--scenario", "types", "--protocol", "canal-json", "--consumer",
                 consumer("json_as_javascript"))
    assert result.code == 1 and result.outcomes() == ["NOT conformant"], result
    rounded = [f for f in result.findings() if f["rule"] in ("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")]
    assert rounded and all(set(f["diff"]) == {"root['c96_json']"} for f in rounded), rounded
    assert {f["rule"] for f in rounded} == {"CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1"}, rounded


@pytest.mark.parametrize("scenario,encoding,column", [("smoke", "canal-json", "quantity"),
                                                      pytest.param("replays", "simple-json", "id", marks=pytest.mark.nightly),
                                                      *(pytest.param("smoke", e, "quantity", marks=pytest.mark.nightly)
                                                        for e in ("open-protocol", "debezium", "simple-avro"))])
def test_64_bit_integers_as_decimal_strings_are_accepted(tmp_path, scenario, encoding, column):
    # protobuf's JSON mapping prints int64/uint64 as strings: smoke's BIGINT UNSIGNED columns and
    # replays' BIGINT keys.
    result = run(tmp_path, "--scenario", scenario, "--protocol", encoding, "--consumer", consumer("protojson_integers"))
    assert_conformant(result)
    printed = [json.loads(line) for p in result.work.rglob("final/*.ndjson") if "truth" not in p.parts
               for line in p.read_text().split("\n") if line.strip()]
    digits = [row[column] for row in printed if column in row]
    assert any(isinstance(v, str) and v.lstrip("-").isdigit() for v in digits), digits[:5]  # BIGINT's tables


# Nightly only (18 s an encoding: types' BLOBs as arrays of numbers); CI holds the same spelling
# through tests/conformance/checks/test_value_forms.py's rewrite of a consumer's output.
@pytest.mark.nightly
@pytest.mark.parametrize("encoding", ["canal-json", "open-protocol", "debezium", "simple-avro"])
def test_bytes_as_arrays_of_numbers_are_accepted(tmp_path, encoding):
    # serde_json prints a Vec<u8> as an array of its byte numbers: the same bytes as base64.
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding, "--consumer", consumer("byte_arrays"))
    assert_conformant(result)
    arrays = [v for r in result.final_rows("types.t2") for v in r.values() if isinstance(v, list)]
    assert arrays and any(arrays), result


@pytest.mark.parametrize("encoding", ["canal-json", *(pytest.param(e, marks=pytest.mark.nightly)
                                                      for e in ("open-protocol", "simple-json"))])
def test_values_as_a_jvm_stack_spells_them_are_accepted(tmp_path, encoding):
    # JDBC's Boolean for BIT(1), BigDecimal.toString()'s exponents, a SET as a list of names.
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding, "--consumer", consumer("jvm_values"))
    assert_conformant(result)
    values = [v for t in ("types.t0", "types.t3") for r in result.final_rows(t) for v in r.values()]
    assert any(v is True for v in values) and any(isinstance(v, list) for v in values), values[:20]
    assert any(isinstance(v, str) and "E-" in v for v in values), values[:20]


@pytest.mark.parametrize("encoding", ["canal-json", *(pytest.param(e, marks=pytest.mark.nightly)
                                                      for e in ("open-protocol", "simple-json", "simple-avro"))])
def test_java_time_types_printed_by_jackson_are_accepted(tmp_path, encoding):
    # JavaTimeModule's defaults: LocalDate/LocalDateTime/LocalTime as arrays of fields, Instant as
    # epoch seconds with nine fraction digits; in a zone behind UTC, so an instant is not its wall clock.
    result = run(tmp_path, "--scenario", "types", "--protocol", encoding, "--time-zone", "America/New_York",
                 "--consumer", consumer("jackson_time"))
    assert_conformant(result)
    values = [v for r in result.final_rows("types.t2") for v in r.values()]
    assert any(isinstance(v, list) and len(v) >= 5 for v in values), values[:20]
    assert any(isinstance(v, float) and v > 1e9 for v in values), values[:20]
