"""The Hypothesis profiles: dev by default, ci deterministic and printing reproduce blobs."""
import pytest
from hypothesis import Phase, settings

from ticdc_generators.strategies.profiles import ENV_VAR, PROFILES, load_profile


def test_ci_is_deterministic_and_prints_blobs():
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.print_blob and ci.deadline is None and ci.database is None
    assert settings.get_profile("dev").max_examples < ci.max_examples < settings.get_profile("nightly").max_examples
    assert Phase.shrink in ci.phases


def test_the_environment_selects_the_profile(monkeypatch):
    settings.register_profile("before-this-test", parent=settings.default)
    try:
        monkeypatch.delenv(ENV_VAR, raising=False)
        assert load_profile() == "dev"
        for name in PROFILES:
            monkeypatch.setenv(ENV_VAR, name)
            assert load_profile() == name
            assert settings.default.max_examples == PROFILES[name]["max_examples"]
        monkeypatch.setenv(ENV_VAR, "weekly")
        with pytest.raises(ValueError, match="unknown Hypothesis profile"):
            load_profile()
    finally:
        settings.load_profile("before-this-test")
