"""Reference decoder of TiCDC's Debezium protocol (spec 000, spec 001): JSON key and value per
record, with or without the Kafka Connect schema, DML, DDL and WATERMARK events."""
from __future__ import annotations

from functools import partial
from typing import Optional

from ..common.interface import ProtocolSpec, imported_when_called
from ..common.stream_rules import StreamRules
from ..common.watermarks import carries_watermarks
from . import fidelity
from .decoder import DebeziumDecoder
from .fidelity import describe_fidelity, project_column, project_value


def new_decoder(options: Optional[dict] = None) -> DebeziumDecoder:
    """One decoder per topic-partition; options are TiCDC's sink option names."""
    return DebeziumDecoder(options)


PROTOCOL = ProtocolSpec(
    name="debezium",
    new_decoder=new_decoder,  # type: ignore[arg-type]
    project_value=fidelity.project_value,
    project_column=fidelity.project_column,
    column_projector=fidelity.column_projector,
    describe_fidelity=fidelity.describe_fidelity,
    accepted_forms=fidelity.accepted_forms,
    carried_number=fidelity.carried_number,
    lower_column=fidelity.lower_column,
    type_rule=fidelity.type_rule,
    row_rule=fidelity.ROW_RULE,
    carries_watermarks=partial(carries_watermarks, "debezium"),
    new_lint=imported_when_called(f"{__name__}.lint", "new_lint"),
    stream_rules=StreamRules(
        decode="DBZ-MESSAGE-2",
        watermark="DBZ-WATERMARK-1",
        ddl_broadcast="DBZ-BROADCAST-1",
    ),
    number_form=fidelity.number_form,
    carried_as_upstream=fidelity.carried_as_upstream,
)

__all__ = ["PROTOCOL", "DebeziumDecoder", "describe_fidelity", "new_decoder", "project_column", "project_value"]
