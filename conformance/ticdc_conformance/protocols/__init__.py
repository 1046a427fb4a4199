"""Reference decoders, one package per protocol, pure Python (no Spark needed).

Each package `protocols/<p>/` holds the same files for the same roles (options, wire, message,
values, decoder, fidelity, lint, a private _fast/) and exposes one `PROTOCOL`, a
`common.interface.ProtocolSpec`: its decoder, value and event fidelity, and lint rules.
`protocol(name)` is the one way to reach them by the contract's protocol name.
Options are TiCDC's sink options by TiCDC's names, plus `claim-check-folder` and `snapshot-lookup`
for large messages (common/large_message.py).
What several decoders do alike lives in common/ (failure signal, JSON, options, compression,
large messages, fidelity projections shared by several protocols).
"""
from __future__ import annotations

import importlib

from ticdc_contract.protocols import PROTOCOLS, package_name

from .common.interface import Decoder, ProtocolSpec, Read

__all__ = ["Decoder", "ProtocolSpec", "Read", "PROTOCOL_NAMES", "protocol"]

# Contract protocol name -> the package that implements it; each package is imported only when
# asked for (a Debezium run never loads the Avro reader of Simple).
_PACKAGES: dict[str, str] = {name: package_name(name) for name in PROTOCOLS}
PROTOCOL_NAMES: tuple[str, ...] = tuple(_PACKAGES)


def protocol(name: str) -> ProtocolSpec:
    """The decode-side implementation of the protocol `name` (e.g. "canal-json")."""
    try:
        package = _PACKAGES[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; expected one of {', '.join(_PACKAGES)}") from None
    spec: ProtocolSpec = importlib.import_module(f"{__name__}.{package}").PROTOCOL
    return spec
