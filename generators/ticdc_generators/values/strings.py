"""CHAR/VARCHAR/TEXT and BINARY/VARBINARY/BLOB domains.

Canonical forms: text types are `str`; CHAR never ends in a space (TiDB strips trailing spaces
when reading CHAR, PAD_CHAR_TO_FULL_LENGTH being off), VARCHAR/TEXT keep them. CHAR/VARCHAR
lengths count characters, TEXT limits count bytes in the column's charset. Binary types are
`bytes`; BINARY(n) is always exactly n bytes (TiDB right-pads with 0x00 and keeps the padding).
"""
from __future__ import annotations

import hashlib
from typing import Callable, Optional

from hypothesis import strategies as st

from ticdc_contract.tidb_types import Charset, TiDBType, type_charset
from ticdc_contract.type_catalogue import BLOB_BYTE_LIMITS, TXN_ENTRY_SIZE_LIMIT

from . import gen as g
from .domain import Edge, Family

# Sizes of the "large value" edges of MEDIUM/LONG TEXT and BLOB: TiDB's default
# txn-entry-size-limit (6 MiB) keeps whole rows far below those types' own limits.
LARGE_EDGE_BYTES = 1 << 20
# Hypothesis strings and byte strings stay below this many elements; edges cover larger sizes.
STRATEGY_MAX_SIZE = 4096

# Code-point ranges per script, for draws of arbitrary text (a range is picked, then a character).
_RANGES_BMP = [
    (0x20, 0x7E), (0x00, 0x1F), (0xC0, 0xFF), (0x100, 0x17F), (0x300, 0x36F), (0x391, 0x3C9),
    (0x410, 0x44F), (0x5D0, 0x5EA), (0x621, 0x64A), (0x905, 0x939), (0xE01, 0xE2E), (0x2000, 0x206F),
    (0x3041, 0x3096), (0x4E00, 0x9FA5), (0xAC00, 0xD7A3), (0xFF01, 0xFF5E),
]
_RANGES_ASTRAL = [(0x1F600, 0x1F64F), (0x1F300, 0x1F5FF), (0x20000, 0x2A6D6), (0x1D400, 0x1D4FF)]
_ALPHABETS: dict[str, tuple[list, Callable]] = {
    "utf8mb4": (_RANGES_BMP + _RANGES_ASTRAL, lambda: st.characters(codec="utf-8")),
    "utf8": (_RANGES_BMP, lambda: st.characters(codec="utf-8", max_codepoint=0xFFFF)),
    "latin1": ([(0x20, 0x7E), (0x00, 0x1F), (0xA0, 0xFF)],
               lambda: st.one_of(st.characters(codec="ascii"), st.characters(min_codepoint=0xA0, max_codepoint=0xFF))),
    "ascii": ([(0x20, 0x7E), (0x00, 0x1F)], lambda: st.characters(codec="ascii")),
    "gbk": ([(0x20, 0x7E), (0x00, 0x1F), (0x4E00, 0x9FA5), (0xFF01, 0xFF5E)],
            lambda: st.one_of(st.characters(codec="ascii"), st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5))),
}

MIXED_SCRIPTS = "Grüße Привет Γειά 你好 こんにちは 안녕 مرحبا שלום नमस्ते สวัสดี 😀🎉"


def in_repertoire(cs: Charset, s: str) -> bool:
    if cs.name == "latin1":  # MySQL's latin1 is cp1252: keep to the code points both agree on
        return all(ord(c) < 0x80 or 0xA0 <= ord(c) <= 0xFF for c in s)
    if cs.name == "utf8" and any(ord(c) > 0xFFFF for c in s):
        return False
    try:
        s.encode(cs.codec)
    except UnicodeEncodeError:
        return False
    return True


def byte_length(cs: Charset, s: str) -> int:
    return len(s.encode(cs.codec))


def _fit(cs: Charset, s: str, max_chars: int, max_bytes: int, strip: bool) -> str:
    """`s` cut to the column: characters outside the charset dropped, then the length limits."""
    if not in_repertoire(cs, s):
        s = "".join(c for c in s if in_repertoire(cs, c))
    s = s[:max_chars]
    if max_bytes < len(s) * cs.maxlen:
        while byte_length(cs, s) > max_bytes:
            s = s[:-1]
    return s.rstrip(" ") if strip else s


