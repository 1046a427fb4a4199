"""Canal-JSON DML messages checked column by column (spec 003, "SQL Type field" and "mysqlType field").

- each mysqlType is a MySQL column type, bare unless content-compatible mode is on (CANAL-MYSQLTYPE-1,
  CANAL-MYSQLTYPE-2);
- each value reads as its mysqlType says (binary columns one ISO-8859-1 character per byte,
  CANAL-BINARY-1);
- each sqlType is the java.sql.Types code spec 003's tables give the mysqlType, unsigned integers
  promoted by the value of the row TiCDC computed it from, the first of `data` (TiCDC
  pkg/sink/codec/canal/helper.go). The finding names the table row that defines the code.
"""
from __future__ import annotations

from typing import Any, Mapping

from ticdc_generators.kafka_record import KafkaRecord

from ...protocols.canal_json import new_decoder
from ...protocols.canal_json.fields import is_sql_type_code
from ...protocols.canal_json.java_type import expected_sql_type
from ...protocols.canal_json.mysql_type import MySQLType, parse_mysql_type
from ...protocols.canal_json.options import parse_options
from ...protocols.canal_json.rows import DML_OPS
from ...protocols.canal_json.values import decode_value
from ...protocols.common import Malformed, json_object
from ...protocols.compression import decompress
from ...rules import checks_rules
from .base import Problem, Read, decode, rejected

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
COLUMN_RULES = ("CANAL-SQLTYPE-1", *dict.fromkeys(_SQLTYPE_RULES.values()), "CANAL-SQLTYPE-13",
                "CANAL-MYSQLTYPE-1", "CANAL-MYSQLTYPE-2", "CANAL-BINARY-1")


class CanalJSONReader:
    def __init__(self, options: Mapping[str, Any], decode_rule: str) -> None:
        self.decoder = new_decoder(options)
        self.options = parse_options(options)
        self.decode_rule = decode_rule

    def read(self, record: KafkaRecord) -> Read:
        events, reason = decode(self.decoder, record)
        problems: list[Problem] = []
        try:
            msg = json_object(decompress(self.options.large_message_handle_compression, record.value or b""),
                              "value")
        except (Malformed, ValueError):
            msg = None
        if msg is not None and msg.get("isDdl") is False and isinstance(msg.get("type"), str) \
                and msg["type"] in DML_OPS:
            self.check_columns(msg, problems)
        rejected(problems, self.decode_rule, reason)
        return Read(events, problems)

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
            if (mtype.params or mtype.elements is not None) and not self.options.content_compatible:
                problems.append(Problem("CANAL-MYSQLTYPE-2", f"{where} column {name!r}: mysqlType {text!r} carries "
                                                             f"type parameters, which only content-compatible "
                                                             f"mode writes"))
            values = [self._value(name, mtype, row, where, problems) for row in data + old if name in row]
            if isinstance(sql_types, dict) and name in sql_types:
                first = values[0] if data and name in data[0] else None
                self._sql_type(name, mtype, sql_types[name], first, where, problems)

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
