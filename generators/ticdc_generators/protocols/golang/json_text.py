"""JSON text as TiCDC's Go JSON writers produce it, down to their string escaping.

orjson matches none of them exactly, so the encoders assemble JSON here. TiCDC uses three writers:
- json-iterator with EscapeHTML off (pkg/util/json_writer.go: Open Protocol in new TiCDC, Debezium):
  only '"', '\\' and bytes below 0x20 are escaped (\\n, \\r, \\t short, the rest \\u00xx), and
  every other byte, valid UTF-8 or not, is copied as is;
- encoding/json (classic tiflow's Open Protocol, Simple): also '<', '>', '&', U+2028 and U+2029 as
  \\u escapes, \\b and \\f short (Go 1.22+), each byte that is not UTF-8 replaced by \\ufffd;
- easyjson's jwriter and goccy/go-json (Canal-JSON): escape as encoding/json, but \\b and \\f
  as \\u0008 and \\u000c.
They differ in those few choices only, which `Dialect` names.

Strings from the model may carry lone surrogates from `surrogateescape` where they stand for bytes
that are not UTF-8; `to_bytes` restores those bytes.
"""
from __future__ import annotations

import base64
import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

import orjson

from .floats import json_float32, json_float64


# eq=False: a dialect is one of the three module constants below, compared and hashed by identity,
# so looking up its escaper costs no Python-level hash of its fields (once per string written).
@dataclass(frozen=True, eq=False)
class Dialect:
    escape_html: bool  # '<', '>', '&', U+2028, U+2029 as \u escapes
    short_bf: bool  # \b and \f rather than \u0008 and \u000c
    replace_invalid: bool  # each byte that is not UTF-8 becomes \ufffd rather than going out as is
    # float numbers: encoding/json writes "1e-7" where json-iterator (v1.1.12 stream_float.go) keeps
    # strconv's "1e-07"; None where TiCDC writes no float numbers with the writer (Canal-JSON prints
    # its floats as strings)
    short_exponent: Optional[bool]


JSONITER = Dialect(escape_html=False, short_bf=False, replace_invalid=False, short_exponent=False)
ENCODING_JSON = Dialect(escape_html=True, short_bf=True, replace_invalid=True, short_exponent=True)
EASYJSON = Dialect(escape_html=True, short_bf=False, replace_invalid=True, short_exponent=None)

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SHORT_BF = {"\b": "\\b", "\f": "\\f"}


def _escape(dialect: Dialect, m: re.Match) -> str:
    c = m.group()
    short = _SHORT.get(c) or (_SHORT_BF.get(c) if dialect.short_bf else None)
    if short is not None:
        return short
    code = ord(c)
    if 0xD800 <= code <= 0xDFFF:  # only matched when replace_invalid
        # A surrogateescape'd byte (U+DC80..U+DCFF) is one invalid byte, which Go replaces by one
        # U+FFFD; any other lone surrogate is three invalid bytes in WTF-8, each replaced.
        return "\\ufffd" if 0xDC80 <= code <= 0xDCFF else "\\ufffd" * 3
    # Go writes the hex digits in lower case ("\u001f", "\u003c").
    return f"\\u{code:04x}"


@functools.lru_cache(maxsize=None)
def _escaper(dialect: Dialect) -> Callable[[str], str]:
    special = '\\x00-\\x1f"\\\\'
    if dialect.escape_html:
        special += "<>&\u2028\u2029"
    if dialect.replace_invalid:
        special += "\ud800-\udfff"
    search = re.compile(f"[{special}]").search
    # Every character the pattern matches and its escape, as str.translate takes them: one pass in
    # C over a string that needs escaping, where a substitution would call back into Python for
    # each match (random binary text has one every few characters).
    escape = functools.partial(_escape, dialect)
    table = translate_table({code: escape(_Char(chr(code))) for code in range(0x10000) if search(chr(code))})

    def escaped(s: str) -> str:
        return s if search(s) is None else s.translate(table)

    return escaped


