"""Generated output stays byte for byte what it was: every file `generate` writes for scenario
`smoke` in the six benchmark encodings has the sha256 recorded in byte_identity_smoke.json.

The hashes were recorded from the tree before the generation speed-up (issue 21) by
byte_identity.py, which also holds the full matrix (every scenario × encoding, `large` at 50,000
events, the option variants: minutes, so run by hand). A change that alters output on purpose
records them again: `python tests/generators/byte_identity.py record tests/generators/byte_identity_smoke.json
--case smoke/` keeps the smoke cases only after deleting the option variants from the file, or
regenerate the whole file and prune it; the golden corpus (`golden --check`) shows what changed.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import byte_identity  # noqa: E402  (the script beside this test)

RECORDED = json.loads((Path(__file__).parent / "byte_identity_smoke.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_smoke_output_is_byte_identical(name):
    case = next(c for c in byte_identity.cases("small") if c[0] == name)
    got = byte_identity.run_case(case)[1]
    differ = sorted(k for k in set(got) | set(RECORDED[name]) if got.get(k) != RECORDED[name].get(k))
    assert not differ, f"{name}: these generated files differ from the recorded bytes: {', '.join(differ)}"
