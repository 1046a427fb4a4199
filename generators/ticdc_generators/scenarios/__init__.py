"""Named scenarios. `SCENARIOS` maps a name to its class; `ticdc-conformance scenarios` lists them."""
from __future__ import annotations

from .base import Scenario
from .breadth import DDLEvolutionScenario, KeysScenario, MultiTableScenario, TypesScenario, WideRowsScenario
from .large import LargeScenario
from .replays import ReplaysScenario
from .smoke import SmokeScenario

SCENARIOS: dict[str, type[Scenario]] = {cls.name: cls for cls in (
    SmokeScenario, TypesScenario, KeysScenario, DDLEvolutionScenario, MultiTableScenario, WideRowsScenario,
    LargeScenario, ReplaysScenario)}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}") from None
