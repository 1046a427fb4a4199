"""Canal-JSON (spec 003): the reference decoder, its fidelity projection and lint rules."""
from __future__ import annotations

from functools import partial

from ..common.interface import ProtocolSpec, by_column_type, imported_when_called
from ..common.stream_rules import StreamRules
from ..common.watermarks import carries_watermarks
from . import fidelity
from .decoder import CanalJSONDecoder, new_decoder
from .fidelity import describe_event_fidelity, describe_fidelity, project_value

PROTOCOL = ProtocolSpec(
    name="canal-json",
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
    carries_watermarks=partial(carries_watermarks, "canal-json"),
    new_lint=imported_when_called(f"{__name__}.lint", "new_lint"),
    stream_rules=StreamRules(
        decode="CANAL-EVENTS-1",
        watermark="CANAL-WATERMARK-3",
        ddl_partition_zero="CANAL-DISPATCH-1",
    ),
)

__all__ = ["PROTOCOL", "CanalJSONDecoder", "new_decoder", "project_value", "describe_fidelity",
           "describe_event_fidelity"]
