"""ENUM and SET values as TiDB keeps them, which is what Open Protocol and Canal-JSON send.

A canonical value names the members ("b", "a,c"); TiDB holds an ENUM as the 1-based index of its
member and a SET as a bitmask, bit i for member i. (Simple matches member names case-insensitively
and has its own lookup in simple/values.py.)
"""
from __future__ import annotations

from ticdc_contract.tidb_types import TiDBType


def enum_index(t: TiDBType, name: str) -> int:
    # 0 is the empty "error" value of non-strict mode, unless "" is a declared member.
    try:
        return t.elements.index(name) + 1
    except ValueError:
        if name == "":
            return 0
        raise ValueError(f"{name!r} is not a member of {t.sql()}") from None


def set_bits(t: TiDBType, names: str) -> int:
    # Members arrive joined by "," (MySQL forbids "," inside a member).
    bits = 0
    for member in (names.split(",") if names else ()):
        try:
            bits |= 1 << t.elements.index(member)
        except ValueError:
            raise ValueError(f"{member!r} is not a member of {t.sql()}") from None
    return bits
