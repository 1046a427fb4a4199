"""Values compared as values (checks/value_forms.py): every faithful representation a consumer may
write is accepted by the final-state and the checkpoint check, every near miss is still a finding.

The end-to-end cases take the reference sequential consumer's output for the `types` scenario
(every type of the catalogue) in a zone behind UTC, rewrite the values of the relevant columns the
way a consumer writing the alternative would (its final tables, its state lines and its applied
log), and judge the result."""
from __future__ import annotations

import base64
import json
import shutil
import struct
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Context, Decimal
from pathlib import Path
from typing import Any, Callable, Optional
from zoneinfo import ZoneInfo

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import checked_both_ways
from ticdc_conformance.checks.differential import check_final_state, load_truth_tables
from ticdc_conformance.checks.value_forms import UNKNOWN, column_forms
from ticdc_conformance.consumers.output import final_file_name
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.fidelity.matrix import COLUMNS, column, edge_values
from ticdc_conformance.fidelity.roundtrip import canonical
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common import exact_json
from ticdc_conformance.protocols.debezium import temporal
from ticdc_contract.canonical import row_to_json
from ticdc_contract.model import Column, TableSchema
from ticdc_contract.state import replay
from ticdc_contract.tidb_types import TiDBType, decimal
from ticdc_contract.tidb_types import datetime as datetime_type
from ticdc_contract.type_catalogue import all_types_matrix
from ticdc_generators.pipeline import generate
from ticdc_generators.protocols.golang.json_text import ENCODING_JSON
from ticdc_generators.protocols.golang.json_text import dumps as go_dumps
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.values import domain_for

ZONE = "America/New_York"  # behind UTC: a TIMESTAMP's wall clock differs from UTC's
NO_UPSTREAM = object()

# --- the properties ----------------------------------------------------------------------------


def _cases():
    for col in COLUMNS:
        for t in all_types_matrix():
            yield col, t


@pytest.mark.parametrize("col", COLUMNS, ids=lambda c: c.name)
def test_a_projected_value_is_its_own_compared_form(col):
    """projection then normalisation = projection, with and without upstream's value known, for
    every edge value of every type: the reference consumer's output is never changed."""
    options = col.options(ZONE)
    pkg = protocol_spec(col.protocol)
    for t in all_types_matrix():
        forms = column_forms(Column("c", t), col.protocol, options)
        for v in edge_values(t, ZONE):
            value = canonical(t, v)
            projected = pkg.project_value(t, value, options)
            for known in (UNKNOWN, value):
                got = forms.normalise(projected, known)
                assert orjson.dumps(got) == orjson.dumps(projected), (col.name, t.sql(), value, projected, got)


