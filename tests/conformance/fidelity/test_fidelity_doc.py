from tests.conftest import ROOT
from ticdc_conformance.fidelity.doc import render


def test_published_fidelity_matrix_is_current():
    assert (ROOT / "docs" / "fidelity.md").read_text() == render(), \
        "docs/fidelity.md is stale: run `ticdc-conformance fidelity --write`"
