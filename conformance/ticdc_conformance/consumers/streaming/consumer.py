"""StreamingConsumer: LocalConsumer's rules behind the testee protocol's lines.

Every rule is LocalConsumer's (consumers/sequential/consumer.py): the records come in the order the
suite delivers them instead of merged from files, the applied log goes out as `txn`/`ddl`/
`checkpoint` lines instead of into files, and the tables are answered on request. Beyond it:
- restarts: its input is kept durable at each commit and replayed at the next start (durable.py);
  `committed` names, per partition, the offset after the last record it received, since everything
  received is in the durable input;
- late join: the snapshot's rows become its tables and its applied watermark the snapshot's commit
  ts W; a row event or DDL at or below W is a re-send of what the snapshot holds, dropped by the
  same rule LocalConsumer applies below its applied watermark (which starts counting at its first
  checkpoint, above W).
"""
from __future__ import annotations

import base64
import traceback
from pathlib import Path
from typing import IO, Any, Iterable, Optional

import orjson

from ticdc_conformance.consumers.output import row_json
from ticdc_conformance.consumers.sequential.consumer import LocalConsumer
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.protocols.common.claim_check import claim_check_options
from ticdc_contract.record import KafkaRecord

from .durable import DurableInput

PROTOCOL_VERSION = 1
SUPPORTS = ["restarts", "late-join"]
MAX_SHOWN = 20  # decode errors and DDL problems named when the stream ends


class AppliedLines:
    """LocalConsumer's applied log (AppliedLog's methods) as protocol lines, passed to `emit`."""

    def __init__(self, emit) -> None:
        self.emit = emit

    def txn(self, commit_ts: Optional[int], rows: list[dict]) -> None:
        self.emit({"type": "txn", "commit_ts": commit_ts, "rows": [
            {"schema": r["schema"], "table": r["table"], "op": r["op"],
             "before": orjson.Fragment(r["before"] or "null"), "after": orjson.Fragment(r["after"] or "null")}
            for r in rows]})

    def ddl(self, commit_ts: Optional[int], schema: str, table: str, query: str) -> None:
        self.emit({"type": "ddl", "commit_ts": commit_ts, "schema": schema, "table": table, "query": query})

    def checkpoint(self, ts: int) -> None:
        self.emit({"type": "checkpoint", "ts": ts})

    def close(self) -> None:
        pass


class NoStates:
    """The tables are answered on request, not written at checkpoints: the state lines LocalConsumer
    passes at each checkpoint (which keeps its change tracking small) go nowhere."""

    def __call__(self, name, since, to, row, copies) -> None:
        pass

    def close(self) -> None:
        pass


class FedConsumer(LocalConsumer):
    """LocalConsumer fed line by line, able to start from a snapshot."""

    def __init__(self, protocol: str, options: dict, partitions: Iterable[tuple[str, int]], emit) -> None:
        super().__init__(protocol, options, partitions)
        self.log = AppliedLines(emit)  # type: ignore[assignment]
        self.states = NoStates()  # type: ignore[assignment]
        self.joined_at: Optional[int] = None
        self.figures["rows_dropped_below_snapshot"] = 0

    def load(self, schema: str, table: str, columns: list[str], row: Optional[dict]) -> None:
        columns_text = orjson.dumps(columns).decode()
        self.tables.table((schema, table), columns)
        if row is not None:
            self.tables.apply_txn([{"schema": schema, "table": table, "columns": columns_text, "op": "insert",
                                    "before": None, "after": orjson.dumps(row).decode(), "key_columns": None}])

    def loaded(self, checkpoint_ts: int) -> None:
        self.applied_wm = self.joined_at = checkpoint_ts
        self.tables.checkpoint(checkpoint_ts, self.states)  # the snapshot is the state from here on

    def _before_join(self, ts: Optional[int]) -> bool:
        return self.joined_at is not None and ts is not None and ts <= self.joined_at \
            and not self.figures["checkpoints"]

    def on_row(self, tp: tuple[str, int], ev: dict) -> None:
        if self._before_join(ev["commit_ts"]):
            self.figures["rows_dropped_below_snapshot"] += 1
            return
        super().on_row(tp, ev)

    def on_ddl(self, ev: dict) -> None:
        if self._before_join(ev["commit_ts"]):
            self.figures["ddl_dropped_below_watermark"] += 1
            return
        super().on_ddl(ev)


def _raw(v: Any) -> Optional[bytes]:
    """A record's bytes field: bytes from the python: mode, base64 text from a program's stdin."""
    return base64.b64decode(v, validate=True) if isinstance(v, str) else v


def record_of(message: dict) -> KafkaRecord:
    return KafkaRecord(message["topic"], message["partition"], message["offset"], _raw(message["key"]),
                       _raw(message["value"]), message["timestamp"],
                       tuple((h["key"], _raw(h["value"])) for h in message["headers"]), message["timestampType"])