_SAMPLED = [(c, t) for c, t in _cases() if t.base in (
    "int", "bigint", "double", "float", "decimal", "datetime", "time", "timestamp", "date", "enum", "set", "bit",
    "json", "binary", "varbinary", "blob")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_normalising_is_idempotent_and_accepts_upstream_spelled_any_faithful_way(data):
    col, t = data.draw(st.sampled_from(_SAMPLED), label="column, type")
    options = col.options(ZONE)
    value = canonical(t, data.draw(domain_for(t, nullable=True, time_zone=ZONE).strategy(), label="upstream"))
    pkg = protocol_spec(col.protocol)
    forms = column_forms(Column("c", t), col.protocol, options)
    projected = pkg.project_value(t, value, options)
    for spelled in _spellings(t, value) + [projected]:
        once = forms.normalise(spelled, value)
        assert orjson.dumps(forms.normalise(once, value)) == orjson.dumps(once)
        assert orjson.dumps(forms.normalise(once)) == orjson.dumps(once)
    for spelled in _spellings(t, value):
        assert orjson.dumps(forms.normalise(spelled, value)) == orjson.dumps(projected), (col.name, t.sql(), spelled)


def _without_trailing_zeros(text: str) -> str:
    d = Decimal(text)
    return format(d.normalize(Context(prec=100)), "f") if d else "0"


def _spellings(t: TiDBType, value: Any) -> list:
    """Other faithful spellings of upstream's `value` a consumer may write."""
    if value is None:
        return []
    if t.base in ("datetime", "time", "timestamp"):
        whole, _, fraction = value.partition(".")
        out = [whole + "." + fraction.ljust(6, "0")]
        if not fraction.strip("0"):
            out.append(whole)
        if t.base != "time":  # ISO 8601's T (Java's LocalDateTime, Jackson's JavaTimeModule)
            out.append(value.replace(" ", "T", 1))
        if t.base == "datetime":  # the wall clock marked UTC, as Go's time.Time prints one it read in UTC
            out.append(value.replace(" ", "T", 1) + "Z")
        if t.base == "timestamp" and not value.startswith("0000"):
            # The instant with its offset (Go's time.Time, Java's Instant): in UTC, and at the zone's own offset.
            at = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(ZONE))
            tail = "." + fraction if fraction else ""
            out.append(at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + tail + "Z")
            out.append(at.strftime("%Y-%m-%dT%H:%M:%S") + tail + at.strftime("%z")[:3] + ":" + at.strftime("%z")[3:])
            # Its epoch seconds with nine fraction digits (Jackson's Instant), and in ms (java.sql.Timestamp) or µs.
            seconds = int(at.timestamp())
            nanos = int(fraction.ljust(9, "0")) if fraction else 0
            out.append(exact_json.loads(f"{seconds}.{nanos:09d}".encode()))
            if nanos % 1_000_000 == 0:
                out.append(seconds * 1000 + nanos // 1_000_000)
            out.append(seconds * 1_000_000 + nanos // 1000)
        fields = _java_time_fields(t, value)
        return out + ([fields] if fields is not None else [])
    if t.base == "decimal":
        # The digits as a string, and as a JSON number read as a consumer's output is (Jackson
        # prints a BigDecimal so): beyond 15 digits a float64 no longer holds them.
        digits = _without_trailing_zeros(value)
        # And as Java's BigDecimal.toString() prints it, with an exponent (1E-7, 1.5E+3).
        return [digits, exact_json.loads(digits.encode()), str(Decimal(value).normalize(Context(prec=100)))]
    if t.base == "set":  # the members in another order, and as a JSON array of names
        names = value.split(",") if value else []
        return [",".join(reversed(names)), names[::-1]]
    if t.base == "bit" and t.effective_flen == 1:  # JDBC's Boolean
        return [str(value), bool(value)]
    if t.is_binary:
        # Base64 without padding and in the URL alphabet, PostgreSQL's bytea hex, serde's Vec<u8>.
        raw = base64.b64decode(value)
        return [value.rstrip("="), base64.urlsafe_b64encode(raw).decode(), "\\x" + raw.hex(), list(raw)]
    if t.base == "json":
        # Written again by a JSON library: compact, keys in another order, non-ASCII escaped, a
        # whole double without its fraction (Go's float64); or held in the row as a JSON value.
        document = exact_json.loads(value.encode())
        return [_rewritten_document(document)] + ([document] if document is not None else [])  # null: SQL NULL
    if t.is_integer:
        # An integral double up to 2^53; beyond it, an integer printed with a fraction keeps its digits.
        # Its digits in a string: protobuf's JSON mapping of int64/uint64.
        return [float(value) if abs(value) <= 2**53 else exact_json.loads(f"{value}.0".encode()), str(value)]
    if t.base in ("year", "bit") and isinstance(value, int):
        return [str(value)]
    return []


def _java_time_fields(t: TiDBType, value: str) -> Optional[list]:
    """The array Jackson's JavaTimeModule writes for a LocalDate, LocalDateTime or LocalTime (a zero
    second and nanosecond left out); None where java.time has no such value (a zero date, a TIME
    outside a day)."""
    whole, _, fraction = value.partition(".")
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    date, _, clock = whole.partition(" ") if t.base != "time" else ("", "", whole)
    fields = [int(x) for x in date.split("-")] if date else []
    if fields and (fields[1] == 0 or fields[2] == 0):
        return None
    if clock:
        if clock.startswith("-") or int(clock.split(":")[0]) > 23:
            return None
        h, m, sec = (int(x) for x in clock.split(":"))
        fields += [h, m] + ([sec] if sec or nanos else []) + ([nanos] if nanos else [])
    return fields


def _go_numbers(document: Any) -> Any:
    """Numbers as Go's float64 prints them where that keeps their value (a whole double as an integer)."""
    if isinstance(document, float) and document.is_integer() and abs(document) <= 2**53:
        return int(document)
    if isinstance(document, list):
        return [_go_numbers(v) for v in document]
    if isinstance(document, dict):
        return {k: _go_numbers(v) for k, v in reversed(document.items())}
    return document


def _rewritten_document(document: Any) -> str:
    return json.dumps(_go_numbers(document), separators=(",", ":"))


@pytest.mark.parametrize("wrong,t,upstream,protocol,options", [
    pytest.param(0.10000000149011612, TiDBType("float"), 0.10000000149011612, "open-protocol", {}, id="float32-widened"),
    pytest.param("1.000000000000000000000000000002", decimal(65, 30), "1.000000000000000000000000000001",
                 "debezium", {}, id="decimal-last-digit"),
    pytest.param("2024-03-01 05:06:07.121", datetime_type(2), "2024-03-01 05:06:07.12", "debezium", {},
                 id="digit-beyond-fsp"),
    pytest.param(5.5, TiDBType("int"), 5, "canal-json", {}, id="fractional-integer"),
    # A DECIMAL read into a float64 and printed so: 3046274941999.9964 is not the double's value.
    pytest.param(exact_json.loads(b"3046274941999.9966"), decimal(18, 4), "3046274941999.9964", "canal-json", {},
                 id="decimal-as-float64"),
    pytest.param(exact_json.loads(b"9007199254740992.0"), TiDBType("bigint"), 9007199254740993, "canal-json", {},
                 id="bigint-as-float64"),
    pytest.param(123, TiDBType("varchar", flen=10), "0123", "simple", {}, id="number-for-text"),
    pytest.param("b", TiDBType("enum", elements=("a", "b", "c")), "c", "canal-json", {}, id="other-member"),
    # A TIMESTAMP's wall clock in New York with UTC's offset: another instant.
    pytest.param("2024-03-01T05:06:07Z", TiDBType("timestamp"), "2024-03-01 05:06:07", "canal-json",
                 {"time-zone": ZONE}, id="timestamp-wall-clock-as-utc"),
    # A DATETIME is a wall clock of no zone: an offset other than Z's is not its value.
    pytest.param("2024-03-01T05:06:07+08:00", TiDBType("datetime"), "2024-03-01 05:06:07", "canal-json", {},
                 id="datetime-with-offset"),
    # JSON documents: an integer beyond 2^53 read into a float64 (Go's interface{}, JavaScript), a
    # member dropped (Jackson's NON_NULL), a boolean for a number, an array reordered, a double
    # widened from float32, the text of an object for a string document that holds it, and a
    # document quoted twice.
    pytest.param('{"n":9007199254740992}', TiDBType("json"), '{"n": 9007199254740993}', "simple", {},
                 id="json-integer-as-float64"),
    pytest.param({"n": 9007199254740992.0}, TiDBType("json"), '{"n": 9007199254740993}', "canal-json", {},
                 id="json-embedded-integer-as-float64"),
    pytest.param('{"a":1}', TiDBType("json"), '{"a": 1, "b": null}', "canal-json", {}, id="json-null-member-dropped"),
    pytest.param("[true]", TiDBType("json"), "[1]", "debezium", {}, id="json-boolean-for-number"),
    pytest.param("[2,1]", TiDBType("json"), "[1, 2]", "open-protocol", {}, id="json-array-reordered"),
    pytest.param("[0.10000000149011612]", TiDBType("json"), "[0.1]", "simple", {}, id="json-float32-widened"),
    pytest.param({"a": 1}, TiDBType("json"), '"{\\"a\\": 1}"', "simple", {}, id="json-object-for-string-document"),
    pytest.param('"{\\"a\\": 1}"', TiDBType("json"), '{"a": 1}', "canal-json", {}, id="json-quoted-twice"),
    # An integer's digits in a string: beyond the column's range, with a fraction, or with a sign a
    # BIGINT UNSIGNED cannot hold.
    pytest.param("9223372036854775808", TiDBType("bigint"), 2**63 - 1, "simple", {}, id="integer-text-beyond-range"),
    pytest.param("5.5", TiDBType("int"), 5, "canal-json", {}, id="integer-text-with-fraction"),
    pytest.param("-1", TiDBType("bigint", unsigned=True), 2**64 - 1, "open-protocol", {}, id="integer-text-signed"),
    # Bytes: BINARY(n)'s trailing zero bytes stripped (a C string's end), another byte, the
    # characters of the bytes' hex digits read as base64.
    pytest.param("YWI=", TiDBType("binary", flen=4), "YWIAAA==", "canal-json", {}, id="binary-padding-stripped"),
    pytest.param([97, 99], TiDBType("varbinary", flen=8), "YWI=", "simple", {}, id="binary-other-byte"),
    pytest.param("\\x6162", TiDBType("varbinary", flen=8), "YWJj", "debezium", {}, id="binary-hex-byte-dropped"),
    # Another decimal with an exponent; a SET's array with a member missing, or one the column
    # does not have; a boolean for a BIT wider than one bit.
    pytest.param("2E-7", decimal(10, 7), "0.0000001", "canal-json", {}, id="decimal-exponent-other-value"),
    pytest.param(["a"], TiDBType("set", elements=("a", "b", "c")), "a,c", "simple", {}, id="set-array-member-missing"),
    pytest.param(["a", "d"], TiDBType("set", elements=("a", "b", "c")), "a", "canal-json", {},
                 id="set-array-unknown-member"),
    pytest.param(True, TiDBType("bit", flen=8), 1, "open-protocol", {}, id="boolean-for-bit8"),
    # Java's time types: a TIMESTAMP(6) through java.sql.Timestamp's milliseconds (its microseconds
    # lost), a LocalDateTime of the UTC wall clock, a month counted from 0 (JavaScript's Date).
    pytest.param(1477226844911, TiDBType("timestamp", decimal=6), "2016-10-23 08:47:24.911123", "canal-json",
                 {"time-zone": ZONE}, id="timestamp-millis-drop-micros"),
    pytest.param([2016, 10, 23, 12, 47, 24], TiDBType("datetime"), "2016-10-23 08:47:24", "simple", {},
                 id="datetime-fields-of-another-clock"),
    pytest.param([2016, 9, 23], TiDBType("date"), "2016-10-23", "open-protocol", {}, id="date-fields-month-from-zero"),
    # The document null embedded is null: SQL NULL, another value of the column.
    pytest.param(None, TiDBType("json"), "null", "canal-json", {}, id="json-null-document-as-sql-null"),
])
def test_a_near_miss_keeps_its_form(wrong, t, upstream, protocol, options):
    forms = column_forms(Column("c", t), protocol, options)
    projected = protocol_spec(protocol).project_value(t, upstream, options)
    # Without upstream's row a DECIMAL is read through the projection, where a 30th digit is lost.
    for known in (upstream, UNKNOWN) if t.base != "decimal" else (upstream,):
        got = forms.normalise(wrong, known)
        assert exact_json.dumps(got) != orjson.dumps(projected), (wrong, got)


# --- end to end --------------------------------------------------------------------------------


@dataclass
class Case:
    path: Path
    manifest: dict
    tables: dict[str, TableSchema]

    @property
    def options(self) -> dict:
        return self.manifest["sink"]


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    made: dict[str, Case] = {}

    def make(name: str) -> Case:
        if name not in made:
            path = tmp_path_factory.mktemp(name.replace(" ", "-"))
            manifest = generate("types", 1, column(name).config(ZONE), path)
            consume_local(path / "records", manifest, path / "out")
            made[name] = Case(path, manifest, load_truth_tables(path / "truth"))
        return made[name]
    return make


# A consumer's way of writing one value: (column, the reference consumer's value, upstream's
# value or NO_UPSTREAM) -> what it writes.
Writer = Callable[[Column, Any, Any], Any]


class Rewrite:
    """The reference consumer's output with the values of some columns written another way."""

    def __init__(self, case: Case, dst: Path, writer: Writer, needs_upstream: bool = False,
                 dump: Callable[[Any], bytes] = orjson.dumps) -> None:
        self.case, self.writer, self.dump = case, writer, dump
        self.changed = {"final": 0, "states": 0}
        self.out = dst / "out"
        shutil.copytree(case.path / "out", self.out)
        history = None
        if needs_upstream:
            m = case.manifest
            history = replay(get_scenario(m["scenario"]).history(m["seed"], m.get("events"), ZONE))
        for table in case.tables.values():
            name = final_file_name(table.schema, table.table)
            truth = {r["id"]: r for r in _lines(case.path / "truth" / "final" / name)}
            self._file(self.out / "final" / name, "final", table, lambda line: line,
                       lambda line, row: truth.get(row.get("id"), NO_UPSTREAM))
            self._file(self.out / "states" / name, "states", table, lambda line: line["row"],
                       lambda line, row, t=table: _upstream_at(history, t, line["from"], row))
        self._applied()

    def _value_row(self, table: TableSchema, row: dict, upstream: Any, count: Optional[str]) -> dict:
        out = dict(row)
        for c in table.columns:
            if c.name in out:
                known = NO_UPSTREAM if upstream is NO_UPSTREAM else upstream.get(c.name, NO_UPSTREAM)
                out[c.name] = self.writer(c, out[c.name], known)
                if count and orjson.dumps(out[c.name]) != orjson.dumps(row[c.name]):
                    self.changed[count] += 1
        return out

    def _file(self, path: Path, kind: str, table: TableSchema, row_of, upstream_of) -> None:
        lines = []
        for line in _lines(path):
            row = row_of(line)
            new = self._value_row(table, row, upstream_of(line, row), kind)
            lines.append(new if kind == "final" else {**line, "row": new})
        path.write_bytes(b"".join(self.dump(x) + b"\n" for x in lines))

    def _applied(self) -> None:
        path = self.out / "applied.ndjson"
        entries = []
        for entry in _lines(path):
            if entry.get("kind") == "txn":
                for r in entry["rows"]:
                    table = self.case.tables[f"{r['schema']}.{r['table']}"]
                    for side in ("before", "after"):
                        if r[side] is not None:
                            r[side] = self._value_row(table, r[side], NO_UPSTREAM, None)
            entries.append(entry)
        path.write_bytes(b"".join(self.dump(x) + b"\n" for x in entries))


def _upstream_at(history, table: TableSchema, ts: int, row: dict) -> Any:
    """Upstream's row under the state line's key at the checkpoint the line starts at."""
    if history is None:
        return NO_UPSTREAM
    raw = (history.rows_at(table.schema, table.table, ts) or {}).get((row["id"],))
    return NO_UPSTREAM if raw is None else row_to_json(history.schema_at(table.schema, table.table, ts), raw)


def _lines(path: Path) -> list:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()] if path.exists() else []


def judge(case: Case, out: Path):
    m = case.manifest
    final = [f for v in check_final_state(case.path / "truth", out, m["protocol"], m["sink"]) for f in v.findings]
    return final, checked_both_ways(case.path / "truth", out, m)


def _only(pred: Callable[[TiDBType], bool], f: Callable[[Column, Any, Any], Any]) -> Writer:
    return lambda c, v, up: f(c, v, up) if v is not None and pred(c.type) else v


def _integral_double(c: Column, v: Any, up: Any) -> Any:
    return float(v) if isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 2**53 else v


def _enum_names(c: Column, v: Any, up: Any) -> Any:
    t = c.type
    if t.base == "enum":
        return t.elements[v - 1] if v else ""
    return ",".join(m for i, m in enumerate(t.elements) if v >> i & 1)


def _zero_digits(c: Column, v: Any, up: Any) -> Any:
    """Six fraction digits, or none where the fraction is zero."""
    whole, _, fraction = v.partition(".")
    return whole if not fraction.strip("0") else whole + "." + fraction.ljust(6, "0")


def _declared_fsp(c: Column, v: Any, up: Any) -> Any:
    whole, _, fraction = v.partition(".")
    return whole + ("." + fraction[:c.type.fsp] if c.type.fsp else "")


def _debezium_raw_converted(c: Column, v: Any, up: Any) -> Any:
    """What a consumer of Debezium without the schema makes of the raw value with the column's type."""
    t = c.type
    if t.base == "date":
        return temporal.days_to_text(v)
    if t.base == "datetime":
        return _declared_fsp(c, temporal.epoch_to_text(v, 1000, 3) if t.fsp <= 3 else temporal.epoch_to_text(v, 1, 6),
                             up)
    if t.base == "time":
        return _declared_fsp(c, temporal.micros_to_time_text(v), up)
    if t.base == "timestamp":
        return temporal.zoned_to_text(v, ZoneInfo(ZONE))
    if t.base == "bit" and isinstance(v, str):
        return int.from_bytes(base64.b64decode(v), "little")
    return v


def _exact_decimal(c: Column, v: Any, up: Any) -> Any:
    if up is NO_UPSTREAM or up is None:
        return v
    return _without_trailing_zeros(up)


def _document_rewritten(c: Column, v: Any, up: Any) -> Any:
    return _rewritten_document(exact_json.loads(v.encode()))


def _document_embedded(c: Column, v: Any, up: Any) -> Any:
    # The document null stays text: embedded it would be null, the column's SQL NULL.
    return v if v == "null" else exact_json.loads(v.encode())


def _jackson_time(c: Column, v: Any, up: Any) -> Any:
    """A TIMESTAMP as an Instant (epoch seconds, nine fraction digits), the others as their fields;
    as text where java.time has no such value."""
    if c.type.base == "timestamp":
        if v.startswith("0000"):
            return v
        whole, _, fraction = v.partition(".")
        at = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(ZONE))
        return exact_json.loads(f"{int(at.timestamp())}.{fraction.ljust(9, '0')}".encode())
    fields = _java_time_fields(c.type, v)
    return v if fields is None else fields


