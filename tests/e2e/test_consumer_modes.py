"""The `spark:` and `kafka:` consumer modes (docs/consumer-modes.md): the reference consumers pass
through them in every encoding, broken consumers behind them are caught, and what a user gets
wrong (a missing module, a function that raises, a command that fails) is a clear error."""
import base64
import datetime as dt
import json
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.consumers.adapters.interface import FINAL_STATE_ONLY, Stream
from ticdc_conformance.consumers.adapters.kafka_blackbox import KafkaBlackBox, parse_kafka_spec, tables_from_parquet
from ticdc_conformance.consumers.adapters.spark_function import SparkFunctionConsumer
from ticdc_conformance.delivery import Schedule
from ticdc_conformance.findings.outcome import CONFORMANT, CONSUMER_ERROR, FINAL_STATE_ONLY_ACCEPTED, NOT_CONFORMANT
from ticdc_conformance.runner import run_encoding
from ticdc_generators.pipeline import config_for, encoding_names, generate

REFERENCE_FUNCTION = "spark:ticdc_conformance.consumers.spark.function:consume"
REFERENCE_KAFKA = f"{sys.executable} -m ticdc_conformance.consumers.kafka_reference"
THIS = "tests.e2e.test_consumer_modes"
BROKER_TIMEOUT_S = 900  # cold: the broker's jars are resolved from the Maven repository first


def _findings(result) -> str:
    return result.render(3, None) if result.finding_count or result.error else ""


@pytest.fixture(scope="module")
def canal_case(tmp_path_factory) -> Path:
    case = tmp_path_factory.mktemp("canal") / "case"
    generate("smoke", 1, config_for("smoke", "canal-json"), case)
    return case


# --- spark: ------------------------------------------------------------------------------------

def drops_deletes(df, header):
    """A broken consumer: the reference, but Canal-JSON DELETE messages never reach it; it shows
    its final tables only. DataFrame operations only, so nothing of this module goes to a worker."""
    from pyspark.sql import functions as F

    from ticdc_conformance.consumers.spark.function import consume

    kept = df.filter(~F.col("value").cast("string").contains('"type":"DELETE"'))
    return consume(kept, header)["tables"]


def raises(df, header):
    raise RuntimeError("the consumer's own bug")


def returns_a_list(df, header):
    return [df]


def returns_bad_columns(df, header):
    return df  # a DataFrame, but without the columns schema, table, row


# One encoding in CI (a Spark run costs about a minute and a half on two cores), every one nightly.
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("encoding", [e if e == "simple-avro" else pytest.param(e, marks=pytest.mark.nightly)
                                      for e in encoding_names()])
def test_reference_spark_function_is_conformant_in_every_encoding(tmp_path, spark, encoding):
    adapter = adapter_for(REFERENCE_FUNCTION, spark=spark)
    assert isinstance(adapter, SparkFunctionConsumer)
    result = run_encoding("smoke", 1, encoding, tmp_path, adapter)
    assert result.outcome == CONFORMANT, f"{encoding}: {result.outcome}\n{_findings(result)}"
    # It returned its applied log and states: every checkpoint was checked, not only the end.
    assert result.checkpoints is not None and result.checkpoints.to_json(encoding)["checked"], encoding


@pytest.mark.spark
def test_spark_function_dropping_deletes_is_caught(tmp_path, spark):
    result = run_encoding("smoke", 1, "canal-json", tmp_path, adapter_for(f"spark:{THIS}:drops_deletes", spark=spark),
                          final_state_only=True)
    assert result.outcome == NOT_CONFORMANT, result.outcome
    # Rows upstream deleted are still there, and the findings name the cause: the DELETE not applied.
    assert "CONSUMER-DELETE-1" in {f.rule for t in result.tables for f in t.findings}
    assert not (result.case / "consumer" / "applied.ndjson").exists()  # only its final tables were written


@pytest.mark.spark
@pytest.mark.parametrize("function, message", [
    ("nosuch.module:consume", "cannot import nosuch.module: ModuleNotFoundError"),
    (f"{THIS}:missing", f"module {THIS} has no function 'missing'"),
    (f"{THIS}:raises", "raises raised RuntimeError: the consumer's own bug"),
    (f"{THIS}:returns_a_list", "returned list; expected a dict"),
    (f"{THIS}:returns_bad_columns", "it needs the columns ['row', 'schema', 'table']"),
])
def test_spark_function_failures_are_errors_naming_the_spec(tmp_path, spark, canal_case, function, message):
    adapter = adapter_for(f"spark:{function}", spark=spark)
    out = tmp_path / "out"
    out.mkdir()
    stream = Stream.of_case(canal_case)
    run = adapter.run(stream, out)
    assert run.error is not None and run.error.startswith(f"spark:{function}: "), run.error
    assert message in run.error and "Traceback" not in run.error
    if function.endswith(":raises"):  # the traceback is kept in the log the error names
        assert str(run.log) in run.error and "RuntimeError" in run.log.read_text()


