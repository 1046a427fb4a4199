"""One golden case simulated with the sink simulator telling what each record carries.

The expected output of a case is computed from the ground truth, never by decoding its records;
what the ground truth alone does not say is where the simulator put things: which record is a
watermark of which ts (the checkpoints a consumer reaches), and, for a stream without commit ts,
which event each record carries (the only order such a consumer has). The simulator knows both
when it sends them and tells its observer (`SinkSimulator(observer=...)`, one `Sent` per event), so
the trace notes them as they go; the records are the simulator's own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ticdc_conformance.golden.cap import capped_history
from ticdc_contract.model import DDL, RowChange, Transaction
from ticdc_contract.record import KafkaRecord
from ticdc_contract.truth import TruthWriter
from ticdc_generators.pipeline import DDLEvent, RowEvent, Sent, SinkSimulator, WatermarkEvent
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.sink.config import SinkConfig

TP = tuple[str, int]


class GoldenTraceError(ValueError):
    """The case cannot be traced as the golden corpus needs (an option it does not support)."""


@dataclass(frozen=True)
class Carried:
    """A row event or DDL and the one record that carries it."""

    record: KafkaRecord
    event: RowEvent | DDLEvent
    raw: Optional[RowChange]  # the row change before TiCDC hid virtual columns and the row ID


@dataclass
class Trace:
    records: list[KafkaRecord]
    history: list[DDL | Transaction]
    watermarks: list[tuple[KafkaRecord, int]]  # the record and the ts it marks
    carried: list[Carried]
    partitions: list[TP]  # every topic-partition a consumer subscribes to
    topics: dict[str, int]
    one_record_per_event: bool  # False when an encoder batched events into shared records
    restarts: list[int] = field(default_factory=list)
    rows_left_out: int = 0  # rows the value cap left out of the scenario's history


class _Observations:
    """What the simulator tells its observer, kept as the golden corpus needs it."""

    def __init__(self) -> None:
        self.watermarks: list[tuple[KafkaRecord, int]] = []
        self.carried: list[Carried] = []
        self.one_record_per_event = True

    def __call__(self, sent: Sent) -> None:
        event, out = sent.event, sent.records
        if isinstance(event, WatermarkEvent):
            if len(out) != 1:
                raise GoldenTraceError(f"a watermark at {event.ts} became {len(out)} records on "
                                       f"{sent.topic}/{sent.partition}; the trace needs one record per watermark")
            self.watermarks.append((out[0], event.ts))
        elif isinstance(event, (RowEvent, DDLEvent)):
            if len(out) == 1:
                self.carried.append(Carried(out[0], event, sent.upstream_change))
            else:
                self.one_record_per_event = False  # batched (Open Protocol): no record-to-event map


def simulate(scenario: str, seed: int, events: Optional[int], config: SinkConfig, truth_dir: Path,
             max_value_bytes: Optional[int] = None) -> Trace:
    """Runs the case: records in send order, the ground truth written to `truth_dir`
    (docs/truth-format.md) and the history kept for the expected output. `max_value_bytes`
    leaves out rows with longer values (cap.py)."""
    if config.large_message_handle_option != "none":
        raise GoldenTraceError("large-message handling writes claim-check files outside the records; "
                               "the golden corpus holds record-only cases")
    source = get_scenario(scenario).history(seed, events, config.time_zone)
    counts: dict = {}
    if max_value_bytes is not None:
        source = capped_history(source, max_value_bytes, counts)
    return simulate_history(source, config, seed, truth_dir, rows_left_out=counts)


def simulate_history(source: Iterable[DDL | Transaction], config: SinkConfig, seed: int, truth_dir: Path,
                     rows_left_out: Optional[dict] = None) -> Trace:
    """`simulate` for a history given as the model's events (a case `fuzz` drew);
    `rows_left_out` is read once the history is consumed (the value cap counts into it)."""
    counts = rows_left_out if rows_left_out is not None else {}
    history: list[DDL | Transaction] = []

    def kept(stream: Iterable[DDL | Transaction]) -> Iterator[DDL | Transaction]:
        for event in stream:
            history.append(event)
            yield event

    truth = TruthWriter(truth_dir)
    seen = _Observations()
    sim = SinkSimulator(config, seed=seed, observer=seen)
    records = list(sim.run(truth.tee(kept(source))))
    truth.close()
    topics = sim.topics()
    return Trace(records=records, history=history, watermarks=seen.watermarks, carried=seen.carried,
                 partitions=[(t, p) for t, n in sorted(topics.items()) for p in range(n)], topics=topics,
                 one_record_per_event=seen.one_record_per_event,
                 restarts=[r.checkpoint_ts for r in sim.restarts], rows_left_out=counts.get("rows_left_out", 0))