def _unsigned(c: Column, v: Any, up: Any) -> Any:
    return v + 2**64 if v < 0 else v


def _is_temporal(t: TiDBType) -> bool:
    return t.base in ("datetime", "time", "timestamp")


ACCEPTED = {
    "integral doubles for integers": ("open-protocol", _only(lambda t: t.is_integer, _integral_double), False),
    "Canal-JSON ENUM/SET names": ("canal-json", _only(lambda t: t.base in ("enum", "set"), _enum_names), False),
    "Open Protocol ENUM/SET names": ("open-protocol", _only(lambda t: t.base in ("enum", "set"), _enum_names), False),
    "zero digits beyond fsp or none": ("simple-json", _only(_is_temporal, _zero_digits), False),
    "Debezium DATETIME/TIME in the declared fsp": ("debezium", _only(lambda t: t.base in ("datetime", "time"),
                                                                       _declared_fsp), False),
    "Debezium without schema converted with the column's type": (
        "debezium no-schema", _only(lambda t: t.base in ("date", "datetime", "time", "timestamp", "bit"),
                                    _debezium_raw_converted), False),
    "exact DECIMAL for Debezium's float": ("debezium", _only(lambda t: t.base == "decimal", _exact_decimal), True),
    "exact DECIMAL without schema": ("debezium no-schema", _only(lambda t: t.base == "decimal", _exact_decimal), True),
    "JSON documents written again (compact, keys reordered, 1.0 as 1)": (
        "simple-json", _only(lambda t: t.base == "json", _document_rewritten), False),
    "JSON documents embedded as JSON values": ("canal-json", _only(lambda t: t.base == "json", _document_embedded),
                                               False),
    "64-bit integers as decimal strings (protobuf's JSON)": (
        "simple-json", _only(lambda t: t.base == "bigint", lambda c, v, up: str(v)), False),
    "bytes in the URL alphabet without padding": (
        "open-protocol", _only(lambda t: t.is_binary, lambda c, v, up: base64.urlsafe_b64encode(
            base64.b64decode(v)).decode().rstrip("=")), False),
    "bytes as arrays of numbers (serde's Vec<u8>)": (
        "debezium", _only(lambda t: t.is_binary, lambda c, v, up: list(base64.b64decode(v))), False),
    "Java time types as Jackson's JavaTimeModule writes them": (
        "canal-json", _only(lambda t: t.base in ("date", "datetime", "time", "timestamp"), _jackson_time), False),
    "BIGINT UNSIGNED unwrapped": ("debezium no-schema", _only(lambda t: t.base == "bigint" and t.unsigned, _unsigned),
                                  False),
}


