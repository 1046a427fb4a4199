"""Open Protocol lint rules, judged on the message the decoder read (spec 002, Column type code and
Bit flags; lint_shape.py holds the DDL, flag-bit, delete and per-transaction rules).

Per column of a row event:
- the value has the JSON shape its type code allows (the decoder's column reader, run again on a
  record the decoder rejected so the finding names the type code's rule, OPEN-TYPECODE-n);
- the flags agree with themselves: "h" (where handle) exactly when HandleKeyFlag is set (TiCDC
  pkg/sink/codec/open/codec.go writes "h" for handle-key columns, message.go initColumnFlags sets
  HandleKeyFlag for the same columns); a handle-key column is not nullable (TiDB keys its handle on
  NOT NULL columns); UnsignedFlag only on numeric type codes (TiDB's unsigned attribute exists for
  integers, FLOAT, DOUBLE, DECIMAL, and TiDB sets it on BIT and YEAR);
- a column keeps its type code and flags from one row event to the next until a DDL of its table
  (a type code "represents the column data type"; flags "represent specific attributes of columns").
  Events older than the table's last DDL on the partition are re-sent ones and keep their old types.
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_contract.record import KafkaRecord

from ...events import DecodedRow
from ...rules import checks_rules
from ..common.interface import Read
from ..common.lint import LintContext, Problem, rejected, rejection
from ..common.wire import Malformed, is_json_int
from .decoder import new_decoder
from .lint_shape import (
    NULLABLE_FLAG,
    DdlBarrier,
    GeneratedColumns,
    Transactions,
    check_ddl_type,
    check_delete_columns,
    check_flag_bits,
)
from .message import KIND_DDL, KIND_ROW, Event
from .options import OpenProtocolOptions
from .values import HANDLE_KEY_FLAG, UNSIGNED_FLAG, decode_column

# spec 002, Column type code: which rule's table row defines each code.
_TYPECODE_RULES = {
    **dict.fromkeys((1, 2, 3), "OPEN-TYPECODE-1"), **dict.fromkeys((4, 5), "OPEN-TYPECODE-2"),
    6: "OPEN-TYPECODE-3", 7: "OPEN-TYPECODE-4", **dict.fromkeys((8, 9), "OPEN-TYPECODE-5"),
    **dict.fromkeys((10, 11, 12, 13, 14), "OPEN-TYPECODE-6"), **dict.fromkeys((15, 253), "OPEN-TYPECODE-7"),
    16: "OPEN-TYPECODE-8", **dict.fromkeys((245, 246), "OPEN-TYPECODE-9"),
    **dict.fromkeys((247, 248), "OPEN-TYPECODE-10"), **dict.fromkeys((249, 250, 251, 252), "OPEN-TYPECODE-11"),
    254: "OPEN-TYPECODE-12", 255: "OPEN-TYPECODE-13",
}
# TINYINT..INT, FLOAT, DOUBLE, BIGINT, MEDIUMINT, YEAR, BIT, DECIMAL
_NUMERIC_CODES = frozenset({1, 2, 3, 4, 5, 8, 9, 13, 16, 246})
VALUE_RULES = ("OPEN-COLUMN-1", *dict.fromkeys(_TYPECODE_RULES.values()))


def _well_formed(obj: Any) -> bool:
    """{t, h, f, v} with a known code, an integer "f", a boolean "h" and a "v": then a failure to read
    the value is the value disagreeing with its type code."""
    return (isinstance(obj, dict) and is_json_int(obj.get("t")) and obj["t"] in _TYPECODE_RULES and "v" in obj
            and is_json_int(obj.get("f", 0)) and isinstance(obj.get("h", False), bool))


class OpenProtocolLint:
    """The rules of one topic-partition's messages (ProtocolLint)."""

    def __init__(self, context: LintContext) -> None:
        self.decoder = new_decoder(context.options)
        self.decode_rule = context.decode_rule
        # (schema, table) -> column -> (type code, flags or None), since the table's last DDL
        self._columns: dict[tuple[str, str], dict[str, tuple[int, Optional[int]]]] = {}
        self._last_ddl: dict[tuple[str, str], int] = {}
        self._key_only_deletes = OpenProtocolOptions.from_options(context.options).delete_only_output_handle_key_columns
        self._transactions = Transactions()
        self._barrier = DdlBarrier()
        self._generated = GeneratedColumns()

    def check(self, record: KafkaRecord, read: Read) -> list[Problem]:
        problems: list[Problem] = []
        # A broken framing leaves no message; the decoder's reason says what is wrong with it.
        events: list[Event] = read.message or []
        for index, event in enumerate(events):
            table = (event.key.get("scm") or "", event.key.get("tbl") or "")
            if event.kind == KIND_DDL:
                self._columns.pop(table, None)
                self._last_ddl[table] = max(event.ts, self._last_ddl.get(table, 0))
                value, where = event.value, f"event {index} {table[0]}.{table[1]}"
                check_ddl_type(value, where, problems)
                query = value.get("q") if value is not None else None
                self._barrier.ddl(table, event.ts, query, where, problems)
                self._generated.ddl(table, query)
            elif event.kind == KIND_ROW:
                self._row(index, event, table, problems, values=read.error is not None)
        for decoded in read.events:
            if isinstance(decoded, DecodedRow):
                self._transactions.check(decoded, problems)
        rejected(problems, self.decode_rule, rejection(record, read.error))
        return problems

    def finish(self) -> list[Problem]:
        return []

    def _row(self, index: int, event: Event, table: tuple[str, str], problems: list[Problem], values: bool) -> None:
        value = event.value  # None: the decoder's reason says what is wrong with the value
        if value is None:
            return
        if self._key_only_deletes and "p" not in value and isinstance(value.get("d"), dict):
            check_delete_columns(value["d"], f"event {index} {table[0]}.{table[1]} \"d\"", problems)
        current = event.ts >= self._last_ddl.get(table, 0)
        self._barrier.row(table, event.ts)
        known = self._columns.setdefault(table, {})
        for section in ("u", "p", "d"):
            columns = value.get(section)
            if not isinstance(columns, dict):
                continue
            for name, obj in columns.items():
                where = f"event {index} {table[0]}.{table[1]} \"{section}\" column {name!r}"
                if values and not self.check_value(obj, where, problems):
                    continue
                if not _well_formed(obj):
                    continue
                # Flags found wrong are not held against the column's later events as well.
                possible = "f" not in obj or check_flag_bits(obj["f"], where, problems)
                if (self.check_flags(obj, where, problems) and possible and current
                        and self._generated.check(table, name, obj.get("f"), where, problems)):
                    self.check_stable(known, name, obj, where, problems)

    @checks_rules(*VALUE_RULES, name="lint.open-protocol.column-value",
                  description="each column is {t, h, f, v} with a known type code and a value that code allows")
    def check_value(self, obj: Any, where: str, problems: list[Problem]) -> bool:
        """Whether the column's value reads as its type code says (a problem added otherwise)."""
        try:
            decode_column(obj)
        except Malformed as e:
            rule = _TYPECODE_RULES[obj["t"]] if _well_formed(obj) else "OPEN-COLUMN-1"
            problems.append(Problem(rule, f"{where}: {e.reason}"))
            return False
        return True

    @checks_rules("OPEN-FLAG-2", "OPEN-FLAG-5", "OPEN-FLAG-6", name="lint.open-protocol.column-flags",
                  description="a column's flags agree with \"h\" and with its type code")
    def check_flags(self, obj: dict, where: str, problems: list[Problem]) -> bool:
        """Whether the flags are consistent (problems added otherwise); true without flags, which the
        first protocol version did not have."""
        if "f" not in obj:
            return True
        code, flag, handle = obj["t"], obj["f"], obj.get("h", False)
        before = len(problems)
        if bool(flag & HANDLE_KEY_FLAG) != handle:
            problems.append(Problem("OPEN-FLAG-2", f"{where}: flags {flag} {'lack' if handle else 'have'} "
                                                   f"HandleKeyFlag but \"h\" is {str(handle).lower()}"))
        if flag & HANDLE_KEY_FLAG and flag & NULLABLE_FLAG:
            problems.append(Problem("OPEN-FLAG-5", f"{where}: flags {flag} mark a handle-key column nullable"))
        if flag & UNSIGNED_FLAG and code not in _NUMERIC_CODES:
            problems.append(Problem("OPEN-FLAG-6", f"{where}: flags {flag} mark a column of type code {code} "
                                                   f"unsigned; only numeric types are"))
        return len(problems) == before

    @checks_rules("OPEN-TYPECODE-1", "OPEN-FLAG-1", name="lint.open-protocol.column-stable",
                  description="a column keeps its type code and flags between DDLs of its table")
    def check_stable(self, known: dict[str, tuple[int, Optional[int]]], name: str, obj: dict, where: str,
                     problems: list[Problem]) -> None:
        now = (obj["t"], obj.get("f"))
        before = known.setdefault(name, now)
        if before[0] != now[0]:
            problems.append(Problem("OPEN-TYPECODE-1", f"{where}: type code {now[0]}, earlier {before[0]} with no "
                                                       f"DDL of the table in between"))
        elif before[1] is not None and now[1] is not None and before[1] != now[1]:
            problems.append(Problem("OPEN-FLAG-1", f"{where}: flags {now[1]}, earlier {before[1]} with no DDL "
                                                   f"of the table in between"))


def new_lint(context: LintContext) -> OpenProtocolLint:
    return OpenProtocolLint(context)
