"""TiCDC's Canal-JSON protocol (spec 003).

Broadcast rules: a DDL goes to partition 0 only (spec 003, "DDL Event"; TiCDC
downstreamadapter/sink/helper/helper.go, GetDDLDispatchRule gives PartitionZero for canal-json);
TIDB_WATERMARK messages exist only with enable-tidb-extension; there is no bootstrap.
"""
from __future__ import annotations

from ...sink.config import SinkConfig
from .. import EncoderModule
from .encoder import CanalJSONEncoder, MessageTooLargeError, new_encoder


def _ddl_to_all_partitions(config: SinkConfig) -> bool:
    return False


def _sends_watermarks(config: SinkConfig) -> bool:
    return config.enable_tidb_extension


PROTOCOL = EncoderModule(
    name="canal-json",
    new_encoder=new_encoder,
    ddl_to_all_partitions=_ddl_to_all_partitions,
    sends_watermarks=_sends_watermarks,
    uses_bootstrap=False,
)

__all__ = ["PROTOCOL", "CanalJSONEncoder", "MessageTooLargeError", "new_encoder"]
