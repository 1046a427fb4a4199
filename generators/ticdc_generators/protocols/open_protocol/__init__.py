"""TiCDC Open Protocol (spec 002): batched JSON key/value frames, one encoder per topic-partition."""
from __future__ import annotations

from .. import EncoderModule
from .encoder import MessageTooLargeError, OpenProtocolEncoder, OpenProtocolOptions, new_encoder
from .values import EncodeError

# spec 002 (Open Protocol), Restrictions: DDL Events and Resolved Events are broadcast to every
# MQ partition (TiCDC downstreamadapter/sink/helper/helper.go, GetDDLDispatchRule: PartitionAll
# for every protocol but canal/canal-json); the resolved event is always on.
PROTOCOL = EncoderModule(
    name="open-protocol",
    new_encoder=new_encoder,
    ddl_to_all_partitions=lambda config: True,
    sends_watermarks=lambda config: True,
    uses_bootstrap=False,
)

__all__ = ["PROTOCOL", "EncodeError", "MessageTooLargeError", "OpenProtocolEncoder", "OpenProtocolOptions"]
