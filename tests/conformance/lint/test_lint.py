"""The stream lint (ticdc_conformance.lint) on simulator streams broken on purpose.

Each test takes the simulator's output of a scenario, breaks one thing the specs forbid (events of a
table out of order, a row moved to another partition, a DDL missing from a partition, a BOOTSTRAP
missing, a new event below a watermark, a wrong type code, flag or sqlType, garbage bytes) and
checks the lint names the rule and the record's coordinates, and nothing else. Clean streams of
every scenario and encoding are in tests/e2e/test_lint.py.
"""
from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Optional

import orjson
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.events import DecodedBootstrap, DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.lint import (
    INFO,
    Findings,
    LintInputError,
    RecordFiles,
    SettingsError,
    in_offset_order,
    lint,
    load_settings,
)
from ticdc_conformance.lint.command import parse_sink_options
from ticdc_conformance.lint.seen import SeenWindow
from ticdc_conformance.lint.settings import make_settings
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.open_protocol.wire import read_events
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import records_to_table
from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator

# Open Protocol with one event per message, so a record is one event to move or corrupt.
ONE_EVENT = {"max_batch_size": 1}


# --- harness ----------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _simulate(scenario: str, encoding: str, seed: int, overrides: tuple) -> tuple:
    cfg = config_for(scenario, encoding, **dict(overrides))
    sim = SinkSimulator(cfg, seed=seed)
    records = tuple(sim.run(get_scenario(scenario).history(seed, None, cfg.time_zone)))
    return records, make_settings(cfg.protocol, cfg.ticdc_options(), sim.topics())


def simulate(scenario: str = "smoke", encoding: str = "open-protocol", seed: int = 1, **overrides):
    records, settings = _simulate(scenario, encoding, seed, tuple(sorted(overrides.items())))
    return list(records), settings


def decoded(records: list[KafkaRecord], settings) -> list[tuple[KafkaRecord, list]]:
    """Each record with its events, by the project's decoder of its partition."""
    package = protocol_spec(settings.protocol)
    decoders: dict = {}
    out = []
    for r in records:
        d = decoders.setdefault((r.topic, r.partition), package.new_decoder(dict(settings.options)))
        out.append((r, d.decode(r)))
    return out


def required(records: list[KafkaRecord], settings) -> list[tuple[str, str, int, int]]:
    result = lint(records, settings)
    return [(f.rule, f.topic, f.partition, f.offset) for f in result.findings.kept if f.level == "required"]


def renumber(records: list[KafkaRecord], topic: str, partition: int) -> list[KafkaRecord]:
    """Offsets 0.. of one partition in list order, as Kafka gives a partition that was written so."""
    out, n = [], 0
    for r in records:
        if (r.topic, r.partition) == (topic, partition):
            r = replace(r, offset=n)
            n += 1
        out.append(r)
    return out


def single(events: list, kind: type) -> Optional[Any]:
    return events[0] if len(events) == 1 and isinstance(events[0], kind) else None


def key_of(row: DecodedRow) -> tuple:
    image = row.after if row.after is not None else row.before
    return (row.schema, row.table, tuple((c, image[c]) for c in row.key_columns))


def coordinates(r: KafkaRecord, rule: str) -> tuple[str, str, int, int]:
    return (rule, r.topic, r.partition, r.offset)


# --- clean streams, replays ----------------------------------------------------------------------------
@pytest.mark.rules("KAFKA-DELIVERY-1", "CONSUMER-DEDUP-1")
def test_a_resent_row_below_the_watermark_is_a_duplicate_not_a_violation():
    records, settings = simulate("smoke", "simple-json")
    pairs = decoded(records, settings)
    first = next(r for r, ev in pairs if single(ev, DecodedRow) and r.partition == 0)
    # Sent again at the end of its partition, far below the watermarks that followed it.
    records.append(replace(first, offset=max(r.offset for r in records if r.partition == 0) + 1))
    result = lint(records, settings)
    assert not result.failed, [f.line() for f in result.findings.kept]
    assert result.summary["partitions"][f"{first.topic}/0"]["resent"] == 1


