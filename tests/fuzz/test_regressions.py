"""Every regression case under golden/regressions/ (docs/fuzz.md) replays: the reference streaming
consumer passes it, and the consumer that failed it when `fuzz` found it, when it is one of the
suite's broken consumers, fails it still."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.fuzz import iter_cases, replay_case

from .broken import REFERENCE

ROOT = Path(__file__).resolve().parents[2]
CASES = list(iter_cases(ROOT / "golden" / "regressions"))


def _id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def test_the_suite_keeps_regression_cases():
    assert CASES, "golden/regressions/ holds no case; `fuzz` saves one per shrunk failure (docs/fuzz.md)"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_reference_consumer_passes(case, tmp_path):
    verdict = replay_case(case, adapter_for(REFERENCE), tmp_path)
    assert verdict.not_applicable is None
    assert not verdict.failed, verdict.result.render()


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_consumer_that_failed_it_still_fails(case, tmp_path):
    found = json.loads((case / "case.json").read_text())["found"]
    if not found["consumer"].startswith("python:tests.consumers.streaming."):
        pytest.skip(f"found with {found['consumer']}, not one of the suite's broken consumers")
    verdict = replay_case(case, adapter_for(found["consumer"]), tmp_path)
    assert verdict.failed, f"{found['consumer']} passes the case it failed ({found['verdict']})"
    assert {f.rule for f in verdict.result.findings} >= set(found["rules"])
