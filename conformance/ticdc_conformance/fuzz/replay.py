"""Replaying a regression case: the consumer under test runs on the case's history, configuration
and schedule again, and the checks judge it as `fuzz` did. The stream is regenerated from the
case's truth; it must be the records.ndjson the case holds, or the generator has changed and the
case no longer means what it meant when it was saved."""
from __future__ import annotations

from pathlib import Path

from ticdc_conformance.consumers.adapters import ConsumerAdapter
from ticdc_conformance.golden.corpus import record_line
from ticdc_conformance.transport.record_files import RecordFiles
from ticdc_contract.canonical import dumps_line

from .example import Verdict, run_case
from .regression import RegressionCaseError, load_case, replay_command

TIMEOUT_S = 120.0


def _regenerated(records_dir: Path) -> bytes:
    """The record files as records.ndjson lines (golden/corpus.py `record_line`), in offset order."""
    records = sorted(RecordFiles(records_dir, 4096), key=lambda r: (r.topic, r.partition, r.offset))
    return b"".join(dumps_line(record_line(r)) for r in records)


def replay_case(folder: Path, adapter: ConsumerAdapter, work: Path, timeout_s: float = TIMEOUT_S) -> Verdict:
    """Runs `adapter` on the regression case in FOLDER inside WORK (emptied first) and judges it.
    RegressionCaseError when FOLDER is no regression case or its records no longer regenerate."""
    folder = Path(folder)
    case = load_case(folder)
    verdict = run_case(case, adapter, Path(work), timeout_s, replay=replay_command(folder, adapter.spec))
    if _regenerated(Path(work) / "records") != (folder / "records.ndjson").read_bytes():
        raise RegressionCaseError(f"{folder / 'records.ndjson'}: the generator no longer makes these records from the "
                                  "case's history, configuration and seed; the case must be found again with `fuzz`")
    return verdict
