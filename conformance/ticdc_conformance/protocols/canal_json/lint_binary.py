"""How a Canal-JSON binary value is written, read from the message's raw JSON text (spec 003,
"Binary and Blob types").

A binary or blob value is one ISO-8859-1 character per byte (CANAL-BINARY-1, checked on the decoded
value); its JSON text is fixed byte by byte: control characters [0, 31] as \\u00XX escapes, except
tab, line feed and carriage return as \\t, \\n, \\r (CANAL-BINARY-2); printable characters [32, 127]
literal, except '&', '<', '>' as \\u0026, \\u003c, \\u003e (CANAL-BINARY-3; the table's "\\u0038" for
'<' is a misprint, the spec's own example writes \\u003c) and the '"' and '\\' JSON must escape;
[128, 255] literal (CANAL-BINARY-4). Spec 003's example (CANAL-BINARY-5) is exactly this encoding.
The decoded value cannot show how it was escaped, so the check reads the raw text of each value of
a binary column.
"""
from __future__ import annotations

import re
from typing import Iterator

from ...rules import checks_rules
from ..common.lint import Problem

BINARY_RULES = ("CANAL-BINARY-2", "CANAL-BINARY-3", "CANAL-BINARY-4", "CANAL-BINARY-5")
_SHORT = {"t": 9, "n": 10, "r": 13}  # the only control characters with a short escape
_HTML = {0x26, 0x3C, 0x3E}  # '&', '<', '>': escaped as \u00XX
_JSON_ESCAPED = {'"', "\\"}  # JSON cannot write these literally


def raw_values(text: str, column: str) -> Iterator[str]:
    """The raw JSON text of every string value under the key `column` (in data, old and the type maps;
    the type maps' values are plain type names, which pass)."""
    pattern = r'(?<!\\)"' + re.escape(column) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"'
    for m in re.finditer(pattern, text, flags=re.DOTALL):
        yield m.group(1)


def _escape_problem(raw: str, i: int) -> tuple[str, str, int]:
    """(rule, what is wrong, length of the escape) for the escape at raw[i] == '\\'."""
    nxt = raw[i + 1] if i + 1 < len(raw) else ""
    if nxt in _SHORT:
        return "", "", 2
    if nxt in _JSON_ESCAPED:
        return "", "", 2
    if nxt != "u":
        code = {"b": 8, "f": 12, "/": 0x2F}.get(nxt)
        rule = "CANAL-BINARY-3" if code == 0x2F else "CANAL-BINARY-2"
        return rule, f"byte written as the escape \\{nxt}", 2
    try:
        cp = int(raw[i + 2:i + 6], 16)
    except ValueError:
        return "", "", 2  # not JSON; the decoder rejects it
    if cp < 32:
        if cp in _SHORT.values():
            return "CANAL-BINARY-2", f"byte {cp} written as \\u{cp:04x}, not its short escape", 6
        return "", "", 6
    if cp <= 127:
        if cp in _HTML or chr(cp) in _JSON_ESCAPED:
            return "", "", 6
        return "CANAL-BINARY-3", f"printable byte {cp} ({chr(cp)!r}) escaped as \\u{cp:04x}", 6
    if cp <= 255:
        return "CANAL-BINARY-4", f"byte {cp} escaped as \\u{cp:04x}, not the literal Latin-1 character", 6
    return "", "", 6  # above 255: no byte at all, CANAL-BINARY-1


@checks_rules(*BINARY_RULES, name="lint.canal-json.binary-escapes",
              description="each byte of a binary value is written as spec 003's table says: \\u00XX or "
                          "\\t \\n \\r for control bytes, printable bytes literal but & < > escaped, "
                          "[128, 255] literal")
def check_binary_text(raw: str, where: str, problems: list[Problem]) -> None:
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            rule, what, size = _escape_problem(raw, i)
            if rule:
                problems.append(Problem(rule, f"{where}: {what}"))
            i += size
            continue
        if ord(ch) in _HTML:
            problems.append(Problem("CANAL-BINARY-3", f"{where}: byte {ord(ch)} ({ch!r}) written literally; "
                                                      f"spec 003 escapes it as \\u{ord(ch):04x}"))
        i += 1
