"""The Hypothesis search behind `fuzz`, reproducible from its seed: the same seed and strategy draw
the same examples in the same order from the command line and inside pytest (any
HYPOTHESIS_PROFILE, any xdist worker, any set of modules imported), with or without an example
database. The budget only says where the sequence stops.

Left to its defaults Hypothesis breaks that in three ways, each turned off here:
- the constant pool: besides its own constants, Hypothesis mixes into its draws integers and
  strings it reads from the source of every local module loaded in the process (sys.modules), so
  pytest (which imports other modules than the command line) and any edit anywhere in the tree
  changed what a seed drew. A search runs with an empty local pool (`no_local_constants`);
- settings inherited from the loaded profile: they start from Hypothesis's built-in defaults;
- the planning by example count: Hypothesis sizes its first examples by `max_examples`, so it gets
  one fixed, unlimited count and the budget stops the search from outside (the probe raises).

The example database: `@seed` alone would drop it. Here it stays the store of failures (Hypothesis
saves every failing example under the key given) and is read back only when `replay_database` asks
for it, since replaying saved examples first changes what the search sees and draws next.
"""
from __future__ import annotations

import hashlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.internal.conjecture import providers
from hypothesis.strategies import SearchStrategy

UNLIMITED = 10 ** 9  # Hypothesis's max_examples: the caller's budget stops the search
DIGEST_CHARS = 12


class Drawn:
    """A digest of the examples drawn, in order (their reprs): equal digests, same examples."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, example: object) -> None:
        self._hash.update(repr(example).encode())
        self._hash.update(b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()[:DIGEST_CHARS]


@contextmanager
def no_local_constants() -> Iterator[None]:
    """Hypothesis draws with no constants taken from the process's local modules while inside.
    Its cache of permitted constants is emptied on the way in and out, so neither a pool computed
    before nor the empty one leaks across."""
    pool = getattr(providers, "_get_local_constants", None)
    if pool is None:  # a Hypothesis without a local constant pool: nothing depends on the process
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = pool
        providers.CONSTANTS_CACHE.cache.clear()


def search_settings(database: Optional[Path], replay_database: bool) -> settings:
    """Hypothesis's built-in defaults (not the loaded profile's), no deadline or health check (an
    example runs a consumer), quiet, the first failure only."""
    phases = (Phase.explicit, *((Phase.reuse,) if replay_database else ()), Phase.generate, Phase.shrink)
    return settings(
        settings.get_profile("default"), max_examples=UNLIMITED, deadline=None,
        database=DirectoryBasedExampleDatabase(str(database)) if database is not None else None,
        phases=phases, verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False, print_blob=False, derandomize=False, backend="hypothesis",
    )


def run_search(probe: Callable[[Any], None], strategy: SearchStrategy, seed: int, *,
               database: Optional[Path] = None, database_key: Optional[bytes] = None,
               replay_database: bool = False) -> None:
    """Runs `probe` on the examples `strategy` draws from `seed` until the probe raises: an
    exception shrinks and ends in Hypothesis's report of it (re-raised), a BaseException that is
    not an Exception stops at once. `database` saves failures under `database_key`;
    `replay_database` replays what it holds under that key first."""
    test = given(strategy)(probe)
    test = hypothesis_seed(seed)(test)  # the seed first: it sets database=None, which the settings below undo
    test = search_settings(database, replay_database)(test)
    if database_key is not None:
        test._hypothesis_internal_database_key = database_key  # type: ignore[attr-defined]
    with no_local_constants():
        test()
