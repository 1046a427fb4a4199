"""Canal-JSON message fields checked against spec 003's message definitions, on every message.

- the common fields have their spec types, `id` is TiCDC's 0 (CANAL-FIELDS-1);
- `es` and `ts` are 13-digit Unix milliseconds; with the TiDB extension `es` is the physical part of
  the commit ts (TiCDC pkg/sink/codec/canal/helper.go convertToCanalTs: commitTs >> 18) (CANAL-FIELDS-2);
- a DDL message is built after its DDL ran: `ts` (build time) is not before `es` (CANAL-DDL-1);
- a TIDB_WATERMARK message comes only with the TiDB extension (CANAL-WATERMARK-1) and has the
  spec's shape: empty database, table and sql, null pkNames/sqlType/mysqlType/data/old, `_tidb`
  holding watermarkTs only (CANAL-WATERMARK-4);
- the `_tidb` field is there exactly when the extension is on, with the commit ts of a row or DDL
  event (CANAL-EXTENSION-1).
"""
from __future__ import annotations

from ...rules import checks_rules
from ..common.lint import Problem
from ..common.wire import is_json_int as _is_int
from .message import WATERMARK_TYPE

_EPOCH_MS = range(10**12, 10**13)  # "13-bit (millisecond) timestamp": 13 digits
_TSO_PHYSICAL_SHIFT = 18
# spec 003's WATERMARK Event example: these fields are empty or null.
_WATERMARK_EMPTY = {"database": "", "table": "", "sql": ""}
_WATERMARK_NULL = ("pkNames", "sqlType", "mysqlType", "data", "old")
_COMMON_TYPES = {"database": str, "table": str, "isDdl": bool, "type": str}


def _where(msg: dict) -> str:
    return f"{msg.get('type')} message of {msg.get('database')}.{msg.get('table')}"


@checks_rules("CANAL-FIELDS-1", name="lint.canal-json.common-fields",
              description="id is 0; database, table, isDdl, type and pkNames have spec 003's types")
def check_common_fields(msg: dict, problems: list[Problem]) -> None:
    where = _where(msg)
    if msg.get("id") != 0 or not _is_int(msg.get("id")):
        problems.append(Problem("CANAL-FIELDS-1", f"{where}: id is {msg.get('id')!r}; TiCDC writes 0"))
    for name, kind in _COMMON_TYPES.items():
        if not isinstance(msg.get(name), kind):
            problems.append(Problem("CANAL-FIELDS-1", f"{where}: {name} is {msg.get(name)!r}, not a "
                                                      f"{'Bool' if kind is bool else 'String'}"))
    pk = msg.get("pkNames")
    if pk is not None and not (isinstance(pk, list) and all(isinstance(n, str) for n in pk)):
        problems.append(Problem("CANAL-FIELDS-1", f"{where}: pkNames is {pk!r}, not an array of column names"))


@checks_rules("CANAL-FIELDS-2", "CANAL-DDL-1", name="lint.canal-json.times",
              description="es and ts are 13-digit epoch milliseconds, es the commit ts's physical time with the "
                          "TiDB extension; a DDL message is built no earlier than its DDL ran")
def check_times(msg: dict, extension: bool, problems: list[Problem]) -> None:
    where = _where(msg)
    es, ts = msg.get("es"), msg.get("ts")
    for name, value in (("es", es), ("ts", ts)):
        if not _is_int(value) or value not in _EPOCH_MS:
            problems.append(Problem("CANAL-FIELDS-2", f"{where}: {name} {value!r} is no 13-digit millisecond "
                                                      f"timestamp"))
    tidb = msg.get("_tidb")
    if extension and isinstance(tidb, dict) and _is_int(es):
        tso = tidb.get("watermarkTs") if msg.get("type") == WATERMARK_TYPE else tidb.get("commitTs")
        if _is_int(tso) and tso >= 0 and es != tso >> _TSO_PHYSICAL_SHIFT:
            problems.append(Problem("CANAL-FIELDS-2", f"{where}: es {es} is not the physical time "
                                                      f"{tso >> _TSO_PHYSICAL_SHIFT} of its TSO {tso}"))
    if msg.get("isDdl") is True and _is_int(es) and _is_int(ts) and ts < es:
        problems.append(Problem("CANAL-DDL-1", f"{where}: built at ts {ts}, before its DDL ran at es {es}; a "
                                               f"DDL event is sent after the DDL executed"))


@checks_rules("CANAL-WATERMARK-1", "CANAL-WATERMARK-4", name="lint.canal-json.watermark-shape",
              description="TIDB_WATERMARK messages only with the TiDB extension, with empty or null fields "
                          "and _tidb.watermarkTs only")
def check_watermark(msg: dict, extension: bool, problems: list[Problem]) -> None:
    if msg.get("type") != WATERMARK_TYPE:
        return
    if not extension:
        problems.append(Problem("CANAL-WATERMARK-1", "TIDB_WATERMARK message in a stream without "
                                                     "enable-tidb-extension, which alone sends watermarks"))
    for name, empty in _WATERMARK_EMPTY.items():
        if msg.get(name) != empty:
            problems.append(Problem("CANAL-WATERMARK-4", f"TIDB_WATERMARK message: {name} is "
                                                         f"{msg.get(name)!r}, not empty"))
    for name in _WATERMARK_NULL:
        if msg.get(name) is not None:
            problems.append(Problem("CANAL-WATERMARK-4", f"TIDB_WATERMARK message: {name} is not null"))
    if msg.get("isDdl") is not False:
        problems.append(Problem("CANAL-WATERMARK-4", "TIDB_WATERMARK message: isDdl is not false"))
    tidb = msg.get("_tidb")
    if extension and (not isinstance(tidb, dict) or set(tidb) != {"watermarkTs"} or not _is_int(tidb["watermarkTs"])):
        problems.append(Problem("CANAL-WATERMARK-4", f"TIDB_WATERMARK message: _tidb is {tidb!r}; it holds "
                                                     f"the watermarkTs TSO only"))


@checks_rules("CANAL-EXTENSION-1", name="lint.canal-json.extension",
              description="_tidb is present exactly with enable-tidb-extension, carrying each row and DDL "
                          "event's commitTs")
def check_extension(msg: dict, extension: bool, problems: list[Problem]) -> None:
    if msg.get("type") == WATERMARK_TYPE:
        return  # check_watermark
    where = _where(msg)
    tidb = msg.get("_tidb")
    if not extension:
        if tidb is not None:
            problems.append(Problem("CANAL-EXTENSION-1", f"{where}: carries _tidb, but the stream's "
                                                         f"enable-tidb-extension is off"))
        return
    if not isinstance(tidb, dict) or not _is_int(tidb.get("commitTs")) or tidb["commitTs"] <= 0:
        problems.append(Problem("CANAL-EXTENSION-1", f"{where}: no _tidb.commitTs, which the TiDB extension "
                                                     f"adds to every row and DDL event"))
