"""Identifiers: schema, table, column and index names.

Plain names come from a fixed list (ordinary names, reserved words, a 64-character one) and
shrink toward "a"; `exotic=True` adds drawn ones, with what TiDB accepts inside backquotes and
consumers still have to carry through: upper case, digits first, `$`, spaces inside, quotes,
backquotes and non-ASCII letters. TiDB compares column, index and (by default)
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


# Plain names: one choice each (cheap to draw and to shrink), reserved words and the longest
# name TiDB allows among them.
PLAIN_NAMES = (
    "a", "b", "c", "id", "k", "v", "x", "y", "t", "name", "value", "amount", "created_at", "updated_at", "note",
    "status", "payload", "user_id", "order_id", "price", "qty", "flag", "data", "ts", "day", "code", "tag",
    "order", "select", "key", "index", "group", "table", "column", "desc", "rank", "partition", "range",
    "col_" + "x" * 60,
)


@lru_cache(maxsize=None)
def identifiers(*, exotic: bool = False, max_size: int = 12) -> SearchStrategy[str]:
    """A name TiDB accepts (quoted where needed)."""
    plain = st.sampled_from(PLAIN_NAMES)
    if not exotic:
        return plain
    drawn = st.builds(lambda first, rest: first + rest, st.sampled_from(_PLAIN_FIRST),
                      st.text(_PLAIN_REST, max_size=max_size - 1))
    odd = st.text(_PLAIN_REST + _EXOTIC_EXTRA, min_size=1, max_size=max_size).filter(
        lambda s: s == s.rstrip(" ") and s.strip() != "")  # TiDB rejects names ending in a space
    return plain | drawn | odd


def fresh_name(draw: Callable[[SearchStrategy], Any], taken: Iterable[str], *, exotic: bool = False) -> str:
    """A drawn name made distinct from `taken` (case-insensitively) by a numeric suffix; cheaper
    to generate and to shrink than filtering."""
    keys = {name_key(t) for t in taken}
    name = draw(identifiers(exotic=exotic))
    base, i = name[:MAX_IDENTIFIER_CHARS - 4], 1
    while name_key(name) in keys:
        name, i = f"{base}{i}", i + 1
    return name
