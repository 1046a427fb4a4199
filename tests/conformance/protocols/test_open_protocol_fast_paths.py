"""The Open Protocol decoder's fast paths read exactly what its careful paths read, and reject
exactly what they reject (the careful paths are the reference: goquote._scan, values.decode_column)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.open_protocol import values
from ticdc_conformance.protocols.open_protocol.goquote import _scan, go_unquote, unquote_valid
from ticdc_conformance.protocols.open_protocol.values import decode_column, decode_columns

# Pieces that make valid and invalid escape bodies alike: every escape letter Go knows, octal and
# hex digits, quotes, newlines, a non-ASCII rune, a lone surrogate.
_PIECES = st.sampled_from(["\\", "x", "u", "U", "0", "3", "4", "7", "f", "F", "g", "a", "n", "'", '"', "\n",
                           "00", "ff", "d800", "10ffff", "110000", "é", "文", "\ud800", "q"])


def _careful(s: str):
    try:
        return _scan(s)
    except ValueError:
        return None


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_the_fast_unquote_agrees_with_the_escape_scanner(s):
    fast = unquote_valid(s)
    if fast is not None:
        assert fast == _scan(s)
    expected = _careful(s)
    if expected is None:
        with pytest.raises(ValueError):
            go_unquote(s)
    else:
        assert go_unquote(s) == expected


@pytest.mark.parametrize("s", ["\\x41\\u00e9\\U0001F600", "\\\\u0041", "\\\\\\u0041", "a\\x5cu0041", "\\\\q\\\\",
                               "\\\\\\\"\\x00\\\\"])
def test_the_fast_unquote_handles_rune_escapes_and_escaped_backslashes(s):
    assert unquote_valid(s) == _scan(s)


@pytest.mark.parametrize("s", [
    "\\12\\\\7",  # octal one digit short, then an escaped backslash: removing it would join "127"
    "\\x4\\\\1",  # likewise for \x
    "\\\\\"",  # an escaped backslash, then a raw quote
    "a\\", "a\\\\\\",  # a last backslash escaping nothing
    "\\'", "\\\n", "\\N{DIGIT ONE}", "\\u12", "\\ud800",  # escapes Python takes and Go refuses
])
def test_the_fast_unquote_refuses_what_go_refuses(s):
    assert unquote_valid(s) is None
    with pytest.raises(ValueError):
        _scan(s)


def test_octal_escapes_go_the_careful_way():
    # Go's Quote never writes them, so the fast unquote leaves them to the escape scanner.
    assert unquote_valid("\\101\\377") is None and go_unquote("\\101\\377") == b"A\xff"


def _col(code, flag, v, **extra):
    return {"t": code, "f": flag, "v": v, **extra}


SECTION = {
    "id": _col(8, 11, 7, h=True), "k": _col(3, 129, 4_000_000_000), "name": _col(15, 0, "文a"),
    "amount": _col(246, 65, "-1.50"), "at": _col(12, 65, "2020-03-27 02:50:48.330"),
    "raw": _col(15, 65, "\\x89PNG\\r\\n"), "f": _col(5, 0, 1), "y": _col(13, 0, 2024), "e": _col(247, 0, 2),
    "nul": _col(3, 64, None), "noflag": {"t": 1, "v": -5},
}


def test_a_cached_section_reads_as_column_by_column():
    expected = {name: decode_column(obj).value for name, obj in SECTION.items()}
    for _ in range(3):  # first sight fills the caches, the later rounds read through them
        got, keys = decode_columns(SECTION)
        assert got == expected and [type(v) for v in got.values()] == [type(v) for v in expected.values()]
        assert list(got) == list(SECTION) and keys == [("id",)]


@pytest.mark.parametrize("bad", [
    {"t": True, "f": 129, "v": 1},  # true == 1 as a dict key, yet no type code
    {"t": 3.0, "f": 129, "v": 1},
    {"t": 3, "f": True, "v": 1},
    {"t": 3, "f": None, "v": 1},  # an explicit null is not an absent "f"
    {"t": 3, "f": 129, "h": 1, "v": 1},
    {"t": 3, "f": 129, "v": True},
    {"t": 3, "f": 129, "v": -1},  # unsigned
    {"t": 3, "f": 129},
    {"t": 15, "f": 65, "v": "\\q"},
    {"t": 15, "f": 0, "v": 5},
])
def test_a_cached_triple_does_not_let_a_lookalike_through(bad):
    decode_columns({"c": {"t": 3, "f": 129, "v": 1}, "d": {"t": 3, "v": 1}, "s": _col(15, 65, "x"),
                    "p": _col(15, 0, "x"), "h": _col(3, 129, 1, h=False)})
    with pytest.raises(Malformed) as caught:
        decode_columns({"c": bad})
    with pytest.raises(Malformed) as careful:
        decode_column(bad)
    assert caught.value.reason == f"column 'c': {careful.value.reason}"


def test_the_caches_stay_bounded_under_endless_flag_values():
    for flag in range(0x1000, 0x1000 + 3 * values._CACHE_MAX):
        decode_columns({"c": {"t": 3, "f": flag | 0x10, "v": 1}})
    assert len(values._SPECS) <= values._CACHE_MAX
    assert len(values._KEYS) <= values._CACHE_MAX


# Pieces of printed dates, times and decimals, and what breaks them: other digits, signs, spaces.
_TEXT_PIECES = st.sampled_from(["0", "7", "2024", "-", ":", ".", " ", "12", "٣", "\ud800", "x", "", "123456"])


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from([7, 10, 11, 12, 14, 246]), st.lists(st.lists(_TEXT_PIECES, max_size=9).map("".join),
                                                          min_size=1, max_size=4))
def test_the_remembered_shapes_read_as_the_patterns_do(code, texts):
    # The texts of one column, in turn: a shape remembered from an earlier text decides a later one.
    spec = values.column_spec(code, 0, True, False)
    for text in texts:
        try:
            expected = values._READERS[code](text, code, 0, True)
        except Malformed:
            expected = None
        try:
            got = spec.read(text)
        except Malformed:
            got = None
        assert got == expected
