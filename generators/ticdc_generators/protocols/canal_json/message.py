"""The bytes of one Canal-JSON message: DML, DDL and TIDB_WATERMARK.

Field sets and order are TiCDC's (pkg/sink/codec/canal/canal_json_encoder.go, and
canal_json_message.go for the struct TiCDC marshals for DDL and WATERMARK):

    DML:       id database table pkNames isDdl type es ts sql sqlType mysqlType old data [_tidb]
    DDL:       id database table pkNames isDdl type es ts sql sqlType mysqlType data old [_tidb]
    WATERMARK: id database table pkNames isDdl type es ts sql sqlType mysqlType data old _tidb

DML messages are hand-written by TiCDC, which puts `old` before `data`; DDL and WATERMARK are the
JSONMessage struct marshalled in field order, `data` before `old`. `es` is the commit TSO's
physical part; `ts` is TiCDC's wall clock when it builds the message, here the same physical
part (the simulator's fake clock), so output is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ticdc_contract import tso
from ticdc_contract.model import DDL, Op, RowChange

from ...sink.config import SinkConfig
from ..golang import json_text
from .ddl import canal_ddl_type
from .keys import handle_key_columns, pk_names
from .values import java_type, mysql_type, render_value

WATERMARK_TYPE = "TIDB_WATERMARK"

_EVENT_TYPE = {Op.INSERT: "INSERT", Op.UPDATE: "UPDATE", Op.DELETE: "DELETE"}


@dataclass(frozen=True)
class CanalJSONOptions:
    """The sink options Canal-JSON honours, under TiCDC's meaning."""

    enable_tidb_extension: bool = False
    # content-compatible: full mysqlType and, as TiCDC forces it, only updated columns in `old`.
    content_compatible: bool = False
    only_output_updated_columns: bool = False
    delete_only_handle_key_columns: bool = False
    max_message_bytes: int = 10 * 1024 * 1024
    # [sink.kafka-config.large-message-handle]: none | handle-key-only | claim-check, and the
    # compression TiCDC applies to every value (none | snappy | lz4).
    large_message_handle_option: str = "none"
    large_message_handle_compression: str = "none"
    # Classic TiCDC writes `"mysqlType":{}` where new TiCDC writes null (no column selected).
    tiflow: bool = False

    @classmethod
    def from_sink_config(cls, config: SinkConfig) -> "CanalJSONOptions":
        return cls(
            enable_tidb_extension=config.enable_tidb_extension,
            content_compatible=config.content_compatible,
            # TiCDC pkg/sink/codec/common/config.go: content-compatible turns this on.
            only_output_updated_columns=config.only_output_updated_columns or config.content_compatible,
            delete_only_handle_key_columns=config.delete_only_output_handle_key_columns,
            max_message_bytes=config.max_message_bytes,
            large_message_handle_option=config.large_message_handle_option,
            large_message_handle_compression=config.large_message_handle_compression,
            tiflow=config.version_profile == "tiflow",
        )


def quote(s: str) -> str:
    """s as a JSON string, escaped as TiCDC's easyjson (DML) and goccy/go-json (DDL, WATERMARK) writers do."""
    return json_text.quote(s, json_text.EASYJSON)


def _string_list(names: list[str]) -> str:
    return "[" + ",".join(quote(n) for n in names) + "]"


def _row_object(names: list[str], values: dict[str, Optional[str]]) -> str:
    """One row as TiCDC's fillColumns writes it: a one-element array of a column→string object."""
    fields = ((name, "null" if values[name] is None else quote(values[name])) for name in names)
    return "[" + json_text.obj(fields, json_text.EASYJSON) + "]"