@pytest.mark.rules("KAFKA-DELIVERY-1", "OPEN-WATERMARK-2")
def test_a_watermark_that_falls_back_is_reported_as_a_replay_not_a_violation():
    records, settings = simulate("smoke", "open-protocol")
    pairs = decoded(records, settings)
    early = next(r for r, ev in pairs if single(ev, DecodedWatermark) and r.partition == 1)
    last = max(r.offset for r in records if r.partition == 1)
    records.append(replace(early, offset=last + 1))
    result = lint(records, settings)
    assert not result.failed
    [replay] = [f for f in result.findings.kept if f.level == INFO]
    assert (replay.rule, replay.partition, replay.offset) == ("KAFKA-DELIVERY-1", 1, last + 1)
    assert result.summary["totals"]["replays"] == 1


# --- order --------------------------------------------------------------------------------------------
def _swappable(pairs: list) -> tuple[int, int]:
    """Two consecutive first-sent row events of one table in one partition, different commit ts, with
    no watermark or DDL between them: list indexes."""
    last_row: dict[tuple, int] = {}  # (topic, partition, table) -> index of its last row record
    barrier: dict[tuple, int] = {}  # (topic, partition) -> index of its last watermark/DDL record
    for i, (r, events) in enumerate(pairs):
        part = (r.topic, r.partition)
        if any(isinstance(e, (DecodedWatermark, DecodedDDL)) for e in events):
            barrier[part] = i
        row = single(events, DecodedRow)
        if row is None:
            continue
        table = (*part, row.schema, row.table)
        j = last_row.get(table)
        if j is not None and j > barrier.get(part, -1) and pairs[j][1][0].commit_ts < row.commit_ts:
            return j, i
        last_row[table] = i
    raise AssertionError("no two swappable row events")


@pytest.mark.parametrize("encoding, overrides, rule", [
    pytest.param("open-protocol", ONE_EVENT, "OPEN-ORDER-1", marks=pytest.mark.rules("OPEN-ORDER-1", "OPEN-ORDER-2")),
    pytest.param("simple-json", {}, "SIMPLE-ORDER-2", marks=pytest.mark.rules("SIMPLE-ORDER-2")),
    pytest.param("simple-avro", {}, "SIMPLE-ORDER-2", marks=pytest.mark.rules("SIMPLE-ORDER-2")),
])
def test_two_swapped_row_events_of_a_table_break_the_order_at_the_second(encoding, overrides, rule):
    records, settings = simulate("smoke", encoding, **overrides)
    i, j = _swappable(decoded(records, settings))
    a, b = records[i], records[j]
    records[i] = replace(a, key=b.key, value=b.value)
    records[j] = replace(b, key=a.key, value=a.value)
    assert required(records, settings) == [coordinates(records[j], rule)]


# --- a row in two partitions ----------------------------------------------------------------------------
@pytest.mark.parametrize("encoding, overrides, rule", [
    pytest.param("open-protocol", ONE_EVENT, "OPEN-DISPATCH-1",
                 marks=pytest.mark.rules("OPEN-DISPATCH-1", "OPEN-DISPATCH-2")),
    pytest.param("simple-json", {}, "SIMPLE-DISPATCH-1", marks=pytest.mark.rules("SIMPLE-DISPATCH-1")),
])
def test_a_rows_later_event_on_another_partition_is_caught_there(encoding, overrides, rule):
    records, settings = simulate("smoke", encoding, **overrides)
    seen: set[tuple] = set()
    for index, (r, events) in enumerate(decoded(records, settings)):
        row = single(events, DecodedRow)
        if row is not None and row.key_columns:
            if key_of(row) in seen:
                break
            seen.add(key_of(row))
    else:
        raise AssertionError("no row with two events")
    moved = records[index]
    target = (moved.partition + 1) % settings.topics[moved.topic]
    records[index] = replace(moved, partition=target)
    records = renumber(records, moved.topic, target)
    assert required(records, settings) == [coordinates(records[index], rule)]


