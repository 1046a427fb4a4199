"""The claim-check storage: where a too-large message goes under large-message-handle-option =
claim-check, one file per message, written as the message is encoded (streaming).

TiCDC pkg/sink/kafka/claimcheck/claim_check.go, point by point:
- file name: TiCDC takes a random UUIDv4 + ".json" (NewFileName). A random name would make runs
  differ, so the name here is a UUIDv4-shaped string derived from the event's topic, partition,
  commit ts and the storage's running file count (SHA-256, version and variant bits set as in a
  v4 UUID), + ".json". It has TiCDC's length, so a location message is exactly as long as
  TiCDC's and the same messages cross max-message-bytes; the running count keeps two files for
  the same event (a replayed event is encoded again) apart, as TiCDC's fresh UUID does.
- content: without claim-check-raw-value, the JSON of TiCDC's ClaimCheckMessage
  {"key": …, "value": …} (pkg/sink/codec/common/message.go) as Go's encoding/json writes it:
  each []byte as standard padded base64, a nil one as null; with claim-check-raw-value, the
  value bytes alone (TiCDC refuses raw values for Open Protocol, pkg/config/large_message.go).
  What key and value hold is the protocol's business (the encoder passes them in).
- location carried by the Kafka message: the storage URI without a trailing '/', then '/', then
  the file name (FileNameWithPrefix). TiCDC starts from the storage's canonical URI, which for
  a local path is the configured file:// URI, while object stores (s3, gcs, azure) leave the
  query string (endpoint and credential parameters) out; here the configured URI is kept
  verbatim, query included, so a consumer can match the location against the URI it was given.
The simulator writes the files to a local folder (`<run dir>/claim-check/`, see FOLDER) whatever
the URI says, so output is the same on every machine; the manifest records both.
"""
from __future__ import annotations

import base64
import hashlib
import uuid
from pathlib import Path
from typing import Optional

from .config import SinkConfig

# The claim-check folder, relative to a run's output directory.
FOLDER = "claim-check"
SUFFIX = ".json"


class ClaimCheckError(OSError):
    """A claim-check file could not be written (TiCDC fails the changefeed likewise)."""


def location_prefix(storage_uri: str) -> str:
    """What goes before '/' and the file name: the configured storage URI without trailing '/'."""
    return storage_uri.rstrip("/")


def file_name(topic: str, partition: int, commit_ts: int, sequence: int) -> str:
    """A UUIDv4-shaped name derived from the event and the storage's running file count."""
    seed = f"{topic}\x00{partition}\x00{commit_ts}\x00{sequence}".encode("utf-8")
    digest = hashlib.sha256(seed).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4)) + SUFFIX


def _go_bytes(b: Optional[bytes]) -> str:
    # Go's encoding/json: a nil []byte is null, anything else standard base64 with padding
    # (whose alphabet has nothing encoding/json would escape).
    return "null" if b is None else '"' + base64.b64encode(b).decode("ascii") + '"'


def claim_check_message(key: Optional[bytes], value: Optional[bytes]) -> bytes:
    """TiCDC's ClaimCheckMessage as json.Marshal writes it."""
    return ('{"key":' + _go_bytes(key) + ',"value":' + _go_bytes(value) + "}").encode("ascii")


class ClaimCheckStorage:
    """Given to the encoders of one run; every large message becomes one file in `folder`."""

    def __init__(self, storage_uri: str, folder: Path, raw_value: bool = False) -> None:
        if not storage_uri:
            raise ValueError("large message handle is set to claim-check, but the claim-check-storage-uri is empty")
        self.storage_uri = storage_uri
        self.folder = Path(folder)
        self.raw_value = raw_value
        self.prefix = location_prefix(storage_uri)
        self.files_written = 0
        self.folder.mkdir(parents=True, exist_ok=True)
        # A folder reused from an earlier run must hold this run's files only.
        for stale in self.folder.glob("*" + SUFFIX):
            stale.unlink()

    @classmethod
    def for_run(cls, config: SinkConfig, run_dir: Path) -> Optional["ClaimCheckStorage"]:
        """The storage of a run writing to `run_dir`, or None when claim-check is off."""
        if config.large_message_handle_option != "claim-check":
            return None
        return cls(config.claim_check_storage_uri, Path(run_dir) / FOLDER, config.claim_check_raw_value)

    def location(self, name: str) -> str:
        """TiCDC FileNameWithPrefix: what the Kafka message carries."""
        return f"{self.prefix}/{name}"

    def put(self, key: Optional[bytes], value: bytes, *, topic: str, partition: int, commit_ts: int) -> str:
        """Writes one message's file and returns its location."""
        name = file_name(topic, partition, commit_ts, self.files_written)
        data = value if self.raw_value else claim_check_message(key, value)
        path = self.folder / name
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise ClaimCheckError(f"claim-check file {path} for {topic}/{partition} commit ts {commit_ts} "
                                  f"could not be written: {e}") from e
        self.files_written += 1
        return self.location(name)

    def manifest(self) -> dict:
        """The manifest's "claim_check" entry."""
        return {"storage_uri": self.storage_uri, "folder": FOLDER, "files": self.files_written,
                "raw_value": self.raw_value}
