"""What the streaming reference consumer keeps in its state_dir: its input, replayed at a restart.

Its decoders hold state no file format captures (Simple's schema cache, row events waiting for
their schema), so instead of its state it keeps what built it: every input line that changes it
(records, a late join's snapshot), appended to `input.pickle` as it arrives, and at each commit
`commit.json` (written to a temporary file, synced, renamed over the old one) with how many bytes
of that input are durable and how many applied-log lines the consumer had written by then. A new
start reads the durable input back and feeds it through a fresh consumer, which is deterministic:
it reaches the state it had at the commit, writing again the lines it wrote before, which it drops
(the suite has them). Input after the last commit is cut off: the suite delivers it again.

Input arrives into a pending file of this start (`pending-<restart>.pickle`) and moves into the
durable input at a commit. A crash loses what is pending, as a killed process loses what it had not
made durable, also where the consumer is an object in the suite's process whose buffers are not
lost with it: a start removes the pending files of earlier starts, so a late flush of a dropped
object's buffer lands in a file nobody reads.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import IO, Iterator, Optional

INPUT_FILE = "input.pickle"
COMMIT_FILE = "commit.json"


class DurableInput:
    def __init__(self, state_dir: Path, start: int) -> None:
        self.dir = Path(state_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._pending_path = self.dir / f"pending-{start}.pickle"
        self._pending: Optional[IO[bytes]] = None

    def committed(self) -> Optional[dict]:
        """The last commit ({"input_bytes", "lines"}), or None before the first."""
        path = self.dir / COMMIT_FILE
        return json.loads(path.read_text()) if path.exists() else None

    def reopen(self) -> Iterator[dict]:
        """The durable input in order; what followed the last commit is cut off, earlier starts'
        pending input removed."""
        for stale in self.dir.glob("pending-*.pickle"):
            stale.unlink()
        commit = self.committed()
        size = commit["input_bytes"] if commit is not None else 0
        path = self.dir / INPUT_FILE
        with open(path, "ab"):
            pass  # exists from here on
        with open(path, "r+b") as f:
            f.truncate(size)
        with open(path, "rb") as f:
            while f.tell() < size:
                yield pickle.load(f)
        self._pending = open(self._pending_path, "w+b")

    def add(self, message: dict) -> None:
        pickle.dump(message, self._pending, protocol=pickle.HIGHEST_PROTOCOL)

    def commit(self, lines: int) -> None:
        """The pending input joins the durable input; then commit.json says how far it goes."""
        pending = self._pending
        pending.flush()
        pending.seek(0)
        with open(self.dir / INPUT_FILE, "ab") as f:
            shutil.copyfileobj(pending, f)
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        pending.seek(0)
        pending.truncate()
        tmp = self.dir / (COMMIT_FILE + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"input_bytes": size, "lines": lines}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.dir / COMMIT_FILE)

    def close(self) -> None:
        if self._pending is not None:
            self._pending.close()
            self._pending = None
