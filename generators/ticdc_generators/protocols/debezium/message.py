"""DML and WATERMARK messages: key and value objects, field order as TiCDC writes them.

Spec 000 ("DML event", "WATERMARK event") gives the shapes; the exact order and the TiDB
extension switches follow TiCDC pkg/sink/codec/debezium/codec.go (EncodeKey, EncodeValue,
EncodeCheckpointEvent, writeSourceSchema).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import orjson

from ticdc_contract.model import Op, RowChange
from ticdc_contract.tso import physical_ms

from ..golang import json_text
from ..golang.json_text import Raw
from .columns import TableView, sanitize_name, schema_topic_name
from .field_schema import field_schema
from .values import ValueOptions, fast_renderer, render

CONNECTOR_VERSION = "2.4.0.Final"


def dumps(v: Any) -> bytes:
    """JSON bytes as TiCDC's Debezium codec writes them: its streaming writer over json-iterator
    with EscapeHTML off (TiCDC pkg/util/json_writer.go), whose escapes and float forms orjson lacks."""
    return json_text.dumps(v, json_text.JSONITER)


@dataclass(frozen=True)
class EnvelopeOptions:
    cluster_id: str
    enable_tidb_extension: bool
    disable_schema: bool
    output_old_value: bool
    include_start_ts: bool
    profile: str  # "ticdc" | "tiflow"
    values: ValueOptions


def source_payload(opts: EnvelopeOptions, db: str, table: str, commit_ts: int,
                   start_ts: Optional[int] = None) -> dict:
    """payload.source: Debezium's MySQL source block with TiCDC's constants, plus commit_ts and
    cluster_id (spec 000: "TiCDC adds two fields, CommitTs and ClusterID"), which TiCDC writes
    whether or not the TiDB extension is on."""
    src = {
        "version": CONNECTOR_VERSION,
        "connector": "TiCDC",
        "name": opts.cluster_id,
        # In the source block ts_ms is when the change was made upstream: the commit time.
        "ts_ms": physical_ms(commit_ts),
        "snapshot": "false",
        "db": db,
        "table": table,
        "server_id": 0,
        "gtid": None,
        "file": "",
        "pos": 0,
        "row": 0,
        "thread": 0,
        "query": None,
        "commit_ts": commit_ts,
    }
    if start_ts is not None:
        src["start_ts"] = start_ts
    src["cluster_id"] = opts.cluster_id
    return src


def _f(kind: str, optional: bool, field: str) -> dict:
    return {"type": kind, "optional": optional, "field": field}


def source_schema(opts: EnvelopeOptions, include_start_ts: bool) -> dict:
    fields = [
        _f("string", False, "version"),
        _f("string", False, "connector"),
        _f("string", False, "name"),
        _f("int64", False, "ts_ms"),
        {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
         "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
        _f("string", False, "db"),
        _f("string", True, "sequence"),
        _f("string", True, "table"),
        _f("int64", False, "server_id"),
        _f("string", True, "gtid"),
        _f("string", False, "file"),
        _f("int64", False, "pos"),
        _f("int32", False, "row"),
        _f("int64", True, "thread"),
        _f("string", True, "query"),
    ]
    # New TiCDC declares its two extra source fields only with the TiDB extension; classic
    # TiCDC never declares them (the payload carries them either way).
    if opts.enable_tidb_extension and opts.profile != "tiflow":
        fields.append(_f("int64", False, "commit_ts"))
        fields.append(_f("string", False, "cluster_id"))
    if include_start_ts:
        fields.append(_f("int64", False, "start_ts"))
    return {"type": "struct", "fields": fields, "optional": False,
            "name": "io.debezium.connector.mysql.Source", "field": "source"}


def _tail_schema() -> list:
    """op, ts_ms and transaction (Debezium's event.block), shared by DML and WATERMARK."""
    return [
        _f("string", False, "op"),
        _f("int64", True, "ts_ms"),
        {"type": "struct",
         "fields": [_f("string", False, "id"), _f("int64", False, "total_order"),
                    _f("int64", False, "data_collection_order")],
         "optional": True, "name": "event.block", "version": 1, "field": "transaction"},
    ]


class RowEnvelope:
    """Key and value bytes for row changes of one table version; the schemas are built once."""

    def __init__(self, view: TableView, opts: EnvelopeOptions, selected: Optional[frozenset[str]] = None) -> None:
        self.view = view
        self.opts = opts
        t = view.table
        self._topic_name = schema_topic_name(opts.cluster_id, t.schema, t.table)
        ext = opts.enable_tidb_extension
        # sink.column-selectors: before/after and their schema carry the selected columns only
        # (TiCDC debezium/codec.go writeDebeziumFieldValues). New TiCDC keys the message by
        # every handle-key column (EncodeKey walks the table); classic tiflow by the selected
        # ones (HandleKeyColDataXInfos walks the row event, whose other columns are gone).
        self._value_cols = view.columns if selected is None else \
            tuple(c for c in view.columns if c.name in selected)
        self._key_cols = view.handle_columns()
        if selected is not None and opts.profile == "tiflow":
            self._key_cols = tuple(c for c in self._key_cols if c.name in selected)
        self._key_schema = Raw(dumps({
            "type": "struct",
            "name": f"{self._topic_name}.Key",
            "optional": False,
            "fields": [field_schema(c, ext) for c in self._key_cols],
        }))
        fields = [field_schema(c, ext) for c in self._value_cols]
        value_name = f"{self._topic_name}.Value"
        self._value_schema = Raw(dumps({
            "type": "struct",
            "optional": False,
            "name": f"{self._topic_name}.Envelope",
            "version": 1,
            "fields": [
                {"type": "struct", "optional": True, "name": value_name, "field": "before", "fields": fields},
                {"type": "struct", "optional": True, "name": value_name, "field": "after", "fields": fields},
                source_schema(opts, self._start_ts_on),
                *_tail_schema(),
            ],
        }))

        self._fast = _FastRows(self) if _FastRows.applies(self) else None

    @property
    def _start_ts_on(self) -> bool:
        return self.opts.include_start_ts and self.opts.profile != "tiflow"

    def _row(self, row: dict) -> dict:
        return {c.name: render(c, row.get(c.name), self.opts.values) for c in self._value_cols}

    def key(self, change: RowChange) -> bytes:
        if self._fast is not None:
            return self._fast.key(change)
        row = change.before if change.op == Op.DELETE else change.after
        payload = {c.name: render(c, row.get(c.name), self.opts.values) for c in self._key_cols}
        out: dict[str, Any] = {"payload": payload}
        if not self.opts.disable_schema:
            out["schema"] = self._key_schema
        return dumps(out)

    def value(self, change: RowChange, commit_ts: int, start_ts: int) -> bytes:
        if self._fast is not None:
            return self._fast.value(change, commit_ts, start_ts)
        t = self.view.table
        payload: dict[str, Any] = {
            "source": source_payload(self.opts, t.schema, t.table, commit_ts,
                                     start_ts if self._start_ts_on else None),
            # The envelope's ts_ms is "when TiCDC processed the event"; the fake clock is the
            # commit's physical time so output stays deterministic.
            "ts_ms": physical_ms(commit_ts),
            "transaction": None,
        }
        if change.op == Op.INSERT:
            payload["op"] = "c"
            payload["before"] = None
            payload["after"] = self._row(change.after)
        elif change.op == Op.DELETE:
            payload["op"] = "d"
            payload["after"] = None
            payload["before"] = self._row(change.before)
        else:
            payload["op"] = "u"
            if self.opts.output_old_value:
                payload["before"] = self._row(change.before)
            payload["after"] = self._row(change.after)
        out: dict[str, Any] = {"payload": payload}
        if not self.opts.disable_schema:
            out["schema"] = self._value_schema
        return dumps(out)


class _FastRows:
    """RowEnvelope's key and value written by orjson: the same objects, their values converted
    by json_text.orjson_leaf (whatever orjson would write otherwise goes in as the reference
    writer's bytes), the schemas spliced in as fragments, the constant parts of `source` made once.
    Used for a table whose object keys (its column names) orjson writes as json-iterator does."""

    def __init__(self, env: RowEnvelope) -> None:
        self.env = env
        opts = env.opts
        self.leaf = json_text.orjson_leaf(json_text.JSONITER)
        self.value_cols = tuple((c.name, fast_renderer(c, opts.values, self.leaf)) for c in env._value_cols)
        self.key_cols = tuple((c.name, fast_renderer(c, opts.values, self.leaf)) for c in env._key_cols)
        self.key_schema = None if opts.disable_schema else orjson.Fragment(env._key_schema.data)
        self.value_schema = None if opts.disable_schema else orjson.Fragment(env._value_schema.data)
        t = env.view.table
        start_ts_on = env._start_ts_on
        self.source = {k: self.leaf(v) for k, v in source_payload(opts, t.schema, t.table, 0,
                                                                  0 if start_ts_on else None).items()}
        self.start_ts_on = start_ts_on
        self.old_value = opts.output_old_value

    @staticmethod
    def applies(env: RowEnvelope) -> bool:
        safe = json_text.safe_for_orjson(json_text.JSONITER)
        return all(safe(c.name) for c in env._value_cols + env._key_cols)

    def _row(self, row: dict) -> dict:
        get = row.get
        return {name: render_one(get(name)) for name, render_one in self.value_cols}

    def key(self, change: RowChange) -> bytes:
        row = change.before if change.op == Op.DELETE else change.after
        get = row.get
        out: dict[str, Any] = {"payload": {name: render_one(get(name)) for name, render_one in self.key_cols}}
        if self.key_schema is not None:
            out["schema"] = self.key_schema
        return json_text.orjson_bytes(out)

    def value(self, change: RowChange, commit_ts: int, start_ts: int) -> bytes:
        source = self.source.copy()
        physical = physical_ms(commit_ts)
        source["ts_ms"] = physical
        source["commit_ts"] = commit_ts
        if self.start_ts_on:
            source["start_ts"] = start_ts
        payload: dict[str, Any] = {"source": source, "ts_ms": physical, "transaction": None}
        op = change.op
        if op == Op.INSERT:
            payload["op"] = "c"
            payload["before"] = None
            payload["after"] = self._row(change.after)
        elif op == Op.DELETE:
            payload["op"] = "d"
            payload["after"] = None
            payload["before"] = self._row(change.before)
        else:
            payload["op"] = "u"
            if self.old_value:
                payload["before"] = self._row(change.before)
            payload["after"] = self._row(change.after)
        out: dict[str, Any] = {"payload": payload}
        if self.value_schema is not None:
            out["schema"] = self.value_schema
        return json_text.orjson_bytes(out)


def watermark_key(opts: EnvelopeOptions) -> bytes:
    out: dict[str, Any] = {"payload": {}}
    if not opts.disable_schema:
        out["schema"] = {"type": "struct", "name": f"{sanitize_name(opts.cluster_id)}.watermark.Key",
                         "optional": False, "fields": []}
    return dumps(out)


def watermark_value(opts: EnvelopeOptions, ts: int) -> bytes:
    out: dict[str, Any] = {"payload": {
        "source": source_payload(opts, "", "", ts),
        "ts_ms": physical_ms(ts),
        "transaction": None,
        "op": "m",
    }}
    if not opts.disable_schema:
        out["schema"] = {
            "type": "struct",
            "optional": False,
            "name": f"{sanitize_name(opts.cluster_id)}.watermark.Envelope",
            "version": 1,
            "fields": [source_schema(opts, False), *_tail_schema()],
        }
    return dumps(out)
