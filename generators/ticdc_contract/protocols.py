"""The protocol names both sides agree on: TiCDC's `protocol` sink option, and the encodings the
suite runs (a protocol, plus the `encoding-format` for Simple).

The encoders (ticdc_generators.protocols), the decoders (ticdc_conformance.protocols), the sink
config and the default matrix all take their names from here, so a protocol added or renamed on
one side cannot go unnoticed on the other.
"""
from __future__ import annotations

# TiCDC's `protocol` values (pkg/config/sink_protocol.go) the suite implements.
OPEN_PROTOCOL = "open-protocol"
CANAL_JSON = "canal-json"
DEBEZIUM = "debezium"
SIMPLE = "simple"
PROTOCOLS: tuple[str, ...] = (OPEN_PROTOCOL, CANAL_JSON, DEBEZIUM, SIMPLE)

# TiCDC's `encoding-format`, an option of the Simple protocol only.
ENCODING_FORMATS: tuple[str, ...] = ("json", "avro")

# An encoding names one wire format: the protocol, except for Simple, which has one per
# encoding-format. These are the names of golden folders, report rows and the default matrix.
SIMPLE_JSON = "simple-json"
SIMPLE_AVRO = "simple-avro"
ENCODINGS: tuple[str, ...] = (OPEN_PROTOCOL, CANAL_JSON, DEBEZIUM, SIMPLE_JSON, SIMPLE_AVRO)


def check_protocol(name: str) -> str:
    """`name` when it is a protocol of PROTOCOLS; ValueError otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; expected one of {', '.join(PROTOCOLS)}")
    return name


def package_name(protocol: str) -> str:
    """The Python package that implements `protocol` on either side (open-protocol -> open_protocol)."""
    return check_protocol(protocol).replace("-", "_")


def encoding_name(protocol: str, encoding_format: str = "json") -> str:
    """The encoding a protocol and encoding-format make (simple + avro -> simple-avro)."""
    if check_protocol(protocol) == SIMPLE:
        return f"{SIMPLE}-{encoding_format}"
    return protocol


ALL = "all"


def encodings_named(name: str, encoding_format: str = "json") -> list[str]:
    """The encodings `name` stands for: every one (`all`), a protocol's (Simple: the one of
    `encoding_format`), or an encoding itself. ValueError for any other name."""
    if name == ALL:
        return list(ENCODINGS)
    if name == SIMPLE:
        return [encoding_name(SIMPLE, encoding_format)]
    if name not in ENCODINGS:
        raise ValueError(f"unknown protocol {name!r}; expected {ALL}, {', '.join(ENCODINGS)} or {SIMPLE}")
    return [name]
