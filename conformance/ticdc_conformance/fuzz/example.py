"""One fuzz example: write the drawn case as a case folder, run the consumer under test on it with
the drawn schedule, and judge its output with the checks `run` uses (runner.py): the tables at
every checkpoint it reached, no row lost or applied twice, DDL once and in order, the final tables.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ticdc_conformance.consumers.adapters import ConsumerAdapter, RunOptions, Stream
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.findings.outcome import CONSUMER_ERROR, FINAL_STATE_ONLY, NOT_CONFORMANT
from ticdc_conformance.folders import recreate
from ticdc_conformance.runner import EncodingResult, _check
from ticdc_generators.errors import ChangefeedFailure
from ticdc_generators.pipeline import generate_history

from .space import FuzzCase

SCENARIO = "fuzz"  # what a fuzz case's manifest calls its history


@dataclass
class Verdict:
    """How one example ended: `result` holds the checks' verdict; `not_applicable` the reason the
    consumer declined the configuration (no verdict then)."""

    result: EncodingResult
    not_applicable: Optional[str] = None
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """A finding, or a consumer error. An example whose consumer showed no checkpoint (a late
        join at the stream's last checkpoint, say) is judged on its final state only, which is not
        a failure here: `final_state_only` counts those."""
        return self.not_applicable is None and self.result.outcome in (NOT_CONFORMANT, CONSUMER_ERROR)

    @property
    def final_state_only(self) -> bool:
        return self.not_applicable is None and self.result.outcome == FINAL_STATE_ONLY

    @property
    def summary(self) -> str:
        """The first lines of the verdict: outcome and the rules it broke."""
        if self.not_applicable is not None:
            return f"not applicable: {self.not_applicable}"
        rules = sorted({f.rule for f in self.result.findings})
        head = self.result.outcome + (f" ({', '.join(rules)})" if rules else "")
        return head + (f": {self.result.error.splitlines()[0]}" if self.result.error else "")


def write_stream(case: FuzzCase, folder: Path) -> dict:
    """FOLDER/records/, manifest.json, truth/ for the case (emptied first); returns the manifest."""
    recreate(folder)
    return generate_history(case.history, case.config, folder, seed=case.seed, scenario_name=SCENARIO)


def run_case(case: FuzzCase, adapter: ConsumerAdapter, folder: Path, timeout_s: float, replay: str) -> Verdict:
    """Runs `adapter` on the case in FOLDER (emptied first) and judges it; `replay` is the command
    a finding names. A history real TiCDC cannot replicate in the drawn configuration (the
    simulator raises TiCDC's reason, e.g. new TiCDC's panic on a NULL DATE with a DEFAULT in
    Debezium) tests no consumer: not applicable, with that reason."""
    config = case.config
    try:
        manifest = write_stream(case, folder)
    except ChangefeedFailure as e:
        result = EncodingResult(SCENARIO, case.seed, config.encoding, config.protocol, adapter.spec,
                                time_zone=config.time_zone, replay=replay, case=folder)
        return Verdict(result, not_applicable=f"TiCDC fails the changefeed on this history: {e}")
    result = EncodingResult(SCENARIO, case.seed, config.encoding, config.protocol, adapter.spec,
                            time_zone=config.time_zone, replay=replay, records=manifest["records"], case=folder)
    run = adapter.run(Stream.of_case(folder, manifest), recreate(folder / "consumer"),
                      RunOptions(timeout_s=timeout_s, schedule=case.schedule))
    result.consumer_log = run.log
    result.error = run.error
    if run.not_applicable is not None:
        return Verdict(result, not_applicable=run.not_applicable, notes=tuple(run.notes))
    if run.finished:
        try:
            _check(result, folder, manifest, run)
        except ConsumerError as e:
            result.error = str(e)
    return Verdict(result, notes=tuple(run.notes))
