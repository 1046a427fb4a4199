"""A scenario's history drawn, and its ground truth written, in a process of its own.

`generate` has two halves of about equal cost that share nothing but the events: drawing the
upstream history and writing truth/ (the scenario's random draws, the upstream model, the truth
lines), and simulating the changefeed (encoders, dispatch, record files). For a large case the
first half runs here in a child process (`python -m ticdc_generators.history_process`) and streams
its events to the parent, which simulates them as they come: on two cores a large case takes about
half the wall time. The child and the parent each hold a bounded buffer of events, so memory stays
flat. The output is byte for byte the single-process output (tests/generators/test_history_process.py).

The stream (ticdc_contract/child_stream.py: frames of records, each a kind byte, a length and a
payload) sends the model's objects in a flat form, because pickling the frozen dataclasses field by
field cost as much as drawing the history. Each record's payload is a pickle of its own, made the
moment the history yields the event:
- s (schema): a TableSchema, sent once before the first record that names it; records name it by
  its place in the order sent, so every event that names it gets the same object back, as in one
  process (the encoders' caches are keyed by a table version's identity);
- t (txn): (start_ts, commit_ts, [(schema number, op value, before, after), ...]), plain values
  only, so the C pickler makes it without a Python call per object;
- d (ddl): a DDL, its table versions by number (pickle's persistent IDs);
- e (end): the last commit ts; truth/ is complete and closed.
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

import ticdc_contract
import ticdc_generators
from ticdc_contract import child_stream
from ticdc_contract.child_stream import PROTOCOL, ChildStream, ChildStreamError, RecordSender, serve
from ticdc_contract.model import DDL, Op, TableSchema, Transaction, row_change, transaction
from ticdc_contract.truth import TruthWriter

# A case is generated in two processes from this many row events (below it the child's start-up,
# about half a second, costs more than it saves) when the machine gives this process two cores.
TWO_PROCESSES_FROM = 20_000
_TXN, _SCHEMA, _DDL = b"t", b"s", b"d"
_OPS = {op.value: op for op in Op}


class HistoryProcessError(ChildStreamError):
    """The child process drawing the history failed or ended without finishing its stream."""


def usable_cores() -> int:
    return child_stream.usable_cores()


def worth_a_process(events: Optional[int]) -> bool:
    """Whether a history of `events` row events is drawn in a process of its own (None: unknown
    size, drawn in this one)."""
    return events is not None and events >= TWO_PROCESSES_FROM and usable_cores() >= 2


# --- the child ---------------------------------------------------------------------------------
class _Sender(RecordSender):
    """Records framed and written to `out`, each table version sent once."""

    def __init__(self, out: BinaryIO) -> None:
        super().__init__(out)
        # id(schema) -> (its number, the schema): the schema is held so that its id is never reused.
        self.schemas: dict[int, tuple[int, TableSchema]] = {}

    def _known(self, schema: Optional[TableSchema]) -> None:
        if schema is not None and id(schema) not in self.schemas:
            self.record(_SCHEMA, pickle.dumps(schema, protocol=PROTOCOL))
            self.schemas[id(schema)] = (len(self.schemas), schema)

    def event(self, event: DDL | Transaction) -> None:
        if type(event) is Transaction:
            changes, schemas = event.changes, self.schemas
            for ch in changes:
                if id(ch.table) not in schemas:
                    self._known(ch.table)
            flat = [(schemas[id(ch.table)][0], ch.op.value, ch.before, ch.after) for ch in changes]
            self.record(_TXN, pickle.dumps((event.start_ts, event.commit_ts, flat), protocol=PROTOCOL))
            return
        assert isinstance(event, DDL), f"a history event is a DDL or a Transaction, not {type(event).__name__}"
        for schema in (event.table_after, event.table_before, event.other_before, event.other_after):
            self._known(schema)
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=PROTOCOL)
        pickler.persistent_id = self._schema_number  # type: ignore[method-assign]
        pickler.dump(event)
        self.record(_DDL, buffer.getvalue())

    def _schema_number(self, obj: object) -> Optional[int]:
        return self.schemas[id(obj)][0] if type(obj) is TableSchema else None


def _child(args: dict, fd: int) -> int:
    from .scenarios import get_scenario

    def draw(sender: _Sender) -> Optional[int]:
        scenario = get_scenario(args["scenario"])
        truth = TruthWriter(Path(args["truth"]))
        for event in truth.tee(scenario.history(args["seed"], args["events"], args["time_zone"])):
            sender.event(event)
        truth.close()
        return truth.last_commit_ts

    return serve(fd, _Sender, draw)


# --- the parent --------------------------------------------------------------------------------
class HistoryProcess(ChildStream):
    """The history of `scenario` drawn in a child process, which writes `truth_dir` as it goes.
    Iterate it for the events; `last_commit_ts` is set once the stream has ended. Use it as a
    context manager: leaving early stops the child."""

    error_type = HistoryProcessError

    def __init__(self, scenario: str, seed: int, events: Optional[int], time_zone: str, truth_dir: Path) -> None:
        self._schemas: list[TableSchema] = []
        args = {"scenario": scenario, "seed": seed, "events": events, "time_zone": time_zone,
                "truth": str(Path(truth_dir).resolve())}
        super().__init__(__name__, args, "drawing", f"the history of scenario {scenario!r} (seed {seed}, {events} row events)",
                         (ticdc_generators, ticdc_contract))

    def __enter__(self) -> "HistoryProcess":
        return self

    @property
    def last_commit_ts(self) -> Optional[int]:
        return self.end

    def __iter__(self) -> Iterator[DDL | Transaction]:
        schemas, loads = self._schemas, pickle.loads
        for kind, payload in self.records():
            if kind == _TXN:
                start_ts, commit_ts, flat = loads(payload)
                yield transaction(start_ts, commit_ts, tuple(
                    [row_change(schemas[n], _OPS[op], before, after) for n, op, before, after in flat]))
            elif kind == _SCHEMA:
                schemas.append(loads(payload))
            elif kind == _DDL:
                unpickler = pickle.Unpickler(io.BytesIO(payload))
                unpickler.persistent_load = schemas.__getitem__  # type: ignore[assignment]
                yield unpickler.load()
            else:
                raise self.unknown(kind)


if __name__ == "__main__":
    child_stream.main(_child)
