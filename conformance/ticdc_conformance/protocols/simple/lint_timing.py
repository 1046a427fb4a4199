"""Simple's timing rules (spec 004, "Message generation and sending rules"; the changefeed options),
judged per partition and per table.

Time is each message's `buildTs`: TiCDC stamps it with the wall clock when it builds the message
(TiCDC pkg/sink/codec/simple/message.go, time.Now().UnixMilli()), which is the clock TiCDC's
watermark ticker and bootstrap worker run on. Commit ts would mislead: a changefeed catching up sends
minutes of commit ts in one second. (The simulator's fake build clock is the physical part of the
message's commit ts, and of the newest TSO its partition's encoder saw for a BOOTSTRAP.)

- SIMPLE-WATERMARK-3, WATERMARK about every second: once a partition's row events and DDL were built
  `period` + WATERMARK_SLACK_MS after its last WATERMARK (before the first one: after its first
  event), a later-built event must not come before the next WATERMARK. Events that share a build
  time (one transaction) do not count as moving on.
- SIMPLE-BOOTSTRAP-1, a BOOTSTRAP of each table every send-bootstrap-interval-in-sec: a row event of a
  table built `interval` + BOOTSTRAP_SLACK_MS after the table's last BOOTSTRAP in the partition breaks
  it. A BOOTSTRAP's time is the build time of the table's next row event in the partition, the row it
  was sent ahead of (TiCDC checks the interval when a row comes, and on a 5 s ticker; the simulator
  sends it just before the row that made it due). Reported once per missed interval. Judged only
  when BOOTSTRAPs are on and sent to every partition.
- SIMPLE-BOOTSTRAP-10, no BOOTSTRAP for a table without DML for 30 minutes: a BOOTSTRAP built more
  than INACTIVE_MS + INACTIVE_SLACK_MS after the table's last DML in the topic (any partition) must
  be the one a new DML of the table brings, so a DML of the table must come before another
  BOOTSTRAP of it in that partition, and before the stream ends.

Restarts. A changefeed restart re-sends from its checkpoint: its first WATERMARK repeats or falls
below the last one (KAFKA-DELIVERY-1), it sends every table a BOOTSTRAP again
(send-all-bootstrap-at-start, or before each table's first row), and the failing run may have sent
for a while without WATERMARK or BOOTSTRAP before it stopped. So a WATERMARK-3 or BOOTSTRAP-1 breach
is held until the partition's next WATERMARK: if that one does not advance, the breach lies just
before a restart and is reported as info under the same rule, not as a violation; if it advances, or
the stream ends first, as a violation. A suspect BOOTSTRAP (BOOTSTRAP-10) followed in its partition
by a WATERMARK that does not advance was sent at a restart, and is not judged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...rules import checks_rules
from ..common.lint import Problem

# One more watermark period: a partition is judged once it moved on two periods past its watermark.
WATERMARK_SLACK_MS = 1000
# TiCDC pkg/sink/codec/bootstraper.go bootstrapWorkerTickerInterval: the bootstrap worker's tick.
BOOTSTRAP_SLACK_MS = 5000
# spec 004 (SIMPLE-BOOTSTRAP-10) and bootstraper.go defaultMaxInactiveDuration: 30 minutes.
INACTIVE_MS = 30 * 60 * 1000
# bootstraper.go bootstrapWorkerGCInterval (30 s) forgets inactive tables, and a tick may be under way.
INACTIVE_SLACK_MS = 30_000 + BOOTSTRAP_SLACK_MS
_RESTART_NOTE = ("; the partition's next WATERMARK does not advance (a changefeed restart re-sends from its "
                 "checkpoint), so this is reported as info")

Table = tuple[str, str]


@dataclass
class _Held:
    """Breaches waiting for the partition's next WATERMARK (one per rule and table)."""
    problems: dict[tuple[str, Table], Problem] = field(default_factory=dict)

    def hold(self, key: tuple[str, Table], problem: Problem) -> None:
        self.problems.setdefault(key, problem)

    def release(self, restart: bool) -> list[Problem]:
        out = [Problem(p.rule, p.message + (_RESTART_NOTE if restart else ""), info=restart, offset=p.offset)
               for p in self.problems.values()]
        self.problems.clear()
        return out


class TopicActivity:
    """Per topic: each table's newest DML build time over all partitions, and the BOOTSTRAPs sent
    while the table looked inactive, waiting for a DML of it (by table, then partition)."""

    def __init__(self) -> None:
        self.last_dml: dict[Table, int] = {}
        self.suspects: dict[Table, dict[int, Problem]] = {}

    def dml(self, table: Table, build: int) -> None:
        if build > self.last_dml.get(table, build - 1):
            self.last_dml[table] = build
        self.suspects.pop(table, None)  # the new DML the suspect BOOTSTRAPs came with

    @checks_rules("SIMPLE-BOOTSTRAP-10", name="lint.simple.bootstrap-inactive",
                  description="no BOOTSTRAP of a table whose last DML (in the topic, by build time) is over 30 "
                              "minutes old unless a DML of it follows before the partition's next BOOTSTRAP "
                              "of it; BOOTSTRAPs a changefeed restart sends are not judged")
    def bootstrap(self, table: Table, partition: int, offset: int, build: int, problems: list[Problem]) -> None:
        last = self.last_dml.get(table)
        if last is None or build - last <= INACTIVE_MS + INACTIVE_SLACK_MS:
            return
        suspects = self.suspects.setdefault(table, {})
        earlier = suspects.get(partition)
        if earlier is not None:
            problems.append(earlier)  # a second BOOTSTRAP without a DML between: the first was not a wake-up
        suspects[partition] = Problem(
            "SIMPLE-BOOTSTRAP-10",
            f"BOOTSTRAP of {table[0]}.{table[1]} built {(build - last) // 1000} s after the table's last DML in "
            f"the topic, and no DML of it follows before the partition's next BOOTSTRAP of it or the stream's "
            f"end; TiCDC stops sending BOOTSTRAP for a table inactive for {INACTIVE_MS // 60000} minutes",
            offset=offset)

    def restarted(self, partition: int) -> None:
        for suspects in self.suspects.values():
            suspects.pop(partition, None)

    def finish(self) -> list[tuple[int, Problem]]:
        out = [(partition, p) for suspects in self.suspects.values() for partition, p in suspects.items()]
        self.suspects.clear()
        return out