# --- broadcasts -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding, overrides, rule", [
    pytest.param("open-protocol", ONE_EVENT, "OPEN-BROADCAST-1",
                 marks=pytest.mark.rules("OPEN-BROADCAST-1", "OPEN-BROADCAST-3", "OPEN-WATERMARK-4")),
    pytest.param("debezium", {}, "DBZ-BROADCAST-1", marks=pytest.mark.rules("DBZ-BROADCAST-1")),
    pytest.param("simple-json", {}, "SIMPLE-BROADCAST-1", marks=pytest.mark.rules("SIMPLE-BROADCAST-1")),
])
def test_a_ddl_missing_from_one_partition_is_caught_when_its_watermark_passes(encoding, overrides, rule):
    records, settings = simulate("smoke", encoding, **overrides)
    pairs = decoded(records, settings)
    index, ddl = next((i, ev[0]) for i, (r, ev) in enumerate(pairs) if r.partition == 1 and single(ev, DecodedDDL))
    passing = next(r for r, ev in pairs[index:] if r.partition == 1 and single(ev, DecodedWatermark)
                   and ev[0].ts > ddl.commit_ts)
    del records[index]
    assert required(records, settings) == [coordinates(passing, rule)]


@pytest.mark.rules("OPEN-BROADCAST-2", "SIMPLE-BROADCAST-2")
@pytest.mark.parametrize("encoding, rule", [("open-protocol", "OPEN-BROADCAST-2"),
                                            ("simple-json", "SIMPLE-BROADCAST-2")])
def test_a_watermark_missing_from_one_partition_is_caught(encoding, rule):
    records, settings = simulate("smoke", encoding)
    pairs = decoded(records, settings)
    marks = [i for i, (r, ev) in enumerate(pairs) if r.partition == 2 and single(ev, DecodedWatermark)]
    # Caught when the partition's next watermark passes it ...
    missing_second = records[:marks[1]] + records[marks[1] + 1:]
    assert required(missing_second, settings) == [coordinates(records[marks[2]], rule)]
    # ... or, for the last one, when the stream ends: at the partition's last record.
    missing_last = records[:marks[-1]] + records[marks[-1] + 1:]
    last = max((r for r in missing_last if r.partition == 2), key=lambda r: r.offset)
    assert required(missing_last, settings) == [coordinates(last, rule)]


@pytest.mark.rules("CANAL-DISPATCH-1")
def test_a_canal_json_ddl_off_partition_zero_is_caught():
    records, settings = simulate("smoke", "canal-json")
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings)) if single(ev, DecodedDDL))
    records[index] = replace(records[index], partition=1)
    records = renumber(records, records[index].topic, 1)
    assert required(records, settings) == [coordinates(records[index], "CANAL-DISPATCH-1")]


# --- Simple schemas -------------------------------------------------------------------------------------
@pytest.mark.rules("SIMPLE-BOOTSTRAP-8", "SIMPLE-SCHEMACACHE-1")
@pytest.mark.parametrize("encoding", ["simple-json", "simple-avro"])
def test_a_missing_bootstrap_leaves_the_tables_first_dml_unreadable(encoding):
    records, settings = simulate("smoke", encoding)
    # A changefeed started after the tables were created: no CREATE TABLE, so BOOTSTRAP alone
    # brings each table's schema.
    pairs = [(r, ev) for r, ev in decoded(records, settings)
             if not (single(ev, DecodedDDL) and ev[0].ddl_type == "CREATE" and ev[0].table)]
    records = [r for r, _ in pairs]
    assert required(records, settings) == []
    boot = next(i for i, (r, ev) in enumerate(pairs) if r.partition == 0 and single(ev, DecodedBootstrap))
    table = (pairs[boot][1][0].schema, pairs[boot][1][0].table)
    first_dml = next(r for r, ev in pairs[boot:] if r.partition == 0 and single(ev, DecodedRow)
                     and (ev[0].schema, ev[0].table) == table)
    del records[boot]
    found = required(records, settings)
    assert found[0] == coordinates(first_dml, "SIMPLE-BOOTSTRAP-8")
    assert {f[:3] for f in found} == {("SIMPLE-BOOTSTRAP-8", first_dml.topic, 0)}