# Every code point below U+10000 mapped to itself, shared by the translate tables.
_KEEP = list(range(0x10000))


def translate_table(escapes: dict[int, str]) -> list:
    """str.translate's table for `escapes` (code points below U+10000), as a list of every code
    point below U+10000. translate takes a LookupError from the table as "keep the character": a
    dict raises and clears a KeyError for each character it does not map, a list for none but
    those above U+10000 (IndexError), which it keeps all the same."""
    table: list = _KEEP.copy()
    for code, text in escapes.items():
        table[code] = text
    return table


class _Char:
    """A one-character match, as `_escape` reads it."""

    __slots__ = ("c",)

    def __init__(self, c: str) -> None:
        self.c = c

    def group(self) -> str:
        return self.c


def quote(s: str, dialect: Dialect) -> str:
    """s as a JSON string literal, escaped as the dialect's Go writer escapes it."""
    return '"' + _escaper(dialect)(s) + '"'


def quoter(dialect: Dialect) -> Callable[[str], str]:
    """`quote` bound to one dialect, for writers that quote many strings."""
    escape = _escaper(dialect)

    def quote_one(s: str) -> str:
        return '"' + escape(s) + '"'

    return quote_one


# The texts a memoized renderer keeps: more values than scenario `large` keeps live (4 tables of
# 2 000 rows), so that a value is written once while its row lives; at most a few MB.
MEMO_KEPT = 16_384


def memoized(render: Callable[[Any], str], limit: int = MEMO_KEPT) -> Callable[[Any], str]:
    """`render`, a pure function of the value, with its text kept per str or bytes value (bounded:
    the texts are dropped when `limit` are kept).

    A value is written many times over: an UPDATE writes the columns it leaves alone in both images,
    its before image is what an earlier event wrote as its after image, and a DELETE writes the last
    one again. Escaping random binary text costs microseconds, a dict lookup a fraction of one
    (str and bytes keep their hash). Only values of exactly those two types are keys: equal keys
    are then the same value (a str never equals a bytes), where 1 == 1.0 == True, or a subclass,
    could render otherwise. Every other value is rendered each time."""
    cache: dict[Any, str] = {}
    get = cache.get

    def cached(v: Any) -> str:
        kind = type(v)
        if kind is not bytes and kind is not str:
            return render(v)
        text = get(v)
        if text is None:
            if len(cache) >= limit:
                cache.clear()
            text = cache[v] = render(v)
        return text

    return cached


def obj(fields: Iterable[tuple[str, str]], dialect: Dialect) -> str:
    """A JSON object from (name, JSON text) pairs, in the order given."""
    return "{" + ",".join(quote(k, dialect) + ":" + v for k, v in fields) + "}"


def to_bytes(text: str) -> bytes:
    """UTF-8 bytes of JSON text; bytes carried as lone surrogates go out unchanged, as json-iterator
    copies non-ASCII bytes without checking them."""
    return text.encode("utf-8", "surrogateescape")


# --- whole documents ------------------------------------------------------------------------

@dataclass(frozen=True)
class F32:
    """A Go float32 (TiDB stores FLOAT as float32), written with the float32 shortest digits."""

    value: float


@dataclass(frozen=True)
class B64:
    """A Go []byte, which the JSON writers write as a base64 string."""

    value: bytes


@dataclass(frozen=True)
class Raw:
    """Already-serialized JSON, spliced in as is (a json.RawMessage; e.g. schemas cached per table)."""

    data: bytes


def dumps(v: Any, dialect: Dialect) -> bytes:
    """The JSON bytes of `v` as the dialect's writer produces them.

    dict (insertion order kept, standing for struct field order), list, tuple, None, bool and int
    map to JSON as usual; float is a Go float64; F32, B64 and Raw as above; bytes is a Go string
    holding arbitrary bytes (e.g. a BINARY column's default value); str is text.
    """
    out: list[bytes] = []
    _writer(dialect)(v, out)
    return b"".join(out)


