"""Reference decoder and fidelity projection for TiCDC Open Protocol (spec 002)."""
from __future__ import annotations

from .decoder import OpenProtocolDecoder, OpenProtocolOptions, new_decoder
from .fidelity import describe_fidelity, project_value
from .framing import RawEvent, read_events

__all__ = [
    "OpenProtocolDecoder",
    "OpenProtocolOptions",
    "RawEvent",
    "describe_fidelity",
    "new_decoder",
    "project_value",
    "read_events",
]