@pytest.mark.parametrize("form", sorted(ACCEPTED))
@pytest.mark.rules("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")
def test_a_consumer_writing_an_accepted_form_is_conformant(case, tmp_path, form):
    encoding, writer, needs_upstream = ACCEPTED[form]
    c = case(encoding)
    rewrite = Rewrite(c, tmp_path, writer, needs_upstream)
    assert rewrite.changed["final"] > 0 and rewrite.changed["states"] > 0, rewrite.changed  # the form is written
    final, checkpoints = judge(c, rewrite.out)
    assert not final, [f.to_json() for f in final[:3]]
    assert checkpoints.checked and checkpoints.checkpoints > 0
    assert not checkpoints.findings, [f.to_json() for f in checkpoints.findings[:3]]


@pytest.mark.parametrize("encoding", ["open-protocol", "debezium", "debezium no-schema", "canal-json"])
@pytest.mark.rules("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")
def test_numbers_written_by_go_encoding_json_are_read_by_value(case, tmp_path, encoding):
    """Go writes an integral float64 without a fraction (2^63 as 9223372036854776000) and from 1e21
    on with an exponent (1e+21)."""
    c = case(encoding)
    rewrite = Rewrite(c, tmp_path, lambda col, v, up: v, dump=lambda x: go_dumps(x, ENCODING_JSON))
    text = b"".join(p.read_bytes() for p in (rewrite.out / "states").glob("*.ndjson"))
    assert b"e+" in text or b"9223372036854776000" in text
    final, checkpoints = judge(c, rewrite.out)
    assert not final, [f.to_json() for f in final[:3]]
    assert checkpoints.checked and not checkpoints.findings, [f.to_json() for f in checkpoints.findings[:3]]


