"""The `mysqlType` entry of a column, in both forms TiCDC writes.

By default TiCDC writes the bare type name plus " unsigned"/" zerofill" ("int", "bigint unsigned",
"varbinary"); with content-compatible=true it writes the full column type as official Canal does
("decimal(10,4)", "enum('a','b','c')", "datetime(3)", "int(10) unsigned") -- spec 003, "mysqlType field".
TiCDC pkg/sink/codec/common/helper.go (GetMySQLType) builds the first from TiDB's TypeToStr, which
prints the binary-charset string types as binary/varbinary/*blob, and the second from the column's
type description, which quotes ENUM/SET members with '' for a quote and \\0, \\n, \\r escapes.
Official Canal puts a space after the comma of "decimal(10, 4)", so both spellings are read.

A stream from elsewhere (official Canal, another TiCDC version, a captured MySQL changefeed) may name
a type spec 003's tables do not list ("geometry", "double precision", "bool"). Such a column is
still a column: its type is marked unknown (`known` false) and its values are carried as the
message gives them, unread (values.py), with no sqlType to expect of it (java_type.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ticdc_conformance.protocols.common.wire import Malformed

# spec 003, "mysqlType field" and the tables of "SQL Type field": the type names TiCDC writes (TiDB's
# TypeToStr), each with a sqlType code (java_type.py) and a value reader (values.py).
BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
KNOWN_TYPES = BINARY_TYPES | TEXT_TYPES | frozenset({
    "tinyint", "smallint", "mediumint", "int", "bigint", "float", "double", "decimal",
    "date", "datetime", "timestamp", "time", "year", "enum", "set", "bit", "json",
})

# A type name is one or more words ("double precision"); the modifiers after it are not part of it.
_SHAPE = re.compile(r"([a-z_]+(?:\s+[a-z_]+)*?)\s*(?:\((.*)\))?((?:\s+(?:unsigned|signed|zerofill))*)",
                    re.S | re.I)
_NUMBER = re.compile(r"[0-9]{1,10}")
# TiDB's format.OutputFormat escapes inside a quoted member.
_MEMBER_ESCAPES = {"0": "\0", "n": "\n", "r": "\r"}


@dataclass(frozen=True)
class MySQLType:
    base: str  # the type name, lower case; one of KNOWN_TYPES when `known`
    unsigned: bool = False
    zerofill: bool = False
    # The parenthesised numbers when the type carries them: (flen,), (flen, decimal) or (fsp,).
    params: tuple[int, ...] = ()
    # ENUM/SET members, only known when content-compatible spells them out.
    elements: Optional[tuple[str, ...]] = None
    # False for a type name outside spec 003's tables: its values are carried unread.
    known: bool = True

    @property
    def is_binary(self) -> bool:
        return self.base in BINARY_TYPES

    @property
    def is_text(self) -> bool:
        return self.base in TEXT_TYPES

    @property
    def decimal_scale(self) -> Optional[int]:
        """The DECIMAL scale when carried: "decimal(10)" has scale 0, bare "decimal" says nothing."""
        if self.base != "decimal" or not self.params:
            return None
        return self.params[1] if len(self.params) == 2 else 0

    @property
    def fsp(self) -> Optional[int]:
        """Fractional-second digits of DATETIME/TIMESTAMP/TIME when carried."""
        if self.base not in ("datetime", "timestamp", "time") or not self.params:
            return None
        return self.params[-1]

    @property
    def bit_width(self) -> Optional[int]:
        if self.base != "bit" or not self.params:
            return None
        return self.params[0]


def parse_mysql_type(text: str) -> MySQLType:
    m = _SHAPE.fullmatch(text.strip())
    if m is None:
        raise Malformed(f"mysqlType {text!r} is not a MySQL column type")
    base = " ".join(m.group(1).lower().split())
    modifiers = m.group(3).lower().split()
    args = m.group(2)
    if base not in KNOWN_TYPES:
        # Its parameters, if any, mean nothing this decoder reads.
        return MySQLType(base, unsigned="unsigned" in modifiers, zerofill="zerofill" in modifiers, known=False)
    elements = None
    params: tuple[int, ...] = ()
    if args is not None:
        if base in ("enum", "set"):
            elements = _parse_members(args, text)
        else:
            params = _parse_params(args, text)
    return MySQLType(base, unsigned="unsigned" in modifiers, zerofill="zerofill" in modifiers,
                     params=params, elements=elements)


def _parse_params(args: str, text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in args.split(",")]
    if not 1 <= len(parts) <= 2 or not all(_NUMBER.fullmatch(p) for p in parts):
        raise Malformed(f"mysqlType {text!r} has malformed parameters")
    return tuple(int(p) for p in parts)


def _parse_members(args: str, text: str) -> tuple[str, ...]:
    members: list[str] = []
    i, n = 0, len(args)
    while True:
        while i < n and args[i] == " ":
            i += 1
        if i >= n or args[i] != "'":
            raise Malformed(f"mysqlType {text!r}: ENUM/SET member is not quoted")
        i += 1
        chars: list[str] = []
        while True:
            if i >= n:
                raise Malformed(f"mysqlType {text!r}: unterminated ENUM/SET member")
            c = args[i]
            if c == "'":
                if i + 1 < n and args[i + 1] == "'":
                    chars.append("'")
                    i += 2
                    continue
                i += 1
                break
            if c == "\\" and i + 1 < n and args[i + 1] in _MEMBER_ESCAPES:
                chars.append(_MEMBER_ESCAPES[args[i + 1]])
                i += 2
                continue
            chars.append(c)
            i += 1
        members.append("".join(chars))
        while i < n and args[i] == " ":
            i += 1
        if i == n:
            return tuple(members)
        if args[i] != ",":
            raise Malformed(f"mysqlType {text!r}: ENUM/SET members are not comma separated")
        i += 1
