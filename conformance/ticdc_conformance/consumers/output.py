"""The consumer output format shared by every consumer (docs/consumer-protocol.md, "Output").

- `OUT/final/<schema>.<table>.ndjson`: the tables at the end, one canonical JSON object per row,
  columns in table order, rows sorted by `key_order_token` of their key.
- `OUT/applied.ndjson` (+ `applied.parquet`): what was applied, in apply order: transactions
  (the row events of one commit ts), DDL, and a checkpoint each time the global watermark advanced.
- `OUT/states/<schema>.<table>.ndjson` (+ `states.parquet`): every table's rows at every checkpoint
  in temporal form, `{"from": W_i, "to": W_j | null, "row": {...}}` = the row is in the table at every
  checkpoint W with W_i <= W < W_j. Written while consuming: a line is written when its row version
  ends, the versions still open at the end last.
Values are in the canonical form (docs/architecture.md "Canonical values") as far as the protocol
carries them; Parquet files hold the same JSON text, so integers stay exact.
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import IO, Any, Iterable, Optional, Sequence

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

APPLIED_SCHEMA = pa.schema([
    pa.field("seq", pa.int64()),  # the entry's position in applied.ndjson (a transaction's rows share it)
    pa.field("kind", pa.string()),  # txn | ddl | checkpoint
    pa.field("ts", pa.int64()),  # commit ts (txn, ddl) or watermark (checkpoint); TSOs stay below 2**63
    pa.field("schema", pa.string()),
    pa.field("table", pa.string()),
    pa.field("op", pa.string()),
    pa.field("before", pa.string()),  # canonical JSON object
    pa.field("after", pa.string()),
    pa.field("query", pa.string()),
])
STATES_SCHEMA = pa.schema([
    pa.field("schema", pa.string()),
    pa.field("table", pa.string()),
    pa.field("from", pa.int64()),
    pa.field("to", pa.int64()),
    pa.field("row", pa.string()),  # canonical JSON object, columns in table order
])
APPLIED_LABELLED = ("kind", "schema", "table", "op")  # applied.parquet's columns given by a row's label
PARQUET_BATCH = 8192
# Columns of JSON text, nearly every value distinct: the Parquet copies keep no dictionary and no
# min/max statistics for them, which cost a quarter of writing a batch and serve no reader.
JSON_TEXT_COLUMNS = frozenset({"before", "after", "row"})
MAX_OPEN_STATE_FILES = 64
STRING_BYTES_LIMIT = 2**31 - 1  # an Arrow string array's 32-bit offsets
_INT64 = pa.int64()
STATE_LINES_BATCH = 1024  # state lines gathered before they are written (a few hundred KiB)
APPLIED_BUFFER = 1 << 20  # applied.ndjson's write buffer: a transaction's line often outgrows the default 8 KiB


def row_json(image: dict[str, Any], columns: Iterable[str]) -> bytes:
    """A row as canonical JSON: exactly the table's columns, a column the row never carried is NULL."""
    return orjson.dumps({c: image.get(c) for c in columns})


def project_row(image: dict[str, Any], columns: list[str]) -> bytes:
    """The output line of a row."""
    return row_json(image, columns) + b"\n"


def final_file_name(schema: str, table: str) -> str:
    return f"{schema}.{table}.ndjson"


def _utf8(text: Any) -> bytes:
    """An image's JSON text as bytes ("null" for none)."""
    if not text:
        return b"null"
    return text if isinstance(text, bytes) else text.encode()


def parse_columns(text: Optional[str]) -> list[str]:
    return orjson.loads(text) if text else []


def _validity(values: Sequence) -> tuple[np.ndarray, int]:
    """Which of `values` are not null and how many are null."""
    present = np.array([v is not None for v in values], bool)
    return present, len(values) - int(np.count_nonzero(present))