def _widened(c: Column, v: Any, up: Any) -> Any:
    return struct.unpack("<f", struct.pack("<f", v))[0] if isinstance(v, float) else v


def _utc_wall_clock(c: Column, v: Any, up: Any) -> Any:
    return v.replace("T", " ").rstrip("Z")  # the UTC ISO string's wall clock, as if it were upstream's


def _last_digit_off(c: Column, v: Any, up: Any) -> Any:
    if up is NO_UPSTREAM or up is None:
        return v
    return up[:-1] + str((int(up[-1]) + 1) % 10)


def _other_member(c: Column, v: Any, up: Any) -> Any:
    """The name of the member after the one at the index upstream's message carries."""
    n = len(c.type.elements)
    return c.type.elements[v % n] if v and n > 1 else v


def _digit_beyond(c: Column, v: Any, up: Any) -> Any:
    return v + "1" if "." in v else v + ".0001"


def _fractional(c: Column, v: Any, up: Any) -> Any:
    return v + 0.5 if isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**52 and c.name != "id" else v


def _null_members_dropped(c: Column, v: Any, up: Any) -> Any:
    """Jackson with NON_NULL inclusion: an object's members whose value is null are left out."""
    def drop(d: Any) -> Any:
        if isinstance(d, dict):
            return {k: drop(x) for k, x in d.items() if x is not None}
        return [drop(x) for x in d] if isinstance(d, list) else d
    return json.dumps(drop(exact_json.loads(v.encode())))


