"""Broken: does not persist how far it applied (its applied watermark and applied-log position).
At a new start it reads its durable input back and applies all of it again, writing every
transaction, DDL and checkpoint of the earlier starts a second time."""
from __future__ import annotations

from ticdc_conformance.consumers.streaming import StreamingConsumer


class ReappliesAfterRestart(StreamingConsumer):
    def __init__(self) -> None:
        super().__init__()
        self.again: list[dict] = []

    def emit(self, line: dict) -> None:
        replayed = self.skip > 0  # a line the reference consumer knows it wrote before the restart
        super().emit(line)
        if replayed:
            self.again.append(line)

    def handle(self, message: dict) -> list[dict]:
        lines = super().handle(message)
        if message.get("type") == "header" and self.again:  # after its ready line
            lines, self.again = lines + self.again, []
        return lines