def _utf8_lengths(present: Sequence) -> tuple[bytes, np.ndarray]:
    """The UTF-8 bytes of the texts (or bytes) `present` end to end, and each one's length: joined
    once in C (a join of texts refuses bytes and one of bytes refuses texts, which spares asking each
    value its type); texts are encoded one by one only when one of them is not ASCII or the values mix."""
    lengths = np.fromiter(map(len, present), np.int64, len(present))
    try:
        data = "".join(present).encode()
        if len(data) == lengths.sum():  # every text ASCII: a character is a byte
            return data, lengths
    except TypeError:
        try:
            return b"".join(present), lengths
        except TypeError:
            pass
    encoded = [v.encode() if type(v) is str else v for v in present]
    return b"".join(encoded), np.fromiter(map(len, encoded), np.int64, len(encoded))


def _arrow_column(values: Sequence, kind: pa.DataType) -> pa.Array:
    """`pa.array(values, type=kind)` for the int64 and string columns of the outputs (strings may be
    given as their UTF-8 bytes), built from buffers: pa.array of a Python list imports pandas, half
    a second of a consume command, to ask whether the list is a pandas object.
    Most columns of a batch hold no null, so a column is first built as one without: a None among
    the values fails that at once (numpy takes no None for an integer, len() no None for a text),
    and only then is each value asked whether it is null."""
    try:
        if kind == _INT64:
            return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(np.array(values, np.int64))],
                                         null_count=0)
        return _string_column(values, values, None, 0)
    except TypeError:
        pass
    present, nulls = _validity(values)
    if nulls == len(values):  # a column a batch never fills (the query of transactions)
        return pa.nulls(nulls, kind)
    if kind == _INT64:
        data = np.array([0 if v is None else v for v in values], np.int64)
        validity = pa.py_buffer(np.packbits(present, bitorder="little"))
        return pa.Array.from_buffers(kind, len(values), [validity, pa.py_buffer(data)], null_count=nulls)
    return _string_column(values, [v for v in values if v is not None], present, nulls)


def _string_column(values: Sequence, texts: Sequence, present: Optional[np.ndarray], nulls: int) -> pa.Array:
    """The string column of `values`, given those not null (`texts`) and which they are (None: all)."""
    data, lengths = _utf8_lengths(texts)
    if len(data) > STRING_BYTES_LIMIT:  # pa.array splits it into chunks
        return pa.array(values, type=pa.string())
    offsets = np.zeros(len(values) + 1, np.int32)
    validity = None
    if present is None:
        np.cumsum(lengths, out=offsets[1:])
    else:  # a null takes no bytes
        validity = pa.py_buffer(np.packbits(present, bitorder="little"))
        spread = np.zeros(len(values), np.int64)
        spread[present] = lengths
        np.cumsum(spread, out=offsets[1:])
    return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data), validity, nulls)


def _labelled_column(values: Sequence, labels: Sequence[int]) -> pa.Array:
    """The string column [values[label] for label in labels], given its distinct values: lengths and
    validity by numpy indexing, the bytes by one join (Arrow's take would import pyarrow.compute, 40 ms
    of a command)."""
    encoded = [b"" if v is None else v.encode() for v in values]
    at = np.array(labels, np.intp)
    present = np.array([v is not None for v in values])[at]
    nulls = len(labels) - int(np.count_nonzero(present))
    validity = pa.py_buffer(np.packbits(present, bitorder="little")) if nulls else None
    offsets = np.zeros(len(labels) + 1, np.int32)
    np.cumsum(np.array(list(map(len, encoded)), np.int64)[at], out=offsets[1:])
    data = b"".join(map(encoded.__getitem__, labels))
    return pa.StringArray.from_buffers(len(labels), pa.py_buffer(offsets), pa.py_buffer(data), validity, nulls)


