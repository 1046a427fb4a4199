"""Decode stage: Kafka records -> decoded events as Arrow rows, one decoder per topic-partition.

Runs inside Spark's Python workers (`mapInArrow`) and equally without Spark (`decode_records`).
Records must arrive in (topic, partition, offset) order within a Spark partition. A record that
fails to decode becomes an `error` row carrying the DecodeError text, so the job reports every
bad record with its coordinates instead of dying inside a worker.

For the Spark consumer (`arrow_decoder`) every row also carries its record's place in the merged
arrival order, and three kinds of rows describe the partitions rather than events:
- arrival order: the sequential consumer reads all partitions merged by (timestamp, topic,
  partition) (sequential/consumer.py `merged_records`, transport/record_files.py `merge_by_timestamp`). Merging streams that are
  each in offset order takes, from every partition, the record whose running maximum of that key
  is smallest; so a record's place is (running maximum timestamp of its partition, topic,
  partition, offset where that maximum was reached, offset, seq): `pos_ts` and `pos_offset`. It
  equals the plain sort key where a partition's timestamps never go back, and keeps the merge's
  order where they do (the records a restarted changefeed sends again);
- `progress`: the partition's watermark as the consumer counts it after this record (the highest
  watermark so far, or, while the decoder holds row events waiting for their schema, the one it
  had when the first of them arrived: watermarks.py), at the partition's first record and whenever
  it changes; `seq` = PROGRESS_SEQ places it after the record's events;
- `watermark` rows carry in `mark` the partition's watermark kept after them (below `commit_ts`:
  a regression, ignored by the consumer);
- `end`: after a partition's last record, `summary` = {"records", "events", "errors", "held"}
  (held: row events still waiting for their schema).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional

import orjson
import pyarrow as pa

from ticdc_conformance.errors import DecodeError
from ticdc_conformance.events import DecodedBootstrap, DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.interface import Decoder
from ticdc_conformance.protocols.common.wire import compact
from ticdc_contract.canonical import key_order_token
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import records_from_batch

DECODED_SCHEMA = pa.schema([
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("seq", pa.int32()),  # position of the event inside its record (batch frames)
    pa.field("kind", pa.string()),  # row | ddl | watermark | bootstrap | error
    pa.field("commit_ts", pa.int64()),
    pa.field("schema", pa.string()),
    pa.field("table", pa.string()),
    pa.field("op", pa.string()),
    pa.field("key", pa.string()),  # canonical JSON list of the handle-key values
    # JSON list of the key columns the message names; [] when it names none and the row is
    # identified by its whole image (the consumer keeps duplicates of such rows as a multiset).
    pa.field("key_columns", pa.string()),
    pa.field("key_order", pa.string()),  # key_order_token of the key
    pa.field("old_key", pa.string()),  # the before-image's key when an update changed it
    pa.field("old_key_order", pa.string()),
    pa.field("after", pa.string()),  # canonical JSON object
    pa.field("before", pa.string()),
    pa.field("columns", pa.string()),  # JSON list of column names, when known
    pa.field("query", pa.string()),
    # A DDL's record timestamp (ms): without commit ts, a re-sent copy is told by it and its query.
    pa.field("record_ts", pa.int64()),
    pa.field("error", pa.string()),
    # Spark consumer only (arrow_decoder): the record's place in the merged arrival order, the
    # partition's watermark (progress, watermark rows) and the partition's summary (end rows).
    pa.field("pos_ts", pa.int64()),
    pa.field("pos_offset", pa.int64()),
    pa.field("mark", pa.int64()),
    pa.field("summary", pa.string()),
])

_FIELDS = [f.name for f in DECODED_SCHEMA]
BATCH_ROWS = 4096
PROGRESS_SEQ = 2**31 - 1  # after every event of its record


def _json(obj: Any) -> Optional[str]:
    return None if obj is None else orjson.dumps(obj).decode()


def _key(cols: tuple[str, ...], image: Optional[dict]) -> Optional[list]:
    if image is None or not cols:
        return None
    if any(c not in image for c in cols):
        return None
    return [image[c] for c in cols]


def event_row(record: KafkaRecord, seq: int, ev: DecodedEvent) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(_FIELDS)
    row.update(topic=record.topic, partition=record.partition, offset=record.offset, seq=seq)
    if isinstance(ev, DecodedRow):
        image = ev.after if ev.after is not None else ev.before
        # A message that names no key (e.g. Canal-JSON pkNames for a table with only a unique
        # key) identifies its row by the whole image, as row-based replication without a
        # primary key does.
        key_columns = ev.key_columns or tuple(image)
        key = _key(key_columns, image)
        old_key = _key(key_columns, ev.before) if ev.after is not None else None
        if key is None:
            row.update(kind="error", error=f"{record.coordinates}: row event of {ev.schema}.{ev.table} "
                                           f"lacks its key columns {list(key_columns)}")
            return row
        row.update(
            kind="row", commit_ts=ev.commit_ts, schema=ev.schema, table=ev.table, op=ev.op,
            key=_json(key), key_order=key_order_token(key), key_columns=_json(list(ev.key_columns)),
            old_key=_json(old_key) if old_key is not None and old_key != key else None,
            old_key_order=key_order_token(old_key) if old_key is not None and old_key != key else None,
            after=_json(ev.after), before=_json(ev.before),
            columns=_json(list(ev.columns) or list(image.keys())),
        )
    elif isinstance(ev, DecodedDDL):
        row.update(kind="ddl", commit_ts=ev.commit_ts, schema=ev.schema, table=ev.table, op=ev.ddl_type,
                   query=ev.query, record_ts=record.timestamp_ms, columns=_json(list(ev.columns)) if ev.columns else None)
    elif isinstance(ev, DecodedWatermark):
        row.update(kind="watermark", commit_ts=ev.ts)
    elif isinstance(ev, DecodedBootstrap):
        row.update(kind="bootstrap", schema=ev.schema, table=ev.table, commit_ts=None,
                   columns=_json(list(ev.columns)))
    else:  # pragma: no cover - the decoders' contract
        raise TypeError(f"unexpected decoded event {type(ev).__name__}")
    return row


# What the sequential consumer's tables need of a row event beyond its fields, computed once when
# the event is built, as a tuple under the event's `_keys` (a tuple is built several times faster
# than an object). consumers/rules/tables.py ConsumerTables.apply_txn uses it while the event's
# `after`, `before` and `key_columns` are still these very objects, else it parses them:
# (after JSON, before JSON, key_columns text, after, None (the before image is not kept while the
#  event waits: the tables need only its key, below), key columns, image-keyed,
#  the key of `after` (of `before` for a delete) as ConsumerTables.key_of gives it, its order token,
#  the key of the image a delete or update removes).
ROW_KEYS = ("after_json", "before_json", "key_columns_text", "after", "before", "key_columns", "image_keyed",
            "key", "order", "removed_key")


KEY_ORDER_CACHE = 1 << 16  # keys whose order token is kept; a table's working set repeats its keys


class PartitionDecoders:
    """One stateful decoder per topic-partition."""

    def __init__(self, protocol: str, options: dict) -> None:
        self.protocol = protocol_spec(protocol)
        self.options = options
        self.decoders: dict[tuple[str, int], Decoder] = {}
        self._texts: dict[tuple, str] = {}  # column name tuple -> its JSON text (one object per tuple)
        self._orders: dict[bytes, str] = {}  # key JSON -> key_order_token

    def _decoder(self, record: KafkaRecord) -> Decoder:
        key = (record.topic, record.partition)
        dec = self.decoders.get(key)
        if dec is None:
            dec = self.decoders[key] = self.protocol.new_decoder(self.options)
        return dec

    def events(self, record: KafkaRecord) -> list[dict[str, Any]]:
        """`decode`'s rows for the sequential consumer, built for speed (column-list texts shared, key
        order tokens remembered). A row event carries only the fields the sequential consumer, its outputs
        and the consumers derived from it read (kind, commit_ts, schema, table, op, key_columns, key_order,
        after, before, columns; not its coordinates nor its key texts, which serve the Spark consumer and
        the checks) and its ROW_KEYS under `_keys`; the other events all of `decode`'s fields but the Spark
        consumer's own (pos_ts, pos_offset, mark, summary).
        A row event's images `after` and `before` are their canonical JSON as UTF-8 bytes, as orjson
        writes them, not texts: the outputs write those bytes (applied.ndjson, the Parquet copy), the
        waiting events compare them, and images often hold non-ASCII text, which a decode to str and
        an encode back (str.encode, Arrow) transcode character by character."""
        try:
            events = self._decoder(record).decode(record)
        except DecodeError as e:
            # Rows decoded along with the error are built alike, so a re-sent copy of one is still a copy.
            return self._error_rows(record, e, self._row_event)
        out = []
        for seq, ev in enumerate(events):
            row = self._row_event(ev) if type(ev) is DecodedRow else None
            out.append(row if row is not None else event_row(record, seq, ev))
        return out

    def _text(self, names: tuple) -> str:
        names = names if type(names) is tuple else tuple(names)
        text = self._texts.get(names)
        if text is None:
            text = self._texts[names] = orjson.dumps(names).decode()
        return text

    def _order(self, key: bytes, values: list) -> tuple[str, bool]:
        """key_order_token(values), and whether the key parsed back from its JSON `key` has the same
        (what the tables compute where they parse texts). Remembered for keys of integers and strings
        only: for them equal JSON is equal values; a float JSON cannot carry prints as null, a tuple
        as a list. Called on a miss of the cache, which _row_event looks up itself."""
        order = key_order_token(values)
        if all(type(v) is int or type(v) is str for v in values):
            if len(self._orders) >= KEY_ORDER_CACHE:
                self._orders.clear()
            self._orders[compact(key)] = order  # type: ignore[index]
            return order, True
        return order, orjson.loads(key) == values

    def _row_event(self, ev: DecodedRow) -> Optional[dict[str, Any]]:
        """The fields `events` keeps of event_row's row of a row event; None where event_row makes
        something else of it (an error row)."""
        after, before = ev.after, ev.before
        image = after if after is not None else before
        if image is None:
            return None
        named = ev.key_columns
        key_columns = tuple(named) or tuple(image)
        try:
            values = [image[key_columns[0]]] if len(key_columns) == 1 else list(map(image.__getitem__, key_columns))
        except (KeyError, IndexError):  # a key column missing (an error row), or no key column at all
            return None
        dumps = orjson.dumps
        key = dumps(values)
        # The caches' hits looked up here and only their misses in _order and _text: a method call
        # per row event costs about what the lookup does.
        order = self._orders.get(key)
        exact = True
        if order is None:
            order, exact = self._order(key, values)
        removed_key = key
        if after is not None and before is not None:
            old = list(map(before.get, key_columns))
            if old != values:
                removed_key = dumps(old)
        after_json = dumps(after) if after is not None else None
        before_json = dumps(before) if before is not None else None
        texts = self._texts  # keyed by tuples: _text makes a list one
        key_columns_text = (type(named) is tuple and texts.get(named)) or self._text(named)
        columns = ev.columns or tuple(image)
        return {
            "kind": "row", "commit_ts": ev.commit_ts, "schema": ev.schema, "table": ev.table, "op": ev.op,
            "key_columns": key_columns_text, "key_order": order, "after": after_json, "before": before_json,
            "columns": (type(columns) is tuple and texts.get(columns)) or self._text(columns),
            "_keys": (after_json, before_json, key_columns_text, after, None, key_columns, not named, key, order,
                      removed_key) if exact else None,
        }

    def _error_rows(self, record: KafkaRecord, e: DecodeError,
                    row_event: Optional[Callable[[DecodedRow], Optional[dict[str, Any]]]] = None
                    ) -> list[dict[str, Any]]:
        # The events decoded along with the error (a Simple BOOTSTRAP and the rows it released)
        # still apply; each error row sits at this record, its text naming the bad record. A row
        # event is row_event's when it makes one (events), else event_row's.
        rows = []
        for i, ev in enumerate(e.events):
            row = row_event(ev) if row_event is not None and type(ev) is DecodedRow else None
            rows.append(row if row is not None else event_row(record, i, ev))
        for err in e.every_error():
            row = dict.fromkeys(_FIELDS)
            row.update(topic=record.topic, partition=record.partition, offset=record.offset, seq=len(rows),
                       kind="error", error=str(err))
            rows.append(row)
        return rows

    def decode(self, record: KafkaRecord) -> list[dict[str, Any]]:
        try:
            events = self._decoder(record).decode(record)
        except DecodeError as e:
            return self._error_rows(record, e)
        return [event_row(record, i, ev) for i, ev in enumerate(events)]


def decode_records(records: Iterable[KafkaRecord], protocol: str, options: dict) -> Iterator[dict[str, Any]]:
    decoders = PartitionDecoders(protocol, options)
    for r in records:
        yield from decoders.decode(r)


class _PartitionProgress:
    """One partition's place in the arrival order, its watermark and its figures."""

    def __init__(self) -> None:
        self.pos_ts = -1
        self.pos_offset = -1
        self.mark = 0
        self.frozen: Optional[int] = None
        self.reported: Optional[int] = None
        self.records = self.events = self.errors = 0
        self.last: Optional[KafkaRecord] = None

    def arrive(self, record: KafkaRecord) -> None:
        # Offsets grow, so (timestamp, offset) beats the running maximum whenever the timestamp does not drop.
        if record.timestamp_ms >= self.pos_ts:
            self.pos_ts, self.pos_offset = record.timestamp_ms, record.offset
        self.records += 1
        self.last = record

    def place(self, row: dict[str, Any]) -> dict[str, Any]:
        row["pos_ts"], row["pos_offset"] = self.pos_ts, self.pos_offset
        return row

    def count(self, row: dict[str, Any]) -> None:
        self.events += 1
        kind = row["kind"]
        if kind == "error":
            self.errors += 1
        elif kind == "watermark":
            if row["commit_ts"] >= self.mark:  # a lower one is a regression: the mark stays
                self.mark = row["commit_ts"]
            row["mark"] = self.mark

    def progress(self, record: KafkaRecord, held: int) -> Optional[dict[str, Any]]:
        """The progress row after `record`, when the partition's counted watermark changed."""
        if held:
            if self.frozen is None:
                self.frozen = self.mark
        else:
            self.frozen = None
        counted = self.mark if self.frozen is None else self.frozen
        if counted == self.reported:
            return None
        self.reported = counted
        row = dict.fromkeys(_FIELDS)
        row.update(topic=record.topic, partition=record.partition, offset=record.offset, seq=PROGRESS_SEQ,
                   kind="progress", mark=counted)
        return self.place(row)

    def end(self, held: int) -> dict[str, Any]:
        record = self.last
        row = dict.fromkeys(_FIELDS)
        row.update(topic=record.topic, partition=record.partition, offset=record.offset, seq=PROGRESS_SEQ,
                   kind="end", summary=orjson.dumps({"records": self.records, "events": self.events,
                                                     "errors": self.errors, "held": held}).decode())
        return self.place(row)


