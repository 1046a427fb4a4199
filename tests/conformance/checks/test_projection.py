"""The checkpoint check's shortcuts give what the plain paths give.

- checks/projection.py `row_projection` (resolved once per table version) against
  `project_truth_row` (resolved per row), over every type of the catalogue and its edge values, in
  every column of the fidelity matrix;
- `row_projection` of model rows (binary values as bytes) against it of their truth-file form, and
  in a view of some of the columns against `project_truth_row` of the whole row's truth-file form;
- Debezium's `column_projector`, which gives most strings and integers back without the round
  trip, against `project_column`, over every type and all its edge values and some of other types,
  also when the values come again and its memo of round trips answers, and the round trips it
  folds into one step (DATETIME, DECIMAL and DOUBLE) against the encoding and the decoding;
- the options parsers that remember their last result (protocols/common/wire.py `remembers_last`)
  against parsing afresh, also when the mapping changes in place between two calls.
"""
from __future__ import annotations

import dataclasses
import functools
import random

import orjson
import pytest

from ticdc_conformance.checks.projection import row_projection
from ticdc_conformance.fidelity.matrix import COLUMNS, edge_values
from ticdc_conformance.protocols.canal_json.options import parse_options as canal_options
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_conformance.protocols.debezium import temporal
from ticdc_conformance.protocols.debezium.fidelity import column_projector, project_column, project_value
from ticdc_conformance.protocols.debezium.options import parse_options as debezium_options
from ticdc_contract.canonical import row_to_json, value_to_json
from ticdc_contract.model import Column, Index, TableSchema
from ticdc_contract.type_catalogue import all_types_matrix

TYPES = all_types_matrix()


@functools.cache
def _edges(table: TableSchema) -> dict[str, list]:
    """Every column's edge values as the truth files hold them (made once: they take a while)."""
    return {c.name: [value_to_json(c.type, v) for v in edge_values(c.type)] for c in table.columns[1:]}


@functools.cache
def _table() -> TableSchema:
    columns = [Column("id", next(t for t in TYPES if t.is_integer), False)]
    columns += [Column(f"c{i}", t, True) for i, t in enumerate(TYPES)]
    return TableSchema("s", "t", 1, tuple(columns), (Index("PRIMARY", ("id",), primary=True, unique=True),), 1)


@pytest.mark.parametrize("matrix_column", COLUMNS, ids=lambda c: c.name)
def test_row_projection_is_project_truth_row(matrix_column) -> None:
    table = _table()
    options = matrix_column.options()
    project = row_projection(table, matrix_column.protocol, options)
    edges = _edges(table)
    for i in range(min(24, max(len(v) for v in edges.values()))):  # the first edges of every type
        row = {"id": i, **{name: values[i % len(values)] for name, values in edges.items()}}
        want = project_truth_row(table, row, matrix_column.protocol, options)
        got = project(row)
        assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(want, option=orjson.OPT_SORT_KEYS)
        assert list(got) == list(want)  # and in the same column order


@pytest.mark.parametrize("matrix_column", COLUMNS, ids=lambda c: c.name)
def test_row_projection_of_model_rows_is_of_their_truth_form(matrix_column) -> None:
    table = _table()
    options = matrix_column.options()
    of_model = row_projection(table, matrix_column.protocol, options, model_rows=True)
    plain = row_projection(table, matrix_column.protocol, options)
    models = {c.name: edge_values(c.type) for c in table.columns[1:]}
    for i in range(min(24, max(len(v) for v in models.values()))):
        row = {"id": i, **{name: values[i % len(values)] for name, values in models.items()}}
        want = plain(row_to_json(table, row))
        got = of_model(row)
        assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(want, option=orjson.OPT_SORT_KEYS)
        assert list(got) == list(want)


@pytest.mark.parametrize("matrix_column", COLUMNS, ids=lambda c: c.name)
def test_row_projection_of_model_rows_in_a_view(matrix_column) -> None:
    """What checks/upstream_history.py projects a model row with, for a view of some of the
    table's columns (column selectors, the key columns), against project_truth_row of the whole
    row's truth-file form."""
    table = _table()
    options = matrix_column.options()
    view = dataclasses.replace(table, columns=table.columns[::3])
    of_model = row_projection(view, matrix_column.protocol, options, model_rows=True)
    models = {c.name: edge_values(c.type) for c in table.columns[1:]}
    for i in range(min(24, max(len(v) for v in models.values()))):
        row = {"id": i, **{name: values[i % len(values)] for name, values in models.items()}}
        want = project_truth_row(view, row_to_json(table, row), matrix_column.protocol, options)
        got = of_model(row)
        assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(want, option=orjson.OPT_SORT_KEYS)
        assert list(got) == list(want)


