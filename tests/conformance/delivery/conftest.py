"""Small generated cases for the delivery tests, generated once per session and shared (read-only)."""
from pathlib import Path
from typing import Callable

import pytest

from ticdc_generators.pipeline import config_for, generate


@pytest.fixture(scope="session")
def case(tmp_path_factory) -> Callable[..., Path]:
    """case(scenario, encoding, **sink overrides) -> the folder `generate` wrote (seed 1)."""
    made: dict[tuple, Path] = {}

    def make(scenario: str = "smoke", encoding: str = "canal-json", **overrides) -> Path:
        key = (scenario, encoding, tuple(sorted(overrides.items())))
        if key not in made:
            folder = tmp_path_factory.mktemp(f"{scenario}-{encoding}")
            generate(scenario, 1, config_for(scenario, encoding, **overrides), folder)
            made[key] = folder
        return made[key]

    return make