def arrow_decoder(protocol: str, options: dict):
    """The function handed to DataFrame.mapInArrow: decoded events with their arrival place, plus
    the progress and end rows of every partition (see the module docstring)."""

    def decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        decoders = PartitionDecoders(protocol, options)
        progress: dict[tuple[str, int], _PartitionProgress] = {}
        current: Optional[tuple[str, int]] = None
        out: list[dict[str, Any]] = []

        def held(tp: tuple[str, int]) -> int:
            decoder = decoders.decoders.get(tp)
            return decoder.held_count if decoder is not None else 0

        for batch in batches:
            for record in records_from_batch(batch):
                tp = (record.topic, record.partition)
                if tp != current and current is not None:
                    out.append(progress[current].end(held(current)))
                current = tp
                p = progress.setdefault(tp, _PartitionProgress())
                p.arrive(record)
                for row in decoders.decode(record):
                    p.count(row)
                    out.append(p.place(row))
                row = p.progress(record, held(tp))
                if row is not None:
                    out.append(row)
                if len(out) >= BATCH_ROWS:
                    yield rows_to_batch(out)
                    out = []
        if current is not None:
            out.append(progress[current].end(held(current)))
        if out:
            yield rows_to_batch(out)

    return decode_batches


def rows_to_batch(rows: list[dict[str, Any]], schema: pa.Schema = DECODED_SCHEMA) -> pa.RecordBatch:
    """The Arrow batch of `rows` (a missing key is null). `from_pylist` walks the dicts in C++: about
    4-5 µs per decoded row against 11-12 µs for building one Python list per column first
    (CPU time per decoded row of the `large` scenario)."""
    return pa.RecordBatch.from_pylist(rows, schema=schema)
