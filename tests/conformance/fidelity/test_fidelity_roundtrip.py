"""The fidelity matrix, verified: every type declaration of the catalogue x every column of the
matrix, each edge value encoded by the real encoder and read back by the reference decoder.

- exact: the decoder gives back the identical canonical value;
- lossy: it gives the projection, and at least one edge value actually changes (else the cell
  must say exact);
- absent: it never carries the value.
Variants that are no column must decode every edge exactly as their base column does."""
from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.fidelity.matrix import (
    COLUMNS,
    LEVELS,
    UNPUBLISHED,
    MatrixColumn,
    describe,
    edge_values,
    matrix,
    type_label,
    zones_for,
)
from ticdc_conformance.fidelity.roundtrip import ABSENT, canonical, round_trip, same_value
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.tidb_types import TiDBType
from ticdc_contract.type_catalogue import all_types_matrix

TYPES = all_types_matrix()


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 70 else text[:67] + "..."


def cell_problems(col: MatrixColumn, t: TiDBType) -> list[str]:
    level, _ = describe(t, col)
    package = protocol_spec(col.protocol)
    problems, changed = [], 0
    for zone in zones_for(t):
        options = col.options(zone)
        values = edge_values(t, zone)
        for v, got in zip(values, round_trip(col.config(zone), t, values)):
            value = canonical(t, v)
            where = f"{col.name} {type_label(t)[:60]} [{zone}] value {_short(value)}"
            if level == "absent":
                if v is not None and got is not ABSENT and got is not None:
                    problems.append(f"{where}: cell says absent, the decoder read {_short(got)}")
                continue
            projected = package.project_value(t, value, options)
            if not same_value(got, projected):
                problems.append(f"{where}: decoded {_short(got)}, the projection says {_short(projected)}")
            if not same_value(got, value):
                changed += 1
                if level == "exact":
                    problems.append(f"{where}: cell says exact, the decoder read {_short(got)}")
    if level == "lossy" and not changed:
        problems.append(f"{col.name} {type_label(t)}: cell says lossy, but every edge value reads back identical "
                        "(the cell should say exact)")
    return problems


@pytest.mark.parametrize("col", COLUMNS, ids=lambda c: c.name)
def test_every_cell_of_the_column_holds_for_every_edge_value(col):
    problems = [p for t in TYPES for p in cell_problems(col, t)]
    assert problems == [], "\n".join(problems[:40])


@pytest.mark.parametrize("unpublished", UNPUBLISHED, ids=lambda u: u.variant.name)
def test_unpublished_variants_read_every_edge_as_their_base_column(unpublished):
    base = next(c for c in COLUMNS if c.name == unpublished.same_as)
    problems = []
    for t in TYPES:
        for zone in zones_for(t):
            values = edge_values(t, zone)
            for v, a, b in zip(values, round_trip(unpublished.variant.config(zone), t, values),
                               round_trip(base.config(zone), t, values)):
                if not same_value(a, b):
                    problems.append(f"{type_label(t)[:60]} [{zone}] {_short(v)}: {unpublished.variant.name} reads "
                                    f"{_short(a)}, {base.name} reads {_short(b)}")
    assert problems == [], "\n".join(problems[:40])


def test_a_wrong_cell_is_caught(monkeypatch):
    """The check can fail: a description forced wrong is reported both ways."""
    debezium = next(c for c in COLUMNS if c.name == "debezium")
    package = importlib.import_module("ticdc_conformance.protocols.debezium")
    forced = dataclasses.replace(package.PROTOCOL, describe_fidelity=lambda t, o: (
        ("exact", "forced") if t.base == "decimal" else ("lossy", "forced")))
    monkeypatch.setattr(package, "PROTOCOL", forced)
    said_exact = cell_problems(debezium, TiDBType("decimal", flen=10, decimal=2))
    said_lossy = cell_problems(debezium, TiDBType("int"))
    assert any("cell says exact, the decoder read" in p for p in said_exact), said_exact
    assert said_lossy and "should say exact" in said_lossy[-1], said_lossy


def test_the_matrix_has_every_type_and_column_and_lossy_cells_show_a_changed_edge():
    m = matrix()
    assert [c["name"] for c in m["columns"]] == [c.name for c in COLUMNS]
    assert [r["type"] for r in m["rows"]] == [type_label(t) for t in TYPES]
    assert len({r["type"] for r in m["rows"]}) == len(TYPES), "row labels must tell every declaration apart"
    for r in m["rows"]:
        for name, c in r["cells"].items():
            assert c["level"] in LEVELS and c["why"]
            if c["level"] == "lossy":
                ex = c["example"]
                assert not same_value(ex["value"], ex["read"]), (r["type"], name)


def test_fidelity_json_is_published(tmp_path):
    target = tmp_path / "fidelity.json"
    proc = subprocess.run(CLI + ["fidelity", "--format", "json", "--write", str(target)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(target.read_text()) == json.loads(json.dumps(matrix()))
    printed = subprocess.run(CLI + ["fidelity", "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert json.loads(printed.stdout) == json.loads(target.read_text())

