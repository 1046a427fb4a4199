"""`bench decode`: each reference decoder's messages/s next to a bare parse of the same messages.

The bare parse is the floor any decoder of the format pays: `orjson.loads` of each message value;
for Open Protocol the batch framing split plus `orjson.loads` of every event key and value; for
Simple Avro `fastavro.schemaless_reader` with the reference schema. Both run over the same record
batches, interleaved batch by batch so that a change in machine load hits both alike. Records
stream from the record files; only one batch (8,192 records) is in memory at a time. Rates are
over CPU time (the process's user + system time), which other work on the machine does not
inflate; elapsed time is printed beside it.
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import orjson
import pyarrow.parquet as pq
from fastavro import schemaless_reader

from ticdc_contract.avro_schema import MESSAGE_SCHEMA
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import ROW_GROUP_RECORDS, parquet_batches, records_from_batch

from ..protocols import protocol
from .inputs import SCENARIO, Inputs, cached_inputs

TARGET_RATIO = 0.5  # a decoder should run at least at half the speed of the bare parse
_WORD = 8  # Open Protocol's big-endian u64 version and frame lengths (spec 002, Message format)


def _frames(buf: bytes, start: int) -> Iterator[memoryview]:
    view = memoryview(buf)
    pos, end = start, len(buf)
    while pos < end:
        length = int.from_bytes(view[pos:pos + _WORD], "big")
        pos += _WORD
        yield view[pos:pos + length]
        pos += length


def _bare_open_protocol(records: list[KafkaRecord]) -> None:
    loads = orjson.loads
    for r in records:
        for frame in _frames(r.key, _WORD):  # the key starts with the protocol version
            loads(frame)
        for frame in _frames(r.value or b"", 0):
            if frame:  # a Resolved event's value frame is empty
                loads(frame)


def _bare_json(records: list[KafkaRecord]) -> None:
    loads = orjson.loads
    for r in records:
        if r.value is not None:
            loads(r.value)


def _bare_avro(records: list[KafkaRecord]) -> None:
    for r in records:
        schemaless_reader(io.BytesIO(r.value), MESSAGE_SCHEMA, None, return_record_name=True)


def bare_parser(manifest: dict) -> tuple[str, Callable[[list[KafkaRecord]], None]]:
    """The bare parse for an encoding, and how it is described in the output."""
    if manifest["protocol"] == "open-protocol":
        return "frame split + orjson.loads per event", _bare_open_protocol
    if manifest["encoding"] == "simple-avro":
        return "fastavro.schemaless_reader", _bare_avro
    return "orjson.loads", _bare_json


def record_batches(records_dir: Path, limit: Optional[int] = None) -> Iterator[list[KafkaRecord]]:
    """The records of every record file, a row group at a time, each file in offset order."""
    left = limit
    for path in sorted(Path(records_dir).glob("*.parquet")):
        for batch in parquet_batches(pq.ParquetFile(path), ROW_GROUP_RECORDS):
            records = list(records_from_batch(batch))
            if left is not None:
                records = records[:left]
                left -= len(records)
            if records:
                yield records
            if left == 0:
                return


class _Decoders:
    """One decoder per topic-partition, as the consumers keep them."""

    def __init__(self, manifest: dict) -> None:
        self.protocol = protocol(manifest["protocol"])
        self.options = manifest["sink"]
        self.by_partition: dict[tuple[str, int], object] = {}
        self.events = 0

    def run(self, records: list[KafkaRecord]) -> None:
        for r in records:
            tp = (r.topic, r.partition)
            dec = self.by_partition.get(tp)
            if dec is None:
                dec = self.by_partition[tp] = self.protocol.new_decoder(self.options)
            self.events += len(dec.decode(r))


@dataclass
class DecodeFigures:
    variant: str
    bare_name: str
    messages: int = 0
    events: int = 0
    decoder_seconds: float = 0.0  # CPU time
    bare_seconds: float = 0.0
    decoder_wall: float = 0.0  # elapsed time
    bare_wall: float = 0.0
    profile: list[str] = field(default_factory=list)

    @property
    def decoder_rate(self) -> float:
        return self.messages / self.decoder_seconds

    @property
    def bare_rate(self) -> float:
        return self.messages / self.bare_seconds

    @property
    def ratio(self) -> float:
        return self.decoder_rate / self.bare_rate


def measure_decode(inputs: Inputs, limit: Optional[int] = None) -> DecodeFigures:
    bare_name, bare = bare_parser(inputs.manifest)
    decoders = _Decoders(inputs.manifest)
    figures = DecodeFigures(inputs.variant, bare_name)
    cpu, wall = time.process_time, time.perf_counter
    for records in record_batches(inputs.records, limit):
        c0, w0 = cpu(), wall()
        decoders.run(records)
        c1, w1 = cpu(), wall()
        bare(records)
        c2, w2 = cpu(), wall()
        figures.decoder_seconds += c1 - c0
        figures.bare_seconds += c2 - c1
        figures.decoder_wall += w1 - w0
        figures.bare_wall += w2 - w1
        figures.messages += len(records)
    figures.events = decoders.events
    return figures


def profile_decoder(inputs: Inputs, messages: int, top: int = 12) -> list[str]:
    """Where a decoder's time goes: the functions with the most own time over the first messages."""
    decoders = _Decoders(inputs.manifest)
    batches = list(record_batches(inputs.records, messages))
    profiler = cProfile.Profile()
    profiler.enable()
    for records in batches:
        decoders.run(records)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)  # type: ignore[attr-defined]
    lines = []
    for (filename, line, func), (_, calls, own, cumulative, _) in rows[:top]:
        where = f"{_short(filename)}:{line}({func})" if line else func
        lines.append(f"{100 * own / total:5.1f}% own {100 * cumulative / total:5.1f}% cum {calls:>9,} calls  {where}")
    return lines


def _short(filename: str) -> str:
    for marker in ("ticdc_conformance/", "ticdc_generators/", "site-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def bench_decode(work: Path, variants: list[str], events: int, seed: int = 1, echo=print,
                 limit: Optional[int] = None, profile_messages: int = 0) -> list[DecodeFigures]:
    echo(f"bench decode: scenario {SCENARIO} with {events:,} events, seed {seed}"
         + (f", first {limit:,} messages" if limit else "") + "; rates over CPU time")
    results = []
    for variant in variants:
        inp = cached_inputs(work, variant, events, seed, echo=echo)
        f = measure_decode(inp, limit)
        results.append(f)
        echo(f"  {f.variant:<19} {f.messages:>10,} messages {f.events:>10,} events   "
             f"decoder {f.decoder_rate:>9,.0f} msg/s   {f.bare_name} {f.bare_rate:>9,.0f} msg/s   "
             f"ratio {f.ratio:.2f}x {'ok' if f.ratio >= TARGET_RATIO else 'below target'}   "
             f"(CPU {f.decoder_seconds:.1f} s + {f.bare_seconds:.1f} s, elapsed {f.decoder_wall:.1f} s + "
             f"{f.bare_wall:.1f} s, load average {os.getloadavg()[0]:.1f})")
        if profile_messages:
            f.profile = profile_decoder(inp, profile_messages)
            echo(f"    where the decoder's time goes (cProfile, first {profile_messages:,} messages, own time):")
            for line in f.profile:
                echo(f"      {line}")
    echo(f"  target: decoder at least {TARGET_RATIO}x the bare parse")
    return results
