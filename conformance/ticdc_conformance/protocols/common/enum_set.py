"""ENUM and SET values as numbers, for the fidelity projections of protocols that send them so.

A canonical value names the members ("b", "a,c"); TiDB keeps an ENUM as the 1-based index of its
member and a SET as a bitmask, bit i for member i, and that is all such a protocol carries.
"""
from __future__ import annotations

from ticdc_contract.tidb_types import TiDBType


def enum_index(t: TiDBType, name: str) -> int:
    # Index 0 is the empty "invalid value" entered in non-strict mode.
    if name in t.elements:
        return t.elements.index(name) + 1
    if name == "":
        return 0
    raise ValueError(f"{name!r} is not a member of {t.sql()}")


def set_bitmask(t: TiDBType, names: str) -> int:
    # A SET value is its members joined by "," (MySQL forbids "," inside a member).
    mask = 0
    for name in names.split(",") if names else ():
        if name not in t.elements:
            raise ValueError(f"{name!r} is not a member of {t.sql()}")
        mask |= 1 << t.elements.index(name)
    return mask
