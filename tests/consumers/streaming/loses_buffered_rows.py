"""Broken: keeps the row events waiting for the global watermark only in memory, yet commits the
offsets past them. After a restart (stop or crash) they are gone and never delivered again: the
reference consumer keeps its whole input durable and reads it back at a new start; this one reads
it back and then forgets the rows that were waiting."""
from __future__ import annotations

from ticdc_conformance.consumers.rules.ordering import DMLBuffer
from ticdc_conformance.consumers.streaming import StreamingConsumer


class LosesBufferedRows(StreamingConsumer):
    def _on_header(self, header: dict) -> None:
        super()._on_header(header)
        if self.consumer is not None and header["start"]["restart"] > 0:
            self.consumer.buffer = DMLBuffer()  # the rows it held in memory