class StreamingConsumer:
    """`handle(message) -> list of answer lines`, one instance per start."""

    # The consumer the lines feed; a subclass names its own (the broken consumers of tests/consumers/streaming/).
    fed_consumer: type[FedConsumer] = FedConsumer

    def __init__(self) -> None:
        self.consumer: Optional[FedConsumer] = None
        self.store: Optional[DurableInput] = None
        self.out: list[dict] = []
        self.written = 0  # applied-log lines written over all starts (replayed ones included)
        self.skip = 0  # lines a replay writes again, which the suite already has
        self.last_checkpoint: Optional[int] = None
        self.delivered: dict[tuple[str, int], int] = {}
        self.protocol = ""

    def handle(self, message: dict) -> list[dict]:
        handler = getattr(self, "_on_" + str(message.get("type")), None)
        if handler is not None:  # a line type of a later protocol version is ignored
            handler(message)
        lines, self.out = self.out, []
        return lines

    def emit(self, line: dict) -> None:
        self.written += 1
        if line["type"] == "checkpoint":
            self.last_checkpoint = line["ts"]
        if self.skip:
            self.skip -= 1
        else:
            self.out.append(line)

    # --- lines --------------------------------------------------------------------------------
    def _on_header(self, header: dict) -> None:
        self.protocol = header["protocol"]
        sink = header["sink"]
        if sink.get("large-message-handle-option") == "handle-key-only":
            self.out.append({"type": "unsupported", "reason": "handle-key-only messages need a snapshot read of "
                             "upstream, which the testee protocol does not offer"})
            return
        options = dict(sink)
        cc = header.get("claim_check")
        if cc:
            folder = Path(cc["folder"])
            options.update(claim_check_options({"claim_check": {**cc, "folder": folder.name}}, folder.parent))
        partitions = [(t, p) for t, n in sorted(header["topics"].items()) for p in range(n)]
        try:
            self.consumer = self.fed_consumer(self.protocol, options, partitions, self.emit)
        except ValueError as e:  # a protocol or option no decoder takes
            self.out.append({"type": "unsupported", "reason": str(e)})
            return
        self.store = DurableInput(Path(header["state_dir"]), header["start"]["restart"])
        commit = self.store.committed()
        self.skip = commit["lines"] if commit is not None else 0
        for message in self.store.reopen():
            self._input(message)
        if self.skip:
            raise ConsumerError(f"the durable input in {header['state_dir']} replays {self.written} applied-log "
                                f"lines, fewer than the {commit['lines']} written before the restart")
        self.out.append({"type": "ready", "protocol_version": PROTOCOL_VERSION, "supports": SUPPORTS})

    def _input(self, message: dict) -> None:
        """A line that changes the consumer: a record or a snapshot line (also when replayed)."""
        kind = message["type"]
        if kind == "record":
            record = record_of(message)
            self.delivered[(record.topic, record.partition)] = record.offset + 1
            self.consumer.feed(record)
        elif kind == "load":
            self.consumer.load(message["schema"], message["table"], message["columns"], message["row"])
        elif kind == "loaded":
            self.consumer.loaded(message["checkpoint_ts"])

    def _durable_input(self, message: dict) -> None:
        self.store.add(message)
        self._input(message)

    _on_record = _on_load = _on_loaded = _durable_input

    def _on_sync(self, request: dict) -> None:
        self.out.append({"type": "synced", "id": request["id"]})

    def _on_commit(self, request: dict) -> None:
        self.store.commit(self.written)
        offsets: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(self.delivered.items()):
            offsets.setdefault(topic, {})[str(partition)] = offset
        self.out.append({"type": "committed", "id": request["id"], "offsets": offsets})

    def _on_end(self, request: dict) -> None:
        consumer = self.consumer
        consumer.finish()
        if consumer.errors:
            raise ConsumerError(f"{len(consumer.errors)} record(s) could not be decoded as {self.protocol}:\n"
                                + "\n".join(f"  {e}" for e in consumer.errors[:MAX_SHOWN]))
        if consumer.problems:
            raise ConsumerError(f"{len(consumer.problems)} DDL(s) could not be applied:\n"
                                + "\n".join(f"  {p}" for p in consumer.problems[:MAX_SHOWN]))
        self.out.append({"type": "ended", "id": request["id"]})

    def _on_tables(self, request: dict) -> None:
        for (schema, table), columns, rows in self.consumer.tables.final_tables():
            empty = True
            for image in rows:
                empty = False
                self.out.append({"type": "row", "schema": schema, "table": table,
                                 "row": orjson.Fragment(row_json(image, columns))})
            if empty:
                self.out.append({"type": "row", "schema": schema, "table": table, "row": None})
        self.out.append({"type": "tables", "id": request["id"], "checkpoint": self.last_checkpoint})


def serve(stdin: IO[bytes], stdout: IO[bytes], stderr: IO[str]) -> int:
    """The consumer as a program: lines from stdin, answers to stdout, until stdin ends (exit 0); a
    failure is told on stderr (exit 1)."""
    consumer = StreamingConsumer()
    try:
        for raw in stdin:
            message = orjson.loads(raw)
            answers = consumer.handle(message)
            if answers:
                stdout.write(b"".join(orjson.dumps(a) + b"\n" for a in answers))
            if message.get("type") != "record":  # a request's answer must not wait in a buffer
                stdout.flush()
    except ConsumerError as e:
        print(f"streaming consumer: {e}", file=stderr)
        return 1
    except Exception:
        traceback.print_exc(file=stderr)
        return 1
    finally:
        if consumer.store is not None:
            consumer.store.close()
    stdout.flush()
    return 0
