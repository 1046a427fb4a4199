"""The Java example consumer (examples/java-consumer/), written from the documents alone, held by the
suite as any consumer under test is: built with Maven into a runnable jar, plugged in as
`cmd:java -jar JAR` over the streaming testee protocol (docs/testee-protocol.md), and run with `run`
on every scenario it applies to (Simple, JSON encoding), under several delivery schedules, restarts
included. A few hand-made Simple streams cover the DDL effects and rules the scenarios do not reach.

Exit codes and verdict words are `run`'s (docs/consumer-protocol.md): 0 conformant, 1 findings,
3 consumer error; an encoding the consumer answers `unsupported` for is `not applicable`.
"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from tests.examples.test_go_consumer import Run, assert_conformant  # the same verdict reading for every cmd: example

SOURCE = ROOT / "examples" / "java-consumer"
JAR_NAME = "java-consumer.jar"


def source_digest() -> str:
    """The build's inputs (pom.xml and every source file), so a cached jar is rebuilt when they change."""
    h = hashlib.sha256()
    for path in sorted([SOURCE / "pom.xml", *(SOURCE / "src").rglob("*")]):
        if path.is_file():
            h.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_jar() -> Path:
    """The jar, from a cache keyed by the sources, else built in a scratch copy of the project (so
    parallel test workers never share a target/ folder) and moved into the cache atomically. The
    first build may download the plugins and Jackson from Maven Central; later ones run offline."""
    mvn, java = shutil.which("mvn"), shutil.which("java")
    if mvn is None or java is None:
        pytest.skip(f"no {'mvn' if mvn is None else 'java'} on PATH: the Java example consumer cannot be built")
    cache = Path(tempfile.gettempdir()) / f"ticdc-java-consumer-{source_digest()}"
    jar = cache / JAR_NAME
    if jar.exists():
        return jar
    scratch = Path(tempfile.mkdtemp(prefix="ticdc-java-build-"))
    try:
        shutil.copy(SOURCE / "pom.xml", scratch / "pom.xml")
        shutil.copytree(SOURCE / "src", scratch / "src")
        proc = subprocess.run([mvn, "-q", "-B", "-o", "package"], cwd=scratch, capture_output=True, text=True,
                              timeout=900)
        if proc.returncode != 0:
            proc = subprocess.run([mvn, "-q", "-B", "package"], cwd=scratch, capture_output=True, text=True,
                                  timeout=900)
        output = proc.stdout + proc.stderr
        if proc.returncode != 0 and ("Could not transfer" in output or "Could not resolve" in output):
            pytest.skip("Maven cannot reach Maven Central and the local repository lacks the plugins or Jackson: "
                        + output.strip().splitlines()[-1][:300])
        assert proc.returncode == 0, f"mvn package of {SOURCE} failed:\n{output}"
        cache.mkdir(parents=True, exist_ok=True)
        os.replace(scratch / "target" / JAR_NAME, jar)
        return jar
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="module")
def jar() -> Path:
    return build_jar()


