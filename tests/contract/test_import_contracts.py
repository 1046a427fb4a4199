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


@pytest.mark.parametrize("contract", [c["id"] for c in CONTRACTS])
def test_import_contract_is_kept(contract):
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    run = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"import contract {contract!r} is broken:\n{run.stdout}{run.stderr}"
