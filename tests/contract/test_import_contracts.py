"""The import contracts of pyproject.toml [tool.importlinter] (docs/import-contracts.md) hold.

One test per contract, each running `lint-imports` on that contract alone, so a failure names the
contract and shows import-linter's report of the offending imports.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_every_contract_is_documented_and_every_documented_contract_configured():
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", (ROOT / "docs/import-contracts.md").read_text(), re.M))
    assert documented == {c["id"] for c in CONTRACTS}


def test_the_generators_public_api_contract_forbids_everything_else():
    # A module added to ticdc_generators is private until named public here and in the docs.
    import grimp

    # Public: running a generation, driving one protocol's encoder (the registry and the events it
    # takes; the protocol packages themselves stay private), the value domains (their package) and the
    # Hypothesis strategies `fuzz` draws upstream histories from.
    public = {"pipeline", "scenarios", "sink.config", "sink.changefeed", "errors", "protocols", "sink.events",
              "values", "strategies"}
    graph = grimp.build_graph("ticdc_generators")
    modules = set()
    for package in ("ticdc_generators", "ticdc_generators.sink", "ticdc_generators.protocols",
                    "ticdc_generators.values"):
        modules |= {m.removeprefix("ticdc_generators.") for m in graph.find_children(package)}
    modules -= {"sink"}
    contract = next(c for c in CONTRACTS if c["id"] == "generators-public-api")
    forbidden = {m.removeprefix("ticdc_generators.") for m in contract["forbidden_modules"]}
    assert modules - public == forbidden


@pytest.mark.parametrize("contract", [c["id"] for c in CONTRACTS])
def test_import_contract_is_kept(contract):
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    run = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"import contract {contract!r} is broken:\n{run.stdout}{run.stderr}"