def _float(x: float, bits: int, dialect: Dialect) -> bytes:
    if dialect.short_exponent is None:
        raise TypeError("this JSON dialect writes no float numbers")
    write = json_float32 if bits == 32 else json_float64
    return write(x, dialect.short_exponent).encode("ascii")


# Object keys repeat (struct fields, column names), so each dialect's writer keeps their quoted
# form; bounded so that documents with ever new keys cannot grow it without end.
_KEY_CACHE_ENTRIES = 1 << 16


@functools.lru_cache(maxsize=None)
def _writer(dialect: Dialect) -> Callable[[Any, list[bytes]], None]:
    """The dialect's writer. Every message of every encoder goes through it, so it dispatches on
    the exact type of the common values first and binds what it calls to closure variables."""
    escape = _escaper(dialect)
    keys: dict[str, bytes] = {}

    def key(k: str) -> bytes:
        quoted = keys.get(k)
        if quoted is None:
            quoted = quote(k, dialect).encode("utf-8") + b":"
            if len(keys) < _KEY_CACHE_ENTRIES:
                keys[k] = quoted
        return quoted

    def write(v: Any, out: list[bytes]) -> None:
        t = type(v)
        if t is str:
            # strict: text cannot hold surrogates, bytes that are not UTF-8 come as `bytes`
            out.append(('"' + escape(v) + '"').encode("utf-8"))
        elif t is dict:
            if not v:
                out.append(b"{}")
                return
            sep = b"{"
            for k, x in v.items():
                head = sep + key(k)  # a key that is not text fails in quote, before it is cached
                sep = b","
                # the scalars of a row, inline: a call per column value is most of the cost
                tx = type(x)
                if tx is str:
                    out.append(head + ('"' + escape(x) + '"').encode("utf-8"))
                elif x is None:
                    out.append(head + b"null")
                elif tx is int:
                    out.append(head + b"%d" % x)
                else:
                    out.append(head)
                    write(x, out)
            out.append(b"}")
        elif v is None:
            out.append(b"null")
        elif t is int:
            out.append(b"%d" % v)
        elif t is list or t is tuple:
            if not v:
                out.append(b"[]")
                return
            sep = b"["
            for x in v:
                out.append(sep)
                write(x, out)
                sep = b","
            out.append(b"]")
        else:
            _write_other(v, dialect, out, write)

    write.quoted_keys = keys  # type: ignore[attr-defined]  # how full the cache is, for its bound's test
    return write


def _write_other(v: Any, dialect: Dialect, out: list[bytes], write: Callable[[Any, list[bytes]], None]) -> None:
    """Values past the writer's exact-type fast path: bool, floats, the wrappers, bytes, and
    subclasses of the common types."""
    if v is True:
        out.append(b"true")
    elif v is False:
        out.append(b"false")
    elif isinstance(v, str):
        out.append(quote(v, dialect).encode("utf-8"))
    elif isinstance(v, int):
        out.append(str(v).encode("ascii"))
    elif isinstance(v, dict):
        write(dict(v), out)
    elif isinstance(v, (list, tuple)):
        write(list(v), out)
    elif isinstance(v, float):
        out.append(_float(v, 64, dialect))
    elif isinstance(v, F32):
        out.append(_float(v.value, 32, dialect))
    elif isinstance(v, B64):
        out.append(b'"' + base64.b64encode(v.value) + b'"')
    elif isinstance(v, (bytes, bytearray)):
        out.append(to_bytes(quote(bytes(v).decode("utf-8", "surrogateescape"), dialect)))
    elif isinstance(v, Raw):
        out.append(v.data)
    else:
        raise TypeError(f"cannot write {type(v).__name__} as JSON")


# --- orjson for the bulk of a document --------------------------------------------------------