def _outcome(project, *args) -> str:
    """What a projection gives, type included (1 is not 1.0 nor True), or the error it raises."""
    try:
        return repr(project(*args))
    except Exception as e:  # noqa: BLE001 - the same error either way is the point
        return f"raises {type(e).__name__}"


@pytest.mark.parametrize("matrix_column", [c for c in COLUMNS if c.protocol.startswith("debezium")],
                         ids=lambda c: c.name)
def test_debezium_column_projector_is_project_column(matrix_column) -> None:
    options = matrix_column.options()
    # Values of other types, out of range, or temporal texts TiDB does not print.
    foreign = ["x", 1, -1, 2**63, 2**64 - 1, -(2**63) - 1, True, 1.5, "2024-01-01T00:00:00", "0000-00-00 00:00:00",
               "2024-02-30 00:00:00.000", "0069-01-01 00:00:00", "2024-01-01 00:00:00.1234567", "AAEC", "AAE"]
    for t in TYPES:
        column = Column("c", t, True)
        project = column_projector(column, options)
        for value in [value_to_json(t, v) for v in edge_values(t)] + foreign:
            assert _outcome(project, value) == _outcome(project_column, column, value, options), (t.sql(), value)


@pytest.mark.parametrize("matrix_column", [c for c in COLUMNS if c.protocol.startswith("debezium")],
                         ids=lambda c: c.name)
def test_debezium_column_projector_remembers_what_it_projected(matrix_column) -> None:
    """The memo of round-trip results gives what the round trip gives: every value projected twice
    (the second time from the memo), with a bound small enough that the memo is emptied often,
    and 1, True and 1.0 (one dict key) each their own projection."""
    options = matrix_column.options()
    mixed = [1, True, 1.0, 0, False, 0.0, -0.0, "1", "0"]
    for t in TYPES:
        column = Column("c", t, True)
        project = column_projector(column, options, remembered=3)
        values = [value_to_json(t, v) for v in edge_values(t)] + mixed
        for value in values + values[::-1] + values:
            assert _outcome(project, value) == _outcome(project_column, column, value, options), (t.sql(), value)


def _random_datetimes(rng: random.Random, n: int) -> list[str]:
    """DATETIME texts of every year width the shift treats apart, before and after the epoch,
    with 0 to 6 fraction digits, and zero or impossible dates (TiCDC sends those as null)."""
    out = []
    for _ in range(n):
        year = rng.choice([0, 1, 69, 70, 99, 100, 1969, 1970, rng.randint(0, 9999)])
        month, day = rng.choice([(0, 0), (2, 29), (2, 30), (rng.randint(1, 12), rng.randint(1, 28))])
        text = f"{year:04d}-{month:02d}-{day:02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:" \
               f"{rng.randint(0, 59):02d}"
        digits = rng.randint(0, 6)
        out.append(text + ("." + "".join(rng.choice("0123456789") for _ in range(digits)) if digits else ""))
    return out


@pytest.mark.parametrize("fsp", range(7))
def test_datetime_read_back_is_the_epoch_round_trip(fsp) -> None:
    rng = random.Random(fsp)
    unit, digits = (1000, 3) if fsp <= 3 else (1, 6)
    odd = ["2024-01-01", "2024-01-01 00:00:00.", "not a datetime", "2024-01-01T00:00:00.000",
           "2024-01-01 00:00:00,000", "2024-01-01 00:00:00.000+01:00", "2024-01-01 00:00:00.000000Z",
           "2024-01-01 24:00:00.000", "2024-01-01 23:59:60.000", "0099-12-31 23:59:59.999", "٢٠٢٤-01-01 00:00:00.000"]
    for text in _random_datetimes(rng, 3000) + odd:
        def slow(text: str = text) -> object:
            epoch = temporal.datetime_text_to_epoch(text, fsp)
            return None if epoch is None else temporal.epoch_to_text(epoch, unit, digits)
        assert _outcome(temporal.datetime_read_back, text, fsp) == _outcome(slow), text


