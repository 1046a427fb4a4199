"""Property tests run under the Hypothesis profile named by $HYPOTHESIS_PROFILE (dev by default,
ci in CI, nightly for long runs); see ticdc_generators/strategies/profiles.py.

Hypothesis fixes a test's settings when the test is defined (at import), so the profile is loaded
while this directory's modules are collected and the previous default is put back after each:
tests elsewhere keep the settings they were written for."""
import pytest
from hypothesis import settings

from ticdc_generators.strategies.profiles import load_profile

_OUTSIDE = "outside-tests-property"
settings.register_profile(_OUTSIDE, parent=settings.default)
PROFILE = load_profile()
settings.load_profile(_OUTSIDE)


def pytest_collectstart(collector):
    if isinstance(collector, pytest.Module):
        load_profile(PROFILE)


def pytest_collectreport(report):
    settings.load_profile(_OUTSIDE)
