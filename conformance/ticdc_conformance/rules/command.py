"""What `ticdc-conformance rules` prints: the rule list, the coverage report, docs/rules.md."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

import click

from ticdc_contract.protocols import encodings_named

from .catalogue import default_catalogue
from .coverage import Coverage, coverage
from .doc import protocols_label, render
from .markers import MarkerError
from .model import LEVELS, CatalogueError, Rule
from .registry import RegistryError

__all__ = ["LEVELS", "coverage_text", "list_json", "list_text", "run"]  # LEVELS: the CLI's --level choices
QUOTE_WIDTH = 100


def _line(text: str, width: int = QUOTE_WIDTH) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def list_text(rules: Sequence[Rule]) -> str:
    if not rules:
        return "no rule matches"
    width = max(len(r.id) for r in rules)
    lines = [f"{r.id:<{width}}  {r.level:<11}  {r.source:<26}  {_line(r.first_line)}" for r in rules]
    return "\n".join(lines + [f"{len(rules)} rule(s)"])


def list_json(rules: Sequence[Rule]) -> str:
    return json.dumps([r.to_json() for r in rules], indent=2, ensure_ascii=False)


def coverage_text(cov: Coverage) -> str:
    lines = []
    width = max((len(c.rule.id) for c in cov.rules), default=0)
    for c in cov.rules:
        checks = ", ".join(ch.name for ch in c.checks) or "— no check"
        tests = f"{len(c.tests)} test(s)" if c.tests else "no test"
        lines.append(f"{c.rule.id:<{width}}  {c.rule.level:<11}  {protocols_label(c.rule.protocols):<14}  "
                     f"{tests:<12}  {checks}")
        lines += [f"{'':<{width}}    test {t}" for t in c.tests]
    s = cov.summary()
    lines.append(f"{s['rules']} rule(s): {s['with_check']} with a check, {s['with_test']} with a marked test; "
                 f"required: {s['required_with_check']} of {s['required']} with a check")
    for test, ids in cov.unknown_in_tests.items():
        lines.append(f"error: {test} is marked with rule id(s) not in the catalogue: {', '.join(ids)}")
    return "\n".join(lines)


def run(echo: Callable[[str], None], protocols: Optional[Sequence[str]] = None, level: Optional[str] = None,
        topic: Optional[str] = None, fmt: str = "text", show_coverage: bool = False, strict: bool = False,
        tests_dir: Path = Path("tests"), write_to: Optional[Path] = None) -> int:
    """Prints what the options ask for and returns the exit code (2 for a broken catalogue, check
    registration or test mark, named in the message)."""
    try:
        return _run(echo, protocols, level, topic, fmt, show_coverage, strict, tests_dir, write_to)
    except (CatalogueError, RegistryError, MarkerError) as e:
        echo(f"error: {e}")
        return 2


def _run(echo: Callable[[str], None], protocols: Optional[Sequence[str]], level: Optional[str],
         topic: Optional[str], fmt: str, show_coverage: bool, strict: bool, tests_dir: Path,
         write_to: Optional[Path]) -> int:
    catalogue = default_catalogue()
    if write_to is not None:
        Path(write_to).write_text(render(catalogue), encoding="utf-8")
        echo(f"wrote {write_to}")
        return 0
    rules = catalogue.select(protocols, level, topic)
    if not show_coverage:
        echo(list_json(rules) if fmt == "json" else list_text(rules))
        return 0
    if not Path(tests_dir).is_dir():
        echo(f"note: no tests folder at {tests_dir}; only checks are counted")
    cov = coverage(catalogue, tests_dir, rules)
    echo(json.dumps(cov.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else coverage_text(cov))
    failed = bool(cov.unknown_in_tests)
    if strict and cov.without_check:
        failed = True
        echo(f"{len(cov.without_check)} rule(s) without a check: " + " ".join(r.id for r in cov.without_check))
    return 1 if failed else 0


@click.command("rules")
@click.option("--protocol", "-p", default=None,
              help="Only rules for this encoding: open-protocol, canal-json, debezium, simple, simple-json, "
                   "simple-avro.")
@click.option("--level", type=click.Choice(LEVELS), default=None, help="Only rules of this level.")
@click.option("--topic", default=None, help="Only rules of this topic (the middle part of the id, e.g. bootstrap).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--coverage", "show_coverage", is_flag=True, help="Show rule -> checks -> tests instead.")
@click.option("--strict", is_flag=True, help="With --coverage: exit 1 listing the rules without a check.")
@click.option("--tests", "tests_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("tests"),
              show_default=True, help="Where --coverage looks for tests marked @pytest.mark.rules.")
@click.option("--write", "write_to", is_flag=False, flag_value="docs/rules.md", default=None,
              type=click.Path(dir_okay=False, path_type=Path), help="Write the Markdown page (default docs/rules.md).")
def rules_cmd(protocol: Optional[str], level: Optional[str], topic: Optional[str], fmt: str, show_coverage: bool,
              strict: bool, tests_dir: Path, write_to: Optional[Path]) -> None:
    """List the rule catalogue: every normative statement of the specs (docs/rules.md)."""
    try:
        protocols = encodings_named(protocol) if protocol else None
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    sys.exit(run(click.echo, protocols, level, topic, fmt, show_coverage, strict, tests_dir, write_to))
