"""pytest plugin (registered through the `pytest11` entry point).

Lets a consumer's own test suite run the conformance suite against it:

    def test_my_consumer(ticdc_conformance):
        result = ticdc_conformance.run("canal-json", consumer="python my_consumer.py")
        assert result.conformant, result.render()

`result.conformant` is `run`'s exit status 0: a consumer judged on its final state only (a stream
with watermarks, no applied log with a checkpoint) passes only with `--ticdc-final-state-only` or
`run(..., final_state_only=True)`; `result.outcome` is the verdict word.

Options: `--ticdc-scenario`, `--ticdc-seed`, `--ticdc-consumer` (the default consumer command),
`--ticdc-final-state-only`, `--ticdc-consumer-timeout`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_conformance.consumers.adapters.interface import DEFAULT_TIMEOUT_S


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ticdc-conformance")
    group.addoption("--ticdc-scenario", default="smoke", help="scenario for the ticdc_conformance fixture")
    group.addoption("--ticdc-seed", default=1, type=int, help="seed for the ticdc_conformance fixture")
    group.addoption("--ticdc-consumer", default="local",
                    help="consumer under test: spark, local, or a command (docs/consumer-protocol.md)")
    group.addoption("--ticdc-final-state-only", action="store_true", default=False,
                    help="accept a consumer judged on its final state only (ordering not verified)")
    group.addoption("--ticdc-consumer-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"seconds a consumer command may run (default {DEFAULT_TIMEOUT_S})")


class ConformanceHarness:
    def __init__(self, scenario: str, seed: int, consumer: str, work: Path, final_state_only: bool = False,
                 consumer_timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.scenario, self.seed, self.consumer, self.work = scenario, seed, consumer, work
        self.final_state_only, self.consumer_timeout_s = final_state_only, consumer_timeout_s

    def run(self, encoding: str, consumer: str | None = None, scenario: str | None = None, seed: int | None = None,
            final_state_only: bool | None = None):
        from .consumers.adapters import adapter_for
        from .runner import run_encoding

        return run_encoding(scenario or self.scenario, self.seed if seed is None else seed, encoding,
                            self.work, adapter_for(consumer or self.consumer),
                            final_state_only=self.final_state_only if final_state_only is None else final_state_only,
                            consumer_timeout_s=self.consumer_timeout_s)


@pytest.fixture
def ticdc_conformance(request: pytest.FixtureRequest, tmp_path: Path) -> ConformanceHarness:
    opt = request.config.getoption
    return ConformanceHarness(opt("--ticdc-scenario"), opt("--ticdc-seed"), opt("--ticdc-consumer"), tmp_path,
                              opt("--ticdc-final-state-only"), opt("--ticdc-consumer-timeout"))
