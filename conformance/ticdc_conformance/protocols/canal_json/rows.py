"""A Canal-JSON DML message (INSERT / UPDATE / DELETE) -> DecodedRow events.

Spec 003, "DML Event": `data` is a list whose every element is one row; on UPDATE `old` runs parallel
to it with the row before the change. By default `old` holds every column; with
only-output-updated-columns or content-compatible it holds only the columns that changed (spec 003,
"Event of Update Type"), so the row before is `data` overlaid with `old` -- the same overlay TiCDC's
own consumer makes (TiCDC pkg/sink/codec/canal/canal_json_decoder.go, canalJSONMessage2DMLEvent).
A DELETE carries the deleted row in `data` with `old` null; before v5.4.0 `old` repeated `data`
("Changes in the Old field of the Delete events"), which is accepted when it really is a copy.
`mysqlType`, `sqlType` and each row name the same columns: TiCDC builds all three from one column
filter (canal_json_encoder.go, newJSONMessageForDML), also when it keeps only handle-key columns.
`pkNames` is the row's key only when mysqlType holds all of it (protocols/common/keys.py).
"""
from __future__ import annotations

from typing import Any, Optional

from ticdc_conformance.protocols.common.keys import carried_key
from ticdc_conformance.protocols.common.wire import Malformed

from ...events import DecodedRow
from .java_type import expected_sql_type
from .message import DML_OPS
from .mysql_type import MySQLType, parse_mysql_type
from .values import decode_value
from .wire import is_sql_type_code, req_list_or_null, req_object, req_str


def decode_rows(msg: dict, kind: str, commit_ts: Optional[int]) -> list[DecodedRow]:
    where = f"{kind} event"
    schema = req_str(msg, "database", where)
    table = req_str(msg, "table", where)
    pk = pk_names(msg, where)
    types = mysql_types(msg, where)
    # pkNames names the whole table's primary key, mysqlType the columns the message carries: a
    # primary key a column selector cut away identifies no row (protocols/common/keys.py).
    key_columns = carried_key([pk], types)
    sql_types = _sql_types(msg, where)
    if sql_types.keys() != types.keys():
        raise Malformed(f"{where}: sqlType and mysqlType describe different columns")
    data = req_list_or_null(msg, "data", where)
    if not data:
        raise Malformed(f"{where}: data must hold at least one row")
    old = req_list_or_null(msg, "old", where)
    if old is not None and len(old) != len(data):
        raise Malformed(f"{where}: old has {len(old)} rows but data has {len(data)}")
    rows = [_decode_row(raw, types, f"{where} data[{i}]", exact=True) for i, raw in enumerate(data)]
    # TiCDC derives sqlType from the one row it sends, so the first row fixes the promotions.
    for name, mtype in types.items():
        expected = expected_sql_type(mtype, rows[0][name])
        if expected is not None and sql_types[name] != expected:
            raise Malformed(f"{where}: column {name!r} of mysqlType {mtype.base!r}"
                            f"{' unsigned' if mtype.unsigned else ''} has sqlType {sql_types[name]}, "
                            f"spec 003 gives {expected} for its value")

    op = DML_OPS[kind]

    def event(after: Optional[dict], before: Optional[dict]) -> DecodedRow:
        return DecodedRow(schema=schema, table=table, op=op, commit_ts=commit_ts, after=after,
                          before=before, key_columns=key_columns)

    if kind == "INSERT":
        if old is not None:
            raise Malformed(f"{where}: old must be null on INSERT")
        return [event(row, None) for row in rows]
    if kind == "DELETE":
        if old is not None and old != data:
            raise Malformed(f"{where}: old on DELETE must be null or (before v5.4.0) a copy of data")
        return [event(None, row) for row in rows]
    if old is None:
        return [event(row, None) for row in rows]
    out = []
    for i, (raw_old, after) in enumerate(zip(old, rows)):
        changed = _decode_row(raw_old, types, f"{where} old[{i}]", exact=False)
        before = {name: changed[name] if name in changed else value for name, value in after.items()}
        out.append(event(after, before))
    return out


def pk_names(msg: dict, where: str) -> tuple[str, ...]:
    names = req_list_or_null(msg, "pkNames", where)
    if names is None:
        return ()
    if not all(isinstance(n, str) for n in names):
        raise Malformed(f"{where}: pkNames must hold column names")
    return tuple(names)


def mysql_types(msg: dict, where: str) -> dict[str, MySQLType]:
    out = {}
    for name, text in req_object(msg, "mysqlType", where).items():
        if not isinstance(text, str):
            raise Malformed(f"{where}: mysqlType of {name!r} must be a string, got {text!r}")
        out[name] = parse_mysql_type(text)
    return out


def _sql_types(msg: dict, where: str) -> dict[str, int]:
    codes = req_object(msg, "sqlType", where)
    for name, code in codes.items():
        if not is_sql_type_code(code):
            raise Malformed(f"{where}: sqlType of {name!r} must be a java.sql.Types code, got {code!r}")
    return codes


def _decode_row(raw: Any, types: dict[str, MySQLType], where: str, exact: bool) -> dict[str, Any]:
    """One row object -> {column: canonical value}, in the row's own (TiCDC: table) column order.

    `exact` rows must name every described column; an update's `old` may name a subset.
    """
    if not isinstance(raw, dict):
        raise Malformed(f"{where}: a row must be an object, got {type(raw).__name__}")
    unknown = [name for name in raw if name not in types]
    if unknown:
        raise Malformed(f"{where}: column {unknown[0]!r} has no mysqlType")
    if exact and len(raw) != len(types):
        missing = next(name for name in types if name not in raw)
        raise Malformed(f"{where}: column {missing!r} is described but has no value")
    return {name: decode_value(name, types[name], value) for name, value in raw.items()}
