"""The rule catalogue (every normative statement of the specs, with a permanent id), the registry of
the checks that enforce rules, and the coverage report that joins them with the tests (docs/rules.md)."""
from __future__ import annotations

from .catalogue import Catalogue, default_catalogue, load_catalogue, quote_problems
from .model import APPLIES_TO, ENCODINGS, LEVELS, CatalogueError, Rule
from .registry import REGISTRY, Check, CheckRegistry, RegistryError, checks_rules, register

__all__ = [
    "APPLIES_TO", "Catalogue", "CatalogueError", "Check", "CheckRegistry", "ENCODINGS", "LEVELS", "REGISTRY",
    "RegistryError", "Rule", "checks_rules", "default_catalogue", "load_catalogue", "quote_problems", "register",
]