@pytest.mark.rules("SIMPLE-SCHEMAVERSION-2", "SIMPLE-SCHEMACACHE-2")
def test_a_dml_naming_an_unknown_schema_version_is_caught():
    records, settings = simulate("smoke", "simple-json")
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings)) if single(ev, DecodedRow))
    msg = orjson.loads(records[index].value)
    msg["schemaVersion"] += 1
    records[index] = replace(records[index], value=orjson.dumps(msg))
    assert required(records, settings) == [coordinates(records[index], "SIMPLE-SCHEMAVERSION-2")]


# --- a new event below a watermark ----------------------------------------------------------------------
def _fresh(value: Any) -> Any:
    """A key value no row of the scenario has."""
    if isinstance(value, int):
        return 2_000_000_000 + value
    return str(2_000_000_000 + int(value)) if value.lstrip("-").isdigit() else value + "-new"


def _simple_json(value: bytes, ts: int, keys: tuple[str, ...]) -> bytes:
    msg = orjson.loads(value)
    msg["commitTs"] = ts
    for c in keys:
        msg["data"][c] = _fresh(msg["data"][c])
    return orjson.dumps(msg)


def _canal_json(value: bytes, ts: int, keys: tuple[str, ...]) -> bytes:
    msg = orjson.loads(value)
    msg["_tidb"]["commitTs"] = ts
    for c in keys:
        msg["data"][0][c] = _fresh(msg["data"][0][c])
    return orjson.dumps(msg)


def _frames(*payloads: bytes) -> bytes:
    return b"".join(len(p).to_bytes(8, "big") + p for p in payloads)


def _open_protocol(record: KafkaRecord, ts: int, keys: tuple[str, ...]) -> KafkaRecord:
    [event] = read_events(record.key, record.value)
    key, value = dict(event.key, ts=ts), orjson.loads(event.value)
    for c in keys:
        value["u"][c]["v"] = _fresh(value["u"][c]["v"])
    return replace(record, key=(1).to_bytes(8, "big") + _frames(orjson.dumps(key)),
                   value=_frames(orjson.dumps(value)))


_REWRITE: dict[str, Callable[[KafkaRecord, int, tuple], KafkaRecord]] = {
    "open-protocol": _open_protocol,
    "canal-json": lambda r, ts, keys: replace(r, value=_canal_json(r.value, ts, keys)),
    "simple-json": lambda r, ts, keys: replace(r, value=_simple_json(r.value, ts, keys)),
}