def run(tmp_path: Path, jar: Path, scenario: str, *args: str, java: str = "java") -> Run:
    report = tmp_path / "report"
    proc = subprocess.run(CLI + ["run", "--scenario", scenario, "--consumer", f"cmd:{java} -jar {jar}",
                                 "--work", str(tmp_path / "work"), "--report", str(report), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800)
    return Run(proc, report)


# ---- a session driven by hand: a header, records, requests


def header(state_dir: Path, protocol: str = "simple", **sink: object) -> dict:
    return {"type": "header", "protocol_version": 1, "protocol": protocol, "encoding": protocol,
            "sink": {"protocol": protocol, **sink}, "topics": {"t": 1}, "scenario": "smoke", "seed": 1,
            "state_dir": str(state_dir), "start": {"restart": 0, "offsets": {"t": {"0": 0}}, "checkpoint_ts": None},
            "tables": "on-request"}


def session(jar: Path, lines: list[dict]) -> list[dict]:
    """Writes the lines (then closes stdin) and returns what the consumer wrote."""
    proc = subprocess.run(["java", "-jar", str(jar)], input="".join(json.dumps(x) + "\n" for x in lines),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def records(messages: list[dict]) -> list[dict]:
    """Simple JSON messages as the records of partition 0 of topic t."""
    return [{"type": "record", "topic": "t", "partition": 0, "offset": i, "timestamp": 1767225600000 + i,
             "timestampType": 0, "key": None, "value": base64.b64encode(json.dumps(m).encode()).decode(),
             "headers": []} for i, m in enumerate(messages)]


def column(name: str, mysql_type: str, nullable: bool = True, default: object = None, **data_type: object) -> dict:
    return {"name": name, "dataType": {"mysqlType": mysql_type, **data_type}, "nullable": nullable, "default": default}


def table_schema(table: str, version: int, columns: list[dict], key: list[str] | None = ("id",)) -> dict:
    indexes = [] if key is None else [{"name": "primary", "unique": True, "primary": True, "nullable": False,
                                       "columns": list(key)}]
    return {"schema": "s", "table": table, "tableID": 100, "version": version, "columns": columns, "indexes": indexes}


def ddl(kind: str, sql: str, ts: int, schema: dict | None) -> dict:
    return {"version": 1, "type": kind, "sql": sql, "commitTs": ts, "buildTs": 0,
            **({"tableSchema": schema} if schema else {})}


def dml(kind: str, table: str, ts: int, version: int, data: dict | None = None, old: dict | None = None) -> dict:
    msg = {"version": 1, "database": "s", "table": table, "tableID": 100, "type": kind, "commitTs": ts,
           "buildTs": 0, "schemaVersion": version}
    msg.update({k: v for k, v in (("data", data), ("old", old)) if v is not None})
    return msg


def watermark(ts: int) -> dict:
    return {"version": 1, "type": "WATERMARK", "commitTs": ts, "buildTs": 0}


def tables_after(jar: Path, tmp_path: Path, messages: list[dict]) -> tuple[dict, list[dict]]:
    """The consumer's tables after the messages ({"s.t": [rows]}), and every line it wrote."""
    out = session(jar, [header(tmp_path), *records(messages), {"type": "tables", "id": 1}])
    tables: dict = {}
    for line in out:
        if line["type"] == "row":
            rows = tables.setdefault(f"{line['schema']}.{line['table']}", [])
            if line["row"] is not None:
                rows.append(line["row"])
    assert out[-1]["type"] == "tables" and out[-1]["id"] == 1, out
    return tables, out


@pytest.mark.parametrize("protocol,sink,reason", [
    ("simple", {"encoding-format": "json"}, None),
    ("simple", {}, None),
    ("simple", {"encoding-format": "avro"}, "JSON encoding"),
    ("simple", {"encoding-format": "json", "large-message-handle-option": "claim-check"}, "claim-check"),
    ("canal-json", {"enable-tidb-extension": True}, "only the Simple protocol"),
    ("open-protocol", {}, "only the Simple protocol"),
])
def test_ready_or_unsupported_with_a_reason(jar: Path, tmp_path: Path, protocol, sink, reason) -> None:
    lines = session(jar, [header(tmp_path, protocol, **sink)])
    if reason is None:
        assert lines == [{"type": "ready", "protocol_version": 1, "supports": ["restarts"]}]
    else:
        [line] = lines
        assert line["type"] == "unsupported" and reason in line["reason"], line


T_COLUMNS = [column("id", "bigint", False, unsigned=True), column("v", "varchar")]


def test_values_are_canonical(jar: Path, tmp_path: Path) -> None:
    """Integers exact (BIGINT UNSIGNED max), FLOAT not widened, DECIMAL with its scale, ENUM/SET names."""
    cols = [column("id", "bigint", False, unsigned=True), column("f", "float"), column("d", "decimal", decimal=2),
            column("e", "enum", elements=["a", "b"]), column("st", "set", elements=["x", "y", "z"]),
            column("b", "blob"), column("ts", "timestamp", decimal=0), column("bit", "bit")]
    row = {"id": "18446744073709551615", "f": "0.1", "d": "1.50", "e": "2", "st": "5", "b": "AAE=",
           "ts": {"location": "UTC", "value": "2000-01-01 00:00:00"}, "bit": "9223372036854775808"}
    tables, _ = tables_after(jar, tmp_path, [
        ddl("CREATE", "CREATE TABLE `s`.`t` (...)", 10, table_schema("t", 9, cols)),
        dml("INSERT", "t", 20, 9, data=row), watermark(30)])
    assert tables == {"s.t": [{"id": 18446744073709551615, "f": 0.1, "d": "1.50", "e": "b", "st": "x,z", "b": "AAE=",
                               "ts": "2000-01-01 00:00:00", "bit": 9223372036854775808}]}


def test_dml_waits_for_its_schema_version(jar: Path, tmp_path: Path) -> None:
    """A DML whose schemaVersion has not arrived waits (and its partition's watermark with it) until a
    BOOTSTRAP brings it; then it is decoded with that version's columns."""
    v2 = table_schema("t", 15, [*T_COLUMNS, column("w", "int")])
    tables, out = tables_after(jar, tmp_path, [
        ddl("CREATE", "CREATE TABLE `s`.`t` (...)", 10, table_schema("t", 9, T_COLUMNS)), watermark(15),
        dml("INSERT", "t", 20, 15, data={"id": "1", "v": "a", "w": "7"}), watermark(30),
        {"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 0, "tableSchema": v2}])
    assert tables == {"s.t": [{"id": 1, "v": "a", "w": 7}]}
    # the watermark 30 waits for the row: checkpoint 30 comes only after the BOOTSTRAP, with the row before it
    assert [(line["type"], line.get("ts", line.get("commit_ts"))) for line in out if line["type"] != "row"] == [
        ("ready", None), ("ddl", 10), ("checkpoint", 15), ("txn", 20), ("checkpoint", 30), ("tables", None)], out


def test_column_ddl_effects(jar: Path, tmp_path: Path) -> None:
    """ADD COLUMN backfills DEFAULT / NULL / the zero value of NOT NULL; RENAME and CHANGE COLUMN rename;
    DROP COLUMN removes."""
    v1 = table_schema("t", 9, T_COLUMNS)
    v2 = table_schema("t", 19, [*T_COLUMNS, column("tier", "varchar", default="basic"), column("n", "int"),
                                column("z", "decimal", False, decimal=3), column("q", "int")])
    v3 = table_schema("t", 29, [T_COLUMNS[0], column("val", "varchar"), column("tier", "varchar", default="basic"),
                                column("n", "int"), column("z", "decimal", False, decimal=3), column("q2", "int")])
    v4 = table_schema("t", 39, [T_COLUMNS[0], column("val", "varchar"), column("z", "decimal", False, decimal=3),
                                column("q2", "int")])
    tables, _ = tables_after(jar, tmp_path, [
        ddl("CREATE", "CREATE TABLE `s`.`t` (...)", 10, v1), dml("INSERT", "t", 11, 9, data={"id": "1", "v": "a"}),
        ddl("ALTER", "ALTER TABLE `s`.`t` ADD COLUMN `tier` VARCHAR(8) DEFAULT 'basic', ADD COLUMN `n` INT, "
                     "ADD COLUMN `z` DECIMAL(5,3) NOT NULL, ADD COLUMN `q` INT", 20, v2),
        ddl("ALTER", "ALTER TABLE `s`.`t` RENAME COLUMN `v` TO `val`, CHANGE COLUMN `q` `q2` INT", 30, v3),
        ddl("ALTER", "ALTER TABLE `s`.`t` DROP COLUMN `tier`, DROP COLUMN `n`", 40, v4), watermark(50)])
    assert tables == {"s.t": [{"id": 1, "val": "a", "z": "0.000", "q2": None}]}


def test_partition_ddl_effects(jar: Path, tmp_path: Path) -> None:
    """TRUNCATE / DROP PARTITION remove the rows in their ranges (DROP widens the next range),
    REORGANIZE keeps rows and changes the definitions, EXCHANGE swaps rows with a normal table."""
    s = table_schema("p", 9, T_COLUMNS)
    n = table_schema("n", 9, T_COLUMNS)
    create = ("CREATE TABLE `s`.`p` (`id` BIGINT NOT NULL, `v` VARCHAR(8), PRIMARY KEY (`id`)) PARTITION BY RANGE "
              "(`id`) (PARTITION `p0` VALUES LESS THAN (10), PARTITION `p1` VALUES LESS THAN (20), "
              "PARTITION `p2` VALUES LESS THAN (MAXVALUE))")
    inserts = [dml("INSERT", "p", 11, 9, data={"id": str(i), "v": "x"}) for i in (1, 5, 12, 15, 25)]
    tables, _ = tables_after(jar, tmp_path, [
        ddl("CREATE", create, 10, s), ddl("CREATE", "CREATE TABLE `s`.`n` LIKE `s`.`p`", 10, n), *inserts,
        dml("INSERT", "n", 11, 9, data={"id": "100", "v": "n"}),
        ddl("ALTER", "ALTER TABLE `s`.`p` REORGANIZE PARTITION `p1` INTO (PARTITION `p1a` VALUES LESS THAN (13), "
                     "PARTITION `p1b` VALUES LESS THAN (20))", 20, table_schema("p", 19, T_COLUMNS)),
        ddl("ALTER", "ALTER TABLE `s`.`p` TRUNCATE PARTITION `p1a`", 30, table_schema("p", 29, T_COLUMNS)),
        ddl("ALTER", "ALTER TABLE `s`.`p` DROP PARTITION `p0`", 40, table_schema("p", 39, T_COLUMNS)),
        dml("INSERT", "p", 41, 39, data={"id": "14", "v": "y"}),  # in p1b
        ddl("ALTER", "ALTER TABLE `s`.`p` EXCHANGE PARTITION `p1b` WITH TABLE `s`.`n`", 50,
            table_schema("p", 49, T_COLUMNS)),
        watermark(60)])
    assert sorted(r["id"] for r in tables["s.p"]) == [25, 100]
    assert sorted(r["id"] for r in tables["s.n"]) == [14, 15]


def test_keyless_duplicates_and_resends(jar: Path, tmp_path: Path) -> None:
    """A key-less table keeps two identical rows of one transaction; after the partition shows a
    re-send (its watermark going back), the same events again are copies, and a re-send at or below
    the applied watermark is dropped."""
    s = table_schema("k", 9, T_COLUMNS, key=None)
    twice = [dml("INSERT", "k", 20, 9, data={"id": "1", "v": "a"})] * 2
    tables, out = tables_after(jar, tmp_path, [
        ddl("CREATE", "CREATE TABLE `s`.`k` (...)", 10, s), watermark(15), *twice,
        watermark(12), *twice,  # a restarted changefeed sends again from its checkpoint
        watermark(25), dml("DELETE", "k", 20, 9, old={"id": "1", "v": "a"}), watermark(30)])
    assert tables == {"s.k": [{"id": 1, "v": "a"}] * 2}
    [txn] = [line for line in out if line["type"] == "txn"]
    assert txn["commit_ts"] == 20 and len(txn["rows"]) == 2, out


def test_restart_reloads_the_state(jar: Path, tmp_path: Path) -> None:
    """commit makes the whole state durable: a new start with the committed offsets goes on from it,
    the schema cache and the rows still waiting for the watermark included."""
    first = [ddl("CREATE", "CREATE TABLE `s`.`t` (...)", 10, table_schema("t", 9, T_COLUMNS)),
             dml("INSERT", "t", 20, 9, data={"id": "1", "v": "a"}), watermark(15)]
    out = session(jar, [header(tmp_path), *records(first), {"type": "commit", "id": 1}])
    assert out[-1] == {"type": "committed", "id": 1, "offsets": {"t": {"0": 3}}}, out
    later = records([*first, dml("INSERT", "t", 25, 9, data={"id": "2", "v": "b"}), watermark(30)])[3:]
    again = header(tmp_path)
    again["start"] = {"restart": 1, "offsets": {"t": {"0": 3}}, "checkpoint_ts": None}
    out = session(jar, [again, *later, {"type": "tables", "id": 2}])
    assert [line for line in out if line["type"] == "txn"] == [
        {"type": "txn", "commit_ts": 20, "rows": [{"schema": "s", "table": "t", "op": "insert", "before": None,
                                                   "after": {"id": 1, "v": "a"}}]},
        {"type": "txn", "commit_ts": 25, "rows": [{"schema": "s", "table": "t", "op": "insert", "before": None,
                                                   "after": {"id": 2, "v": "b"}}]}]
    assert out[-1] == {"type": "tables", "id": 2, "checkpoint": 30}, out


def test_another_encoding_is_not_applicable(jar: Path, tmp_path: Path) -> None:
    result = run(tmp_path, jar, "smoke", "--protocol", "simple-avro")
    assert result.code == 5, result  # every case declined: nothing judged, never a green gate
    [summary] = result.results
    assert summary["outcome"] == "not applicable", result
    assert "JSON encoding" in result.output, result


def test_smoke_is_conformant(jar: Path, tmp_path: Path) -> None:
    assert_conformant(run(tmp_path, jar, "smoke", "--protocol", "simple-json"))


def test_restarts_are_conformant(jar: Path, tmp_path: Path) -> None:
    """Stopped and killed mid-stream, the consumer resumes from its committed offsets and state_dir."""
    result = run(tmp_path, jar, "smoke", "--protocol", "simple-json", "--schedule", "random:seed=7,restarts=3,restart=mixed")
    assert_conformant(result)
    assert result.starts() == 4, result


def test_decimals_printed_as_numbers_with_every_digit_are_conformant(jar: Path, tmp_path: Path) -> None:
    """-Dticdc.decimal=number: every DECIMAL a JSON number, as Jackson prints a BigDecimal. smoke's
    DECIMAL(20,6) values hold up to 20 digits, beyond a float64's 15-17; kept across restarts too."""
    result = run(tmp_path, jar, "smoke", "--protocol", "simple-json", "--schedule",
                 "random:seed=2,restarts=2,restart=crash", java="java -Dticdc.decimal=number")
    assert_conformant(result)
    [final] = [p for p in (tmp_path / "work").rglob("final/smoke.orders.ndjson") if "truth" not in p.parts]
    amounts = [re.search(rb'"amount":(-?[0-9.E+-]+)[,}]', line) for line in final.read_bytes().splitlines()]
    assert amounts and all(amounts), final.read_text()[:500]  # numbers, not strings
    assert any(len(m.group(1).lstrip(b"-").replace(b".", b"")) > 17 for m in amounts), amounts


def test_json_documents_embedded_as_json_values_are_conformant(jar: Path, tmp_path: Path) -> None:
    """-Dticdc.json=embedded: every JSON column's document a JSON value in the row, printed by
    Jackson (compact, numbers with a fraction as BigDecimal); `types` holds every kind of document."""
    result = run(tmp_path, jar, "types", "--protocol", "simple-json", "--schedule",
                 "random:seed=3,restarts=1,restart=crash", java="java -Dticdc.json=embedded")
    assert_conformant(result)
    [final] = [p for p in (tmp_path / "work").rglob("final/types.t4.ndjson") if "truth" not in p.parts]
    documents = [json.loads(line)["c96_json"] for line in final.read_bytes().splitlines()]
    assert any(isinstance(d, dict) for d in documents) and any(isinstance(d, list) for d in documents), documents[:5]


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made streams
@pytest.mark.parametrize("scenario", ["multi-table", "keys", "types", "replays", "ddl-evolution"])
def test_scenario_is_conformant(jar: Path, tmp_path: Path, scenario: str) -> None:
    assert_conformant(run(tmp_path, jar, scenario, "--protocol", "simple-json"))


@pytest.mark.slow
@pytest.mark.nightly  # the whole matrix; CI runs smoke, restarts and the hand-made streams
@pytest.mark.parametrize("scenario,schedule", [
    ("replays", "round-robin:seed=3"),
    ("replays", "random:seed=5,batch=1-4"),
    ("replays", "lagging:seed=1"),
    ("replays", "watermark-first:seed=2"),
    ("ddl-evolution", "ddl-first:seed=4"),
    ("ddl-evolution", "random:seed=2,skew=500,restarts=3,restart=crash"),
    ("replays", "timestamp:seed=1,restarts=2,restart=stop,commit-every=1"),
    ("multi-table", "round-robin:seed=6,restarts=4,restart=mixed"),
    ("keys", "random:seed=9,restarts=2,restart=crash"),
    ("types", "round-robin:seed=1,restarts=2,restart=crash"),
])
def test_schedules_are_conformant(jar: Path, tmp_path: Path, scenario: str, schedule: str) -> None:
    result = run(tmp_path, jar, scenario, "--protocol", "simple-json", "--schedule", schedule)
    assert_conformant(result)
    if "restarts=" in schedule:
        restarts = int(schedule.split("restarts=")[1].split(",")[0])
        assert result.starts() == restarts + 1, result