def dml_value(change: RowChange, commit_ts: int, opts: CanalJSONOptions, too_large: bool = False,
              claim_check_location: str = "", selected: Optional[frozenset[str]] = None) -> bytes:
    """A DML message; `too_large` makes it the handle-key-only or claim-check form TiCDC sends for
    a row over max-message-bytes (canal_json_encoder.go newJSONMessageForDML, messageTooLarge)."""
    table = change.table
    is_delete = change.op is Op.DELETE
    # A DELETE describes the row it removed; INSERT and UPDATE the row as it now is.
    row: dict[str, Any] = (change.before if is_delete else change.after) or {}
    keys_only = too_large or (is_delete and opts.delete_only_handle_key_columns)
    handle = handle_key_columns(table) if keys_only else frozenset()

    values = {c.name: render_value(c.type, row.get(c.name)) for c in table.columns}
    # sink.column-selectors drop unselected columns from data, old, sqlType and mysqlType
    # (canal_json_encoder.go); new TiCDC still names every primary-key column in pkNames, classic
    # tiflow only the selected ones (its row event lost the others).
    chosen = [c for c in table.columns if selected is None or c.name in selected]
    sent = [c for c in chosen if not keys_only or c.name in handle]
    sent_names = [c.name for c in sent]
    physical = tso.physical_ms(commit_ts)

    out = [
        '{"id":0',
        ',"database":', quote(table.schema),
        ',"table":', quote(table.table),
        ',"pkNames":', _string_list([n for n in pk_names(table)
                                       if selected is None or not opts.tiflow or n in selected]),
        ',"isDdl":false',
        ',"type":', quote(_EVENT_TYPE[change.op]),
        ',"es":', str(physical),
        ',"ts":', str(physical),
        ',"sql":""',
        ',"sqlType":',
    ]
    if sent:
        out.append(json_text.obj(((c.name, str(java_type(c.type, row.get(c.name)))) for c in sent), json_text.EASYJSON))
    else:
        out.append("null")
    out.append(',"mysqlType":')
    if sent:
        # TiCDC fills a Go map here, so its key order is random per message; table order keeps
        # the output deterministic and is one of the orders TiCDC can produce.
        out.append(json_text.obj(((c.name, quote(mysql_type(c.type, opts.content_compatible))) for c in sent),
                                 json_text.EASYJSON))
    else:
        out.append("{}" if opts.tiflow else "null")

    if change.op is Op.UPDATE:
        before = change.before or {}
        old_values = {c.name: render_value(c.type, before.get(c.name)) for c in table.columns}
        old_names = sent_names
        if opts.only_output_updated_columns:
            # Columns are compared by the strings that would be sent (null equals only null).
            old_names = [n for n in sent_names if old_values[n] != values[n]]
        out.append(',"old":')
        out.append(_row_object(old_names, old_values))
    else:
        # Since v5.4 a DELETE no longer repeats its row in `old` (spec 003, "Changes in the Old
        # field of the Delete events").
        out.append(',"old":null')
    out.append(',"data":')
    out.append(_row_object(sent_names, values))

    if opts.enable_tidb_extension:
        out.append(',"_tidb":{"commitTs":' + str(commit_ts))
        # Only a too-large row says why it lost its other columns; a delete cut down by
        # delete-only-output-handle-key-columns does not.
        if too_large and opts.large_message_handle_option == "handle-key-only":
            out.append(',"onlyHandleKey":true')
        if too_large and opts.large_message_handle_option == "claim-check":
            out.append(',"claimCheckLocation":' + quote(claim_check_location))
        out.append("}")
    out.append("}")
    return "".join(out).encode("utf-8")


def _struct_message(*, database: str, table: str, is_ddl: bool, event_type: str, ts: int, sql: str,
                    tidb: Optional[str]) -> bytes:
    """TiCDC's JSONMessage (plus the `_tidb` extension) as go-json marshals it."""
    physical = tso.physical_ms(ts)
    out = (
        '{"id":0'
        ',"database":' + quote(database)
        + ',"table":' + quote(table)
        + ',"pkNames":null'
        + ',"isDdl":' + ("true" if is_ddl else "false")
        + ',"type":' + quote(event_type)
        + ',"es":' + str(physical)
        + ',"ts":' + str(physical)
        + ',"sql":' + quote(sql)
        + ',"sqlType":null,"mysqlType":null,"data":null,"old":null'
    )
    if tidb is not None:
        out += ',"_tidb":{' + tidb + "}"
    return (out + "}").encode("utf-8")


def ddl_value(ddl: DDL, opts: CanalJSONOptions) -> bytes:
    tidb = f'"commitTs":{ddl.commit_ts}' if opts.enable_tidb_extension else None
    return _struct_message(database=ddl.schema, table=ddl.table, is_ddl=True,
                           event_type=canal_ddl_type(ddl.ddl_type), ts=ddl.commit_ts, sql=ddl.query, tidb=tidb)


def watermark_value(ts: int) -> bytes:
    return _struct_message(database="", table="", is_ddl=False, event_type=WATERMARK_TYPE, ts=ts, sql="",
                           tidb=f'"watermarkTs":{ts}')