@pytest.mark.parametrize("encoding, overrides, rule", [
    pytest.param("open-protocol", ONE_EVENT, "OPEN-WATERMARK-2",
                 marks=pytest.mark.rules("OPEN-WATERMARK-1", "OPEN-WATERMARK-2")),
    pytest.param("canal-json", {}, "CANAL-WATERMARK-3", marks=pytest.mark.rules("CANAL-WATERMARK-3")),
    pytest.param("simple-json", {}, "SIMPLE-WATERMARK-1", marks=pytest.mark.rules("SIMPLE-WATERMARK-1")),
])
def test_a_new_row_event_below_an_earlier_watermark_is_caught(encoding, overrides, rule):
    records, settings = simulate("smoke", encoding, **overrides)
    pairs = decoded(records, settings)
    w, mark = next((i, ev[0].ts) for i, (r, ev) in enumerate(pairs)
                   if i > len(pairs) // 2 and r.partition == 0 and single(ev, DecodedWatermark))
    insert = next((r, ev[0]) for r, ev in reversed(pairs[:w]) if r.partition == 0 and single(ev, DecodedRow)
                  and ev[0].op == "insert")
    record, row = insert
    records.insert(w + 1, _REWRITE[encoding](record, mark - 1, row.key_columns))
    records = renumber(records, record.topic, 0)
    found = required(records, settings)
    assert coordinates(records[w + 1], rule) in found
    # The event may also come after a later one of its table (the order rule), at the same record.
    assert {f[1:] for f in found} == {coordinates(records[w + 1], rule)[1:]}


# --- types, flags, sqlTypes -----------------------------------------------------------------------------
def _open_column(records, settings, edit: Callable[[str, dict], bool], last: bool = False) -> int:
    """Applies `edit(name, column)` to the first (or last) row column it accepts; the record's index."""
    pairs = list(enumerate(decoded(records, settings)))
    for index, (r, events) in reversed(pairs) if last else pairs:
        if not single(events, DecodedRow):
            continue
        [event] = read_events(r.key, r.value)
        value = orjson.loads(event.value)
        for name, column in value.get("u", {}).items():
            if edit(name, column):
                records[index] = replace(r, value=_frames(orjson.dumps(value)))
                return index
    raise AssertionError("no column to edit")


def _retype(name: str, column: dict) -> bool:
    if column["t"] == 15 and isinstance(column["v"], str) and not column["v"].lstrip("-").isdigit():
        column["t"] = 3  # INT, for a VARCHAR value
        return True
    return False


def _handle(name: str, column: dict) -> bool:
    if not column.get("h") and not column["f"] & 0x02:
        column["h"] = True  # where-handle without HandleKeyFlag
        return True
    return False


def _unsigned_string(name: str, column: dict) -> bool:
    if column["t"] == 15:
        column["f"] |= 0x80  # UnsignedFlag on a VARCHAR
        return True
    return False


def _nullable_handle(name: str, column: dict) -> bool:
    if not column.get("h") and column["f"] & 0x40:
        column["h"], column["f"] = True, column["f"] | 0x02  # a nullable column as the handle key
        return True
    return False


@pytest.mark.parametrize("edit, rule", [
    pytest.param(_retype, "OPEN-TYPECODE-1", marks=pytest.mark.rules("OPEN-TYPECODE-1", "OPEN-TYPECODE-7")),
    pytest.param(_nullable_handle, "OPEN-FLAG-5", marks=pytest.mark.rules("OPEN-FLAG-5")),
    pytest.param(_handle, "OPEN-FLAG-2", marks=pytest.mark.rules("OPEN-FLAG-2", "OPEN-COLUMN-1")),
    pytest.param(_unsigned_string, "OPEN-FLAG-6", marks=pytest.mark.rules("OPEN-FLAG-6")),
])
def test_a_corrupt_open_protocol_type_code_or_flag_is_caught(edit, rule):
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    index = _open_column(records, settings, edit)
    assert required(records, settings) == [coordinates(records[index], rule)]


@pytest.mark.rules("OPEN-TYPECODE-1", "OPEN-FLAG-1")
def test_an_open_protocol_column_changing_its_type_code_without_a_ddl_is_caught():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    # DATETIME (12) written as TIMESTAMP (7): the same text form, so only the change from the earlier
    # events of the column gives it away.
    index = _open_column(records, settings, lambda name, c: c["t"] == 12 and c.update(t=7) is None, last=True)
    assert required(records, settings) == [coordinates(records[index], "OPEN-TYPECODE-1")]


def _canal_edit(records, settings, edit: Callable[[dict], bool]) -> int:
    for index, (r, events) in enumerate(decoded(records, settings)):
        if single(events, DecodedRow):
            msg = orjson.loads(r.value)
            if edit(msg):
                records[index] = replace(r, value=orjson.dumps(msg))
                return index
    raise AssertionError("no message to edit")


def _int_sql_type(msg: dict) -> bool:
    name = next((n for n, t in msg["mysqlType"].items() if t == "int"), None)
    if name is None:
        return False
    msg["sqlType"][name] = 12  # VARCHAR's code for an INT column
    return True


def _mysql_type_params(msg: dict) -> bool:
    name = next((n for n, t in msg["mysqlType"].items() if t == "varchar"), None)
    if name is None:
        return False
    msg["mysqlType"][name] = "varchar(32)"  # official Canal's form, not TiCDC's default
    return True


@pytest.mark.parametrize("edit, rule", [
    pytest.param(_int_sql_type, "CANAL-SQLTYPE-11", marks=pytest.mark.rules("CANAL-SQLTYPE-1", "CANAL-SQLTYPE-11")),
    pytest.param(_mysql_type_params, "CANAL-MYSQLTYPE-2", marks=pytest.mark.rules("CANAL-MYSQLTYPE-2")),
])
def test_a_corrupt_canal_json_sql_type_or_mysql_type_is_caught(edit, rule):
    records, settings = simulate("smoke", "canal-json")
    index = _canal_edit(records, settings, edit)
    assert required(records, settings) == [coordinates(records[index], rule)]


@pytest.mark.rules("CANAL-SQLTYPE-12")
@pytest.mark.parametrize("code, broken", [(-5, True), (3, False)])
def test_a_canal_json_bigint_unsigned_above_the_signed_range_takes_the_promoted_code(code, broken):
    records, settings = simulate("smoke", "canal-json")

    def above_signed_range(msg: dict) -> bool:
        name = next((n for n, t in msg["mysqlType"].items() if t == "bigint unsigned"), None)
        if msg["type"] != "INSERT" or name is None or msg["data"][0][name] is None:
            return False
        msg["data"][0][name] = str(2**64 - 1)
        msg["sqlType"][name] = code  # spec 003: BIGINT (-5) up to 2**63-1, DECIMAL (3) above
        return True

    index = _canal_edit(records, settings, above_signed_range)
    assert required(records, settings) == ([coordinates(records[index], "CANAL-SQLTYPE-12")] if broken else [])


@pytest.mark.rules("DBZ-TYPEMAP-4", "DBZ-EXTENSION-2")
def test_a_debezium_decimal_declared_as_a_string_is_caught():
    records, settings = simulate("smoke", "debezium")
    for index, (r, events) in enumerate(decoded(records, settings)):
        if single(events, DecodedRow):
            doc = orjson.loads(r.value)
            after = next(f for f in doc["schema"]["fields"] if f["field"] == "after")
            decimal = next((f for f in after["fields"] if f.get("tidb_type") == "decimal"), None)
            if decimal is not None:
                decimal["type"] = "string"
                records[index] = replace(r, value=orjson.dumps(doc))
                break
    found = required(records, settings)
    assert set(found) == {coordinates(records[index], "DBZ-TYPEMAP-4")}


@pytest.mark.rules("SIMPLE-MYSQLTYPE-2")
def test_a_simple_value_that_does_not_fit_its_mysql_type_is_caught():
    records, settings = simulate("smoke", "simple-json")
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings))
                 if single(ev, DecodedRow) and ev[0].op == "insert" and "id" in ev[0].after)
    msg = orjson.loads(records[index].value)
    msg["data"]["id"] = "not a number"
    records[index] = replace(records[index], value=orjson.dumps(msg))
    assert required(records, settings) == [coordinates(records[index], "SIMPLE-MYSQLTYPE-2")]


