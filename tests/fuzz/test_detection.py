"""`fuzz` finds each broken streaming consumer within a CI-sized budget (at most 600 examples, a
minute or two) and shrinks its failure to a small case; the reference streaming consumer passes the same
budget on every encoding. The budget is a count of examples, drawn and shrinking, and the seeds are
fixed, so what is drawn and what it shrinks to are the same on a loaded machine as on an idle one. Figures: docs/fuzz.md, "Detection"
(tests/fuzz/measure_detection.py)."""
from __future__ import annotations

import io
from dataclasses import replace

import pytest

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.fuzz import PROFILES, Budget, Progress, encodings, fuzz_encoding, replay_case

from .broken import BROKEN, EXAMPLES, REFERENCE

# Shrinking is bounded by a count too, so the shrunk case is the same on a loaded machine: 500
# shrinking examples take newest_schema to 5 history events and drops_resends to 6 (unbounded, 1,466
# and 1,705 examples reach the same sizes); the time limit is only a safety net here.
BUDGET = Budget(examples=EXAMPLES, max_steps=PROFILES["ci"].max_steps, shrink_seconds=900, shrink_examples=500)
SEED = 1

pytestmark = pytest.mark.slow


def _quiet() -> Progress:
    return Progress(io.StringIO(), terminal=False)


@pytest.mark.parametrize("broken", BROKEN, ids=lambda b: b.name)
def test_fuzz_finds_and_shrinks(broken, tmp_path):
    budget = replace(BUDGET, examples=broken.examples)
    report = fuzz_encoding(adapter_for(broken.spec), broken.encoding, budget, tmp_path / "work", seed=broken.seed,
                           regressions=tmp_path / "regressions", progress=_quiet())
    assert report.failure is not None, f"{broken.name} ({broken.bug}) not found in {report.summary()}"
    size = report.failure.size
    assert size["events"] <= broken.max_events, f"shrunk to {size}, more than {broken.max_events} history events"
    # The saved case replays: the broken consumer fails it, the reference passes it.
    saved = report.failure.regression
    assert replay_case(saved, adapter_for(broken.spec), tmp_path / "again").failed
    assert not replay_case(saved, adapter_for(REFERENCE), tmp_path / "reference").failed


@pytest.mark.parametrize("encoding", encodings())
def test_the_reference_passes_the_same_budget(encoding, tmp_path):
    report = fuzz_encoding(adapter_for(REFERENCE), encoding, BUDGET, tmp_path / "work", seed=SEED,
                           progress=_quiet())
    assert report.failure is None, report.summary() + "\n" + report.failure.verdict.result.render()
    assert report.examples > 0
