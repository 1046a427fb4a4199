"""Reference decoder, fidelity projection and lint rules of TiCDC Open Protocol (spec 002)."""
from __future__ import annotations

from functools import partial

from ..common.interface import ProtocolSpec, by_column_type, imported_when_called
from ..common.stream_rules import StreamRules
from ..common.watermarks import carries_watermarks
from . import fidelity
from .decoder import OpenProtocolDecoder, new_decoder
from .fidelity import describe_fidelity, project_value
from .message import RawEvent
from .options import OpenProtocolOptions
from .wire import read_events

PROTOCOL = ProtocolSpec(
    name="open-protocol",
    new_decoder=new_decoder,
    project_value=fidelity.project_value,
    value_projector=fidelity.value_projector,
    project_column=None,
    describe_fidelity=fidelity.describe_fidelity,
    accepted_forms=fidelity.accepted_forms,
    carried_number=fidelity.carried_number,
    lower_column=by_column_type(fidelity.lower_value),
    type_rule=fidelity.type_rule,
    row_rule=fidelity.ROW_RULE,
    carries_watermarks=partial(carries_watermarks, "open-protocol"),
    new_lint=imported_when_called(f"{__name__}.lint", "new_lint"),
    stream_rules=StreamRules(
        decode="OPEN-FRAMING-1",
        watermark="OPEN-WATERMARK-2",
        order="OPEN-ORDER-1",
        dispatch="OPEN-DISPATCH-1",
        ddl_broadcast="OPEN-BROADCAST-1",
        watermark_broadcast="OPEN-BROADCAST-2",
    ),
)

__all__ = [
    "PROTOCOL",
    "OpenProtocolDecoder",
    "OpenProtocolOptions",
    "RawEvent",
    "describe_fidelity",
    "new_decoder",
    "project_value",
    "read_events",
]