def _quoted_twice(c: Column, v: Any, up: Any) -> Any:
    return json.dumps(v)


def _number_for_text(c: Column, v: Any, up: Any) -> Any:
    return int(v) if isinstance(v, str) and v.isascii() and v.isdigit() else v


REJECTED = {
    "FLOAT widened float32 to float64": ("open-protocol", _only(lambda t: t.base == "float", _widened), False),
    "TIMESTAMP as UTC wall clock": ("debezium no-schema", _only(lambda t: t.base == "timestamp", _utc_wall_clock),
                                    False),
    "DECIMAL off in the last digit": ("debezium", _only(lambda t: t.base == "decimal", _last_digit_off), True),
    "ENUM name of another member": ("canal-json", _only(lambda t: t.base == "enum", _other_member), False),
    "DATETIME digit beyond the carried precision": ("open-protocol", _only(lambda t: t.base == "datetime",
                                                                          _digit_beyond), False),
    "integer as a fractional number": ("simple-json", _only(lambda t: t.is_integer, _fractional), False),
    "number for a text column": ("canal-json", _only(lambda t: t.is_text, _number_for_text), False),
    "JSON object members with null dropped": ("simple-json", _only(lambda t: t.base == "json", _null_members_dropped),
                                              False),
    "JSON document quoted twice": ("debezium", _only(lambda t: t.base == "json", _quoted_twice), False),
}