def _realistic_text(rng, fk, long: bool) -> str:
    kind = rng.randrange(12)
    if kind == 0:
        return fk.any_script().name()
    if kind == 1:
        return fk.any_script().first_name()
    if kind == 2:
        return fk.any_script().word()
    if kind == 3:
        f = fk.any_script()
        return f.paragraph(nb_sentences=rng.randint(2, 12)) if long else f.sentence(nb_words=rng.randint(2, 8))
    if kind == 4:
        return fk.default().email()
    if kind == 5:
        return fk.any_script().city()
    if kind == 6:
        return fk.default().company()
    if kind == 7:
        return fk.default().uuid4()
    if kind == 8:
        return fk.default().bothify("??-####-##", letters="ABCDEFGHJKLMNPQRSTUVWXYZ")
    if kind == 9:  # a phrase with emoji (4-byte UTF-8)
        return fk.any_script().word() + " " + "".join(chr(rng.randint(0x1F600, 0x1F64F)) for _ in range(rng.randint(1, 3)))
    if kind == 10:
        return MIXED_SCRIPTS[rng.randrange(len(MIXED_SCRIPTS)):][: rng.randint(1, 20)]
    return fk.any_script().address() if long else fk.any_script().street_name()


def text_family(t: TiDBType) -> Family:
    cs = type_charset(t)
    is_char = t.base == "char"
    if t.base in ("char", "varchar"):
        max_chars = t.effective_flen
        max_bytes = max_chars * cs.maxlen
    else:
        max_bytes = min(BLOB_BYTE_LIMITS[t.base], TXN_ENTRY_SIZE_LIMIT)
        max_chars = max_bytes
    long = t.base not in ("char", "varchar", "tinytext")
    ranges, alpha_strategy = _ALPHABETS[cs.name]
    alphabet = g.characters(ranges, strategy=alpha_strategy())
    fit = lambda s: _fit(cs, s, max_chars, max_bytes, is_char)  # noqa: E731
    fallback = g.text(alphabet, max_size=min(max_chars, STRATEGY_MAX_SIZE), typical_max=min(max_chars, 24)).map(fit)
    gen = g.weighted((0.8, g.realistic(lambda rng, fk: fit(_realistic_text(rng, fk, long)), fallback)),
                     (0.2, fallback))
    edges = _text_edges(cs, max_chars, max_bytes, is_char, t.base)

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        if not in_repertoire(cs, v):
            raise ValueError(f"characters outside charset {cs.name}")
        if len(v) > max_chars:
            raise ValueError(f"{len(v)} characters, limit {max_chars}")
        n = byte_length(cs, v)
        if n > max_bytes:
            raise ValueError(f"{n} bytes, limit {max_bytes}")
        if is_char and v.endswith(" "):
            raise ValueError("a CHAR value never ends in a space (TiDB strips trailing spaces)")

    defaults: list = []
    if t.base in ("char", "varchar"):
        defaults = [fit(s) for s in ("", "default", "N/A", "默认值", "😀", "it's")]
    return Family(gen, edges, check, defaults)


