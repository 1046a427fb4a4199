"""The checkpoint check's shortcuts leave its verdict as it was.

A state line whose image upstream holds is not normalised again (value_forms.py
`StateForms.as_it_is`), and an applied row's key is made from its key columns alone
(`StateForms.key_values`). Over the reference consumer's output, right and then with values
respelt and changed, the verdict with the shortcuts is the verdict without them.
"""
from __future__ import annotations

import re
import shutil

import orjson
import pytest

from ticdc_conformance.checks import value_forms
from ticdc_conformance.checks.checkpoints import check_checkpoints
from ticdc_conformance.consumers.sequential.consumer import consume_local
from ticdc_conformance.fidelity.matrix import column
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
    return path, manifest


def _verdict(path, manifest, out: str) -> bytes:
    verdict = check_checkpoints(path / "truth", path / out, manifest)
    return orjson.dumps(verdict.to_json(manifest["encoding"]), option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("out", ["out", "altered"])
def test_shortcuts_leave_the_verdict(case, out, monkeypatch) -> None:
    path, manifest = case
    fast = _verdict(path, manifest, out)
    monkeypatch.setattr(value_forms.StateForms, "as_it_is", lambda self, name, image: False)
    monkeypatch.setattr(value_forms.StateForms, "key_values", lambda self, name, row: None)
    assert fast == _verdict(path, manifest, out)
    if out == "altered":
        assert b"CONSUMER-CHECKPOINT-1" in fast  # the changed values are still found
