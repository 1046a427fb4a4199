"""The streaming reference consumer with one fault each, for the session's error tests.

    python faulty.py MODE          (cmd:)      python:tests.conformance.consumers.streaming.faulty:CLASS

MODE: `not-json` (a line that is no JSON in place of the first sync answer), `wrong-id` (the first
sync answered with another id), `offsets-above` (committed offsets past what was delivered),
`hang` (never answers the first sync), `exit-early` (exits 0 at the first sync), `bad-line` (a txn
line without rows), `overcommits` (commits the offsets it received but keeps nothing durable: a crash
loses what it had), `unsupported` (declines every encoding), `no-restarts` (declares no restarts).
"""
from __future__ import annotations

import os
import sys
import time

import orjson

from ticdc_conformance.consumers.streaming import StreamingConsumer


class Faulty(StreamingConsumer):
    mode = ""

    def __init__(self) -> None:
        super().__init__()
        self.syncs = 0

    def handle(self, message: dict) -> list:
        kind = message.get("type")
        if self.mode == "unsupported" and kind == "header":
            return [{"type": "unsupported", "reason": "declines every encoding (a test consumer)"}]
        if kind == "sync":
            self.syncs += 1
            if self.syncs == 1 and self.mode == "hang":
                time.sleep(3600)
            if self.syncs == 1 and self.mode == "exit-early":
                sys.stdout.flush()
                os._exit(0)
        lines = super().handle(message)
        if kind == "header" and self.mode == "no-restarts":
            lines[-1]["supports"] = []
        if kind == "sync" and self.syncs == 1:
            if self.mode == "not-json":
                return lines[:-1] + [NOT_JSON]
            if self.mode == "wrong-id":
                return lines[:-1] + [{"type": "synced", "id": message["id"] + 100}]
            if self.mode == "bad-line":
                return lines[:-1] + [{"type": "txn", "commit_ts": 1}, lines[-1]]
        if kind == "commit" and self.mode == "offsets-above":
            answer = lines[-1]
            answer["offsets"] = {t: {p: o + 5 for p, o in parts.items()} for t, parts in answer["offsets"].items()}
        return lines

    def _on_commit(self, request: dict) -> None:
        if self.mode != "overcommits":
            return super()._on_commit(request)
        # The fault: the offsets of everything received, but nothing of it made durable.
        offsets: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(self.delivered.items()):
            offsets.setdefault(topic, {})[str(partition)] = offset
        self.out.append({"type": "committed", "id": request["id"], "offsets": offsets})


NOT_JSON = object()  # stands for the line that is not JSON


def _class(mode: str) -> type:
    return type(mode.title().replace("-", ""), (Faulty,), {"mode": mode})


NotJson, WrongId, OffsetsAbove, Hang, BadLine, Overcommits, Unsupported, NoRestarts = (
    _class(m) for m in ("not-json", "wrong-id", "offsets-above", "hang", "bad-line", "overcommits", "unsupported",
                        "no-restarts"))


def main(mode: str) -> int:
    consumer = _class(mode)()
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        for line in consumer.handle(orjson.loads(raw)):
            out.write(b"this is not JSON\n" if line is NOT_JSON else orjson.dumps(line) + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
