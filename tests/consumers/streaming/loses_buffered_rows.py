"""Broken: makes durable only what it applied (its input up to its last checkpoint), yet commits
the offsets past everything delivered. The row events waiting above the global watermark live
only in memory: after a restart (stop or crash) they are gone, and the suite never delivers them
again. The reference consumer makes its whole input durable at a commit (durable.py)."""
from __future__ import annotations

import json
import os

from ticdc_conformance.consumers.streaming import StreamingConsumer
from ticdc_conformance.consumers.streaming.durable import COMMIT_FILE, INPUT_FILE


class LosesBufferedRows(StreamingConsumer):
    def __init__(self) -> None:
        super().__init__()
        self.pending_at = 0  # bytes of this start's pending input up to its last checkpoint
        self.lines_at = 0  # applied-log lines written by then

    def _on_header(self, header: dict) -> None:
        super()._on_header(header)
        if self.store is not None:
            commit = self.store.committed()
            self.lines_at = commit["lines"] if commit else 0
            self.store.commit = self._commit_applied  # type: ignore[method-assign]

    def _durable_input(self, message: dict) -> None:
        before = self.consumer.applied_wm
        super()._durable_input(message)
        if self.consumer.applied_wm != before:
            self.store._pending.flush()
            self.pending_at, self.lines_at = self.store._pending.tell(), self.written

    def _commit_applied(self, lines: int) -> None:
        """DurableInput.commit for the input up to the last checkpoint; the rest stays pending."""
        pending = self.store._pending
        pending.flush()
        pending.seek(0)
        data = pending.read()
        with open(self.store.dir / INPUT_FILE, "ab") as f:
            f.write(data[:self.pending_at])
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        pending.seek(0)
        pending.truncate()
        pending.write(data[self.pending_at:])
        self.pending_at = 0
        tmp = self.store.dir / (COMMIT_FILE + ".tmp")
        tmp.write_text(json.dumps({"input_bytes": size, "lines": self.lines_at}))
        os.replace(tmp, self.store.dir / COMMIT_FILE)
