"""Changefeed restarts: when they happen and what TiCDC sends again after one.

A changefeed restarts after an error, a moved owner/maintainer or a failed node from its
checkpoint ts: every dispatcher starts there again, so every event with a commit ts above the
checkpoint reaches Kafka again, appended to the same partitions with new offsets:
- row changes (spec 002 Restrictions: "in special situations such as node failure and network
  partition, the Row Changed Event of the same version might be sent multiple times"; spec 003:
  "Because TiCDC provides the 'At Least Once' semantics, data might be sent repeatedly");
- DDL: only a MySQL-class sink asks its downstream which DDL were already executed
  (TiCDC downstreamadapter/dispatchermanager/dispatcher_manager.go,
  getTableRecoveryInfoFromMysqlSink: "For other sink types ... we just return the input
  startTs"), so a Kafka sink sends every DDL above the checkpoint again;
- checkpoints, broadcast as watermarks: the restarted changefeed reports the checkpoint it
  started from, which can be lower than one already broadcast when the persisted checkpoint
  lagged the broadcast one. TiCDC's own consumer expects that fall-back and ignores it
  (cmd/kafka-consumer/writer.go updateWatermark: "partition resolved ts fall back, ignore it").
A checkpoint is only ever a ts that was broadcast as one (or the changefeed's start), so a
restart goes back `checkpoint_lag` checkpoints behind the last one of the run that fails.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from ticdc_contract.model import DDL, TableSchema, Transaction
from ticdc_contract.state import TableStates


@dataclass(frozen=True)
class Restart:
    """One simulated restart: the checkpoint it resumed from, and each partition's next offset
    when it happened (records at or after it were sent by the restarted changefeed)."""

    checkpoint_ts: int
    offsets: dict[tuple[str, int], int]


class FailoverSchedule:
    """Where the restarts fall: after a seeded number of history events (replayed ones count),
    drawn around `spacing`, until `failovers` restarts have happened."""

    def __init__(self, failovers: int, spacing: int, rng: random.Random) -> None:
        self.remaining = failovers
        self.spacing = spacing
        self.rng = rng
        self._left = self._gap() if failovers else 0

    def _gap(self) -> int:
        return self.rng.randint(max(1, self.spacing // 2), self.spacing + self.spacing // 2)

    def due(self) -> bool:
        """Called after each history event; True when the changefeed fails right now."""
        if not self.remaining:
            return False
        self._left -= 1
        if self._left > 0:
            return False
        self.remaining -= 1
        self._left = self._gap()
        return True


class ReplayLog:
    """What a restart resends: the events of the current run above the oldest checkpoint a
    restart may go back to, and the tables that existed at each such checkpoint (for
    send-all-bootstrap-at-start). Memory is bounded by `lag` + 1 checkpoint intervals."""

    def __init__(self, lag: int) -> None:
        # (checkpoint ts, tables then, databases then); the oldest is where a restart goes back to
        self._marks: deque[tuple[int, dict, frozenset]] = deque(maxlen=lag + 1)
        self._events: deque[DDL | Transaction] = deque()
        self._catalog = TableStates()

    def processed(self, event: DDL | Transaction) -> None:
        if not self._marks:
            # The changefeed starts just below its first event: no table of the history exists yet.
            self._marks.append((event.commit_ts - 1, {}, frozenset()))
        self._events.append(event)
        if isinstance(event, DDL):
            self._catalog.apply(event)  # DDL only: the catalog tracks schemas, never rows

    def checkpoint(self, ts: int) -> None:
        self._marks.append((ts, dict(self._catalog.schemas), frozenset(self._catalog.databases)))
        oldest = self._marks[0][0]
        while self._events and self._events[0].commit_ts <= oldest:
            self._events.popleft()

    def restart(self) -> tuple[int, list[TableSchema], list[DDL | Transaction]]:
        """(checkpoint ts, tables existing then, events to send again), and a new run begins there."""
        ts, schemas, databases = self._marks[0]
        replay = [e for e in self._events if e.commit_ts > ts]
        self._events.clear()
        self._catalog = _catalog(schemas, databases)
        self._marks.clear()
        self._marks.append((ts, schemas, databases))
        return ts, list(schemas.values()), replay


def _catalog(schemas: dict, databases: frozenset) -> TableStates:
    states = TableStates()
    states.schemas = dict(schemas)
    states.rows = {name: {} for name in schemas}
    states.databases = set(databases)
    return states
