"""pytest plugin (registered through the `pytest11` entry point).

Lets a consumer's own test suite run the conformance suite against it:

    def test_my_consumer(ticdc_conformance):
        result = ticdc_conformance.run("canal-json", consumer="python my_consumer.py")
        assert result.conformant, result.render()

Options: `--ticdc-scenario`, `--ticdc-seed`, `--ticdc-consumer` (the default consumer command).
"""
from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ticdc-conformance")
    group.addoption("--ticdc-scenario", default="smoke", help="scenario for the ticdc_conformance fixture")
    group.addoption("--ticdc-seed", default=1, type=int, help="seed for the ticdc_conformance fixture")
    group.addoption("--ticdc-consumer", default="local",
                    help="consumer under test: spark, local, or a command (docs/consumer-protocol.md)")


class ConformanceHarness:
    def __init__(self, scenario: str, seed: int, consumer: str, work: Path) -> None:
        self.scenario, self.seed, self.consumer, self.work = scenario, seed, consumer, work

    def run(self, encoding: str, consumer: str | None = None, scenario: str | None = None, seed: int | None = None):
        from .runner import run_encoding

        spark = None
        chosen = consumer or self.consumer
        if chosen == "spark":
            from .consumer.spark_job import spark_session
            spark = spark_session()
        return run_encoding(scenario or self.scenario, self.seed if seed is None else seed, encoding,
                            self.work, chosen, spark)


@pytest.fixture
def ticdc_conformance(request: pytest.FixtureRequest, tmp_path: Path) -> ConformanceHarness:
    opt = request.config.getoption
    return ConformanceHarness(opt("--ticdc-scenario"), opt("--ticdc-seed"), opt("--ticdc-consumer"), tmp_path)
