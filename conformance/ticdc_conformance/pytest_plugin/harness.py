"""The `ticdc_conformance` fixture's harness: a consumer's own test runs the suite on one encoding.

    def test_my_consumer(ticdc_conformance):
        result = ticdc_conformance.run("canal-json", consumer="python my_consumer.py")
        assert result.conformant, result.render()
"""
from __future__ import annotations

from pathlib import Path

from ticdc_conformance.consumers.adapters.interface import DEFAULT_TIMEOUT_S


class ConformanceHarness:
    def __init__(self, scenario: str, seed: int, consumer: str, work: Path, final_state_only: bool = False,
                 consumer_timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.scenario, self.seed, self.consumer, self.work = scenario, seed, consumer, work
        self.final_state_only, self.consumer_timeout_s = final_state_only, consumer_timeout_s

    def run(self, encoding: str, consumer: str | None = None, scenario: str | None = None, seed: int | None = None,
            final_state_only: bool | None = None):
        from ticdc_conformance.consumers.adapters import adapter_for
        from ticdc_conformance.runner import run_encoding

        return run_encoding(scenario or self.scenario, self.seed if seed is None else seed, encoding,
                            self.work, adapter_for(consumer or self.consumer),
                            final_state_only=self.final_state_only if final_state_only is None else final_state_only,
                            consumer_timeout_s=self.consumer_timeout_s)
