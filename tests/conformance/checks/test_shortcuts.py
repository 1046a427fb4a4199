"""The checkpoint check's shortcuts leave its verdict as it was.

A state line whose image upstream holds is not normalised again (value_forms.py
`StateForms.as_it_is`), an applied row's key is made from its key columns alone
(`StateForms.key_reader`), and a transaction applied once and whole is told by one comparison of
its counts (checkpoints.py `_same_counts`). Over the reference consumer's output, right and then
with values respelt and changed, and with an applied log whose keys are respelt and whose row
events are lost and repeated, the verdict with the shortcuts is the verdict without them.
"""
from __future__ import annotations

import re
import shutil

import orjson
import pytest

from ticdc_conformance.checks import checkpoints, value_forms
from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.fidelity.matrix import column
from ticdc_contract.model import Column, Index, TableSchema
from ticdc_contract.tidb_types import TiDBType, int_type, varchar
from ticdc_generators.pipeline import generate


def _respelt(line: bytes) -> bytes:
    """Every integer of a row image as a double (a faithful spelling), every third line's first
    digit of text changed (a wrong value)."""
    head, row, image = line.partition(b'"row":')
    return head + row + re.sub(rb'(":)(-?\d+)([,}])', rb"\1\2.0\3", image)


@pytest.fixture(scope="module", params=["canal-json", "debezium"])
def case(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(request.param)
    manifest = generate("smoke", 1, column(request.param).config(), path)
    consume_local(path / "records", manifest, path / "out")
    altered = path / "altered"
    shutil.copytree(path / "out", altered)
    for states in sorted((altered / "states").glob("*.ndjson"))[:2]:
        lines = states.read_bytes().splitlines(keepends=True)
        lines = [_respelt(line) if i % 3 else re.sub(rb'("row":\{"[^"]+":"?)(\d)', rb"\g<1>9", line, count=1)
                 for i, line in enumerate(lines)]
        states.write_bytes(b"".join(lines))
    _alter_log(path / "out", path / "altered-log")
    return path, manifest


def _alter_log(out, altered) -> None:
    """Every integer of every fourth transaction's rows as a double (a key 1.0 is the key 1), the
    first row event of every seventh transaction left out and every eleventh applied twice."""
    shutil.copytree(out, altered)
    lines = []
    for i, line in enumerate((out / "applied.ndjson").read_bytes().splitlines(keepends=True)):
        entry = orjson.loads(line)
        if entry["kind"] == "txn":
            if i % 4 == 0:
                line = re.sub(rb'(":)(-?\d+)([,}])', rb"\1\2.0\3", line.replace(b'"commit_ts":', b'"commit_ts"='))
                line = line.replace(b'"commit_ts"=', b'"commit_ts":')
            elif i % 7 == 0 and entry["rows"]:
                line = orjson.dumps({**entry, "rows": entry["rows"][1:]}) + b"\n"
            elif i % 11 == 0:
                lines.append(line)
        lines.append(line)
    (altered / "applied.ndjson").write_bytes(b"".join(lines))


def _verdict(path, manifest, out: str) -> bytes:
    verdict = check_checkpoints(path / "truth", path / out, manifest)
    return orjson.dumps(verdict.to_json(manifest["encoding"]), option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("out", ["out", "altered", "altered-log"])
def test_shortcuts_leave_the_verdict(case, out, monkeypatch) -> None:
    path, manifest = case
    fast = _verdict(path, manifest, out)
    monkeypatch.setattr(value_forms.StateForms, "as_it_is", lambda self, name, image: False)
    monkeypatch.setattr(value_forms.StateForms, "key_reader", lambda self, name: None)
    monkeypatch.setattr(checkpoints, "_same_counts", lambda got, expected: False)
    assert fast == _verdict(path, manifest, out)
    if out == "altered":
        assert b"CONSUMER-CHECKPOINT-1" in fast  # the changed values are still found
    if out == "altered-log":  # the lost and repeated row events are still found
        assert b"CONSUMER-LOSS-1" in fast and b"CONSUMER-DEDUP-1" in fast


def test_key_reader_is_key_values_in_general(case) -> None:
    """The key readers a table's key columns make (none normalised, one, an integer one, several)
    give what the general form of every key column gives, for values of any JSON type."""
    _, manifest = case
    columns = (Column("id", int_type("bigint"), nullable=False), Column("d", TiDBType("double"), nullable=False),
               Column("name", varchar(8), nullable=False))
    for key in (("id",), ("d",), ("id", "d"), ("id", "name")):
        table = TableSchema("s", "t", 1, columns, (Index("PRIMARY", key, primary=True),), 1)
        forms = value_forms.RowForms(table, manifest["protocol"], {})
        for row in ({"id": 1, "d": 2.5, "name": "a"}, {"id": 1.0, "d": 2, "name": "b"}, {"id": 3}, {},
                    {"id": True, "d": 1.0}, {"id": "7", "d": "x"}, {"id": 2**64 - 1, "d": None}, {"id": None}):
            general = [forms.columns[c].normalise(row[c]) if c in forms.columns and c in row else row.get(c)
                       for c in key]
            assert orjson.dumps(forms.key_values(row)) == orjson.dumps(general)  # 1.0 is not 1 here
