"""Both sides take their protocol and encoding names from ticdc_contract.protocols."""
from __future__ import annotations

import pytest

from ticdc_conformance.protocols import PROTOCOL_NAMES, protocol
from ticdc_contract.protocols import ENCODING_FORMATS, ENCODINGS, PROTOCOLS, encoding_name, package_name
from ticdc_generators.pipeline import DEFAULT_MATRIX, config_for, encoding_names
from ticdc_generators.protocols import encoder_module
from ticdc_generators.sink.config import SinkConfig


@pytest.mark.parametrize("name", PROTOCOLS)
def test_every_protocol_has_an_encoder_and_a_decoder_under_its_name(name):
    assert encoder_module(name).name == name
    assert protocol(name).name == name


def test_the_decoder_registry_is_the_contracts_list():
    assert PROTOCOL_NAMES == PROTOCOLS


@pytest.mark.parametrize("unknown", ["simple-json", "canal", "Open-Protocol", ""])
def test_a_name_outside_the_contract_is_refused_on_both_sides(unknown):
    with pytest.raises(ValueError, match="unknown protocol"):
        encoder_module(unknown)
    with pytest.raises(ValueError, match="unknown protocol"):
        protocol(unknown)
    with pytest.raises(ValueError, match="unknown protocol"):
        SinkConfig(protocol=unknown)


def test_the_default_matrix_is_the_contracts_encodings_in_order():
    assert tuple(DEFAULT_MATRIX) == ENCODINGS == tuple(encoding_names())
    for encoding in ENCODINGS:
        config = config_for("smoke", encoding)
        assert config.encoding == encoding == encoding_name(config.protocol, config.encoding_format)


def test_each_encoding_format_names_one_simple_encoding():
    assert [encoding_name("simple", f) for f in ENCODING_FORMATS] == ["simple-json", "simple-avro"]
    assert {encoding_name(p) for p in PROTOCOLS if p != "simple"} == set(ENCODINGS) - {"simple-json", "simple-avro"}


def test_package_names():
    assert [package_name(p) for p in PROTOCOLS] == ["open_protocol", "canal_json", "debezium", "simple"]
    with pytest.raises(ValueError):
        package_name("open_protocol")
