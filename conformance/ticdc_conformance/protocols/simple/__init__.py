"""Reference decoder of TiCDC's Simple protocol, JSON and Avro (spec 004)."""
from __future__ import annotations

from .decoder import MAX_HELD, MAX_HELD_BYTES, SimpleDecoder
from .fidelity import describe_fidelity, project_value


def new_decoder(options: dict) -> SimpleDecoder:
    return SimpleDecoder(options)


__all__ = ["MAX_HELD", "MAX_HELD_BYTES", "SimpleDecoder", "describe_fidelity", "new_decoder", "project_value"]
