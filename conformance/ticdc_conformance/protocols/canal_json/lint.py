"""Canal-JSON lint rules, judged on the message the decoder read; DML messages column by column
(spec 003, "SQL Type field" and "mysqlType field").

- each mysqlType is a MySQL column type, bare unless content-compatible mode is on (CANAL-MYSQLTYPE-1,
  CANAL-MYSQLTYPE-2);
- each value reads as its mysqlType says (binary columns one ISO-8859-1 character per byte,
  CANAL-BINARY-1);
- each sqlType is the java.sql.Types code spec 003's tables give the mysqlType, unsigned integers
  promoted by the value of the row TiCDC computed it from, the first of `data` (TiCDC
  pkg/sink/codec/canal/helper.go). The finding names the table row that defines the code.
- without content-compatible a mysqlType is TiDB's lower-case bare name, as spec 003's example of
  TiCDC's output (CANAL-MYSQLTYPE-3); with it, the types the official Canal writes with parameters
  carry them (CANAL-MYSQLTYPE-4);
- each binary value's raw JSON text escapes its bytes as spec 003's table says (lint_binary.py).
Every message's fields, watermark shape and TiDB extension: lint_fields.py; an UPDATE's old:
lint_update.py.
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_contract.record import KafkaRecord

from ...rules import checks_rules
from ..common.interface import Read
from ..common.lint import LintContext, Problem, rejected, rejection
from ..common.wire import Malformed
from .decoder import new_decoder
from .java_type import expected_sql_type
from .lint_binary import check_binary_text, raw_values
from .lint_fields import check_common_fields, check_extension, check_times, check_watermark
from .lint_update import check_update_old
from .message import DML_OPS, CanalMessage
from .mysql_type import MySQLType, parse_mysql_type
from .options import parse_options
from .values import decode_value
from .wire import is_sql_type_code

# Which table of spec 003 lists each MySQL type's Java SQL type code.
_SQLTYPE_RULES = {
    **dict.fromkeys(("float", "double", "decimal"), "CANAL-SQLTYPE-2"),
    **dict.fromkeys(("char", "varchar", "binary", "varbinary"), "CANAL-SQLTYPE-3"),
    **dict.fromkeys(("tinytext", "text", "mediumtext", "longtext"), "CANAL-SQLTYPE-4"),
    **dict.fromkeys(("tinyblob", "blob", "mediumblob", "longblob"), "CANAL-SQLTYPE-5"),
    **dict.fromkeys(("date", "datetime", "timestamp", "time", "year"), "CANAL-SQLTYPE-6"),
    **dict.fromkeys(("enum", "set", "bit", "json"), "CANAL-SQLTYPE-7"),
    "tinyint": "CANAL-SQLTYPE-8", "smallint": "CANAL-SQLTYPE-9", "mediumint": "CANAL-SQLTYPE-10",
    "int": "CANAL-SQLTYPE-11", "bigint": "CANAL-SQLTYPE-12",
}
# Types the official Canal (and content-compatible mode) writes with their length, scale or members,
# as spec 003's mysqlType example shows them: binary(16), decimal(10, 4), enum('a','b','c') ...
_PARAMETERISED = {"char", "varchar", "binary", "varbinary", "decimal", "bit"}
_MEMBERS = {"enum", "set"}
COLUMN_RULES = ("CANAL-SQLTYPE-1", *dict.fromkeys(_SQLTYPE_RULES.values()), "CANAL-SQLTYPE-13",
                "CANAL-MYSQLTYPE-1", "CANAL-MYSQLTYPE-2", "CANAL-MYSQLTYPE-3", "CANAL-MYSQLTYPE-4",
                "CANAL-BINARY-1")


class CanalJSONLint:
    """The rules of one topic-partition's messages (ProtocolLint)."""

    def __init__(self, context: LintContext) -> None:
        self.decoder = new_decoder(context.options)
        self.options = parse_options(context.options)
        self.decode_rule = context.decode_rule

    def check(self, record: KafkaRecord, read: Read) -> list[Problem]:
        problems: list[Problem] = []
        message: Optional[CanalMessage] = read.message
        msg = message.fields if message is not None else None
        # An object without a `type` is no Canal event at all: the decoder's rejection says so.
        if message is not None and msg is not None and isinstance(msg.get("type"), str):
            self.check_message(msg, problems)
            if msg.get("isDdl") is False and isinstance(msg.get("type"), str) and msg["type"] in DML_OPS:
                self.check_columns(msg, problems)
                self.check_binary(msg, message.text.decode("utf-8", "replace"), problems)
        rejected(problems, self.decode_rule, rejection(record, read.error))
        return problems

    def finish(self) -> list[Problem]:
        return []

    def check_message(self, msg: dict, problems: list[Problem]) -> None:
        extension = self.options.enable_tidb_extension
        check_common_fields(msg, problems)
        check_times(msg, extension, problems)
        check_watermark(msg, extension, problems)
        check_extension(msg, extension, problems)
        check_update_old(msg, self.options.only_output_updated_columns, self.options.content_compatible, problems)

    @staticmethod
    def check_binary(msg: dict, text: str, problems: list[Problem]) -> None:
        mysql_types = msg.get("mysqlType")
        if not isinstance(mysql_types, dict):
            return
        for name, type_text in mysql_types.items():
            try:
                binary = isinstance(type_text, str) and parse_mysql_type(type_text).is_binary
            except Malformed:
                continue  # CANAL-MYSQLTYPE-1, check_columns
            if binary:
                where = f"{msg.get('type')} of {msg.get('database')}.{msg.get('table')} column {name!r}"
                for raw in raw_values(text, name):
                    check_binary_text(raw, where, problems)

    @checks_rules(*COLUMN_RULES, name="lint.canal-json.columns",
                  description="mysqlType, sqlType and each value of a DML message agree, as spec 003's tables "
                              "say (unsigned promotion by the value)")
    def check_columns(self, msg: dict, problems: list[Problem]) -> None:
        where = f"{msg.get('type')} of {msg.get('database')}.{msg.get('table')}"
        mysql_types, sql_types = msg.get("mysqlType"), msg.get("sqlType")
        if not isinstance(mysql_types, dict):
            return
        data = [r for r in msg.get("data") or () if isinstance(r, dict)] if isinstance(msg.get("data"), list) else []
        old = [r for r in msg.get("old") or () if isinstance(r, dict)] if isinstance(msg.get("old"), list) else []
        for name, text in mysql_types.items():
            if not isinstance(text, str):
                continue
            try:
                mtype = parse_mysql_type(text)
            except Malformed as e:
                problems.append(Problem("CANAL-MYSQLTYPE-1", f"{where} column {name!r}: {e.reason}"))
                continue
            if not mtype.known:
                # The decoder carries such a column unread; TiCDC writes only TiDB's one-word type names
                # of spec 003's tables.
                why = "is not a MySQL column type" if " " in mtype.base else "names no TiDB type this decoder knows"
                problems.append(Problem("CANAL-MYSQLTYPE-1", f"{where} column {name!r}: mysqlType {text!r} {why}"))
                continue
            self._mysql_type_form(name, text, mtype, where, problems)
            values = [self._value(name, mtype, row, where, problems) for row in data + old if name in row]
            if isinstance(sql_types, dict) and name in sql_types:
                first = values[0] if data and name in data[0] else None
                self._sql_type(name, mtype, sql_types[name], first, where, problems)

    def _mysql_type_form(self, name: str, text: str, mtype: MySQLType, where: str, problems: list[Problem]) -> None:
        if self.options.content_compatible:
            if (mtype.base in _PARAMETERISED and not mtype.params) or (mtype.base in _MEMBERS
                                                                      and mtype.elements is None):
                problems.append(Problem("CANAL-MYSQLTYPE-4", f"{where} column {name!r}: mysqlType {text!r} "
                                                             f"lacks the parameters content-compatible mode "
                                                             f"writes, as the official Canal does"))
            return
        if mtype.params or mtype.elements is not None:
            problems.append(Problem("CANAL-MYSQLTYPE-2", f"{where} column {name!r}: mysqlType {text!r} carries "
                                                         f"type parameters, which only content-compatible "
                                                         f"mode writes"))
        elif text != text.lower():
            problems.append(Problem("CANAL-MYSQLTYPE-3", f"{where} column {name!r}: mysqlType {text!r}; TiCDC "
                                                         f"writes the lower-case type name"))

    @staticmethod
    def _value(name: str, mtype: MySQLType, row: dict, where: str, problems: list[Problem]) -> Any:
        try:
            return decode_value(name, mtype, row[name])
        except Malformed as e:
            rule = "CANAL-BINARY-1" if mtype.is_binary else "CANAL-MYSQLTYPE-1"
            problems.append(Problem(rule, f"{where}: {e.reason} (mysqlType {mtype.base!r})"))
            return None

    @staticmethod
    def _sql_type(name: str, mtype: MySQLType, code: Any, value: Any, where: str, problems: list[Problem]) -> None:
        if not is_sql_type_code(code):
            problems.append(Problem("CANAL-SQLTYPE-13", f"{where} column {name!r}: sqlType {code!r} is no "
                                                        f"java.sql.Types code"))
            return
        rule = _SQLTYPE_RULES.get(mtype.base)
        if rule is None:
            return  # a type spec 003's tables do not list
        expected = expected_sql_type(mtype, value)
        if code != expected:
            unsigned = " unsigned" if mtype.unsigned else ""
            problems.append(Problem(rule, f"{where} column {name!r}: sqlType {code} for mysqlType "
                                          f"{mtype.base}{unsigned} holding {value!r}; spec 003 gives {expected}"))


def new_lint(context: LintContext) -> CanalJSONLint:
    return CanalJSONLint(context)