# What orjson writes unlike the dialect's Go writer: \b and \f short where Go writes \u0008 and
# \u000c, '<', '>', '&', U+2028 and U+2029 unescaped, and lone surrogates refused. orjson matches
# the rest: '"' and '\\' escaped, \n, \r and \t short, the other bytes below 0x20 as lower-case
# \u00xx, everything else as UTF-8 (tests/generators/protocols/test_json_text.py).
_ORJSON_DIFFERS = {
    JSONITER: "\b\f\ud800-\udfff",
    ENCODING_JSON: "<>&\u2028\u2029\ud800-\udfff",
    EASYJSON: "\b\f<>&\u2028\u2029\ud800-\udfff",
}
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def safe_for_orjson(dialect: Dialect) -> Callable[[str], bool]:
    """Whether orjson writes a text (a value or an object key) as the dialect does."""
    search = re.compile(f"[{_ORJSON_DIFFERS[dialect]}]").search
    return lambda s: search(s) is None


@functools.lru_cache(maxsize=None)
def orjson_leaf(dialect: Dialect) -> Callable[[Any], Any]:
    """A value converted for orjson.dumps so that orjson writes what `dumps` would: text, ints of
    64 bits, None and bools as they are (orjson writes them alike), anything else — text orjson
    would write otherwise, bigger ints, floats, the wrappers, bytes, containers — as an
    orjson.Fragment of the bytes `dumps` writes for it. The caller keeps object keys safe
    (`safe_for_orjson`)."""
    differs = re.compile(f"[{_ORJSON_DIFFERS[dialect]}]").search
    write = _writer(dialect)
    fragment = orjson.Fragment

    def leaf(v: Any) -> Any:
        t = type(v)
        if t is str:
            if differs(v) is None:
                return v
        elif t is int:
            if _INT64_MIN <= v <= _UINT64_MAX:
                return v
        elif v is None or t is bool:
            return v
        out: list[bytes] = []
        write(v, out)
        return fragment(b"".join(out))

    return leaf


def orjson_bytes(obj: Any) -> bytes:
    """orjson.dumps, copied into a bytes object of its own size: orjson's result keeps the buffer
    it grew (about 4 KiB for a small message), and the record writer holds a row group of them."""
    return bytes(memoryview(orjson.dumps(obj)))


def _unlike_encoding_json(out: bytes) -> bool:
    """Whether orjson's bytes hold what encoding/json escapes: '<', '>', '&', U+2028 or U+2029
    (as UTF-8, both starting with E2 80). A byte value tested with `in` is one memchr scan in C;
    a one-byte bytes needle first fails as an index (bytes.__contains__ tries an int, and raises
    and clears a TypeError), which cost six times the scan, and a regular expression with
    alternatives tried at every byte cost ten times the orjson.dumps it checked."""
    return (0x3C in out or 0x3E in out or 0x26 in out  # '<', '>', '&'
            or (0xE2 in out and (b"\xe2\x80\xa8" in out or b"\xe2\x80\xa9" in out)))


# Without these options orjson would write dataclasses, datetimes and subclasses its own way.
_ORJSON_BASIC_TYPES = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def encoding_json_piece(obj: Any) -> Optional[bytes]:
    """`encoding_json_by_orjson` without the copy to its size, for a piece the caller joins into a
    larger document (the join makes the copy)."""
    try:
        out = orjson.dumps(obj, option=_ORJSON_BASIC_TYPES)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    return None if _unlike_encoding_json(out) else out


def encoding_json_by_orjson(obj: Any) -> Optional[bytes]:
    """`dumps(obj, ENCODING_JSON)` by orjson for a document of text, ints, None, bools, dicts and
    lists, without floats (orjson writes those its own way): orjson escapes as encoding/json
    (\\b and \\f short included) but for the characters above, so its bytes are taken when they
    hold none of them. None otherwise, or when orjson refuses the document (a lone surrogate, an
    int beyond 64 bits, any other type): the caller takes `dumps`."""
    out = encoding_json_piece(obj)
    return None if out is None else bytes(memoryview(out))
