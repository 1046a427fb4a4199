"""Reference decoders, one package per protocol, pure Python (no Spark needed).

Each package exports `new_decoder(options) -> Decoder` and `project_value(type, value, options)`
(the protocol's fidelity projection of a ground-truth value). A Decoder is stateful per
topic-partition (Simple keeps a schema cache) and is fed that partition's records in offset order.
Options are TiCDC's sink options by TiCDC's names, plus `claim-check-folder` and `snapshot-lookup`
for large messages (large_message.py).
What several decoders do alike lives beside the packages: common (failure signal, JSON, options),
compression, claim_check and large_message (large-message handling), floats and enum_set (fidelity
projections).
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Protocol

from ticdc_contract.record import KafkaRecord

from ..events import DecodedEvent


class Decoder(Protocol):
    def decode(self, record: KafkaRecord) -> list[DecodedEvent]:
        """All events of one record (a batch frame may hold several); raises DecodeError."""


_PACKAGES = {
    "open-protocol": "open_protocol",
    "canal-json": "canal_json",
    "debezium": "debezium",
    "simple": "simple",
}


def protocol_package(protocol: str) -> ModuleType:
    try:
        pkg = _PACKAGES[protocol]
    except KeyError:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(_PACKAGES)}") from None
    return importlib.import_module(f"{__name__}.{pkg}")
