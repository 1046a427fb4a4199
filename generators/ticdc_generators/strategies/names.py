"""Identifiers: schema, table, column and index names.

Plain names (`[a-z][a-z0-9_]*`) shrink toward "a"; `exotic=True` adds what TiDB accepts inside
backquotes and consumers still have to carry through: upper case, digits first, `$`, spaces
inside, quotes, backquotes and non-ASCII letters. TiDB compares column, index and (by default)
table names case-insensitively, so uniqueness is always judged on the case-folded name.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterable

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

MAX_IDENTIFIER_CHARS = 64  # TiDB's limit for schema, table, column and index names

_PLAIN_FIRST = "abcdefghijklmnopqrstuvwxyz"
_PLAIN_REST = _PLAIN_FIRST + "0123456789_"
_EXOTIC_EXTRA = "ABCXYZ$ '\"`-é中ü"


def name_key(name: str) -> str:
    """The form under which TiDB considers two names equal."""
    return name.casefold()


@lru_cache(maxsize=None)
def identifiers(*, exotic: bool = False, max_size: int = 12) -> SearchStrategy[str]:
    """A name TiDB accepts (quoted where needed)."""
    plain = st.builds(lambda first, rest: first + rest, st.sampled_from(_PLAIN_FIRST),
                      st.text(_PLAIN_REST, max_size=max_size - 1))
    if not exotic:
        return plain
    odd = st.text(_PLAIN_REST + _EXOTIC_EXTRA, min_size=1, max_size=max_size).filter(
        lambda s: s == s.rstrip(" ") and s.strip() != "")  # TiDB rejects names ending in a space
    return plain | odd


def unique_names(n_min: int, n_max: int, *, exotic: bool = False, taken: frozenset[str] = frozenset()
                 ) -> SearchStrategy[list[str]]:
    """`n_min..n_max` names, distinct from each other and from `taken` (case-insensitively)."""
    taken_keys = {name_key(t) for t in taken}
    return st.lists(identifiers(exotic=exotic).filter(lambda s: name_key(s) not in taken_keys),
                    min_size=n_min, max_size=n_max, unique_by=name_key)


def fresh_name(draw: Callable[[SearchStrategy], Any], taken: Iterable[str], *, exotic: bool = False) -> str:
    """A drawn name made distinct from `taken` (case-insensitively) by a numeric suffix; cheaper
    to generate and to shrink than filtering."""
    keys = {name_key(t) for t in taken}
    name = draw(identifiers(exotic=exotic))
    base, i = name[:MAX_IDENTIFIER_CHARS - 4], 1
    while name_key(name) in keys:
        name, i = f"{base}{i}", i + 1
    return name
