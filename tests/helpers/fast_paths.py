"""The fast-path assertion: a decoder with its fast path and one without make the same of a record."""

import dataclasses
from typing import Any

from ticdc_conformance.errors import DecodeError
from ticdc_contract.record import KafkaRecord


def _exact(value: Any) -> Any:
    # repr tells 1 from 1.0 from "1" and 0.0 from -0.0; the item lists keep an image's column order.
    if isinstance(value, dict):
        return [(k, type(v).__name__, repr(v)) for k, v in value.items()]
    return type(value).__name__, repr(value)


def exact_events(events: list) -> list:
    """Events in a form equal only for identical events: field by field, values by type and repr,
    images in column order."""
    return [(type(e).__name__, {f.name: _exact(getattr(e, f.name)) for f in dataclasses.fields(e)}) for e in events]


def decode_outcome(decoder: Any, record: KafkaRecord) -> Any:
    """What a decoder makes of a record, in a form equal only for identical results: each event
    field by field with values by type and repr, images in column order; or the error's offset
    and reason."""
    try:
        events = decoder.decode(record)
    except DecodeError as err:
        return "DecodeError", err.offset, err.reason
    return exact_events(events)


def assert_fast_matches_reference(fast: Any, reference: Any, record: KafkaRecord) -> Any:
    """`fast` (a decoder whose fast path is on) and `reference` (the same protocol and options
    with the fast path off, fed the same records before) decode `record` to identical events
    or fail with the same error. Returns that outcome."""
    got = decode_outcome(fast, record)
    assert got == decode_outcome(reference, record)
    return got
