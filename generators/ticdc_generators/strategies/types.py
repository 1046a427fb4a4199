"""Column types: one small builder per family, `tidb_types()` over the whole catalogue.

Every builder yields `TiDBType`s TiDB accepts (`type_catalogue.check_type` holds for each) and shrinks
toward the family's plainest declaration (INT, DECIMAL(10,0), VARCHAR(1), DATETIME, ...).
`key_types()` narrows to what may sit in a primary or unique key without a prefix length and
whose equality TiDB and the model judge alike (binary collations only, no floats).
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Iterable, Optional

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ticdc_contract.tidb_types import (
    BINARY_TYPES,
    COLLATIONS,
    INTEGER_TYPES,
    STRING_TYPES,
    TiDBType,
    charset_info,
    type_collation,
)
from ticdc_contract.type_catalogue import DECIMAL_MAX_PRECISION, DECIMAL_MAX_SCALE, MAX_FSP, SET_MAX_MEMBERS, check_type

# Integer bases in the order they shrink to: INT is the plainest.
_INTEGERS = ("int", "tinyint", "smallint", "mediumint", "bigint")
_TEXT_COLLATIONS = tuple(c for c in COLLATIONS.values() if c.charset != "binary")
# Collations under which two distinct strings never compare equal but for trailing spaces.
KEY_COLLATIONS = tuple(c.name for c in _TEXT_COLLATIONS if not c.case_insensitive)


def _valid(t: TiDBType) -> bool:
    try:
        check_type(t)
    except ValueError:
        return False
    return True


# --- charsets and collations ---------------------------------------------------------------
@lru_cache(maxsize=None)
def charsets_and_collations(*, key: bool = False) -> SearchStrategy[tuple[Optional[str], Optional[str]]]:
    """(charset, collate): both omitted (utf8mb4, utf8mb4_bin) or both stated. With `key=True`
    only binary (case- and accent-sensitive) collations."""
    pool = [c for c in _TEXT_COLLATIONS if not key or c.name in KEY_COLLATIONS]
    # TiDB's column info always records both once either is stated; so do the types drawn here.
    return st.just((None, None)) | st.sampled_from([(c.charset, c.name) for c in pool])


# --- families --------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def integer_types(*, bases: tuple[str, ...] = _INTEGERS, unsigned: Optional[bool] = None,
                  display_width: bool = True) -> SearchStrategy[TiDBType]:
    """TINYINT..BIGINT, signed or not, with the default display width or a stated one; BOOL
    (TINYINT(1)) among them."""
    flens = st.none() | st.integers(1, 255) if display_width else st.none()
    signs = st.booleans() if unsigned is None else st.just(unsigned)
    ints = st.builds(lambda b, u, f: TiDBType(b, unsigned=u, flen=f), st.sampled_from(tuple(bases)), signs, flens)
    if display_width and unsigned is not True and "tinyint" in tuple(bases):
        ints = ints | st.just(TiDBType.bool_())
    return ints


@lru_cache(maxsize=None)
def float_types() -> SearchStrategy[TiDBType]:
    """FLOAT and DOUBLE, now and then UNSIGNED or with (M,D) (M up to 38 for FLOAT, whose values
    stop near 3.4e38, and up to 53 for DOUBLE)."""
    def md(top: int) -> SearchStrategy[tuple[Optional[int], Optional[int]]]:
        return st.just((None, None)) | st.integers(1, top).flatmap(
            lambda m: st.tuples(st.just(m), st.integers(0, min(m, DECIMAL_MAX_SCALE))))
    return st.one_of(*[st.builds(lambda u, md_, b=b: TiDBType(b, unsigned=u, flen=md_[0], decimal=md_[1]),
                                 st.booleans(), md(top)) for b, top in (("double", 53), ("float", 38))]
                     ).filter(_valid)


@lru_cache(maxsize=None)
def decimal_types(*, unsigned: Optional[bool] = None, max_precision: int = DECIMAL_MAX_PRECISION
                  ) -> SearchStrategy[TiDBType]:
    """DECIMAL(M,D), 1 <= M <= 65, 0 <= D <= min(M, 30); DECIMAL alone is DECIMAL(10,0)."""
    signs = st.booleans() if unsigned is None else st.just(unsigned)
    stated = st.integers(1, max_precision).flatmap(
        lambda m: st.tuples(st.just(m), st.integers(0, min(m, DECIMAL_MAX_SCALE))))
    return st.builds(lambda u, md: TiDBType("decimal", unsigned=u, flen=md[0], decimal=md[1]),
                     signs, st.just((None, None)) | stated)


@lru_cache(maxsize=None)
def string_types(*, key: bool = False, max_varchar: int = 1024) -> SearchStrategy[TiDBType]:
    """CHAR(n), VARCHAR(n) and the TEXT family in every catalogued charset and collation.
    With `key=True`: CHAR/VARCHAR of at most 64 characters, binary collations."""
    bases = ("varchar", "char") if key else ("varchar", "char") + STRING_TYPES[2:]
    longest = 64 if key else max_varchar

    def build(base: str, cs: tuple, n: int) -> TiDBType:
        charset, collate = cs
        if base == "char":
            return TiDBType("char", flen=min(n, 255) if n else None, charset=charset, collate=collate)
        if base == "varchar":
            return TiDBType("varchar", flen=max(n, 1), charset=charset, collate=collate)
        return TiDBType(base, charset=charset, collate=collate)

    return st.builds(build, st.sampled_from(bases), charsets_and_collations(key=key),
                     st.integers(0, longest)).filter(_valid)


@lru_cache(maxsize=None)
def binary_types(*, key: bool = False, max_varbinary: int = 1024) -> SearchStrategy[TiDBType]:
    """BINARY(n), VARBINARY(n) and the BLOB family."""
    bases = ("varbinary", "binary") if key else ("varbinary", "binary") + BINARY_TYPES[2:]
    longest = 64 if key else max_varbinary

    def build(base: str, n: int) -> TiDBType:
        if base == "binary":
            return TiDBType("binary", flen=min(max(n, 1), 255))
        if base == "varbinary":
            return TiDBType("varbinary", flen=max(n, 1))
        return TiDBType(base)

    return st.builds(build, st.sampled_from(bases), st.integers(1, longest))


@lru_cache(maxsize=None)
def temporal_types(*, bases: tuple[str, ...] = ("datetime", "date", "timestamp", "time")
                   ) -> SearchStrategy[TiDBType]:
    """DATE, and DATETIME/TIMESTAMP/TIME with every fsp 0..6."""
    def build(base: str, fsp: int) -> TiDBType:
        return TiDBType(base) if base == "date" else TiDBType(base, decimal=fsp)
    return st.builds(build, st.sampled_from(tuple(bases)), st.integers(0, MAX_FSP))


def _member_text(charset: Optional[str]) -> SearchStrategy[str]:
    codec = charset_info(charset or "utf8mb4").codec
    if codec in ("ascii", "latin-1"):
        chars = st.characters(codec=codec, exclude_categories=("Cc", "Cs"))
    else:
        chars = st.characters(max_codepoint=0xFFFF if charset == "utf8" else None, exclude_categories=("Cc", "Cs"))
    return st.sampled_from("abc") | chars


@lru_cache(maxsize=None)
def members(charset: Optional[str] = None, *, max_members: int = 8, set_members: bool = False
            ) -> SearchStrategy[tuple[str, ...]]:
    """ENUM/SET member lists: distinct, no trailing spaces (TiDB strips them), no ',' in SET
    members; shrinks toward ('a',)."""
    member = st.text(_member_text(charset), max_size=10).map(lambda s: s.rstrip(" "))
    if set_members:
        member = member.map(lambda s: s.replace(",", "").rstrip(" ")).filter(bool)
    return st.lists(member, min_size=1, max_size=max_members, unique_by=_member_key).map(tuple)


def _member_key(s: str) -> str:
    """Members equal under any catalogued collation (case- and accent-insensitive ones included)
    share this key, so member lists are valid whatever the column's collation."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", s.casefold()) if not unicodedata.combining(ch))


