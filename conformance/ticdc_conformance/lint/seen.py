"""What one partition already carried: the identities of its events above a moving floor.

The lint must tell a re-sent event (allowed: TiCDC replays everything above its checkpoint after a
restart, KAFKA-DELIVERY-1) from a first-sent one (which must keep the order and watermark rules).
That takes memory of earlier events, but only of recent ones: a restart goes back to a checkpoint,
and a checkpoint is a watermark the changefeed already broadcast, so events below the oldest of the
last `horizon` watermarks of the partition can be forgotten. `capacity` caps the window for a
partition whose watermarks come too rarely; what it forgets raises the floor too.

Below the floor nothing is judged: an event there is counted, never reported, since the lint can
no longer tell whether it came before.
"""
from __future__ import annotations

from collections import OrderedDict, deque

DEFAULT_HORIZON = 64
DEFAULT_CAPACITY = 1_000_000


class SeenWindow:
    def __init__(self, horizon: int = DEFAULT_HORIZON, capacity: int = DEFAULT_CAPACITY) -> None:
        if horizon < 1 or capacity < 1:
            raise ValueError("the replay horizon and the capacity must be at least 1")
        self._ids: OrderedDict[int, int] = OrderedDict()  # identity -> ts, in arrival order
        self._marks: deque[int] = deque(maxlen=horizon)  # the last advancing watermarks
        self._evicted_floor = 0
        self.capacity = capacity

    @property
    def floor(self) -> int:
        """Events with a ts below this are beyond what the window remembers."""
        marks = self._marks
        by_horizon = marks[0] if len(marks) == marks.maxlen else 0
        return max(by_horizon, self._evicted_floor)

    def __contains__(self, identity: int) -> bool:
        return identity in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, identity: int, ts: int) -> None:
        self._ids[identity] = ts
        while len(self._ids) > self.capacity:
            _, evicted = self._ids.popitem(last=False)
            self._evicted_floor = max(self._evicted_floor, evicted + 1)

    def advance(self, watermark: int) -> None:
        """The partition's watermark moved up to `watermark`; forget what fell below the floor.
        Arrival order follows ts closely (only replays step back), so pruning from the oldest end
        until an event at or above the floor frees nearly all of it."""
        self._marks.append(watermark)
        floor = self.floor
        ids = self._ids
        while ids:
            identity, ts = next(iter(ids.items()))
            if ts >= floor:
                break
            ids.popitem(last=False)
