"""Hypothesis settings profiles for the property tests.

- `dev` (the default): fast feedback, few examples;
- `ci`: deterministic (`derandomize=True`, no example database), a moderate number of examples,
  no deadline, and `print_blob=True` so a failure prints the `@reproduce_failure` blob;
- `nightly`: many examples and long state-machine runs.

`HYPOTHESIS_PROFILE` selects one (CI sets `ci`); `load_profile()` registers all three and loads it.
"""
from __future__ import annotations

import os
from typing import Optional

from hypothesis import HealthCheck, Phase, settings

ENV_VAR = "HYPOTHESIS_PROFILE"
DEFAULT = "dev"

# Histories are built step by step against the upstream model: drawing one takes longer and holds
# more data than Hypothesis expects of a typical input.
_SLOW_INPUTS = [HealthCheck.too_slow, HealthCheck.data_too_large]

# The explain phase re-runs a failing example under a tracer to point at lines; on histories and
# state machines it can take minutes, so only the nightly profile keeps it.
_NO_EXPLAIN = tuple(p for p in Phase if p is not Phase.explain)

PROFILES = {
    "dev": dict(max_examples=25, stateful_step_count=20, deadline=None, phases=_NO_EXPLAIN,
                suppress_health_check=_SLOW_INPUTS),
    "ci": dict(max_examples=60, stateful_step_count=25, deadline=None, derandomize=True, database=None,
               print_blob=True, phases=_NO_EXPLAIN, suppress_health_check=_SLOW_INPUTS),
    "nightly": dict(max_examples=2000, stateful_step_count=60, deadline=None, print_blob=True,
                    suppress_health_check=_SLOW_INPUTS),
}


def register_profiles() -> None:
    for name, values in PROFILES.items():
        settings.register_profile(name, **values)


def selected_profile() -> str:
    """The profile $HYPOTHESIS_PROFILE names, else dev."""
    return os.environ.get(ENV_VAR) or DEFAULT


def load_profile(name: Optional[str] = None) -> str:
    """Registers the profiles and loads `name` (default: `selected_profile()`)."""
    register_profiles()
    name = name or selected_profile()
    if name not in PROFILES:
        raise ValueError(f"unknown Hypothesis profile {name!r} (from ${ENV_VAR}); expected one of {', '.join(PROFILES)}")
    settings.load_profile(name)
    return name
