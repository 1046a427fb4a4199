"""The Simple protocol decoder of one topic-partition: a schema cache and the DMLs waiting for it.

Spec 004, "Message consumption scenarios": DML messages carry no schema, only `table` and
`schemaVersion`; the consumer caches the tableSchema of every BOOTSTRAP and DDL message under
(schema, table, version) and reads each DML through the entry its message names. A consumer that joins
mid-stream (scenario 2) sees DMLs before any schema: they wait until a BOOTSTRAP or DDL brings it, as
TiCDC's own decoder keeps them in `cachedMessages` (TiCDC pkg/sink/codec/simple/decoder.go).
When a BOOTSTRAP or DDL releases them and some turn out malformed, nothing else is lost: `decode`
raises a DecodeError naming the first malformed held record (its own topic/partition@offset), with
the BOOTSTRAP or DDL event and every well-formed released row attached in order as `events`, and the
further malformed ones as `also`; the caller applies `events` as if returned (consumers/rules/decode_stage.py).

Large messages (decoder.go assembleDMLEvent) are resolved once the DML's schema is known: a
`claimCheckLocation` names the full message in claim-check storage (a ClaimCheckMessage whose value is
the compressed Simple message, or that value alone with claim-check-raw-value), read through the same
schema version; TiCDC marks that placeholder `handleKeyOnly` too, and the location wins. A
`handleKeyOnly` message without a location is completed through the upstream snapshot.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from ticdc_conformance.protocols.common.checksum import verify_row_checksum
from ticdc_conformance.protocols.common.compression import decompress
from ticdc_conformance.protocols.common.large_message import LargeMessages
from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.simple._fast.decoder import FAST_DECLINES, FastDML
from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...events import DecodedBootstrap, DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ..common.interface import Read, failed_read
from .message import BootstrapMessage, DDLMessage, DMLMessage, TableInfo, WatermarkMessage
from .message import Message as SimpleMessage
from .options import parse_options
from .rows import RowReader, avro_converter, json_converter
from .wire import parser

# How many DMLs may wait for their schema before the partition is declared undecodable. TiCDC sends a
# BOOTSTRAP at least every `send-bootstrap-in-msg-count` (default 10000) row changes of a table (spec 004,
# BOOTSTRAP), so a stream still without the schema after that many is not one a consumer can recover.
MAX_HELD = 10000
# And how many bytes of such messages (their Kafka values) a partition may hold: the count alone
# would let 10000 messages of TiCDC's default max-message-bytes (10 MiB) claim 100 GB. A quarter
# of a GiB still holds 25 messages of that size, or the full 10000 of rows up to 26 KiB.
MAX_HELD_BYTES = 256 * 1024 * 1024


@dataclass
class SimpleRead(Read):
    """A Simple record as read, with what the decoder's schema cache held for its message (the lint's
    schema rules judge it; decode() keeps none of it)."""

    # DML: the schema its (schema, table, schemaVersion) names; None when the cache has none.
    table: Optional[TableInfo] = None
    # DML without a schema: whether the cache holds another version of its table.
    table_known: bool = False
    # BOOTSTRAP and DDL: (table the message carries, the schema the cache holds under its key since):
    # one (schema, table, version) names the first schema announced for it.
    cached: tuple[tuple[TableInfo, TableInfo], ...] = ()


class SimpleDecoder:
    """Three arguments serve the lint, which reports what a consumer would hold back or reject:
    `tables` lets several decoders share one schema cache (a topic's partitions, when BOOTSTRAPs go
    to its first partition only); `hold_rows=False` drops a DML whose schema is unknown instead of
    holding it for a later BOOTSTRAP or DDL; `keep_faulty_rows=True` has a DML rejected for its values
    (or its checksum, claim-check file, snapshot row) still yield its row with the values that read,
    as the DecodeError's `events`, so its place in the stream is judged too."""

    def __init__(self, options: Mapping[str, Any], max_held: int = MAX_HELD, max_held_bytes: int = MAX_HELD_BYTES,
                 tables: Optional[dict[tuple[str, str, int], RowReader]] = None, hold_rows: bool = True,
                 keep_faulty_rows: bool = False) -> None:
        opts = parse_options(options)
        self._compression = opts.compression
        self._parse: Callable[[bytes], Any] = parser(opts.encoding)
        self._converter = avro_converter if opts.encoding == "avro" else json_converter
        self._time_zone = opts.time_zone
        self._large = LargeMessages.from_options(options)
        self._check_checksums = opts.check_checksums
        self._max_held = max_held
        self._max_held_bytes = max_held_bytes
        self._hold_rows = hold_rows
        self._keep_faulty_rows = keep_faulty_rows
        # One entry per (schema, table, version) the stream announced, with its row converters built.
        self._tables: dict[tuple[str, str, int], RowReader] = tables if tables is not None else {}
        self._held: list[tuple[KafkaRecord, DMLMessage]] = []
        self._held_bytes = 0
        # The JSON rows TiCDC sends nearly always, read by msgspec (_fast/decoder.py); rows whose checksums
        # are to be checked take the reference path, and so does every message with fast-path=false.
        self._fast = (FastDML(self._tables, self._time_zone, self._compression)
                      if opts.encoding == "json" and not self._check_checksums and opts.fast_path else None)

    @property
    def held_count(self) -> int:
        return len(self._held)

    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        fast = self._fast
        if fast is not None:  # it never raises: it declines what it cannot vouch for
            value = record.value
            one_step = fast.one_step
            if one_step is None or value is None:
                row = fast.decode(value)
            else:
                # FastDML.decode for an uncompressed message, written out: the call it saves is about
                # a twentieth of a small row's decoding.
                try:
                    msg = one_step(value)
                except FAST_DECLINES:
                    row = fast.two_step(value)
                else:
                    try:
                        row = msg.event()
                    except FAST_DECLINES:
                        row = None
            if row is not None:
                return [row]
        # common.wire.decode_errors with unexpected=None, written out: a with-block costs more than the
        # decoding of a small row. No catch-all: Simple's fuzz tests are there to see any other exception.
        try:
            return self._decode(record)
        except Malformed as e:
            raise DecodeError(record.topic, record.partition, record.offset, e.reason) from None

    def read(self, record: KafkaRecord) -> SimpleRead:
        """The record's events (those a BOOTSTRAP or DDL releases included), its parsed message
        (message.py; None when the value does not parse) and what the schema cache held for it. As in
        decode, only a Malformed becomes a DecodeError: anything else propagates."""
        message: Optional[SimpleMessage] = None
        try:
            message = self._message(record)
            read = SimpleRead(self._events(record, message), message)
        except Exception as e:  # noqa: BLE001 - failed_read re-raises what is no Malformed
            failed = failed_read(record, e, message, unexpected=None)
            read = SimpleRead(failed.events, message, failed.error)
        self._looked_up(read, message)
        return read

    def _looked_up(self, read: SimpleRead, message: Optional[SimpleMessage]) -> None:
        if isinstance(message, DMLMessage):
            reader = self._tables.get(message.schema_key)
            if reader is not None:
                read.table = reader.table
            else:
                name = (message.schema, message.table)
                read.table_known = any(key[:2] == name for key in self._tables)
            return
        if isinstance(message, BootstrapMessage):
            carried: tuple[Optional[TableInfo], ...] = (message.table,)
        elif isinstance(message, DDLMessage):
            carried = (message.table, message.pre_table)
        else:
            return
        read.cached = tuple((t, self._tables[t.key].table) for t in carried if t is not None and t.key in self._tables)

    def _decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        return self._events(record, self._message(record))

    def _message(self, record: KafkaRecord) -> SimpleMessage:
        if record.value is None:
            raise Malformed("record has no value (Simple messages always have one)")
        return self._parse(decompress(self._compression, record.value))

    def _events(self, record: KafkaRecord, message: SimpleMessage) -> list[DecodedEvent]:
        if isinstance(message, DMLMessage):  # the bulk of a stream, so asked first
            return self._dml(record, message)
        if isinstance(message, WatermarkMessage):
            return [DecodedWatermark(message.commit_ts)]
        if isinstance(message, BootstrapMessage):
            t = message.table
            self._remember(t)
            first: DecodedEvent = DecodedBootstrap(t.schema, t.table, t.version, t.column_names)
            return self._released(first)
        return self._released(self._ddl(message))

    def _dml(self, record: KafkaRecord, message: DMLMessage) -> list[DecodedEvent]:
        table = self._tables.get(message.schema_key)
        if table is None:
            if self._hold_rows:
                self._hold(record, message)
            return []
        if not self._keep_faulty_rows:
            return [self._row(message, table)]
        try:
            return [self._row(message, table)]
        except Malformed as e:
            raise DecodeError(record.topic, record.partition, record.offset, e.reason,
                              events=[self._readable_row(message, table)]) from None

    def _remember(self, table: Optional[TableInfo]) -> None:
        # TiCDC's memoryTableInfoProvider.Write skips nameless tables (schema-level DDLs) and keeps the
        # first entry of a key: one (schema, table, version) names one schema.
        if table is None or not table.schema or not table.table:
            return
        if table.key not in self._tables:
            self._tables[table.key] = RowReader(table, self._converter, self._time_zone)

    def _ddl(self, message: DDLMessage) -> DecodedDDL:
        # TiCDC's decoder stores both the new and the previous table info of a DDL (decoder.go
        # NextDDLEvent), so rows written under the previous version that were waiting can be read too.
        self._remember(message.table)
        self._remember(message.pre_table)
        named = message.table or message.pre_table
        return DecodedDDL(
            commit_ts=message.commit_ts,
            schema=named.schema if named else "",
            table=named.table if named else "",
            query=message.sql,
            ddl_type=message.ddl_type,
            columns=message.table.column_names if message.table else (),
        )

    def _hold(self, record: KafkaRecord, message: DMLMessage) -> None:
        size = len(record.value or b"")
        if len(self._held) >= self._max_held or self._held_bytes + size > self._max_held_bytes:
            schema, table, version = message.schema_key
            raise Malformed(f"schema not yet known for {schema}.{table} version {version} "
                            f"and {len(self._held)} messages ({self._held_bytes} bytes) already wait for "
                            f"their schema (bounds: {self._max_held} messages, {self._max_held_bytes} bytes)")
        self._held.append((record, message))
        self._held_bytes += size

    def _keep_held(self, held: list[tuple[KafkaRecord, DMLMessage]]) -> None:
        self._held = held
        self._held_bytes = sum(len(record.value or b"") for record, _ in held)

    def _released(self, first: DecodedEvent) -> list[DecodedEvent]:
        """`first` (the BOOTSTRAP or DDL) and the rows it releases; see `_release` for bad ones."""
        events: list[DecodedEvent] = [first]
        errors = self._release(events)
        if errors:
            head, *rest = errors
            raise DecodeError(head.topic, head.partition, head.offset, head.reason, events=events,
                              also=rest) from None
        return events

    def _release(self, events: list[DecodedEvent]) -> list[DecodeError]:
        """Appends to `events` the rows that were waiting and whose schema is now known, in arrival
        order; returns the errors of those that are malformed, each naming its own record.

        Every released message leaves the queue, the malformed ones too (so one bad row does not
        fail every later delivery); the rows of other schemas keep waiting."""
        errors: list[DecodeError] = []
        if not self._held:
            return errors
        still: list[tuple[KafkaRecord, DMLMessage]] = []
        for record, message in self._held:
            table = self._tables.get(message.schema_key)
            if table is None:
                still.append((record, message))
                continue
            try:
                events.append(self._row(message, table))
            except Malformed as e:
                errors.append(DecodeError(record.topic, record.partition, record.offset, e.reason))
        self._keep_held(still)
        return errors

    def _row(self, message: DMLMessage, reader: RowReader) -> DecodedRow:
        if message.claim_check_location:
            message = self._claim_checked(message)
        table = reader.table
        row = DecodedRow(
            schema=message.schema,
            table=message.table,
            op=message.op,
            commit_ts=message.commit_ts,
            after=reader.values(message.data),
            before=reader.values(message.old),
            # A column selector may have cut the primary key out of the row (protocols/common/keys.py).
            key_columns=reader.key_columns(message.data, message.old),
            columns=reader.column_names,
        )
        if not message.handle_key_only:
            if self._check_checksums:
                verify_row_checksum(message.checksum, table.columns, row.after, row.before, self._time_zone)
            return row
        row = self._large.complete(row)
        for image in (row.after, row.before):
            unknown = [name for name in image or () if name not in table.by_name]
            if unknown:
                raise Malformed(f"the upstream snapshot row of {table.schema}.{table.table} has column "
                                f"{unknown[0]!r}, which schema version {table.version} does not")
        return row

    @staticmethod
    def _readable_row(message: DMLMessage, reader: RowReader) -> DecodedRow:
        """A rejected DML's row as far as it reads (keep_faulty_rows): the message's own images."""
        return DecodedRow(schema=message.schema, table=message.table, op=message.op, commit_ts=message.commit_ts,
                          after=reader.readable_values(message.data), before=reader.readable_values(message.old),
                          key_columns=reader.key_columns(message.data, message.old), columns=reader.column_names)

    def _claim_checked(self, message: DMLMessage) -> DMLMessage:
        location = message.claim_check_location
        assert location is not None  # decode() calls this for a claim-check message only
        value = decompress(self._compression, self._large.stored_value(location))
        try:
            stored = self._parse(value)
            if not isinstance(stored, DMLMessage):
                raise Malformed(f"holds a {type(stored).__name__}, not a DML message")
            if stored.claim_check_location or stored.handle_key_only:
                raise Malformed("holds another large-message placeholder, not the full row")
            for name in ("op", "schema", "table", "commit_ts", "schema_version"):
                if getattr(stored, name) != getattr(message, name):
                    raise Malformed(f"holds a DML whose {name} is {getattr(stored, name)!r}, "
                                    f"the message names {getattr(message, name)!r}")
        except Malformed as e:
            raise e.within("claim-check file") from None
        return stored
