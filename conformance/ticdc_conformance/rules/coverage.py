"""Rule -> checks -> tests: which rules the suite enforces, and which it only lists.

Checks come from the registry (the known-checks table plus every module of the check packages,
imported so their `@checks_rules` decorators run); tests from the `rules` marks under tests/.
A rule without a check is shown as such: the report is an inventory, not a verdict.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from ticdc_contract.protocols import PROTOCOLS, package_name

from .catalogue import Catalogue
from .known_checks import register_known_checks
from .markers import MarkedTest, find_marked_tests
from .model import Rule
from .registry import REGISTRY, Check, CheckRegistry

# Packages whose modules may register checks with the decorator.
CHECK_PACKAGES = ("ticdc_conformance.checks", "ticdc_conformance.lint")


@dataclass(frozen=True)
class RuleCoverage:
    rule: Rule
    checks: tuple[Check, ...]
    tests: tuple[str, ...]

    def to_json(self) -> dict:
        return {"id": self.rule.id, "level": self.rule.level, "source": self.rule.source,
                "topic": self.rule.topic, "applies_to": self.rule.applies_to,
                "checks": [c.name for c in self.checks], "tests": list(self.tests)}


@dataclass(frozen=True)
class Coverage:
    rules: tuple[RuleCoverage, ...]
    unknown_in_tests: dict[str, tuple[str, ...]]  # test node id -> ids not in the catalogue

    @property
    def without_check(self) -> list[Rule]:
        return [c.rule for c in self.rules if not c.checks]

    def summary(self) -> dict:
        n = len(self.rules)
        required = [c for c in self.rules if c.rule.level == "required"]
        return {"rules": n,
                "with_check": sum(1 for c in self.rules if c.checks),
                "with_test": sum(1 for c in self.rules if c.tests),
                "required": len(required),
                "required_with_check": sum(1 for c in required if c.checks)}

    def to_json(self) -> dict:
        return {"summary": self.summary(), "rules": [c.to_json() for c in self.rules],
                "unknown_rule_ids_in_tests": {k: list(v) for k, v in self.unknown_in_tests.items()}}


def load_checks(registry: CheckRegistry = REGISTRY, packages: Iterable[str] = CHECK_PACKAGES) -> list[Check]:
    """Everything registered once the known checks and the check packages' modules are loaded."""
    register_known_checks(registry)
    for name in packages:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            importlib.import_module(info.name)
    # Each protocol's lint rules live in its package (protocols/<p>/lint.py, which imports the
    # others), loaded when a lint first runs, so here by name.
    for name in PROTOCOLS:
        importlib.import_module(f"ticdc_conformance.protocols.{package_name(name)}.lint")
    return registry.checks()


def compute(catalogue: Catalogue, checks: Iterable[Check], marked: Iterable[MarkedTest],
            rules: Optional[Iterable[Rule]] = None) -> Coverage:
    """Coverage of `rules` (default: the whole catalogue) by `checks` and `marked` tests."""
    checks = list(checks)
    by_rule_tests: dict[str, list[str]] = {}
    unknown: dict[str, tuple[str, ...]] = {}
    for test in marked:
        missing = tuple(i for i in test.rule_ids if i not in catalogue)
        if missing:
            unknown[test.node_id] = missing
        for rule_id in test.rule_ids:
            by_rule_tests.setdefault(rule_id, []).append(test.node_id)
    chosen = list(catalogue) if rules is None else list(rules)
    return Coverage(
        rules=tuple(RuleCoverage(r, tuple(c for c in checks if r.id in c.rule_ids),
                                 tuple(by_rule_tests.get(r.id, ()))) for r in chosen),
        unknown_in_tests=unknown)


def coverage(catalogue: Catalogue, tests_dir: Path, rules: Optional[Iterable[Rule]] = None,
             checks: Optional[Iterable[Check]] = None) -> Coverage:
    """The coverage report of `checks` (default: every registered check, see `load_checks`) and the
    tests marked under `tests_dir` (none when the folder does not exist, e.g. outside a checkout)."""
    if checks is None:
        checks = load_checks()
    marked = find_marked_tests(tests_dir) if Path(tests_dir).is_dir() else []
    return compute(catalogue, checks, marked, rules)
