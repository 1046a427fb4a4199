"""The broken streaming consumers `fuzz` must find, with the encoding each is fuzzed on and the
largest shrunk case tests accept (history events)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Broken:
    name: str  # module under tests/consumers/streaming/
    cls: str
    encoding: str
    bug: str
    seed: int = 1  # a fuzz seed that finds it within `examples` (docs/fuzz.md, "Detection")
    examples: int = 600  # the budget: examples drawn at most (a count: the same on a loaded machine)
    max_events: int = 12  # history events of the shrunk case

    @property
    def spec(self) -> str:
        return f"python:tests.consumers.streaming.{self.name}:{self.cls}"


BROKEN = (
    # The rarest: two partitions, a column DDL and a merge that delivers the DDL first.
    Broken("newest_schema", "NewestSchema", "simple-json", "decodes with the newest cached schema, not schemaVersion"),
    Broken("partition_watermark", "PartitionWatermark", "canal-json",
           "flushes at its partition's watermark, not the global one"),
    # Its cases need rows of two tables in one partition between two watermarks, delivered out of
    # commit-ts order (space.many_table_histories makes them likelier), or a failover's re-sends.
    Broken("drops_resends", "DropsResends", "canal-json",
           "drops re-sends below its partition's highest commit ts (ticdc#4051)"),
    Broken("loses_buffered_rows", "LosesBufferedRows", "canal-json",
           "loses the rows it buffered in memory at a restart"),
    Broken("reapplies_after_restart", "ReappliesAfterRestart", "canal-json",
           "applies again after a restart (no persisted applied watermark)"),
)
REFERENCE = "python:ticdc_conformance.consumers.streaming:StreamingConsumer"
# Examples of the reference's runs in the detection tests (the broken consumers' budgets above).
EXAMPLES = 150
