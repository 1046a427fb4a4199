"""The decoder option `fast-path` (docs/consumer-protocol.md, "Decoder options"): false sends every
message the reference way, true (the default) tries the fast path first; the events are the same."""
from __future__ import annotations

import pytest

from tests.helpers import assert_fast_matches_reference
from ticdc_conformance.protocols import canal_json, debezium, open_protocol, simple
from ticdc_conformance.protocols.canal_json._fast import decoder as canal_fast
from ticdc_conformance.protocols.debezium._fast import decoder as debezium_fast
from ticdc_conformance.protocols.open_protocol._fast import decoder as open_fast
from ticdc_conformance.protocols.simple._fast import decoder as simple_fast
from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator

# (package, encoding, the fast path's class, its method the decoder calls per record)
CASES = {
    "open-protocol": (open_protocol, "open-protocol", open_fast.FastPath, "decode"),
    "canal-json": (canal_json, "canal-json", canal_fast.FastDML, "decode"),
    "debezium": (debezium, "debezium", debezium_fast.TypedDML, "decode"),
    "simple-json": (simple, "simple-json", simple_fast.FastDML, "decode"),
}


def _stream(encoding: str):
    config = config_for("smoke", encoding)
    records = list(SinkSimulator(config, seed=1).run(get_scenario("smoke").history(1, None, config.time_zone)))
    return records, config.ticdc_options()


def _decode_all(package, options: dict, records) -> list:
    decoders: dict = {}
    events = []
    for r in records:
        events += decoders.setdefault((r.topic, r.partition), package.new_decoder(options)).decode(r)
    return events


@pytest.mark.parametrize("name", CASES)
def test_fast_path_false_never_enters_the_fast_path_and_decodes_the_same(name, monkeypatch):
    package, encoding, fast_class, method = CASES[name]
    records, options = _stream(encoding)
    calls = []
    original = getattr(fast_class, method)

    def counted(self, *args):
        calls.append(1)
        return original(self, *args)
    monkeypatch.setattr(fast_class, method, counted)
    shipped = _decode_all(package, options, records)
    assert calls, "the default decoder tries the fast path"
    calls.clear()
    for off in (False, "false", " FALSE "):
        assert _decode_all(package, {**options, "fast-path": off}, records) == shipped
        assert not calls
    assert _decode_all(package, {**options, "fast-path": "true"}, records) == shipped and calls
    # And record by record, exactly (value types, column order, errors): the shared assertion.
    fast, reference = package.new_decoder(options), package.new_decoder({**options, "fast-path": False})
    for r in records:
        assert_fast_matches_reference(fast, reference, r)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("value", ["no", 0, 1, [], "yes"])
def test_a_fast_path_value_that_is_not_a_boolean_is_refused(name, value):
    package, encoding, _, _ = CASES[name]
    _, options = _stream(encoding)
    with pytest.raises(ValueError, match="fast-path"):
        package.new_decoder({**options, "fast-path": value})
