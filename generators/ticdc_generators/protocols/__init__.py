"""Encoders, one package per protocol. Each package exports `PROTOCOL`, an `EncoderModule`.

Everything a protocol decides lives in its package: how events become bytes, and its broadcast
rules (where DDL and watermarks go), which the sink simulator asks for instead of knowing them.
The protocols and their package names are the contract's (ticdc_contract.protocols), as on the
decode side. The Go behaviour several encoders reproduce is shared in golang/ (float printing, JSON
text); TiDB's ENUM/SET numbering is the contract's (ticdc_contract.enum_set).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Optional, Protocol

from ticdc_contract.protocols import package_name

from ..sink.config import SinkConfig
from ..sink.events import Message, SinkEvent

if TYPE_CHECKING:
    from ..sink.claim_check import ClaimCheckStorage


class PartitionEncoder(Protocol):
    """Encodes the event sequence of one topic-partition, in send order."""

    def encode(self, event: SinkEvent) -> list[Message]:
        """Messages ready to be produced after this event (may be none while batching)."""

    def flush(self) -> list[Message]:
        """Messages still held back (an open batch)."""


@dataclass(frozen=True)
class EncoderModule:
    name: str
    # new_encoder(config, topic, partition, storage=None): `storage` is the run's claim-check
    # storage, needed only under large-message-handle-option = claim-check.
    new_encoder: Callable[..., PartitionEncoder]
    # True: DDL goes to every partition of the topic; False: to partition 0 only.
    ddl_to_all_partitions: Callable[[SinkConfig], bool]
    # Whether the changefeed emits watermark/resolved events at all under this config.
    sends_watermarks: Callable[[SinkConfig], bool]
    # Whether the protocol needs BOOTSTRAP events scheduled by the simulator.
    uses_bootstrap: bool = False

    def with_claim_check(self, storage: Optional["ClaimCheckStorage"]) -> "EncoderModule":
        """This module with `storage` handed to every encoder it makes, so a caller that knows
        only new_encoder(config, topic, partition) makes claim-check encoders too."""
        if storage is None:
            return self
        make = self.new_encoder
        return replace(self, new_encoder=lambda config, topic, partition: make(config, topic, partition, storage))


def encoder_module(protocol: str) -> EncoderModule:
    """The encoder of a protocol named in ticdc_contract.protocols.PROTOCOLS; its package is
    imported only when asked for."""
    module: EncoderModule = importlib.import_module(f"{__name__}.{package_name(protocol)}").PROTOCOL
    return module
