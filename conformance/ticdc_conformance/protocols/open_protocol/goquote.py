"""The inverse of Go's strconv.Quote, which Open Protocol uses for binary CHAR/VARCHAR values.

TiCDC writes a BINARY/VARBINARY value as `strconv.Quote(string(bytes))` without the surrounding
quotes (TiCDC pkg/sink/codec/open/codec.go, writeColumnFieldValue) and its own decoder reverses it
with `strconv.Unquote` (TiCDC pkg/sink/codec/open/decoder.go, formatColumn); spec 002 shows such a
value as "\\x89PNG\\r\\n\\x1a\\n". This module accepts exactly what Go's Unquote accepts inside a
double-quoted literal, so a value TiCDC's consumer would reject is rejected here too.
"""
from __future__ import annotations

import codecs
import re

from ticdc_conformance.protocols.common.wire import bounded_put

_SIMPLE = {"a": 0x07, "b": 0x08, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "\\": 0x5C, '"': 0x22}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCT = frozenset("01234567")
_MAX_RUNE = 0x10FFFF


# A backslash not followed by a one-letter escape or \x, the escapes Go's Quote writes but for \u
# and \U. Tested at every backslash, the second of an escaped one too, it refuses more than Go
# (the body \\q, an escaped backslash then "q", is valid), never less: a body it passes has such
# an escape at each escape start. The literal first character lets the engine skip from
# backslash to backslash.
_BAD_ESCAPE = re.compile(r'\\[^xabfnrtv\\"]').search
# A \u or \U escape, preceded by an even run of backslashes (escaped backslashes), so that
# "\\\\u" (an escaped backslash, then "u") is not taken for one.
_RUNE_ESCAPE = re.compile(r'(?<!\\)((?:\\\\)*+)\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))')


def go_unquote(s: str) -> bytes:
    """The bytes a Go double-quoted literal body denotes; ValueError where Go reports ErrSyntax."""
    fast = unquote_valid(s)
    return _scan(s) if fast is None else fast


def unquote_valid(s: str) -> bytes | None:
    """`s` decoded by the codec machinery in C, when the checks here vouch for it; None otherwise
    (a rejection, a lone surrogate, a \\u escape naming no valid rune, an octal escape), left to
    `_scan` to settle and word.

    On a vouched-for body Python's bytes escape decoding means what Go's Unquote does: the same
    simple escapes and \\xHH (whose two hex digits it demands too), UTF-8 text copied as it is;
    \\u and \\U become the \\xHH escapes of their UTF-8 bytes first. What Python would take and Go
    refuses is refused before: other escapes, a raw newline, a raw double quote."""
    if "\n" in s:
        return None
    if _BAD_ESCAPE(s) is not None:
        rewritten = _second_look(s)
        if rewritten is None:
            return None
        s = rewritten
    if '"' in s:
        # Without its escaped backslashes every backslash of the body starts an escape, so a
        # quote is escaped exactly when a backslash stands before it there.
        bare = s.replace("\\\\", "")
        if bare.count('"') != bare.count('\\"'):
            return None
    try:
        return codecs.escape_decode(s)[0]  # a str is read as its UTF-8 bytes
    except ValueError:  # a short \x escape, a last backslash escaping nothing, a lone surrogate
        return None


def _second_look(s: str) -> str | None:
    """A body `_BAD_ESCAPE` refused, with its \\u and \\U escapes rewritten as \\x escapes, when
    every escape start is followed by a letter `unquote_valid` decodes; None otherwise."""
    if "\\u" in s or "\\U" in s:
        try:
            s = _RUNE_ESCAPE.sub(_rune_as_bytes, s)
        except ValueError:  # not a valid rune
            return None
        if _BAD_ESCAPE(s) is None:
            return s
    # Without its escaped backslashes every backslash left starts an escape. Their removal joins
    # what stood around them, so only the letter after each backslash is read there.
    return s if _BAD_ESCAPE(s.replace("\\\\", "")) is None else None


def _rune_as_bytes(m: re.Match) -> str:
    digits = m.group(2) or m.group(3)
    escapes = _RUNE_ESCAPES.get(digits)
    if escapes is None:
        code = int(digits, 16)
        if code > _MAX_RUNE or 0xD800 <= code <= 0xDFFF:
            raise ValueError("not a valid rune")
        escapes = "".join(f"\\x{b:02x}" for b in chr(code).encode("utf-8"))
        bounded_put(_RUNE_ESCAPES, digits, escapes, _RUNES_MAX)
    return m.group(1) + escapes


# The \x escapes of the runes met lately: Go writes a \u escape for each non-printable rune, and a
# column's values repeat a few of them (bounded, as the stream chooses the runes).
_RUNE_ESCAPES: dict[str, str] = {}
_RUNES_MAX = 1024


def _scan(s: str) -> bytes:
    """Go's Unquote, one escape at a time: the reference for `unquote_valid`, and the one that
    says what is wrong with a body it rejects."""
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        j = s.find("\\", i)
        run = s[i:] if j < 0 else s[i:j]
        if run:
            # Go's Unquote refuses a raw quote (it would end the literal) and a raw newline.
            if '"' in run:
                raise ValueError(f'unescaped double quote at {i + run.index(chr(34))}')
            if "\n" in run:
                raise ValueError(f"raw newline at {i + run.index(chr(10))}")
            out += _utf8(run)
        if j < 0:
            break
        i = j + 1
        if i >= n:
            raise ValueError("backslash at the end of the value")
        esc = s[i]
        if esc in _SIMPLE:
            out.append(_SIMPLE[esc])
            i += 1
        elif esc == "x":
            out.append(int(_digits(s, i + 1, 2, _HEX, "\\x"), 16))
            i += 3
        elif esc in _OCT:
            code = int(_digits(s, i, 3, _OCT, "octal escape"), 8)
            if code > 0xFF:
                raise ValueError(f"octal escape \\{s[i:i + 3]} is above \\377")
            out.append(code)
            i += 3
        elif esc in ("u", "U"):
            width = 4 if esc == "u" else 8
            code = int(_digits(s, i + 1, width, _HEX, "\\" + esc), 16)
            # Go's UnquoteChar demands a valid rune: no surrogate halves, nothing past U+10FFFF.
            if code > _MAX_RUNE or 0xD800 <= code <= 0xDFFF:
                raise ValueError(f"\\{esc}{s[i + 1:i + 1 + width]} is not a valid Unicode code point")
            out += chr(code).encode("utf-8")
            i += 1 + width
        else:
            raise ValueError(f"unknown escape \\{esc}")
    return bytes(out)


def _digits(s: str, start: int, width: int, alphabet: frozenset, what: str) -> str:
    # Checked by hand: int(x, 16) would also take signs, spaces and underscores.
    digits = s[start:start + width]
    if len(digits) != width or not all(c in alphabet for c in digits):
        raise ValueError(f"{what} needs {width} digits, got {digits!r}")
    return digits


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate cannot come from valid JSON, but be total
        raise ValueError(f"not encodable as UTF-8: {e}") from None
