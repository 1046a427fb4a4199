"""The two Go JSON writers TiCDC builds Open Protocol JSON with, down to their string escaping.

New TiCDC writes keys and values field by field with pkg/util/json_writer.go, a jsoniter stream
configured with EscapeHTML off: only '"', '\\' and bytes below 0x20 are escaped (\\n, \\r, \\t
short, the rest as \\u00xx) and every other byte is copied as is. Classic tiflow marshals
structs and maps with encoding/json (pkg/sink/codec/internal/message_key.go and column.go),
which also escapes '<', '>', '&', U+2028 and U+2029, writes \\b and \\f short, replaces bytes
that are not valid UTF-8 with \\ufffd, and sorts map keys. orjson follows neither exactly, so
JSON text is assembled here from pieces that are already JSON.

A piece is a `str` of JSON text; strings from the model may carry lone surrogates from
`surrogateescape` when they stand for bytes that are not UTF-8, which `to_bytes` restores.
"""
from __future__ import annotations

import re
from typing import Iterable

JSONITER = "jsoniter"
ENCODING_JSON = "encoding/json"
DIALECTS = (JSONITER, ENCODING_JSON)

_HEX = "0123456789abcdef"

_JSONITER_SPECIAL = re.compile(r'[\x00-\x1f"\\]')
_STDLIB_SPECIAL = re.compile('[\\x00-\\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')

_JSONITER_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_STDLIB_SHORT = dict(_JSONITER_SHORT, **{"\b": "\\b", "\f": "\\f"})


def _u4(c: str) -> str:
    o = ord(c)
    return "\\u" + _HEX[(o >> 12) & 0xF] + _HEX[(o >> 8) & 0xF] + _HEX[(o >> 4) & 0xF] + _HEX[o & 0xF]


def _jsoniter_escape(m: re.Match) -> str:
    c = m.group()
    return _JSONITER_SHORT.get(c) or _u4(c)


def _stdlib_escape(m: re.Match) -> str:
    c = m.group()
    short = _STDLIB_SHORT.get(c)
    if short is not None:
        return short
    if "\ud800" <= c <= "\udfff":
        # A lone surrogate stands for a byte that is not UTF-8; encoding/json prints U+FFFD.
        return "\\ufffd"
    return _u4(c)


def string(s: str, dialect: str) -> str:
    """s as a JSON string literal, escaped as the dialect's Go writer escapes it."""
    if dialect == JSONITER:
        return '"' + _JSONITER_SPECIAL.sub(_jsoniter_escape, s) + '"'
    if dialect == ENCODING_JSON:
        return '"' + _STDLIB_SPECIAL.sub(_stdlib_escape, s) + '"'
    raise ValueError(f"unknown JSON dialect {dialect!r}")


def obj(fields: Iterable[tuple[str, str]], dialect: str) -> str:
    """A JSON object from (name, JSON text) pairs, in the order given."""
    return "{" + ",".join(string(k, dialect) + ":" + v for k, v in fields) + "}"


def boolean(b: bool) -> str:
    return "true" if b else "false"


def to_bytes(text: str) -> bytes:
    """UTF-8 bytes of JSON text; bytes carried as lone surrogates go out unchanged, as jsoniter
    copies non-ASCII bytes without checking them."""
    return text.encode("utf-8", "surrogateescape")
