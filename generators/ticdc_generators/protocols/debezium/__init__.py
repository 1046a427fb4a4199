"""TiCDC's Debezium protocol (spec 000, spec 001): JSON key/value messages in Debezium's shape.

DDL goes to every partition of the topic (spec 000, "DDL event": "sent to every MQ partition";
TiCDC downstreamadapter/sink/helper/helper.go GetDDLDispatchRule sends DDL to partition 0 only
for Canal and Canal-JSON). WATERMARK events exist only
with enable-tidb-extension (spec 000, "WATERMARK event"). There is no bootstrap.
"""
from __future__ import annotations

from .. import EncoderModule
from .encoder import DebeziumEncoder, DebeziumOptions, new_encoder
from .values import EncodeFailure

PROTOCOL = EncoderModule(
    name="debezium",
    new_encoder=new_encoder,
    ddl_to_all_partitions=lambda config: True,
    sends_watermarks=lambda config: config.enable_tidb_extension,
    uses_bootstrap=False,
)

__all__ = ["PROTOCOL", "DebeziumEncoder", "DebeziumOptions", "EncodeFailure"]