@pytest.mark.parametrize("fsp", [0, 3, 6])
def test_datetime_epoch_reads_printed_texts_as_the_pattern_does(fsp) -> None:
    """datetime_text_to_epoch reads a text that is a datetime's own print (0, 3 or 6 digits, a year
    from 100 on) with datetime.fromisoformat; every text, printed or not, against the epoch of
    what the pattern (temporal._parse_datetime, the shifted year) reads."""
    rng = random.Random(100 + fsp)
    odd = ["2024-01-01 00:00:00", "2024-01-01T00:00:00", "2024-01-01 00:00:00.000+01:00", "2024-01-01 00:00",
           "2024-01-01 00:00:00.0000000", "20240101 000000", "2024-W01-1 00:00:00", "0099-12-31 23:59:59.999",
           "0100-01-01 00:00:00", "9999-12-31 23:59:59.999999", "2024-02-29 12:00:00.5", "٢٠٢٤-01-01 00:00:00",
           "2024-01-01 00:00:00.123456", "2023-02-29 00:00:00.000", "0000-00-00 00:00:00", 20240101,
           "2024-01-01 00:00:00,123", "2024-01-01 00:00:00+01", "2024-01-01 00:00:00Z", "2024-01-01 00:00:0Z",
           "2024-01-01 00:00:00.12a", "2024-01-01 00:00:00.1234", "2024-01-01 00:00:00.12345", "2024-01-01 0:00:00",
           "2024-1-01 00:00:00.000", "+2024-01-01 00:00:00", "2024-01-01 00:00:00.000000+00:00", "2024-01-01 00:0٠:00",
           "2024-W01-1 00:00:00.000", "2024-01-01 00:00:60", "2024-13-01 00:00:00.000000"]

    def by_pattern(text: str) -> object:
        dt = temporal._parse_datetime(text)
        if dt is None:
            return None
        micros = (dt - temporal._EPOCH) // temporal.timedelta(microseconds=1)
        return micros // 1000 if fsp <= 3 else micros
    for text in _random_datetimes(rng, 3000) + odd:
        assert _outcome(temporal.datetime_text_to_epoch, text, fsp) == _outcome(by_pattern, text), text


def test_debezium_double_round_trip_is_float_of_the_value() -> None:
    """DECIMAL and DOUBLE values, integral ones of every size, zeros of both signs, and what
    float() refuses or reads oddly, against project_value (the encoding and the decoding)."""
    rng = random.Random(7)
    texts = ["0", "-0", "0.0000", "-0.0000", "1e21", "-1e-7", "1e500", "nan", "1_0", " 2.5 ", "x", "",
             "18446744073709551615", "9223372036854775807", "-9223372036854775809", "123456789012345678901234"]
    texts += [f"{rng.randint(-10**18, 10**18)}.{rng.randint(0, 9999):04d}" for _ in range(2000)]
    texts += [str(rng.randint(-10**25, 10**25)) for _ in range(500)]
    values: list = texts + [float(t) for t in texts[-2500:]] + [0.0, -0.0, 2**64, -(2**63), True, 1.5, None]
    for t in [x for x in TYPES if x.base in ("decimal", "double")]:
        for options in ({"enable-tidb-extension": True}, {"debezium-disable-schema": True}):
            project = column_projector(Column("c", t, True), options)
            for value in values:
                want = _outcome(project_value, t, value, options)
                assert _outcome(project, value) == want, (t.sql(), value)


@pytest.mark.parametrize("parse", [canal_options, debezium_options], ids=["canal-json", "debezium"])
def test_remembered_options_follow_the_mapping(parse) -> None:
    options = {"enable-tidb-extension": True, "output-old-value": True}
    first = parse(options)
    assert parse(options) is first  # the same mapping, unchanged: the last result
    assert parse(dict(options)) == first  # an equal mapping parses to an equal result
    options["enable-tidb-extension"] = False  # changed in place: parsed again
    assert parse(options) == parse.__wrapped__(options) != first
    assert parse(None) == parse.__wrapped__(None)
    with pytest.raises(ValueError):
        parse({"enable-tidb-extension": "maybe"})
    assert parse(options) == parse.__wrapped__(options)  # a refused mapping leaves nothing behind
