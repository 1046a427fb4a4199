"""`bench decode --paths`: a decoder's paths side by side on the same messages, next to the bare parse.

- bare: the bare parse of decode.py (what any decoder of the format pays);
- reference: the decoder with `fast-path = false`, every message read the reference way;
- fast: the decoder as it ships (fast path first, generated row readers where it has them);
- closures: for Canal-JSON, the fast path with its plans' event readers built from per-column
  closures instead of generated source (protocols/canal_json/_fast/closures.py).

Each batch of records runs through every variant, in an order that turns by one each batch, so
that a change in machine load hits all of them alike; rates are over CPU time, and a timed run
keeps only the count of events, as `bench decode` does. A second set of decoders per path decodes
the same batches untimed, and their events must be equal for every batch (their repr, by digest),
or the run stops: a faster variant that decodes otherwise measures nothing.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ticdc_contract.record import KafkaRecord

from ..events import DecodedEvent
from ..protocols import protocol as protocol_spec
from .decode import TARGET_RATIO, bare_parser, record_batches
from .inputs import SCENARIO, Inputs, cached_inputs

DecoderFactory = Callable[[dict], object]


def _closure_decoder(options: dict) -> object:
    """A Canal-JSON decoder whose fast path builds its event readers from closures. Not a decoder
    option: the variant exists to measure the choice docs/performance.md records."""
    from ..protocols.canal_json import new_decoder
    from ..protocols.canal_json._fast import closures
    from ..protocols.canal_json._fast.decoder import FastDML

    dec = new_decoder(options)
    if dec._fast is not None:
        dec._fast = FastDML(dec._options.enable_tidb_extension, reader=closures.event_reader)
    return dec


class _Partitions:
    """One decoder per topic-partition, made by `factory`, as the consumers keep them."""

    def __init__(self, factory: DecoderFactory, options: dict) -> None:
        self.factory, self.options = factory, options
        self.by_partition: dict[tuple[str, int], object] = {}

    def _decoder(self, r: KafkaRecord) -> Any:
        tp = (r.topic, r.partition)
        dec = self.by_partition.get(tp)
        if dec is None:
            dec = self.by_partition[tp] = self.factory(self.options)
        return dec

    def count(self, records: list[KafkaRecord]) -> int:
        """Decodes the records, keeping only how many events they hold (what is timed)."""
        events = 0
        for r in records:
            events += len(self._decoder(r).decode(r))
        return events

    def run(self, records: list[KafkaRecord]) -> list[DecodedEvent]:
        """Decodes the records, keeping their events (what is compared)."""
        events: list[DecodedEvent] = []
        for r in records:
            events += self._decoder(r).decode(r)
        return events


@dataclass
class PathFigures:
    variant: str
    bare_name: str
    messages: int = 0
    events: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # CPU time per path, "bare" included

    def rate(self, path: str) -> float:
        return self.messages / self.seconds[path]

    def ratio(self, path: str) -> float:
        return self.rate(path) / self.rate("bare")


def decoder_paths(manifest: dict) -> dict[str, _Partitions]:
    """The decoders measured for an encoding, by path."""
    new_decoder = protocol_spec(manifest["protocol"]).new_decoder
    options = dict(manifest["sink"])
    paths = {"reference": _Partitions(new_decoder, {**options, "fast-path": False}),
             "fast": _Partitions(new_decoder, options)}
    if manifest["protocol"] == "canal-json":
        paths["closures"] = _Partitions(_closure_decoder, options)
    return paths


def measure_paths(inputs: Inputs, limit: Optional[int] = None) -> PathFigures:
    bare_name, bare = bare_parser(inputs.manifest)
    timed = decoder_paths(inputs.manifest)
    # A second set of decoders, fed the same records untimed, gives the events compared: a batch's
    # events held alive during the timed runs would make every garbage collection there slower.
    checked = decoder_paths(inputs.manifest)
    figures = PathFigures(inputs.variant, bare_name, seconds={"bare": 0.0, **{p: 0.0 for p in timed}})
    order = ["bare", *timed]
    cpu = time.process_time
    for turn, records in enumerate(record_batches(inputs.records, limit)):
        for path in order[turn % len(order):] + order[:turn % len(order)]:
            c0 = cpu()
            if path == "bare":
                bare(records)
            else:
                timed[path].count(records)
            figures.seconds[path] += cpu() - c0
        digests = {}
        for path, decoders in checked.items():
            events = decoders.run(records)
            digests[path] = len(events), _digest(events)
            del events
        for path, got in digests.items():
            if got != digests["reference"]:
                raise AssertionError(f"{inputs.variant}: the {path} path decodes batch {turn} otherwise than "
                                     "the reference path")
        figures.messages += len(records)
        figures.events += digests["reference"][0]
    return figures


def _digest(events: list[DecodedEvent]) -> str:
    """The events' repr (values by type, images in column order), hashed."""
    return hashlib.sha256(repr(events).encode("utf-8", "surrogatepass")).hexdigest()


def bench_paths(work: Path, variants: list[str], events: int, seed: int = 1, echo=print,
                limit: Optional[int] = None) -> list[PathFigures]:
    echo(f"bench decode --paths: scenario {SCENARIO} with {events:,} events, seed {seed}"
         + (f", first {limit:,} messages" if limit else "") + "; rates over CPU time, ratios to the bare parse")
    results = []
    for variant in variants:
        inp = cached_inputs(work, variant, events, seed, echo=echo)
        load = os.getloadavg()[0]
        f = measure_paths(inp, limit)
        results.append(f)
        rates = "   ".join(f"{path} {f.rate(path):>9,.0f} msg/s ({f.ratio(path):.2f}x)"
                           for path in f.seconds if path != "bare")
        echo(f"  {f.variant:<19} {f.messages:>10,} messages   {f.bare_name} {f.rate('bare'):>9,.0f} msg/s   "
             f"{rates}   (load average {load:.1f} → {os.getloadavg()[0]:.1f})")
    echo(f"  target: decoder at least {TARGET_RATIO}x the bare parse")
    return results
