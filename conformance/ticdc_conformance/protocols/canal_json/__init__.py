"""Canal-JSON (spec 003): the reference decoder and its fidelity projection."""
from __future__ import annotations

from .decoder import CanalJSONDecoder, new_decoder
from .fidelity import describe_event_fidelity, describe_fidelity, project_value

__all__ = ["CanalJSONDecoder", "new_decoder", "project_value", "describe_fidelity", "describe_event_fidelity"]
