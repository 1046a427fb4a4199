"""The reference Canal-JSON decoder: one Kafka record -> one event (spec 003).

TiCDC sends one Canal-JSON object per Kafka record with a null key (pkg/sink/codec/canal/
canal_json_encoder.go builds every message with NewMsg(nil, value)), so the key is not read.
Spec 003, "Data resolution on the consumer side": isDdl=true is a DDL event; otherwise type
TIDB_WATERMARK is a WATERMARK event and INSERT/UPDATE/DELETE a DML event. The `_tidb` field exists
only with enable-tidb-extension=true; TiCDC's consumer reads it only then (canal_json_decoder.go picks
canalJSONMessageWithTiDBExtension by that option), so without the extension commit_ts is None.

Large messages, which TiCDC allows only with the extension (pkg/config/large_message.go): a DML whose
`_tidb.claimCheckLocation` is set is replaced by the message stored in claim-check storage (a
ClaimCheckMessage whose value is the compressed Canal-JSON message, or that value alone with
claim-check-raw-value; canal_json_decoder.go assembleClaimCheckDMLEvent); one whose
`_tidb.onlyHandleKey` is true carries the handle-key columns only and is completed through the
upstream snapshot (assembleHandleKeyOnlyDMLEvent). TiCDC never sets both; the location would win.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ticdc_conformance.protocols.canal_json._fast.decoder import FastDML
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.large_message import LargeMessages
from ticdc_conformance.protocols.common.wire import Malformed, decode_errors, json_object
from ticdc_contract.record import KafkaRecord

from ...events import DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ..common.interface import Read, failed_read
from .message import DDL_TYPES, DML_OPS, WATERMARK_TYPE, CanalMessage
from .options import CanalJSONOptions, parse_options
from .rows import decode_rows
from .wire import message_text, opt_int, opt_typed, read_message, req_bool, req_object, req_str, req_uint64


class CanalJSONDecoder:
    """Every Canal-JSON record is self-contained, so one instance per partition is enough; all it keeps
    between records is each table's parsed description (_fast/plans.py), which saves work and changes no result."""

    def __init__(self, options: CanalJSONOptions, large: Optional[LargeMessages] = None) -> None:
        self._options = options
        self._large = large or LargeMessages()
        self._fast = FastDML(options.enable_tidb_extension) if options.fast_path else None
        self._compressed = options.large_message_handle_compression != "none"

    @property
    def held_count(self) -> int:
        return 0  # every message carries what its rows need: nothing is ever held

    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        if self._fast is not None:
            try:
                value = record.value
                if self._compressed or not value:
                    value = message_text(value, self._options.large_message_handle_compression)
                # The fast path declines whatever it cannot vouch for; read() then has the last word.
                events = self._fast.decode(value)
            except Exception:
                # decode_errors is entered only on failure: a generator-based context manager around every
                # record would cost a noticeable share of a fast-path decode.
                with decode_errors(record, unexpected="unexpected"):
                    raise
            if events is not None:
                return events
        read = self.read(record)
        if read.error is not None:
            raise read.error
        return read.events

    def read(self, record: KafkaRecord) -> Read:
        """The record's events and its message (message.CanalMessage; None when the value is no JSON
        object)."""
        message: Optional[CanalMessage] = None
        try:
            message = read_message(record.value, self._options.large_message_handle_compression)
            return Read(self._decode(message.fields), message)
        except Exception as e:  # noqa: BLE001 - failed_read names what is no Malformed as unexpected
            return failed_read(record, e, message, unexpected="unexpected")

    def _decode(self, msg: dict[str, Any]) -> list[DecodedEvent]:
        is_ddl = req_bool(msg, "isDdl", "message")
        kind = req_str(msg, "type", "message")
        for key in ("id", "es", "ts"):
            opt_int(msg, key, "message")
        ext = self._extension(msg, kind)
        if is_ddl:
            return [self._ddl(msg, kind, ext)]
        if kind == WATERMARK_TYPE:
            if ext is None:
                raise Malformed("TIDB_WATERMARK without enable-tidb-extension: spec 003 sends WATERMARK "
                                "events only with the TiDB extension")
            return [DecodedWatermark(ts=req_uint64(ext, "watermarkTs", "_tidb of TIDB_WATERMARK"))]
        if kind in DML_OPS:
            return self._dml(msg, kind, ext)
        raise Malformed(f"unknown event type {kind!r} for isDdl=false "
                        f"(expected INSERT, UPDATE, DELETE or {WATERMARK_TYPE})")

    def _extension(self, msg: dict, kind: str) -> Optional[dict[str, Any]]:
        if not self._options.enable_tidb_extension:
            return None
        where = f"_tidb of {kind}"
        ext = req_object(msg, "_tidb", f"{kind} event")
        for key in ("commitTs", "watermarkTs"):
            if key in ext:
                req_uint64(ext, key, where)
        opt_typed(ext, "onlyHandleKey", bool, where)
        opt_typed(ext, "claimCheckLocation", str, where)
        opt_typed(ext, "rowkey", str, where)
        return ext

    def _dml(self, msg: dict, kind: str, ext: Optional[dict]) -> list[DecodedRow]:
        rows = decode_rows(msg, kind, _commit_ts(ext, kind))
        if ext is None:
            return rows
        location = ext.get("claimCheckLocation")
        if location:
            return self._claim_checked(msg, kind, ext, location)
        if ext.get("onlyHandleKey"):
            return [self._large.complete(row) for row in rows]
        return rows

    def _claim_checked(self, msg: dict, kind: str, ext: dict, location: str) -> list[DecodedRow]:
        value = self._large.stored_value(location)
        try:
            stored = json_object(decompress(self._options.large_message_handle_compression, value), "value")
            if req_bool(stored, "isDdl", "message") or req_str(stored, "type", "message") != kind:
                raise Malformed(f"holds a {stored.get('type')!r} message (isDdl={stored.get('isDdl')!r}), "
                                f"not the {kind} the message announces")
            stored_ext = self._extension(stored, kind)
            if stored_ext.get("claimCheckLocation") or stored_ext.get("onlyHandleKey"):
                raise Malformed("holds another large-message placeholder, not the full row")
            for name, mine, theirs in (("database", msg.get("database"), stored.get("database")),
                                       ("table", msg.get("table"), stored.get("table")),
                                       ("_tidb.commitTs", ext.get("commitTs"), stored_ext.get("commitTs"))):
                if mine != theirs:
                    raise Malformed(f"holds {name} {theirs!r}, the message names {mine!r}")
            return decode_rows(stored, kind, _commit_ts(stored_ext, kind))
        except Malformed as e:
            raise e.within("claim-check file") from None

    def _ddl(self, msg: dict, kind: str, ext: Optional[dict]) -> DecodedDDL:
        if kind not in DDL_TYPES:
            raise Malformed(f"unknown DDL type {kind!r} (expected one of {', '.join(sorted(DDL_TYPES))})")
        where = f"{kind} DDL event"
        return DecodedDDL(
            commit_ts=_commit_ts(ext, kind),
            schema=req_str(msg, "database", where),
            table=req_str(msg, "table", where),
            query=req_str(msg, "sql", where),
            ddl_type=kind,
        )


def _commit_ts(ext: Optional[dict], kind: str) -> Optional[int]:
    return None if ext is None else req_uint64(ext, "commitTs", f"_tidb of {kind}")


def new_decoder(options: Mapping[str, Any] | None) -> CanalJSONDecoder:
    return CanalJSONDecoder(parse_options(options), LargeMessages.from_options(options or {}))
