"""Every whole example message of specs 000-004, read by the project's reference decoder of its
protocol: it decodes to the example's own events (the ones the encoder tests encode).

The expected decoded events come from the example's `events` and tables, each row image
projected the way the decode side says a protocol carries a value (checks.differential's
project_truth_row); nothing is taken from the encoder's output but the BOOTSTRAP that tells a
Simple decoder the table of a row example (spec 004 prints no BOOTSTRAP for the user table).
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import kafka_record
from ticdc_conformance.events import DecodedBootstrap, DecodedDDL, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_conformance.protocols.common.projection import project_truth_row
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.sink.events import BootstrapEvent

from .corpus import FILES, is_decodable, load, message_parts
from .encode import encode
from .events import build_table

WHOLE = [pytest.param(load(p), id=p.stem) for p in FILES if is_decodable(load(p))]


def test_every_whole_example_in_todays_rendering_is_decoded():
    # Every log of spec 002 but the legacy ones, the complete Debezium, Canal-JSON and Simple messages.
    assert len(WHOLE) >= 20


def _options(ex: dict, profile: str) -> dict:
    return SinkConfig(protocol=ex["protocol"], **ex.get("config", {}), version_profile=profile).ticdc_options()


def _schema_first(ex: dict, profile: str, decoder: Any) -> None:
    """A Simple row needs its table's schema first (spec 004: the consumer learns it from a
    BOOTSTRAP or DDL message); the example's table is announced the way TiCDC announces it."""
    if ex["protocol"] != "simple" or not any(e["kind"] == "row" for e in ex["events"]):
        return
    config = dict(ex.get("config", {}), version_profile=profile)
    for spec in ex["tables"].values():
        for m in encode("simple", config, [BootstrapEvent(build_table(spec))]):
            decoder.decode(kafka_record(m["value"], m["key"], offset=0))


def _expected(ex: dict, options: dict) -> list[Any]:
    """The example's events as a decoder reports them, read from the file's own data."""
    out: list[Any] = []
    for e in ex["events"]:
        if e["kind"] == "row":
            spec = ex["tables"][e["table"]]
            table = build_table(spec)
            project = lambda row: None if row is None else project_truth_row(table, row, ex["protocol"], options)  # noqa: E731
            before = project(e["before"])
            if e["op"] == "delete" and options.get("delete-only-output-handle-key-columns"):
                # The delete carries the handle key columns only (the option's one effect).
                keys = next(ix.columns for ix in table.indexes if ix.primary)
                before = {k: v for k, v in before.items() if k in keys}
            out.append(("row", spec["schema"], spec["table"], e["op"], e["commit_ts"], project(e["after"]), before))
        elif e["kind"] == "ddl":
            out.append(("ddl", e["commit_ts"], e["query"]))
        elif e["kind"] == "watermark":
            out.append(("watermark", e["ts"]))
        else:
            spec = ex["tables"][e["table"]]
            out.append(("bootstrap", spec["schema"], spec["table"], tuple(c["name"] for c in spec["columns"])))
    return out


def _seen(decoded: Any, expected: Any) -> Any:
    """A decoded event in the form of `expected`; what the protocol does not carry (a commit ts,
    an old image) is taken as expected."""
    if isinstance(decoded, DecodedRow):
        _, schema, table, op, commit_ts, after, before = expected
        return ("row", decoded.schema, decoded.table, decoded.op,
                commit_ts if decoded.commit_ts is None else decoded.commit_ts,
                decoded.after, before if decoded.before is None else decoded.before)
    if isinstance(decoded, DecodedDDL):
        return "ddl", decoded.commit_ts, decoded.query
    if isinstance(decoded, DecodedWatermark):
        return "watermark", decoded.ts
    assert isinstance(decoded, DecodedBootstrap)
    return "bootstrap", decoded.schema, decoded.table, decoded.columns


@pytest.mark.parametrize("ex", WHOLE)
def test_decoder_reads_the_example_as_its_events(ex):
    for profile in ex["profiles"]:
        options = _options(ex, profile)
        decoder = protocol_spec(ex["protocol"]).new_decoder(options)
        _schema_first(ex, profile, decoder)
        key, value = message_parts(ex)
        decoded = decoder.decode(kafka_record(value, key, offset=1))
        expected = _expected(ex, options)
        assert len(decoded) == len(expected), (profile, decoded)
        assert [_seen(d, e) for d, e in zip(decoded, expected)] == expected, profile