@pytest.mark.rules("SIMPLE-SCHEMAVERSION-3")
def test_two_schemas_of_one_version_with_different_columns_are_caught():
    records, settings = simulate("smoke", "simple-json")
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings)) if single(ev, DecodedBootstrap))
    msg = orjson.loads(records[index].value)
    msg["tableSchema"]["columns"][-1]["name"] += "_renamed"  # the CREATE TABLE before said otherwise
    records[index] = replace(records[index], value=orjson.dumps(msg))
    assert required(records, settings) == [coordinates(records[index], "SIMPLE-SCHEMAVERSION-3")]


@pytest.mark.rules("DBZ-MESSAGE-1", "DBZ-MESSAGE-3")
@pytest.mark.parametrize("kind, rule", [(DecodedDDL, "DBZ-MESSAGE-1"), (DecodedWatermark, "DBZ-MESSAGE-3")])
def test_an_undecodable_debezium_message_names_the_rule_of_its_kind(kind, rule):
    records, settings = simulate("smoke", "debezium")
    index = next(i for i, (r, ev) in enumerate(decoded(records, settings)) if single(ev, kind))
    doc = orjson.loads(records[index].value)
    del doc["payload"]["source"]
    records[index] = replace(records[index], value=orjson.dumps(doc))
    assert required(records, settings)[0] == coordinates(records[index], rule)


# --- hostile records ------------------------------------------------------------------------------------
@pytest.mark.rules("OPEN-FRAMING-1", "CANAL-EVENTS-1", "DBZ-MESSAGE-2", "SIMPLE-FORMAT-1")
@pytest.mark.parametrize("encoding, rule", [("open-protocol", "OPEN-FRAMING-1"), ("canal-json", "CANAL-EVENTS-1"),
                                            ("debezium", "DBZ-MESSAGE-2"), ("simple-json", "SIMPLE-FORMAT-1"),
                                            ("simple-avro", "SIMPLE-FORMAT-1")])
