"""The table schema a BOOTSTRAP or DDL message carries, as message.TableInfo (spec 004, "TableSchema
definition"): JSON and Avro alike, the database named `schema` in JSON and `database` in Avro.
"""
from __future__ import annotations

from typing import Optional

from ticdc_conformance.protocols.common.wire import Malformed

from ..message import KIND_OF, ColumnInfo, TableInfo
from .fields import get_bool, get_dict, get_int, get_list, get_str, get_str_list


def _column(raw: object, where: str) -> ColumnInfo:
    if not isinstance(raw, dict):
        raise Malformed(f"{where}: column must be an object")
    name = get_str(raw, "name", where)
    where = f"{where} column {name!r}"
    dt = get_dict(raw, "dataType", where)
    mysql_type = get_str(dt, "mysqlType", where)
    charset = get_str(dt, "charset", where)
    get_str(dt, "collate", where)
    kind = KIND_OF.get(mysql_type)
    if kind is None:
        raise Malformed(f"{where}: unknown mysqlType {mysql_type!r}")
    # TiCDC pkg/sink/codec/simple/decoder.go newTiColumnInfo: a string or blob column whose charset is
    # "binary" carries the binary flag, so its value travels as bytes (base64 in JSON) whatever its name.
    if kind == "text" and charset == "binary":
        kind = "binary"
    # `length`, `decimal`, `elements`, `unsigned` are omitempty in JSON and null-able unions in Avro
    # (TiCDC pkg/sink/codec/simple/message.go dataType, message.json DataType).
    length = get_int(dt, "length", where, optional=True, lo=-(2**63), hi=2**63 - 1) or 0
    decimal = get_int(dt, "decimal", where, optional=True, lo=-(2**31), hi=2**31 - 1) or 0
    elements = get_str_list(dt, "elements", where, optional=True) or ()
    unsigned = bool(get_bool(dt, "unsigned", where, optional=True))
    get_bool(dt, "zerofill", where, optional=True)
    nullable = get_bool(raw, "nullable", where)
    return ColumnInfo(name, mysql_type, kind, charset, unsigned, length, decimal, elements, nullable)


def _key_candidates(indexes: list, by_name: dict[str, ColumnInfo], where: str) -> tuple[tuple[str, ...], ...]:
    """The PK, then the unique indexes whose columns are all NOT NULL, fewest columns first and the
    earliest on a tie: the order TiCDC picks its handle key in (TiCDC pkg/common/
    table_info_helper.go initIndexColumns). The first the row carries whole identifies it (protocols/common/keys.py)."""
    parsed = []
    for raw in indexes:
        if not isinstance(raw, dict):
            raise Malformed(f"{where}: index must be an object")
        name = get_str(raw, "name", where)
        iwhere = f"{where} index {name!r}"
        unique = get_bool(raw, "unique", iwhere)
        primary = get_bool(raw, "primary", iwhere)
        get_bool(raw, "nullable", iwhere)
        cols = get_str_list(raw, "columns", iwhere)
        if not cols:
            raise Malformed(f"{iwhere}: index has no columns")
        for c in cols:
            if c not in by_name:
                raise Malformed(f"{iwhere}: index column {c!r} is not a column of the table")
        parsed.append((primary, unique, cols))
    primaries = [tuple(cols) for is_primary, _, cols in parsed if is_primary]
    # Nullability is judged from the columns, as TiCDC's newIndexSchema derives the index's own
    # `nullable` flag from them (TiCDC pkg/sink/codec/simple/message.go).
    uniques = [tuple(cols) for is_primary, is_unique, cols in parsed
               if is_unique and not is_primary and all(not by_name[c].nullable for c in cols)]
    return tuple(primaries[:1] + sorted(uniques, key=len))


def table_from_wire(raw: Optional[dict], schema_key: str, where: str) -> TableInfo:
    """Build a TableInfo from a TableSchema object; JSON names the database `schema`, Avro `database`."""
    if not isinstance(raw, dict):
        raise Malformed(f"{where}: tableSchema must be an object")
    schema = get_str(raw, schema_key, where)
    table = get_str(raw, "table", where)
    where = f"{where} {schema}.{table}"
    table_id = get_int(raw, "tableID", where, lo=-(2**63), hi=2**63 - 1)
    version = get_int(raw, "version", where, lo=0)
    columns = tuple(_column(c, where) for c in get_list(raw, "columns", where))
    by_name: dict[str, ColumnInfo] = {}
    for c in columns:
        if c.name in by_name:
            raise Malformed(f"{where}: duplicate column {c.name!r}")
        by_name[c.name] = c
    # Go marshals a nil slice as null; TiCDC always allocates one, but null still means "no indexes".
    if "indexes" not in raw:
        raise Malformed(f"{where}: missing field 'indexes'")
    indexes = get_list(raw, "indexes", where, optional=True) or []
    keys = _key_candidates(indexes, by_name, where)
    return TableInfo(schema, table, table_id, version, columns, keys, by_name)
