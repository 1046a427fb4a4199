"""The consumer under test: one adapter interface (interface.py), the reference consumers
(reference.py), any program behind docs/consumer-protocol.md (program.py), and `adapter_for`, which
turns what `--consumer` says into one of them."""
from __future__ import annotations

import importlib
from typing import Any, Optional

from .interface import FINAL_STATE_ONLY, Capabilities, ConsumerAdapter, ConsumerRun, RunOptions, Stream, shown_by_output
from .program import ProgramConsumer
from .reference import SequentialConsumer, SparkConsumer

__all__ = ["FINAL_STATE_ONLY", "Capabilities", "ConsumerAdapter", "ConsumerRun", "ProgramConsumer",
           "RunOptions", "SequentialConsumer", "SparkConsumer", "Stream", "adapter_for",
           "shown_by_output"]


# Consumer modes named by a prefix (`MODE:REST`): the adapter class, imported when first named.
MODES = {
    "cmd": "ticdc_conformance.consumers.adapters.streaming:StreamingProgram",
    "python": "ticdc_conformance.consumers.adapters.python_class:PythonClassConsumer",
    "spark": "ticdc_conformance.consumers.adapters.spark_function:SparkFunctionConsumer",
    "kafka": "ticdc_conformance.consumers.adapters.kafka_blackbox:KafkaBlackBox",
}


def adapter_for(spec: str, spark: Any = None, master: Optional[str] = None) -> ConsumerAdapter:
    """The consumer `--consumer SPEC` names: `spark` (on `spark`, or a session started on `master`),
    `local`, `MODE:REST` for a mode of MODES (docs/consumer-modes.md), or a record-file program's
    command split into argv by POSIX shell rules. ValueError for a spec that names nothing runnable."""
    if spec == SparkConsumer.spec:
        return SparkConsumer(spark, master)
    if spec == SequentialConsumer.spec:
        return SequentialConsumer()
    mode, sep, rest = spec.partition(":")
    if sep and mode in MODES:
        module, _, cls = MODES[mode].partition(":")
        adapter_cls = getattr(importlib.import_module(module), cls)
        return adapter_cls(rest, spark=spark, master=master)
    return ProgramConsumer(spec)
