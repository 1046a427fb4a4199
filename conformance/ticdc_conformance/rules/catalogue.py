"""Loading the rule catalogue: one TOML file per spec under `catalogue/` (format: docs/rules.md).

A file names its spec once (`source`) and may give default `protocols` for its rules; each
`[[rule]]` table is one rule. Everything is validated on load, so a broken catalogue fails with
the file and the rule named instead of surfacing later as a wrong report.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Iterable, Optional

from .model import CatalogueError, Rule, normalize_ws, validate

# Package data read through importlib.resources, so the catalogue loads from a zip too (the Spark
# job shipped with --py-files registers its protocols' rules on import).
CATALOGUE_DIR: Traversable = files(__package__) / "catalogue"
_FILE_KEYS = {"source", "title", "protocols", "rule"}
_RULE_KEYS = {"id", "level", "protocols", "topic", "section", "quote", "applies_to", "note", "see_also"}
_REQUIRED = {"id", "level", "topic", "section", "quote", "applies_to"}


@dataclass(frozen=True)
class Catalogue:
    rules: tuple[Rule, ...]  # file by file, in file order

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {r.id: r for r in self.rules})

    def __iter__(self):
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._by_id

    def get(self, rule_id: str) -> Rule:
        try:
            return self._by_id[rule_id]
        except KeyError:
            raise KeyError(f"no rule {rule_id!r} in the catalogue") from None

    def select(self, protocols: Optional[Iterable[str]] = None, level: Optional[str] = None,
               topic: Optional[str] = None) -> list[Rule]:
        """Rules naming any of `protocols`, of `level` and of `topic` (None: no filter)."""
        wanted = None if protocols is None else set(protocols)
        return [r for r in self.rules
                if (wanted is None or wanted & set(r.protocols))
                and (level is None or r.level == level)
                and (topic is None or r.topic == topic.lower())]

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.source for r in self.rules))


def _rule(entry: dict, defaults: dict, where: str) -> Rule:
    unknown = set(entry) - _RULE_KEYS
    missing = _REQUIRED - set(entry)
    if unknown or missing:
        raise CatalogueError(f"{where}: unknown key(s) {sorted(unknown)}, missing key(s) {sorted(missing)}")
    protocols = entry.get("protocols", defaults.get("protocols"))
    if protocols is None:
        raise CatalogueError(f"{where}: no protocols, and the file gives no default")
    for key in ("id", "level", "topic", "section", "quote", "applies_to", "note"):
        if key in entry and not isinstance(entry[key], str):
            raise CatalogueError(f"{where}: {key} must be a string")
    for key, value in (("protocols", protocols), ("see_also", entry.get("see_also", []))):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CatalogueError(f"{where}: {key} must be a list of strings")
    rule = Rule(id=entry["id"], level=entry["level"], protocols=tuple(protocols), topic=entry["topic"],
                source=defaults["source"], section=entry["section"], quote=entry["quote"].strip(),
                applies_to=entry["applies_to"], note=entry.get("note", ""),
                see_also=tuple(entry.get("see_also", ())))
    problems = validate(rule)
    if problems:
        raise CatalogueError(f"{where}: " + "; ".join(problems))
    return rule


def load_file(path: Path | Traversable) -> list[Rule]:
    path = path if isinstance(path, Traversable) else Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise CatalogueError(f"{path.name}: not TOML ({e})") from None
    unknown = set(data) - _FILE_KEYS
    if unknown or not isinstance(data.get("source"), str):
        raise CatalogueError(f"{path.name}: needs a string `source`; unknown key(s) {sorted(unknown)}")
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise CatalogueError(f"{path.name}: `rule` must be an array of tables ([[rule]])")
    return [_rule(e, data, f"{path.name} rule #{i + 1} ({e.get('id', 'no id')})") for i, e in enumerate(entries)]


def load_catalogue(directory: Path | Traversable = CATALOGUE_DIR) -> Catalogue:
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    folder = directory if isinstance(directory, Traversable) else Path(directory)
    toml_files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    loaded = [(path, load_file(path)) for path in toml_files]
    # Files in the order of their specs (000, 001, ...), rules in file order.
    loaded.sort(key=lambda item: (item[1][0].source if item[1] else "", item[0].name))
    for path, file_rules in loaded:
        for rule in file_rules:
            if rule.id in seen:
                raise CatalogueError(f"{path.name}: {rule.id} is already defined in {seen[rule.id]}")
            seen[rule.id] = path.name
            rules.append(rule)
    for rule in rules:
        dangling = [i for i in rule.see_also if i not in seen or i == rule.id]
        if dangling:
            raise CatalogueError(f"{seen[rule.id]}: {rule.id} has see_also {dangling} naming no other rule")
    return Catalogue(tuple(rules))


@lru_cache(maxsize=1)
def default_catalogue() -> Catalogue:
    """The catalogue shipped with the package, loaded once."""
    return load_catalogue()


def quote_problems(catalogue: Catalogue, specs_dir: Path) -> list[str]:
    """Rules whose quote or section heading is not in their spec file (whitespace normalized)."""
    texts: dict[str, str] = {}
    problems = []
    for rule in catalogue:
        if rule.source not in texts:
            path = Path(specs_dir) / rule.source
            if not path.exists():
                problems.append(f"{rule.id}: spec file {rule.source} not found in {specs_dir}")
                texts[rule.source] = ""
                continue
            texts[rule.source] = normalize_ws(path.read_text(encoding="utf-8"))
        text = texts[rule.source]
        if not text:
            continue
        if normalize_ws(rule.quote) not in text:
            problems.append(f"{rule.id}: quote is not verbatim in {rule.source}: {rule.first_line[:80]!r}")
        for heading in rule.sections:
            if normalize_ws(heading) not in text:
                problems.append(f"{rule.id}: section heading {heading!r} is not in {rule.source}")
    return problems