class SimpleTiming:
    """One partition's timing state. `bootstrap_interval_ms` is None when SIMPLE-BOOTSTRAP-1 is not
    judged (BOOTSTRAP off, or sent to the first partition only)."""

    def __init__(self, partition: int, activity: TopicActivity, watermark_ms: int,
                 bootstrap_interval_ms: Optional[int]) -> None:
        self.partition = partition
        self.activity = activity
        self.watermark_ms = watermark_ms
        self.bootstrap_interval_ms = bootstrap_interval_ms
        self._held = _Held()
        self._mark: Optional[tuple[int, int]] = None  # (build time, offset) the partition is timed from
        self._wm_ts: Optional[int] = None  # commit ts of the partition's last WATERMARK
        self._newest: Optional[int] = None  # newest build time of an event since the mark
        self._announced: dict[Table, Optional[int]] = {}  # table -> its BOOTSTRAP's time, None: not yet known

    # --- messages ---------------------------------------------------------------------------------
    def watermark(self, commit_ts: int, build: int, offset: int, problems: list[Problem]) -> None:
        restart = self._wm_ts is not None and commit_ts <= self._wm_ts
        problems.extend(self._held.release(restart))
        if restart:
            self.activity.restarted(self.partition)
        self._wm_ts, self._mark, self._newest = commit_ts, (build, offset), None

    def event(self, build: int, offset: int) -> None:
        """A row event or DDL built at `build`."""
        if self._mark is None:
            self._mark = (build, offset)
        self._check_watermark(build, offset)
        if self._newest is None or build > self._newest:
            self._newest = build

    def row(self, table: Table, build: int, offset: int) -> None:
        self.event(build, offset)
        self.activity.dml(table, build)
        if self.bootstrap_interval_ms is not None:
            self._check_bootstrap(table, build, offset)

    def bootstrap(self, table: Table, build: int, offset: int, problems: list[Problem]) -> None:
        if self.bootstrap_interval_ms is not None:
            self._announced[table] = None
        self.activity.bootstrap(table, self.partition, offset, build, problems)

    def finish(self) -> list[Problem]:
        return self._held.release(restart=False)

    # --- checks -----------------------------------------------------------------------------------
    @checks_rules("SIMPLE-WATERMARK-3", name="lint.simple.watermark-period",
                  description="a partition's events do not move on past its last WATERMARK by more than the "
                              "watermark period plus one period (build times) before the next WATERMARK; a "
                              "breach just before a changefeed restart is info")
    def _check_watermark(self, build: int, offset: int) -> None:
        mark = self._mark  # set by the first event, so whenever _newest is
        if self._newest is None or mark is None or build <= self._newest:
            return
        since, mark_offset = mark
        late = self._newest - since
        if late < self.watermark_ms + WATERMARK_SLACK_MS:
            return
        self._held.hold(("SIMPLE-WATERMARK-3", ("", "")), Problem(
            "SIMPLE-WATERMARK-3",
            f"event built {build - since} ms after the partition's last WATERMARK (or first event, offset "
            f"{mark_offset}), which events built {late} ms after it already passed, and still no WATERMARK; "
            f"TiCDC sends one every {self.watermark_ms} ms", offset=offset))

    @checks_rules("SIMPLE-BOOTSTRAP-1", name="lint.simple.bootstrap-period",
                  description="no row event of a table built send-bootstrap-interval-in-sec (plus the bootstrap "
                              "worker's 5 s tick) after the table's last BOOTSTRAP in its partition; a breach "
                              "just before a changefeed restart is info")
    def _check_bootstrap(self, table: Table, build: int, offset: int) -> None:
        interval = self.bootstrap_interval_ms
        if interval is None or table not in self._announced:
            return  # not judged, or before the table's first BOOTSTRAP: SIMPLE-BOOTSTRAP-8
        since = self._announced[table]
        if since is None:
            self._announced[table] = build
            return
        if build - since < interval + BOOTSTRAP_SLACK_MS:
            return
        self._held.hold(("SIMPLE-BOOTSTRAP-1", table), Problem(
            "SIMPLE-BOOTSTRAP-1",
            f"row event of {table[0]}.{table[1]} built {(build - since) // 1000} s after the table's last "
            f"BOOTSTRAP in the partition; send-bootstrap-interval-in-sec is {interval // 1000}", offset=offset))
        self._announced[table] = build  # once per missed interval