def _text_edges(cs: Charset, max_chars: int, max_bytes: int, is_char: bool, base: str) -> list[Edge]:
    cands = [
        ("", "empty string"), ("a", "one character"), (" a", "leading space"), ("a b", "inner space"),
        ("a ", "trailing space"), ("a  ", "two trailing spaces"), (" ", "a single space"),
        ("'\"\\`", "quotes, backslash, backtick"), ("%_", "LIKE wildcards"), ("\t\n\r", "tab, LF, CR"),
        ("line1\r\nline2", "CRLF inside"), ("\x00", "NUL"), ("a\x00b", "inner NUL"),
        ("\x01\x1a\x1f\x7f\x08\x0c", "control characters"), ("NULL", "the word NULL"), ("null", "the word null"),
        ("0123", "leading zeros"), ("-0", "numeric-looking"), ("1e5", "numeric-looking"),
        ('{"a": 1}', "JSON-looking"), ("<b>&amp;</b>", "HTML-looking"), ("é", "2-byte UTF-8"),
        ("ÿ", "latin1 0xFF"), ("中", "3-byte UTF-8"), ("😀", "4-byte UTF-8"), ("👩‍💻", "ZWJ emoji sequence"),
        ("e\u0301", "combining accent"), ("\u2028\u2029", "line and paragraph separators"),
        ("\ufeff", "byte-order mark"), ("\ufffd", "replacement character"), ("\uffff", "U+FFFF"),
        ("\U0010ffff", "highest code point"), ("\u200b", "zero-width space"), ("Ａ１", "fullwidth forms"),
        (MIXED_SCRIPTS, "several scripts"), ("汉字中文", "Han"),
    ]
    for ch, what in (("a", "1-byte"), ("é", "2-byte"), ("中", "3-byte"), ("😀", "4-byte")):
        if base in ("char", "varchar"):
            cands.append((ch * max_chars, f"exactly the length limit in {what} characters"))
            if max_chars > 1:
                cands.append((ch * (max_chars - 1), "one below the length limit"))
        elif max_bytes <= 65535:
            per = byte_length(cs, ch) if in_repertoire(cs, ch) else 1
            cands.append((ch * (max_bytes // per) + "a" * (max_bytes % per),
                          f"exactly the byte limit with {what} characters"))
    if base in ("mediumtext", "longtext"):
        cands.append(("x" * 65536, "65536 bytes: beyond TEXT"))
        unit = MIXED_SCRIPTS + " "
        big = unit * -(-LARGE_EDGE_BYTES // len(unit.encode("utf-8")))
        cands.append((big, "just over 1 MiB of mixed scripts"))
    out = []
    for v, why in cands:
        if not in_repertoire(cs, v) or len(v) > max_chars or byte_length(cs, v) > max_bytes:
            continue
        if is_char and v.endswith(" "):
            continue
        out.append(Edge(v, why))
    return out


# --- binary strings --------------------------------------------------------------------------------
ALL_BYTES = bytes(range(256))


def _realistic_bytes(rng, fk) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(16)  # a UUID's bytes
    if kind == 1:
        return hashlib.sha256(rng.randbytes(8)).digest()
    if kind == 2:
        return hashlib.md5(rng.randbytes(8)).digest()
    if kind == 3:
        return fk.any_script().sentence().encode("utf-8")
    if kind == 4:
        return b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(0, 200))
    return rng.randbytes(rng.randint(0, 64))


def binary_family(t: TiDBType) -> Family:
    fixed = t.base == "binary"
    if t.base in ("binary", "varbinary"):
        limit = t.effective_flen
    else:
        limit = min(BLOB_BYTE_LIMITS[t.base], TXN_ENTRY_SIZE_LIMIT)
    fit: Callable[[bytes], bytes]
    if fixed:
        fit = lambda b: b[:limit].ljust(limit, b"\x00")  # noqa: E731
    else:
        fit = lambda b: b[:limit]  # noqa: E731
    fallback = g.binary(max_size=min(limit, STRATEGY_MAX_SIZE), typical_max=min(limit, 32)).map(fit)
    gen = g.weighted((0.8, g.realistic(lambda rng, fk: fit(_realistic_bytes(rng, fk)), fallback)), (0.2, fallback))

    chunk = max(1, min(limit, 256))
    cands = [(b"", "empty"), (b"\x00", "one zero byte"), (b"\x00\x00\x00", "zero bytes"),
             (b"a\x00\x00", "trailing zero bytes"), (b"\x00a", "leading zero byte"), (b"\xff", "0xFF"),
             (b"\x80", "0x80"), (b"\x7f", "0x7F"), (b'"\\', "quote and backslash"), (b"\xc3\x28", "invalid UTF-8"),
             ("😀".encode("utf-8"), "UTF-8 of an emoji"), (b"\xff" * limit if limit <= 65535 else b"",
                                                           "every byte 0xFF up to the limit")]
    cands += [(ALL_BYTES[i:i + chunk], f"byte values {i}..{min(i + chunk, 256) - 1}") for i in range(0, 256, chunk)]
    if limit >= 256:
        cands.append((ALL_BYTES[::-1], "all 256 byte values, descending"))
    if t.base in ("tinyblob", "blob"):
        cands.append((bytes(i % 256 for i in range(limit)), "exactly the byte limit"))
    if t.base in ("mediumblob", "longblob"):
        cands.append((ALL_BYTES * 256 + b"\x00", "65537 bytes: beyond BLOB"))
        cands.append((ALL_BYTES * (LARGE_EDGE_BYTES // 256), "1 MiB"))
    edges = []
    seen: set[bytes] = set()
    for v, why in cands:
        if len(v) > limit:
            continue
        v = fit(v)
        if v not in seen:
            seen.add(v)
            edges.append(Edge(v, why))

    def check(v) -> None:
        if not isinstance(v, bytes):
            raise ValueError(f"expected bytes, got {type(v).__name__}")
        if fixed and len(v) != limit:
            raise ValueError(f"BINARY({limit}) values are exactly {limit} bytes (0x00-padded), got {len(v)}")
        if len(v) > limit:
            raise ValueError(f"{len(v)} bytes, limit {limit}")

    defaults: list = []
    if t.base in ("binary", "varbinary"):
        defaults = [fit(b""), fit(b"\x01\x02"), fit(b"abc")]
    return Family(gen, edges, check, defaults)


def charset_alphabet(cs_name: str) -> Optional[g.Gen]:
    """A one-character Gen over the repertoire of a charset (None if unknown)."""
    if cs_name not in _ALPHABETS:
        return None
    ranges, strat = _ALPHABETS[cs_name]
    return g.characters(ranges, strategy=strat())
