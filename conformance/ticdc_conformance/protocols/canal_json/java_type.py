"""The `sqlType` (java.sql.Types code) TiCDC writes for a column, to cross-check a record's own types.

Spec 003, "SQL Type field" and "Integer types": the code follows from the MySQL type, and for unsigned
integers also from the value -- a value above the signed range of the type moves it to the next wider
Java type. TiCDC pkg/sink/codec/canal/helper.go (mysqlType2JavaType, formatColumnValue) computes it
from the row it sends (the new row, or the deleted row), and a NULL keeps the unpromoted code.
"""
from __future__ import annotations

from typing import Any, Optional

from .mysql_type import MySQLType

BIT, TINYINT, SMALLINT, INTEGER, BIGINT = -7, -6, 5, 4, -5
REAL, DOUBLE, DECIMAL, CHAR, VARCHAR = 7, 8, 3, 1, 12
DATE, TIME, TIMESTAMP, BLOB, CLOB = 91, 92, 93, 2004, 2005

SQL_TYPE_CODES = {
    "tinyint": TINYINT, "smallint": SMALLINT, "mediumint": INTEGER, "int": INTEGER, "bigint": BIGINT,
    "float": REAL, "double": DOUBLE, "decimal": DECIMAL,
    "char": CHAR, "varchar": VARCHAR,
    "tinytext": CLOB, "text": CLOB, "mediumtext": CLOB, "longtext": CLOB,
    "binary": BLOB, "varbinary": BLOB, "tinyblob": BLOB, "blob": BLOB, "mediumblob": BLOB, "longblob": BLOB,
    "date": DATE, "datetime": TIMESTAMP, "timestamp": TIMESTAMP, "time": TIME,
    "year": VARCHAR, "enum": INTEGER, "set": BIT, "bit": BIT, "json": VARCHAR,
}

# Unsigned integers above the signed maximum take a wider code; MEDIUMINT stays INTEGER either way.
PROMOTIONS = {
    "tinyint": (2**7 - 1, SMALLINT),
    "smallint": (2**15 - 1, INTEGER),
    "int": (2**31 - 1, BIGINT),
    "bigint": (2**63 - 1, DECIMAL),
}


def expected_sql_type(mtype: MySQLType, value: Any) -> Optional[int]:
    """The code for a column of `mtype` holding `value` (already decoded; None for NULL); None for a
    type spec 003 gives no code (mysql_type.MySQLType.known false), which may carry any."""
    code = SQL_TYPE_CODES.get(mtype.base)
    if code is None:
        return None
    promotion = PROMOTIONS.get(mtype.base)
    if mtype.unsigned and promotion is not None and isinstance(value, int) and value > promotion[0]:
        return promotion[1]
    return code
