"""The closure-built Canal-JSON event reader (canal_json/_fast/closures.py), measured against the
generated one (docs/performance.md, "Fast path: generated code or closures"), decodes every record
as the reference path does, so that the benchmark compares equal work."""
from __future__ import annotations

import pytest

from tests.helpers import assert_fast_matches_reference
from ticdc_conformance.bench.paths import _closure_decoder
from ticdc_conformance.protocols.canal_json import new_decoder
from ticdc_conformance.protocols.canal_json._fast import closures
from ticdc_generators.pipeline import config_for
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import SinkSimulator

from .test_codegen_safety import NAMES, _canal_message, _canal_rows, _records


def _stream(scenario: str, **overrides):
    config = config_for(scenario, "canal-json", **overrides)
    records = list(SinkSimulator(config, seed=1).run(get_scenario(scenario).history(1, None, config.time_zone)))
    return records, config.ticdc_options()


def _same_as_reference(records, options: dict, monkeypatch) -> int:
    """Decodes with the closure reader and with fast-path=false; returns how many messages the
    closure readers read themselves."""
    calls = []
    build = closures.event_reader

    def counted(*args):
        read = build(*args)

        def event(msg):
            calls.append(1)
            return read(msg)
        return event
    monkeypatch.setattr(closures, "event_reader", counted)
    fast, reference = {}, {}
    for r in records:
        tp = (r.topic, r.partition)
        dec = fast.setdefault(tp, _closure_decoder(options))
        assert_fast_matches_reference(dec, reference.setdefault(tp, new_decoder({**options, "fast-path": False})), r)
    return len(calls)


@pytest.mark.parametrize("scenario", ["smoke", "types", "keys", "wide-rows"])
@pytest.mark.parametrize("extension", [True, False], ids=["extension", "no-extension"])
def test_closure_reader_decodes_generated_streams_as_the_reference_path(scenario, extension, monkeypatch):
    records, options = _stream(scenario, enable_tidb_extension=extension)
    assert _same_as_reference(records, options, monkeypatch) > 0


def test_closure_reader_takes_hostile_names_and_values_as_data(monkeypatch):
    names = NAMES[1:]
    values = []
    for n in range(3):
        new, old = _canal_rows(names, n)
        values += [_canal_message(names, "INSERT", new, None), _canal_message(names, "UPDATE", new, [old]),
                   _canal_message(names, "DELETE", new, None)]
    assert _same_as_reference(_records(values * 2), {"enable-tidb-extension": True}, monkeypatch) > 0
