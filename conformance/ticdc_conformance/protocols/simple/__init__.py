"""Reference decoder of TiCDC's Simple protocol, JSON and Avro (spec 004)."""
from __future__ import annotations

from functools import partial

from ..common.interface import ProtocolSpec, by_column_type, imported_when_called
from ..common.stream_rules import StreamRules
from ..common.watermarks import carries_watermarks
from . import fidelity
from .decoder import MAX_HELD, MAX_HELD_BYTES, SimpleDecoder
from .fidelity import describe_fidelity, project_value


def new_decoder(options: dict) -> SimpleDecoder:
    return SimpleDecoder(options)


PROTOCOL = ProtocolSpec(
    name="simple",
    new_decoder=new_decoder,  # type: ignore[arg-type]
    project_value=fidelity.project_value,
    value_projector=fidelity.value_projector,
    project_column=None,
    describe_fidelity=fidelity.describe_fidelity,
    accepted_forms=fidelity.accepted_forms,
    carried_number=fidelity.carried_number,
    lower_column=by_column_type(fidelity.lower_value),
    type_rule=fidelity.type_rule,
    row_rule=fidelity.ROW_RULE,
    carries_watermarks=partial(carries_watermarks, "simple"),
    new_lint=imported_when_called(f"{__name__}.lint", "new_lint"),
    stream_rules=StreamRules(
        decode="SIMPLE-FORMAT-1",
        watermark="SIMPLE-WATERMARK-1",
        order="SIMPLE-ORDER-2",
        dispatch="SIMPLE-DISPATCH-1",
        ddl_broadcast="SIMPLE-BROADCAST-1",
        watermark_broadcast="SIMPLE-BROADCAST-2",
        ddl_barrier="SIMPLE-ORDER-1",
    ),
)

__all__ = ["PROTOCOL", "MAX_HELD", "MAX_HELD_BYTES", "SimpleDecoder", "describe_fidelity", "new_decoder",
           "project_value"]