@pytest.mark.parametrize("key, value", [(b"\x00\xff junk", b"\x16\xff\xff\xff\xff\xff\x7f garbage \x00"),
                                        (None, None), (b"", b"{}"), (b"\x00" * 8 + b"\xff" * 8, b"[1, 2")])
def test_garbage_records_are_decode_findings_with_coordinates(encoding, rule, key, value):
    records, settings = simulate("smoke", encoding)
    middle = len(records) // 2
    at = records[middle]
    bad = replace(at, key=key, value=value, offset=at.offset)
    records = records[:middle] + [bad] + records[middle:]
    records = renumber(records, at.topic, at.partition)
    result = lint(records, settings)
    bad = records[middle]
    found = [(f.rule, f.topic, f.partition, f.offset) for f in result.findings.kept if f.level == "required"]
    assert found == [coordinates(bad, rule)]
    assert "undecodable record" in result.findings.kept[0].message


_ODD_VALUES = (None, [], {}, [1], {"a": 1}, 2**70, -1, 1.5, "", "x", True, 3, 15, 246)


def _mutate(obj: Any, rng) -> None:
    """Replaces one value somewhere inside `obj` with a value of another shape."""
    while isinstance(obj, (dict, list)) and obj:
        slot = rng.choice(list(obj)) if isinstance(obj, dict) else rng.randrange(len(obj))
        if rng.random() < 0.4 or not isinstance(obj[slot], (dict, list)) or not obj[slot]:
            obj[slot] = rng.choice(_ODD_VALUES)
            return
        obj = obj[slot]


@pytest.mark.parametrize("encoding", ["canal-json", "debezium", "simple-json"])
def test_messages_with_fields_of_the_wrong_shape_never_crash_the_lint(encoding):
    import random
    rng = random.Random(f"lint/{encoding}")
    base, settings = simulate("smoke", encoding)
    for _ in range(15):
        records = list(base)
        for index in rng.sample(range(len(records)), 6):
            doc = orjson.loads(records[index].value)
            _mutate(doc, rng)
            records[index] = replace(records[index], value=json.dumps(doc).encode())
        result = lint(records, settings)
        for f in result.findings.kept:
            assert f.offset >= 0 and f.partition in (0, 1, 2) and "\n" not in f.message


# --- building blocks ------------------------------------------------------------------------------------
def test_the_seen_window_forgets_below_the_horizon_and_past_its_capacity():
    w = SeenWindow(horizon=2, capacity=3)
    for identity, ts in ((1, 10), (2, 20), (3, 30)):
        w.add(identity, ts)
    assert w.floor == 0 and 1 in w
    w.advance(15)
    assert w.floor == 0  # one watermark is not yet two
    w.advance(25)
    assert w.floor == 15 and 1 not in w and 2 in w
    w.add(4, 40)
    w.add(5, 50)  # over capacity: the oldest goes and the floor rises past it
    assert len(w) == 3 and 2 not in w and w.floor == 21


def test_events_below_the_window_are_counted_not_judged():
    records, settings = simulate("smoke", "simple-json")
    small = replace(settings, horizon=1)
    pairs = decoded(records, settings)
    w = next(i for i, (r, ev) in enumerate(pairs) if i > len(pairs) // 2 and r.partition == 0
             and single(ev, DecodedWatermark))
    record, row = next((r, ev[0]) for r, ev in reversed(pairs[:w]) if r.partition == 0 and single(ev, DecodedRow)
                       and ev[0].op == "insert")
    old = min(e[0].ts for r, e in pairs[:w] if r.partition == 0 and single(e, DecodedWatermark))
    records.insert(w + 1, replace(record, value=_simple_json(record.value, old - 1, row.key_columns)))
    records = renumber(records, record.topic, 0)
    result = lint(records, small)
    assert not result.failed and result.summary["totals"]["unjudged"] == 1
    assert lint(records, settings).failed  # the default horizon still remembers it