@pytest.mark.parametrize("miss", sorted(REJECTED))
@pytest.mark.rules("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1")
def test_a_near_miss_is_still_a_finding(case, tmp_path, miss):
    encoding, writer, needs_upstream = REJECTED[miss]
    c = case(encoding)
    rewrite = Rewrite(c, tmp_path, writer, needs_upstream)
    assert rewrite.changed["final"] > 0 and rewrite.changed["states"] > 0, rewrite.changed
    changed = _changed_columns(c, rewrite)
    final, checkpoints = judge(c, rewrite.out)
    for rule, findings in (("CONSUMER-STATE-1", final), ("CONSUMER-CHECKPOINT-1", checkpoints.findings)):
        named = {p for f in findings if f.rule == rule for p in f.diff}
        assert named, (rule, [f.to_json() for f in findings[:3]])
        assert any(col in p for p in named for col in changed), (named, changed)
        assert all(any(col in p for col in changed) for p in named), (named, changed)  # nothing else differs


def _changed_columns(case: Case, rewrite: Rewrite) -> set[str]:
    out = set()
    for qname, table in case.tables.items():
        name = final_file_name(table.schema, table.table)
        for before, after in zip(_lines(case.path / "out" / "final" / name), _lines(rewrite.out / "final" / name)):
            out |= {k for k in before if orjson.dumps(before[k]) != orjson.dumps(after.get(k))}
    return out
