"""Reference decoder of TiCDC's Debezium protocol (spec 000, spec 001): JSON key and value per
record, with or without the Kafka Connect schema, DML, DDL and WATERMARK events."""
from __future__ import annotations

from typing import Optional

from .decoder import DebeziumDecoder
from .fidelity import describe_fidelity, project_column, project_value


def new_decoder(options: Optional[dict] = None) -> DebeziumDecoder:
    """One decoder per topic-partition; options are TiCDC's sink option names."""
    return DebeziumDecoder(options)


__all__ = ["DebeziumDecoder", "describe_fidelity", "new_decoder", "project_column", "project_value"]