def test_findings_keep_a_bounded_list_and_count_everything():
    f = Findings(limit=2)
    for offset in range(5):
        f.violation("OPEN-ORDER-1", "t", 0, offset, "line\nbreak")
    f.info("KAFKA-DELIVERY-1", "t", 0, 9, "replay")
    assert len(f.kept) == 2 and f.count() == 6 and f.count("required") == 5 and f.failed
    assert f.kept[0].message == "line break"
    assert f.by_rule() == {"KAFKA-DELIVERY-1": {"info": 1}, "OPEN-ORDER-1": {"required": 5}}
    with pytest.raises(KeyError):
        f.violation("NO-SUCH-1", "t", 0, 0, "x")


def test_records_out_of_offset_order_are_refused_with_their_coordinates():
    records, _ = simulate("smoke", "canal-json")
    swapped = [records[1], records[0]] if records[0].partition == records[1].partition else None
    assert swapped is not None
    with pytest.raises(LintInputError, match=rf"{records[0].topic}/{records[0].partition}@{records[0].offset}"):
        list(in_offset_order(swapped))


def test_record_files_are_merged_by_timestamp_each_in_offset_order(tmp_path):
    records, settings = simulate("smoke", "open-protocol")
    for p in sorted({r.partition for r in records}):
        part = [r for r in records if r.partition == p]
        pq.write_table(records_to_table(part), tmp_path / f"{records[0].topic}-{p}.parquet")
    files = RecordFiles(tmp_path)
    merged = list(files)
    assert sorted(merged, key=lambda r: (r.partition, r.offset)) == sorted(records, key=lambda r: (r.partition, r.offset))
    assert [r.timestamp_ms for r in merged] == sorted(r.timestamp_ms for r in merged)
    assert files.partitions == {records[0].topic: {0, 1, 2}}
    assert not lint(merged, settings).failed
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(LintInputError, match="junk.parquet"):
        list(RecordFiles(tmp_path))


def test_settings_come_from_a_manifest_and_the_command_line(tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"protocol": "simple", "encoding": "simple-avro", "topics": {"t": 2},
                                    "sink": {"encoding-format": "avro", "send-bootstrap-to-all-partition": False}}))
    s = load_settings(None, manifest=manifest)
    assert (s.protocol, s.encoding, dict(s.topics)) == ("simple", "simple-avro", {"t": 2})
    assert s.option_bool("send-bootstrap-to-all-partition", True) is False
    assert load_settings("canal-json", sink_options=parse_sink_options(["enable-tidb-extension=true"])) \
        .option_bool("enable-tidb-extension", False)
    with pytest.raises(SettingsError, match="not canal-json"):
        load_settings("canal-json", manifest=manifest)
    with pytest.raises(SettingsError, match="encoding-format is avro"):
        load_settings("simple-json", manifest=manifest)
    with pytest.raises(SettingsError, match="NAME=VALUE"):
        parse_sink_options(["enable-tidb-extension"])
    with pytest.raises(SettingsError, match="unknown protocol"):
        load_settings("avro")


def test_a_ts_dispatcher_exempts_its_tables_from_the_same_row_check():
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    sink = dict(settings.options, dispatchers=[{"matcher": ["*.*"], "partition": "ts"}])
    moved = make_settings(settings.protocol, sink, settings.topics)
    assert not moved.keeps_rows_in_place("shop", "orders") and settings.keeps_rows_in_place("shop", "orders")


@pytest.mark.rules("OPEN-BROADCAST-1")
def test_partitions_read_one_after_another_are_judged_when_known_up_front():
    """Kafka's transport may hand over partition after partition; with the partitions known (a manifest,
    the topic's metadata) a missing DDL is still caught, and without them nothing clean is flagged."""
    records, settings = simulate("smoke", "open-protocol", **ONE_EVENT)
    pairs = decoded(records, settings)
    index = next(i for i, (r, ev) in enumerate(pairs) if r.partition == 1 and single(ev, DecodedDDL))
    sequential = sorted(records[:index] + records[index + 1:], key=lambda r: (r.partition, r.offset))
    found = required(sequential, settings)
    assert [f[:3] for f in found] == [("OPEN-BROADCAST-1", records[index].topic, 1)]
    clean = sorted(records, key=lambda r: (r.partition, r.offset))
    assert not lint(clean, replace(settings, topics={})).failed
