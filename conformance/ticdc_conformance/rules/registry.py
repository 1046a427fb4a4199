"""Which checks enforce which rules: the registry `rules --coverage` reads.

A check module registers what it enforces, either with the decorator on the function that does the
checking::

    from ticdc_conformance.rules import checks_rules

    @checks_rules("OPEN-ORDER-1", "OPEN-WATERMARK-2")
    def check_partition_order(records): ...

or, for code that cannot carry a decorator, with a call::

    register("stream.order", ["OPEN-ORDER-1"], "first-sent row events of a table in TS order",
             target="ticdc_conformance.checks.stream:check_order")

Every rule id is checked against the catalogue when it is registered, so a typo fails at import
instead of showing up as an uncovered rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, TypeVar

from .catalogue import Catalogue, default_catalogue

F = TypeVar("F", bound=Callable)


class RegistryError(ValueError):
    """A registration naming unknown rules, or reusing a check name for something else."""


@dataclass(frozen=True)
class Check:
    name: str
    rule_ids: tuple[str, ...]
    description: str
    target: str = ""  # "module:qualname" of the code that performs the check

    def to_json(self) -> dict:
        return {"name": self.name, "rules": list(self.rule_ids), "description": self.description,
                "target": self.target}


class CheckRegistry:
    def __init__(self, catalogue: Optional[Catalogue] = None) -> None:
        self._catalogue = catalogue
        self._checks: dict[str, Check] = {}

    @property
    def catalogue(self) -> Catalogue:
        return self._catalogue if self._catalogue is not None else default_catalogue()

    def register(self, name: str, rule_ids: Iterable[str], description: str, target: str = "") -> Check:
        ids = tuple(rule_ids)
        if not name or not ids:
            raise RegistryError(f"check {name!r}: a check needs a name and at least one rule id")
        unknown = [i for i in ids if i not in self.catalogue]
        if unknown:
            raise RegistryError(f"check {name!r} names rule(s) not in the catalogue: {', '.join(unknown)}")
        if len(set(ids)) != len(ids):
            raise RegistryError(f"check {name!r} lists a rule twice")
        check = Check(name, ids, description, target)
        known = self._checks.get(name)
        # Importing a module twice registers the same check twice; only a different one is an error.
        if known is not None and known != check:
            raise RegistryError(f"check name {name!r} is already registered for {known.target or known.description!r}")
        self._checks[name] = check
        return check

    def checks_rules(self, *rule_ids: str, name: Optional[str] = None,
                     description: Optional[str] = None) -> Callable[[F], F]:
        """Decorator: the function checks `rule_ids`; name and description default to its
        module-qualified name and the first line of its docstring."""
        def mark(fn: F) -> F:
            target = f"{fn.__module__}:{fn.__qualname__}"
            doc = (fn.__doc__ or "").strip().split("\n", 1)[0]
            self.register(name or target, rule_ids, description or doc or target, target)
            fn.__rules__ = tuple(rule_ids)
            return fn
        return mark

    def checks(self) -> list[Check]:
        return sorted(self._checks.values(), key=lambda c: c.name)

    def checks_of(self, rule_id: str) -> list[Check]:
        return [c for c in self.checks() if rule_id in c.rule_ids]


REGISTRY = CheckRegistry()
register = REGISTRY.register
checks_rules = REGISTRY.checks_rules
