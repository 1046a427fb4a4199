"""The checkpoint check run both ways: upstream replayed in this process and in a process of its
own (checks/upstream_process.py). The verdicts must be equal, finding for finding."""
from pathlib import Path
from typing import Optional

import orjson

from ticdc_conformance.checks.checkpoints import CheckpointVerdict, check_checkpoints


def checked_both_ways(truth_dir: Path, out: Path, manifest: dict, *, start_ts: Optional[int] = None,
                      ) -> CheckpointVerdict:
    """The checkpoint verdict on OUT, asserted equal whichever process replays upstream."""
    one = check_checkpoints(truth_dir, out, manifest, start_ts=start_ts, processes=1)
    two = check_checkpoints(truth_dir, out, manifest, start_ts=start_ts, processes=2)
    assert orjson.dumps(two.to_json()) == orjson.dumps(one.to_json()), \
        f"the checkpoint verdict differs with upstream replayed in a second process: {out}"
    return one
