"""`ValueDomain`: everything one column type admits, as edges, realistic draws, a Hypothesis
strategy and a validator, all in the canonical Python value form (docs/architecture.md)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ticdc_contract.tidb_types import TiDBType

from .fakers import Fakers
from .gen import Gen

# Upstream settings a scenario may opt in to; some values exist only under them.
SETTINGS = {
    "zero-dates": "sql_mode without NO_ZERO_DATE and NO_ZERO_IN_DATE (and not strict): DATE/DATETIME/"
                  "TIMESTAMP may hold '0000-00-00' and dates with a zero month or day",
    "invalid-enum": "non-strict sql_mode: an invalid ENUM value is stored as the empty error value '' "
                    "(index 0)",
}


@dataclass(frozen=True)
class Edge:
    """One edge value, why it is one, and the upstream settings it needs (see SETTINGS)."""

    value: Any
    why: str
    requires: frozenset[str] = field(default=frozenset())


@dataclass(frozen=True)
class Family:
    """What a type family contributes to a domain."""

    gen: Gen
    edges: list[Edge]
    check: Callable[[Any], None]  # raises ValueError
    defaults: list[Any]  # values usable in a DEFAULT clause ([] when TiDB forbids literal defaults)


def _key(v: Any) -> tuple:
    return (type(v).__name__, repr(v))


class ValueDomain:
    """The values of one column type, under one upstream time zone and set of sql_mode settings."""

    #: share of draw() calls that return an edge value, and (nullable columns) NULL
    EDGE_RATE = 0.1
    NULL_RATE = 0.1

    def __init__(self, t: TiDBType, family: Family, *, nullable: bool, time_zone: str,
                 allow: frozenset[str]) -> None:
        self.type = t
        self.nullable = nullable
        self.time_zone = time_zone
        self.allow = allow
        self._family = family
        cases: list[Edge] = []
        seen: set[tuple] = set()
        for e in family.edges:
            k = _key(e.value)
            if k not in seen:
                seen.add(k)
                cases.append(e)
        if nullable:
            cases.insert(0, Edge(None, "NULL"))
        self._cases = cases
        self._edges = [e.value for e in cases if e.requires <= allow]
        self._strategy: Optional[SearchStrategy] = None

    def __repr__(self) -> str:
        extra = " NULL" if self.nullable else " NOT NULL"
        return f"ValueDomain({self.type.sql()}{extra}, time_zone={self.time_zone!r})"

    # --- edges -------------------------------------------------------------------------
    def edge_cases(self, *, include_opt_in: bool = False) -> list[Edge]:
        """The edges with their reasons; with include_opt_in, also those needing settings this
        domain does not allow (their `requires` says which)."""
        return [e for e in self._cases if include_opt_in or e.requires <= self.allow]

    def edges(self) -> list:
        """Edge values in canonical Python form, simplest first (NULL first when nullable)."""
        return list(self._edges)

    # --- generation --------------------------------------------------------------------
    def draw(self, rng: random.Random, faker: Any = None) -> Any:
        """A realistic value, now and then an edge (or NULL); deterministic for the rng's state.
        `faker` may be any Faker (it is re-seeded from `rng` before each use) or None."""
        r = rng.random()
        if self.nullable:
            if r < self.NULL_RATE:
                return None
            r -= self.NULL_RATE
        if r < self.EDGE_RATE:
            return self._edges[rng.randrange(len(self._edges))]
        return self._family.gen.draw(rng, Fakers(rng, faker))

    def strategy(self) -> SearchStrategy:
        """Every value TiDB accepts for the type (edges first), shrinking toward simple values."""
        if self._strategy is None:
            self._strategy = st.one_of(st.sampled_from(self._edges), self._family.gen.strategy())
        return self._strategy

    # --- checking ----------------------------------------------------------------------
    def validate(self, v: Any) -> None:
        """Raises ValueError if TiDB would reject `v` for the column, or would never hand it out
        in this canonical form."""
        if v is None:
            if not self.nullable:
                raise ValueError(f"NULL in NOT NULL column of type {self.type.sql()}")
            return
        try:
            self._family.check(v)
        except ValueError as exc:
            raise ValueError(f"{self.type.sql()}: {exc}") from None

    def is_valid(self, v: Any) -> bool:
        try:
            self.validate(v)
        except ValueError:
            return False
        return True

    def default_candidates(self) -> list:
        """Values usable in the column's DEFAULT clause (NULL first when nullable); none for
        BLOB/TEXT/JSON, whose literal defaults TiDB forbids."""
        if not self._family.defaults:
            return []
        out = [None] if self.nullable else []
        seen: set[tuple] = set()
        for v in self._family.defaults:
            if _key(v) not in seen and self.is_valid(v):
                seen.add(_key(v))
                out.append(v)
        return out


def edges_of(pairs: Iterable[tuple[Any, str]], requires: Iterable[str] = ()) -> list[Edge]:
    req = frozenset(requires)
    return [Edge(v, why, req) for v, why in pairs]
