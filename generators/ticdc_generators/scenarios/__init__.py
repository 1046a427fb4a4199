"""Named scenarios. `SCENARIOS` maps a name to its class; `ticdc-conformance scenarios` lists them."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module

from .base import Scenario

# Name -> (module of this package, class). A scenario's module is imported when it is looked up:
# the breadth and smoke scenarios import faker and hypothesis for their values, which is most of
# the start-up of a `large` generation that needs neither (tests/generators/test_scenarios.py
# holds every name to its class's `name`).
_WHERE: dict[str, tuple[str, str]] = {
    "smoke": ("smoke", "SmokeScenario"),
    "types": ("breadth", "TypesScenario"),
    "keys": ("breadth", "KeysScenario"),
    "ddl-evolution": ("breadth", "DDLEvolutionScenario"),
    "multi-table": ("breadth", "MultiTableScenario"),
    "wide-rows": ("breadth", "WideRowsScenario"),
    "large": ("large", "LargeScenario"),
    "replays": ("replays", "ReplaysScenario"),
}


class _Scenarios(Mapping[str, type[Scenario]]):
    def __getitem__(self, name: str) -> type[Scenario]:
        module, cls = _WHERE[name]
        return getattr(import_module(f"{__name__}.{module}"), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


SCENARIOS: Mapping[str, type[Scenario]] = _Scenarios()


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}") from None
