"""A fuzz seed draws the same examples in the same order wherever it runs: after other local
modules were imported (pytest imports many more than the command line), under another loaded
Hypothesis profile, in another process, with an example database that holds failures, and for
any budget (a longer one draws more of the same sequence). The database is read back only when
asked (docs/fuzz.md, "Reproducing a run")."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
from hypothesis import settings

from ticdc_conformance.consumers.adapters import adapter_for
from ticdc_conformance.fuzz import Budget, Progress, fuzz_cases, fuzz_encoding
from ticdc_conformance.fuzz.search import Drawn, run_search

from .broken import REFERENCE

ENCODING = "canal-json"
SEED = 3
N = 30


class _Enough(BaseException):
    """Stops a search (a BaseException: Hypothesis neither shrinks nor reports it)."""


def _first(n: int, seed: int = SEED, *, database=None, replay_database: bool = False, fail_on: str = "") -> list[str]:
    """The digests of the first `n` cases the fuzz search draws from `seed`; the case whose
    digest is `fail_on` fails (Hypothesis saves it in `database`), and the search stops there."""
    capabilities = adapter_for(REFERENCE).capabilities
    seen: list[str] = []

    def probe(case) -> None:
        if len(seen) >= n or fail_on in seen:
            raise _Enough()
        one = Drawn()
        one.add(case)
        seen.append(one.hexdigest())
        assert seen[-1] != fail_on

    try:
        run_search(probe, fuzz_cases(ENCODING, capabilities, 10), seed, database=database, database_key=b"test",
                   replay_database=replay_database)
    except (_Enough, AssertionError):
        pass
    return seen


@pytest.fixture(scope="module")
def first() -> list[str]:
    return _first(N)


def test_other_local_modules_loaded_change_nothing(first, tmp_path, monkeypatch):
    # Hypothesis mixes constants of the process's local modules into its draws (integers from 100 up,
    # strings up to 20 characters); a module with new ones, as pytest's collection or an edit
    # anywhere in the tree brings, must not move the seed. Without search.no_local_constants, 2 of
    # these 30 cases differ.
    numbers = [*range(100, 400), *range(-199, -99), *(2 ** k + 1 for k in range(8, 63))]
    words = [chr(97 + i % 26) * (1 + i % 7) + str(i) for i in range(300)]
    (tmp_path / "fuzz_constants_elsewhere.py").write_text(f"NUMBERS = {tuple(numbers)!r}\nWORDS = {tuple(words)!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("fuzz_constants_elsewhere")
    assert _first(N) == first


def test_the_loaded_hypothesis_profile_changes_nothing(first, tmp_path):
    settings.register_profile("fuzz-test-other", max_examples=7, derandomize=True, database=None,
                              stateful_step_count=3)
    outside = settings.default
    settings.load_profile("fuzz-test-other")
    try:
        assert _first(N) == first
    finally:
        settings.register_profile("fuzz-test-outside", outside)
        settings.load_profile("fuzz-test-outside")


def test_another_process_draws_the_same(first, tmp_path):
    code = f"from tests.fuzz.test_reproducible import _first; print(' '.join(_first({N // 3})))"
    env = {**os.environ, "PYTHONHASHSEED": "77", "HYPOTHESIS_PROFILE": "ci",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == first[:N // 3]


def test_a_database_is_a_store_not_a_source(first, tmp_path):
    db = tmp_path / "db"
    failing = first[10]
    found = _first(N, database=db, fail_on=failing)
    assert failing in found and any(db.rglob("*")), "the failure was not saved in the example database"
    # Without asking, what the database holds changes nothing; asked, its failure runs first.
    assert _first(N, database=db) == first
    replayed = _first(N, database=db, replay_database=True)
    assert replayed[0] != first[0] and replayed != first


def test_a_longer_run_draws_more_of_the_same(first):
    assert _first(N // 3) == first[:N // 3]


def test_the_engine_reports_the_digest_of_the_same_draws(tmp_path):
    quiet = Progress(open(os.devnull, "w"), terminal=False)
    runs = [fuzz_encoding(adapter_for(REFERENCE), ENCODING, Budget(examples=n), tmp_path / f"w{n}", seed=SEED,
                          progress=quiet) for n in (1, 3)]
    assert all(r.failure is None for r in runs), [r.summary() for r in runs]
    capabilities = adapter_for(REFERENCE).capabilities
    for run in runs:
        expected = Drawn()
        with pytest.raises(_Enough):
            run_search(_record(expected, run.examples), fuzz_cases(ENCODING, capabilities, 10), SEED)
        assert run.drawn_digest == expected.hexdigest(), run.summary()


def _record(drawn: Drawn, n: int):
    count = [0]

    def probe(case) -> None:
        if count[0] >= n:
            raise _Enough()
        count[0] += 1
        drawn.add(case)
    return probe
