"""What a record carries, as the protocol's own decoder reads it: a watermark, a DDL, row events.

The adversarial merges (watermark-first, ddl-first) and the late join need to know which records
are watermarks or DDL; only the protocol's decoder knows that (protocols/), one decoder per
partition fed in offset order, as a consumer's would be.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ticdc_conformance.events import DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.claim_check import claim_check_options
from ticdc_conformance.protocols.common.interface import Decoder
from ticdc_contract.record import KafkaRecord

from .steps import TopicPartition


def stream_options(manifest: dict, run_dir: Path) -> dict[str, Any]:
    """The decoder options for classifying a generated stream: its sink options, plus where its
    claim-check files are (a large DDL may sit there). Row events are only counted, never read, so a
    handle-key-only row that cannot be completed from upstream is still a row."""
    return {**manifest["sink"], **claim_check_options(manifest, run_dir)}


@dataclass
class Carried:
    """What one record carries."""

    watermark: Optional[int] = None  # the highest watermark ts in it
    ddl: bool = False
    commit_ts: Optional[int] = None  # the highest commit ts of its row events and DDL
    kinds: set[str] = field(default_factory=set)
    error: Optional[str] = None  # why the decoder could not read it (all of it), if so


class Classifier:
    """One decoder per partition; `reset` starts a partition's decoder afresh (after a seek)."""

    def __init__(self, protocol: str, options: dict[str, Any]) -> None:
        self.spec = protocol_spec(protocol)
        self.options = options
        self.decoders: dict[TopicPartition, Decoder] = {}

    def reset(self, tp: TopicPartition) -> None:
        self.decoders.pop(tp, None)

    def carried(self, record: KafkaRecord) -> Carried:
        tp = (record.topic, record.partition)
        decoder = self.decoders.get(tp)
        if decoder is None:
            decoder = self.decoders[tp] = self.spec.new_decoder(self.options)
        read = decoder.read(record)  # read() returns an error, never raises one
        out = Carried(error=None if read.error is None else str(read.error))
        for event in read.events:
            if isinstance(event, DecodedWatermark):
                out.kinds.add("watermark")
                out.watermark = event.ts if out.watermark is None else max(out.watermark, event.ts)
                continue
            if isinstance(event, DecodedDDL):
                out.kinds.add("ddl")
                out.ddl = True
            elif isinstance(event, DecodedRow):
                out.kinds.add("row")
            else:
                continue
            if event.commit_ts is not None:
                out.commit_ts = event.commit_ts if out.commit_ts is None else max(out.commit_ts, event.commit_ts)
        return out

    def held(self, tp: TopicPartition) -> int:
        """Row events the partition's decoder holds back, waiting for a later record (their schema)."""
        decoder = self.decoders.get(tp)
        return decoder.held_count if decoder is not None else 0