class _ParquetStream:
    """Rows appended one by one, written in batches of PARQUET_BATCH rows (one row group each), so a
    long run never holds them all. A row is a tuple (`add`): first its label, the code `label` gives
    the values of the `labelled` columns (a few string columns whose values repeat from row to row,
    such as a transaction row's kind, schema, table and op), then the other columns' values in the
    schema's order. The columns are made from the tuples once a batch is full, by zip in C, not value
    by value; a labelled column from its distinct values and the rows' labels (_labelled_column)."""

    def __init__(self, path: Path, schema: pa.Schema, labelled: tuple[str, ...]) -> None:
        self.schema = schema
        plain = [name for name in schema.names if name not in JSON_TEXT_COLUMNS]
        self.writer = pq.ParquetWriter(path, schema, use_dictionary=plain, write_statistics=plain)
        self.rows: list[tuple] = []
        self._labelled = [schema.field(name) for name in labelled]
        self._others = [f for f in schema if f.name not in labelled]
        self._labels: dict[tuple, int] = {}  # the labelled columns' values -> their label
        self._values: list[tuple] = []  # label -> the labelled columns' values

    def label(self, values: tuple) -> int:
        """The label of these values of the labelled columns (in their order)."""
        code = self._labels.get(values)
        if code is None:
            code = self._labels[values] = len(self._values)
            self._values.append(values)
        return code

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= PARQUET_BATCH:
            self.flush()

    def extend(self, rows: list[tuple]) -> None:
        """Rows in order; the batches fall where `add` one by one would put them."""
        room = PARQUET_BATCH - len(self.rows)
        if len(rows) < room:
            self.rows.extend(rows)
            return
        for row in rows:
            self.add(row)

    def flush(self) -> None:
        if self.rows:
            labels, *values = zip(*self.rows)
            columns = {f.name: _labelled_column(column, labels) for column, f in zip(zip(*self._values), self._labelled)}
            columns.update((f.name, _arrow_column(column, f.type)) for column, f in zip(values, self._others))
            self.writer.write_table(pa.Table.from_arrays([columns[name] for name in self.schema.names],
                                                         schema=self.schema))
            self.rows = []

    def close(self) -> None:
        self.flush()
        self.writer.close()


class AppliedLog:
    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self._f: IO[bytes] = open(out / "applied.ndjson", "wb", buffering=APPLIED_BUFFER)
        self._pq = _ParquetStream(out / "applied.parquet", APPLIED_SCHEMA, APPLIED_LABELLED)
        self.seq = 0
        # (schema, table, op) -> a txn row's JSON up to "before", and the row's label in applied.parquet
        self._heads: dict[tuple[str, str, str], tuple[bytes, int]] = {}

    def _head(self, schema: str, table: str, op: str) -> tuple[bytes, int]:
        head = self._heads[(schema, table, op)] = (
            orjson.dumps({"schema": schema, "table": table, "op": op, "before": None})[:-len(b"null}")],
            self._pq.label(("txn", schema, table, op)))
        return head

    def txn(self, commit_ts: Optional[int], rows: list[dict]) -> None:
        """`rows`: decoded row events (schema, table, op, before/after as canonical JSON, text or its
        UTF-8 bytes: the sequential consumer's events carry the bytes, decode_stage.PartitionDecoders.events).
        The line is what orjson.dumps writes of {"kind": "txn", "commit_ts": T, "rows": [{"schema", "table",
        "op", "before", "after"}, ...]} with the images as they are, joined from their UTF-8 bytes
        (orjson writes UTF-8 and escapes nothing else)."""
        parts = []
        table_rows = []
        seq = self.seq
        heads = self._heads
        for r in rows:
            schema, table, op, before, after = r["schema"], r["table"], r["op"], r["before"], r["after"]
            before_json = before if type(before) is bytes else _utf8(before)
            after_json = after if type(after) is bytes else _utf8(after)
            head, label = heads.get((schema, table, op)) or self._head(schema, table, op)
            parts.append(b"".join((head, before_json, b',"after":', after_json, b"}")))
            # Arrow takes the UTF-8 bytes for a string column as it takes the text.
            table_rows.append((label, seq, commit_ts, before_json if before else before,
                               after_json if after else after, None))
        ts = b"null" if commit_ts is None else orjson.dumps(commit_ts)
        self._f.write(b'{"kind":"txn","commit_ts":%s,"rows":[%s]}\n' % (ts, b",".join(parts)))
        self._pq.extend(table_rows)
        self.seq += 1

    def ddl(self, commit_ts: Optional[int], schema: str, table: str, query: str) -> None:
        self._f.write(orjson.dumps({"kind": "ddl", "commit_ts": commit_ts, "schema": schema, "table": table,
                                    "query": query}) + b"\n")
        self._pq.add((self._pq.label(("ddl", schema, table, None)), self.seq, commit_ts, None, None, query))
        self.seq += 1

    def checkpoint(self, ts: int) -> None:
        self._f.write(orjson.dumps({"kind": "checkpoint", "ts": ts}) + b"\n")
        self._pq.add((self._pq.label(("checkpoint", None, None, None)), self.seq, ts, None, None, None))
        self.seq += 1

    def close(self) -> None:
        self._f.close()
        self._pq.close()


