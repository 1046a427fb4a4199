"""The value-domain catalogue: for every TiDB column type, the values TiDB accepts and hands out,
in the canonical Python form of docs/architecture.md.

    d = domain_for(TiDBType("decimal", flen=5, decimal=2), nullable=True)
    d.edges()                      # [None, '0.00', '999.99', '-999.99', '0.01', ...]
    d.draw(random.Random(7), fk)   # a realistic value, now and then an edge or NULL
    d.strategy()                   # a Hypothesis strategy over every accepted value
    d.validate('1000.00')          # ValueError: more than 3 integer digits
    d.default_candidates()         # values usable in a DEFAULT clause

Each domain is assembled from the small builders of `gen` (one definition read two ways: seeded
realistic draws with faker, and shrinkable Hypothesis strategies). Values that exist only under
a permissive upstream sql_mode (zero dates, the ENUM error value) are edges marked with the
setting they need (`Edge.requires`, see `SETTINGS`); pass `allow=` to admit them.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from ticdc_contract import json_document as jsondoc
from ticdc_contract.tidb_types import BINARY_TYPES, FLOAT_TYPES, INTEGER_TYPES, STRING_TYPES, TiDBType
from ticdc_contract.type_catalogue import all_types_matrix, check_type

from .domain import SETTINGS, Edge, Family, ValueDomain
from .numeric import bit_family, decimal_family, f32, float_family, format_decimal, integer_family, year_family
from .strings import binary_family, text_family
from .structured import enum_family, enum_family_allowing_error, json_family, set_family
from .temporal import date_family, datetime_family, time_family, timestamp_family, zone

__all__ = [
    "SETTINGS", "Edge", "ValueDomain", "domain_for", "all_domains", "jsondoc", "f32", "format_decimal",
]


def _family(t: TiDBType, allow: frozenset[str], time_zone: str) -> Family:
    b = t.base
    if b in INTEGER_TYPES:
        return integer_family(t)
    if b in FLOAT_TYPES:
        return float_family(t)
    if b == "decimal":
        return decimal_family(t)
    if b in STRING_TYPES:
        return text_family(t)
    if b in BINARY_TYPES:
        return binary_family(t)
    if b == "date":
        return date_family(t, allow)
    if b == "datetime":
        return datetime_family(t, allow)
    if b == "timestamp":
        return timestamp_family(t, allow, time_zone)
    if b == "time":
        return time_family(t, allow)
    if b == "year":
        return year_family(t)
    if b == "bit":
        return bit_family(t)
    if b == "enum":
        return enum_family_allowing_error(t) if "invalid-enum" in allow else enum_family(t)
    if b == "set":
        return set_family(t)
    if b == "json":
        return json_family(t)
    raise ValueError(f"no value domain for {b}")


@lru_cache(maxsize=1024)
def _domain(t: TiDBType, nullable: bool, time_zone: str, allow: frozenset[str]) -> ValueDomain:
    check_type(t)
    zone(time_zone)  # fail early on an unknown zone
    return ValueDomain(t, _family(t, allow, time_zone), nullable=nullable, time_zone=time_zone, allow=allow)


def domain_for(t: TiDBType, *, nullable: bool = False, time_zone: str = "UTC",
               allow: Iterable[str] = ()) -> ValueDomain:
    """The value domain of a column of type `t`.

    `time_zone` is the upstream TiDB's (TIMESTAMP values are printed in it); `allow` names
    permissive upstream settings (keys of SETTINGS) whose extra values the domain then admits.
    Raises ValueError for a declaration TiDB would refuse.
    """
    allowed = frozenset(allow)
    unknown = allowed - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown upstream settings {sorted(unknown)}; known: {sorted(SETTINGS)}")
    return _domain(t, nullable, time_zone, allowed)


def all_domains(*, nullable: bool = False, time_zone: str = "UTC") -> list[ValueDomain]:
    """A domain for every declaration of type_catalogue.all_types_matrix()."""
    return [domain_for(t, nullable=nullable, time_zone=time_zone) for t in all_types_matrix()]