@pytest.mark.parametrize("spec, message", [
    ("spark:consume", "names no function"),
    ("spark:my-module:consume", "neither a module name nor a .py file"),
    ("kafka:", "names no command"),
    ("kafka:output=csv python c.py", "output='csv'"),
    ("kafka:color=red python c.py", "option 'color' is unknown"),
    ("kafka:output=jdbc", "names no command"),
])
def test_mode_specs_that_name_nothing_runnable_are_refused_before_running(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        adapter_for(spec)


def test_kafka_options_stand_before_the_command_and_the_output_sets_what_it_shows():
    options, argv = parse_kafka_spec("output=jdbc group-id=g 'my consumer' --flag=x a=b")
    assert options == {"output": "jdbc", "group-id": "g"} and argv == ["my consumer", "--flag=x", "a=b"]
    assert KafkaBlackBox("output=jdbc c").capabilities == FINAL_STATE_ONLY
    assert KafkaBlackBox("c").capabilities.applied_log


def test_parquet_final_tables_are_read_as_canonical_values(tmp_path):
    final = tmp_path / "final"
    final.mkdir()
    table = pa.table({
        "id": pa.array([1, 18446744073709551615], pa.uint64()),
        "price": pa.array([Decimal("12.50"), None], pa.decimal128(10, 2)),
        "f": pa.array([0.1, 1.5], pa.float32()),
        "bin": pa.array([b"\x00\xff", b""], pa.binary()),
        "day": pa.array([dt.date(2023, 1, 2), None], pa.date32()),
        "at": pa.array([dt.datetime(2023, 1, 2, 3, 4, 5, 120000), None], pa.timestamp("ms")),
        "zoned": pa.array([dt.datetime(2023, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc), None], pa.timestamp("us", "UTC")),
    })
    pq.write_table(table, final / "test.t.parquet")
    tables_from_parquet(tmp_path, "Asia/Shanghai")
    assert sorted(p.name for p in final.iterdir()) == ["test.t.ndjson"]  # the Parquet file moved aside
    assert (tmp_path / "final-parquet" / "test.t.parquet").exists()
    rows = [json.loads(line) for line in (final / "test.t.ndjson").read_text().splitlines()]
    assert rows[0] == {"id": 1, "price": "12.50", "f": 0.1, "bin": base64.b64encode(b"\x00\xff").decode(),
                       "day": "2023-01-02", "at": "2023-01-02 03:04:05.120", "zoned": "2023-01-02 11:04:05.000000"}
    assert rows[1]["id"] == 18446744073709551615 and rows[1]["price"] is None


def test_a_table_given_as_ndjson_and_as_parquet_is_refused(tmp_path):
    final = tmp_path / "final"
    final.mkdir()
    pq.write_table(pa.table({"id": [1]}), final / "s.t.parquet")
    (final / "s.t.ndjson").write_text('{"id": 1}\n')
    with pytest.raises(Exception, match="written twice"):
        tables_from_parquet(tmp_path, "UTC")


# --- PostgreSQL ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def postgres():
    from ticdc_conformance.transport.postgres import PostgresServer, PostgresUnavailable, postgres_bin

    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server binaries (initdb, postgres) here: `make setup` installs them with apt-get")
    try:
        server = PostgresServer().start()
    except PostgresUnavailable as e:
        pytest.skip(f"no PostgreSQL server could be started: {e}")
    yield server
    server.stop()


def test_database_columns_read_back_in_canonical_form(postgres):
    from ticdc_conformance.transport.postgres import connect, database_tables

    url = postgres.create_database("values")
    with connect(url, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "test"')
        conn.execute('CREATE TABLE "test"."t" (i bigint, n numeric, d numeric(10,3), r real, g double precision, '
                     'b bytea, ts timestamp(3), tz timestamptz(6), day date, tm time(2), j jsonb, x text, bo boolean)')
        conn.execute("INSERT INTO test.t VALUES (-9223372036854775808, 18446744073709551615, 5.1, 0.1, 0.1, "
                     "'\\x00ff', '2023-01-01 12:00:00.12', '2023-01-01 12:00:00+00', '2023-01-02', '12:00:01.1', "
                     "'{\"a\": 1}', 'hé', true)")
        conn.execute('CREATE TABLE "test"."empty" ()')
    tables = {(s, t): (cols, list(rows)) for s, t, cols, rows in database_tables(url, "Asia/Shanghai")}
    assert tables[("test", "empty")] == ([], [])
    assert tables[("test", "t")][1] == [{
        "i": -9223372036854775808, "n": 18446744073709551615, "d": "5.100", "r": 0.1, "g": 0.1, "b": "AP8=",
        "ts": "2023-01-01 12:00:00.120", "tz": "2023-01-01 20:00:00.000000", "day": "2023-01-02",
        "tm": "12:00:01.10", "j": '{"a": 1}', "x": "hé", "bo": True}]


def test_an_unreachable_database_is_a_named_error():
    from ticdc_conformance.transport.postgres import PostgresUnavailable, connect

    pytest.importorskip("psycopg")
    with pytest.raises(PostgresUnavailable, match="cannot connect to jdbc:postgresql://127.0.0.1:1/none"):
        connect("jdbc:postgresql://127.0.0.1:1/none?user=postgres")


# --- kafka: ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def broker():
    pytest.importorskip("confluent_kafka")
    from ticdc_conformance.transport.provision import provision_broker

    with provision_broker() as b:
        yield b


def _kafka(broker, options: str, command: str) -> KafkaBlackBox:
    adapter = adapter_for(f"kafka:bootstrap-servers={broker.bootstrap} {options} {command}")
    assert isinstance(adapter, KafkaBlackBox)
    return adapter


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_reference_kafka_consumer_writing_out_is_conformant_in_every_encoding(tmp_path, broker):
    adapter = _kafka(broker, "", REFERENCE_KAFKA)
    for encoding in encoding_names():
        result = run_encoding("smoke", 1, encoding, tmp_path, adapter)
        assert result.outcome == CONFORMANT, f"{encoding}: {result.outcome}\n{_findings(result)}"
        assert result.checkpoints.to_json(encoding)["checked"], encoding


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_reference_kafka_consumer_writing_postgres_is_conformant_in_every_encoding(tmp_path, broker, postgres):
    adapter = _kafka(broker, "output=jdbc", REFERENCE_KAFKA)
    adapter._postgres = postgres  # the module's server: one start for every test (close() would stop it)
    for encoding in encoding_names():
        result = run_encoding("smoke", 1, encoding, tmp_path, adapter, final_state_only=True)
        # A database holds the final tables only: on streams with watermarks that is all it can show.
        assert result.outcome in (CONFORMANT, FINAL_STATE_ONLY_ACCEPTED), f"{encoding}\n{_findings(result)}"
        assert result.finding_count == 0 and sum(t.actual_rows for t in result.tables) > 0, encoding


WRONG_ROWS = """
    import json, subprocess, sys
    from pathlib import Path
    # The reference Kafka consumer, then one value of one row changed: a consumer with a wrong row.
    done = subprocess.run([sys.executable, "-m", "ticdc_conformance.consumers.kafka_reference", *sys.argv[1:]])
    if done.returncode:
        sys.exit(done.returncode)
    out = Path(sys.argv[sys.argv.index("--out") + 1])
    for path in sorted((out / "final").glob("*.ndjson")):
        lines = path.read_text().splitlines()
        if lines:
            row = json.loads(lines[0])
            column = next(c for c, v in row.items() if isinstance(v, str))
            row[column] = row[column] + "-wrong"
            path.write_text("\\n".join([json.dumps(row)] + lines[1:]) + "\\n")
            break
"""


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_kafka_consumer_writing_a_wrong_row_is_caught(tmp_path, broker):
    script = tmp_path / "wrong_rows.py"
    script.write_text(textwrap.dedent(WRONG_ROWS))
    result = run_encoding("smoke", 1, "canal-json", tmp_path / "work", _kafka(broker, "", f"{sys.executable} {script}"))
    assert result.outcome == NOT_CONFORMANT, f"{result.outcome}\n{_findings(result)}"
    assert any(f.rule == "CONSUMER-STATE-1" for t in result.tables for f in t.findings)


@pytest.mark.kafka
@pytest.mark.timeout(BROKER_TIMEOUT_S)
def test_kafka_consumer_failures_are_errors_naming_the_log(tmp_path, broker):
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('given', ' '.join(sys.argv[1:]))\nsys.exit(5)\n")
    result = run_encoding("smoke", 1, "canal-json", tmp_path / "work", _kafka(broker, "", f"{sys.executable} {failing}"),
                          schedule=Schedule.parse("round-robin:seed=3"))
    assert result.outcome == CONSUMER_ERROR and "exited with 5" in result.error
    # The consumer polls the cluster itself: a delivery schedule asked for is said not to apply.
    assert result.notes == ["delivery schedule round-robin:seed=3 not applied: the consumer reads the topics from "
                            "the cluster in the order it polls them (docs/consumer-modes.md)"]
    assert str(result.consumer_log) in result.error
    given = result.consumer_log.read_text()  # what the suite passed it
    for option in ("--bootstrap-servers", "--topics ticdc-smoke", "--group-id", "--end-offsets ticdc-smoke:0=",
                   "--manifest", "--out"):
        assert option in given, option


@pytest.mark.kafka
@pytest.mark.slow  # the publish waits out its 30 s timeout
@pytest.mark.timeout(120)
def test_an_unreachable_cluster_is_a_prompt_consumer_error(tmp_path):
    pytest.importorskip("confluent_kafka")
    from ticdc_conformance.transport.broker import free_port

    adapter = adapter_for(f"kafka:bootstrap-servers=127.0.0.1:{free_port()} {REFERENCE_KAFKA}")
    result = run_encoding("smoke", 1, "canal-json", tmp_path, adapter)
    assert result.outcome == CONSUMER_ERROR and "no Kafka broker answered" in result.error, result.error