class StatesWriter:
    """`states/<schema>.<table>.ndjson` and `states.parquet`; a key-less table's row present twice
    has two identical lines. A table's lines are gathered and written to its file together, once
    STATE_LINES_BATCH lines wait or at close: one write per file and batch rather than one per line
    and a file looked up for each (a checkpoint writes lines of many tables interleaved)."""

    def __init__(self, out: Path) -> None:
        self.dir = out / "states"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._files: OrderedDict[tuple[str, str], IO[bytes]] = OrderedDict()
        self._started: set[tuple[str, str]] = set()
        self._pq = _ParquetStream(out / "states.parquet", STATES_SCHEMA, ("schema", "table"))
        self.lines = 0
        # table -> (its label in states.parquet, its lines not yet written)
        self._pending: dict[tuple[str, str], tuple[int, list[bytes]]] = {}
        self._waiting = 0  # lines in _pending

    def _file(self, name: tuple[str, str]) -> IO[bytes]:
        f = self._files.get(name)
        if f is not None:
            self._files.move_to_end(name)
            return f
        if len(self._files) >= MAX_OPEN_STATE_FILES:
            self._files.popitem(last=False)[1].close()
        f = open(self.dir / final_file_name(*name), "ab" if name in self._started else "wb")
        self._started.add(name)
        self._files[name] = f
        return f

    def _write_pending(self) -> None:
        for name, (_, lines) in self._pending.items():
            if lines:
                self._file(name).write(b"".join(lines))
                lines.clear()
        self._waiting = 0

    def __call__(self, name: tuple[str, str], since: int, to: Optional[int], row: bytes, copies: int) -> None:
        line = b'{"from":%d,"to":%s,"row":%s}\n' % (since, b"null" if to is None else b"%d" % to, row)
        table = self._pending.get(name)
        if table is None:
            table = self._pending[name] = (self._pq.label(name), [])
        version = (table[0], since, to, row)  # Arrow reads the UTF-8 bytes as it reads the text
        if copies == 1:
            table[1].append(line)
            self._pq.add(version)
        else:
            for _ in range(copies):
                table[1].append(line)
                self._pq.add(version)
        self.lines += copies
        self._waiting += copies
        if self._waiting >= STATE_LINES_BATCH:
            self._write_pending()

    def close(self) -> None:
        self._write_pending()
        for f in self._files.values():
            f.close()
        self._files.clear()
        self._pq.close()


def write_final(out: Path, tables: Iterable[tuple[tuple[str, str], list[str], Iterable[dict]]]) -> None:
    final = out / "final"
    final.mkdir(parents=True, exist_ok=True)
    for (schema, table), columns, rows in tables:
        with open(final / final_file_name(schema, table), "wb") as f:
            for image in rows:
                f.write(project_row(image, columns))
