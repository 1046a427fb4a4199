"""The decoder options a reference consumer uses for one generated run.

The sink options of the manifest, plus what large messages need from the run folder: the local
folder behind the claim-check storage URI (manifest `claim_check`), and, for handle-key-only
messages, the upstream snapshot lookup — TiCDC's consumer reads the full row from TiDB with
`tidb_snapshot`; here the run's ground truth answers (protocols/common/snapshot.py TruthSnapshot).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ticdc_conformance.protocols.common.claim_check import claim_check_options
from ticdc_conformance.protocols.common.snapshot import SNAPSHOT_LOOKUP, TruthSnapshot


def decoder_options(manifest: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
    options: dict[str, Any] = dict(manifest["sink"])
    options.update(claim_check_options(manifest, run_dir))
    if options.get("large-message-handle-option") == "handle-key-only":
        options[SNAPSHOT_LOOKUP] = TruthSnapshot.for_run(run_dir)
    return options
