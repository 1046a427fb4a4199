"""Go's strconv.Quote, which TiCDC applies to the bytes of binary CHAR/VARCHAR/BINARY/VARBINARY values.

TiCDC pkg/sink/codec/open/codec.go (writeColumnFieldValue): for TypeString/TypeVarString/
TypeVarchar with the binary flag, the value is `strconv.Quote(string(bytes))` without its outer
quotes; spec 002 (Open Protocol), Column type code, shows it as "\\x89PNG\\r\\n\\x1a\\n".
Quote keeps printable UTF-8 characters, escapes the rest, and turns every byte that does not
start a valid UTF-8 sequence into \\xNN.
"""
from __future__ import annotations

import functools
import re
from typing import Callable

from ..golang import json_text
from ..golang.json_text import translate_table

_HEX = "0123456789abcdef"

# strconv's short escapes for control characters (quote is '"').
_SHORT = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v",
          0x22: '\\"', 0x5C: "\\\\"}


def _is_print(r: int) -> bool:
    """strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.

    Below U+0100 Go answers from a fixed rule (the soft hyphen U+00AD is the one exception in
    U+00A1..U+00FF); above it Unicode's categories decide, which is exactly what Python's
    str.isprintable tests ("Other" and "Separator" categories except the ASCII space). Beyond
    ASCII the fixed rule gives str.isprintable's answer too, which go_quote_body relies on
    (tests/generators/protocols/test_fast_paths.py checks every code point).
    """
    if r <= 0xFF:
        return 0x20 <= r <= 0x7E or (0xA1 <= r <= 0xFF and r != 0xAD)
    return chr(r).isprintable()


def _escape_rune(r: int, out: list[str]) -> None:
    short = _SHORT.get(r)
    if short is not None:
        out.append(short)
    elif _is_print(r):
        out.append(chr(r))
    elif r < 0x20 or r == 0x7F:
        out.append("\\x" + _HEX[r >> 4] + _HEX[r & 0xF])
    elif r < 0x10000:
        out.append(f"\\u{r:04x}")
    else:
        out.append(f"\\U{r:08x}")


def _byte_table() -> dict[int, str]:
    """str.translate's table for text decoded with surrogateescape that holds ASCII and
    undecodable bytes only: each ASCII character as Quote writes it, each byte that is not UTF-8
    (U+DC80..U+DCFF) as \\xNN."""
    table: dict[int, str] = {}
    for b in range(0x80):
        out: list[str] = []
        _escape_rune(b, out)
        if out[0] != chr(b):
            table[b] = out[0]
    for b in range(0x80, 0x100):
        table[0xDC00 + b] = "\\x" + _HEX[b >> 4] + _HEX[b & 0xF]
    return table


_BYTE_TABLE = translate_table(_byte_table())
_PLAIN = re.compile(b'[^\\x20-\\x7e]|["\\\\]').search


def go_quote_body(data: bytes) -> str:
    """strconv.Quote(string(data)) with the surrounding double quotes removed."""
    if _PLAIN(data) is None:
        return data.decode("ascii")
    # Python's UTF-8 decoder with surrogateescape turns each byte Go's DecodeRune rejects into
    # U+DC80+byte and decodes every valid sequence to its rune, as Go's loop reads them one by
    # one (a rejected sequence's bytes cannot start a valid one). One translation escapes the
    # ASCII characters and the undecodable bytes; a decoded rune beyond ASCII stays as it is when
    # printable, where str.isprintable is strconv.IsPrint (see _is_print), and only a text with a
    # rune that is not printable takes the character loop.
    text = data.decode("utf-8", "surrogateescape").translate(_BYTE_TABLE)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape_non_printable(ord(c)) for c in text)


def _escape_non_printable(r: int) -> str:
    out: list[str] = []
    _escape_rune(r, out)
    return out[0]


@functools.lru_cache(maxsize=None)
def json_quoter(dialect: json_text.Dialect) -> Callable[[bytes], str]:
    """data -> `json_text.quote(go_quote_body(data), dialect)`, the JSON string TiCDC writes for a
    binary CHAR/VARCHAR/BINARY/VARBINARY value, with the dialect's escaping folded into Quote's
    translation table: one pass in C where there were two. A rune Quote keeps (printable, beyond
    ASCII) is one no dialect escapes, so the folded table leaves it too; text with a rune that is
    not printable takes the two steps."""
    quote = json_text.quoter(dialect)
    folded: dict[int, str] = {}
    for code in [*range(0x80), *range(0xDC80, 0xDD00)]:
        quoted = _BYTE_TABLE[code]
        escaped = quote(quoted if isinstance(quoted, str) else chr(quoted))[1:-1]
        if escaped != chr(code):
            folded[code] = escaped
    table = translate_table(folded)

    def quote_bytes(data: bytes) -> str:
        if _PLAIN(data) is None:
            return quote(data.decode("ascii"))
        text = data.decode("utf-8", "surrogateescape").translate(table)
        if text.isprintable():
            return '"' + text + '"'
        return quote(go_quote_body(data))

    return quote_bytes