@lru_cache(maxsize=None)
def enum_types(*, max_members: int = 8) -> SearchStrategy[TiDBType]:
    return charsets_and_collations().flatmap(lambda cs: st.builds(
        lambda els: TiDBType("enum", charset=cs[0], collate=cs[1], elements=els),
        members(cs[0], max_members=max_members))).filter(_valid)


@lru_cache(maxsize=None)
def set_types(*, max_members: int = 8) -> SearchStrategy[TiDBType]:
    return charsets_and_collations().flatmap(lambda cs: st.builds(
        lambda els: TiDBType("set", charset=cs[0], collate=cs[1], elements=els),
        members(cs[0], max_members=min(max_members, SET_MAX_MEMBERS), set_members=True))).filter(_valid)


@lru_cache(maxsize=None)
def bit_types() -> SearchStrategy[TiDBType]:
    return st.builds(lambda n: TiDBType("bit", flen=n), st.integers(1, 64))


@lru_cache(maxsize=None)
def year_types() -> SearchStrategy[TiDBType]:
    return st.just(TiDBType("year"))


@lru_cache(maxsize=None)
def json_types() -> SearchStrategy[TiDBType]:
    return st.just(TiDBType("json"))


# --- the catalogue ---------------------------------------------------------------------------
FAMILIES = ("integer", "decimal", "string", "temporal", "binary", "float", "year", "enum", "set", "bit", "json")


def tidb_types(*, families: Iterable[str] = FAMILIES) -> SearchStrategy[TiDBType]:
    """Any column type of the catalogue with its parameters; shrinks toward INT."""
    return _tidb_types(tuple(families))


@lru_cache(maxsize=None)
def _tidb_types(families: tuple[str, ...]) -> SearchStrategy[TiDBType]:
    builders = {
        "integer": integer_types, "decimal": decimal_types, "string": string_types,
        "temporal": temporal_types, "binary": binary_types, "float": float_types, "year": year_types,
        "enum": enum_types, "set": set_types, "bit": bit_types, "json": json_types,
    }
    chosen = [builders[f]() for f in families]
    return st.one_of(*chosen)


@lru_cache(maxsize=None)
def key_types(*, integers_only: bool = False) -> SearchStrategy[TiDBType]:
    """Types a (clustered) primary key or unique key may hold as a whole column."""
    ints = integer_types()
    if integers_only:
        return ints
    return st.one_of(ints, string_types(key=True), decimal_types(max_precision=30),
                     temporal_types(), binary_types(key=True), year_types(),
                     enum_types(max_members=4), bit_types())


def is_key_type(t: TiDBType) -> bool:
    """Whether `t` may sit in a key built by these strategies (see `key_types`)."""
    if t.is_integer or t.base in ("decimal", "date", "datetime", "timestamp", "time", "year", "enum", "bit"):
        return True
    if t.base in ("char", "varchar"):
        return t.effective_flen <= 64 and type_collation(t).name in KEY_COLLATIONS
    if t.base in ("binary", "varbinary"):
        return t.effective_flen <= 64
    return False


def is_integer_type(t: TiDBType) -> bool:
    return t.base in INTEGER_TYPES
