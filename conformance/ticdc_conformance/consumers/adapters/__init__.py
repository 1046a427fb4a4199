"""The consumer under test: one adapter interface (interface.py), the reference consumers
(reference.py), any program behind docs/consumer-protocol.md (program.py), and `adapter_for`, which
turns what `--consumer` says into one of them."""
from __future__ import annotations

from typing import Any, Optional

from .interface import FINAL_STATE_ONLY, Capabilities, ConsumerAdapter, ConsumerRun, RunOptions, Stream, shown_by_output
from .program import ProgramConsumer
from .reference import SequentialConsumer, SparkConsumer

__all__ = ["FINAL_STATE_ONLY", "Capabilities", "ConsumerAdapter", "ConsumerRun", "ProgramConsumer",
           "RunOptions", "SequentialConsumer", "SparkConsumer", "Stream", "adapter_for",
           "shown_by_output"]


def adapter_for(spec: str, spark: Any = None, master: Optional[str] = None) -> ConsumerAdapter:
    """The consumer `--consumer SPEC` names: `spark` (on `spark`, or a session started on `master`),
    `local`, or a command split into argv by POSIX shell rules. ValueError for a command that cannot
    be split or is empty."""
    if spec == SparkConsumer.spec:
        return SparkConsumer(spark, master)
    if spec == SequentialConsumer.spec:
        return SequentialConsumer()
    return ProgramConsumer(spec)
