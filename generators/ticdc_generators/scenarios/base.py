"""What a named scenario is: a deterministic upstream history for a seed, and its sink defaults."""
from __future__ import annotations

from typing import Iterator, Optional

from ticdc_contract.model import DDL, Transaction

from ..sink.config import DispatchRule


class Scenario:
    name: str = ""
    description: str = ""
    partition_num: int = 3
    # Rows spread over partitions by key, so per-partition ordering and the global watermark matter.
    dispatchers: tuple[DispatchRule, ...] = (DispatchRule(matcher=("*.*",), partition="index-value"),)
    # SinkConfig fields this scenario sets for every encoding (a changefeed TOML or sink URI still
    # applies on top).
    sink_overrides: dict = {}

    # Whether `events` (a target number of row events) shapes this scenario's size.
    sized: bool = False
    # The row events of a sized scenario's history when `events` is not given.
    default_events: Optional[int] = None

    def history(self, seed: int, events: Optional[int] = None, time_zone: str = "UTC") -> Iterator[DDL | Transaction]:
        """DDL and transactions in commit-ts order; the same seed, events and upstream time zone give
        the same history. TIMESTAMP values are drawn, and printed, in `time_zone`."""
        raise NotImplementedError
