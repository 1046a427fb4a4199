"""Claim-check storage as a consumer reads it (large-message-handle-option = claim-check).

TiCDC writes a message above max-message-bytes to external storage and sends a small message naming
where it went (TiCDC pkg/sink/kafka/claimcheck/claim_check.go):
- the file is `<uuid>.json` directly under `claim-check-storage-uri`; the Kafka message carries the
  location `FileNameWithPrefix`: the URI without its trailing "/", a "/", then the file name;
- the file holds the JSON of `ClaimCheckMessage{key, value}` (TiCDC pkg/sink/codec/common/message.go:
  Go []byte fields, so base64 text, null for a nil key) -- or, with `claim-check-raw-value`, the
  message value bytes alone. Compression is applied before, so the stored value is compressed.
TiCDC's decoders open the configured URI as storage and read the location's file-name part
(open/canal/simple decoder.go, filepath.Split).

Here the storage is a local folder that stands for the URI (decoder option `claim-check-folder`),
and a location is read only if it is the URI followed by a plain file name inside that folder: a
message must never make a consumer read an arbitrary file.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from ticdc_conformance.protocols.common.wire import Malformed, bool_option, json_object

# TiCDC's own option names (sink.kafka-config.large-message-handle).
STORAGE_URI = "claim-check-storage-uri"
RAW_VALUE = "claim-check-raw-value"
# Not a TiCDC option: the local folder the decoder reads for STORAGE_URI.
FOLDER = "claim-check-folder"

_BAD_NAME_PARTS = (
    ("..", "contains '..'"),
    ("\\", "contains a backslash"),
    ("\x00", "contains a NUL character"),
    ("/", "names a sub-folder (TiCDC writes files directly under the storage URI)"),
)


@dataclass(frozen=True)
class ClaimCheckStore:
    storage_uri: str
    folder: Path

    def read(self, location: str) -> bytes:
        """The bytes of the file `location` names; Malformed for a location outside the store."""
        name = self._file_name(location)
        try:
            root = self.folder.resolve()
            # resolve() follows symlinks, so a link inside the folder that points elsewhere is refused too.
            path = (root / name).resolve()
            if not path.is_relative_to(root) or path == root:
                raise Malformed(f"claim-check location {location!r} resolves outside the claim-check folder")
            if not path.is_file():
                # A FIFO or device would block or stream forever; only regular files are read.
                what = "is not a regular file" if path.exists() else "does not exist"
                raise Malformed(f"claim-check file {name!r} {what} in the claim-check folder {str(self.folder)!r}")
            return path.read_bytes()
        except (OSError, RuntimeError) as e:  # RuntimeError: resolve() meeting a symlink loop
            raise Malformed(f"claim-check file {name!r} cannot be read: {getattr(e, 'strerror', None) or e}") from None

    def _file_name(self, location: str) -> str:
        prefix = self.storage_uri.rstrip("/") + "/"
        if not location.startswith(prefix):
            raise Malformed(f"claim-check location {location!r} is not under the configured "
                            f"claim-check-storage-uri {self.storage_uri!r}")
        name = location[len(prefix):]
        if not name:
            raise Malformed(f"claim-check location {location!r} names no file")
        if name.startswith("/"):
            raise Malformed(f"claim-check location {location!r}: the file name {name!r} is an absolute path")
        for bad, why in _BAD_NAME_PARTS:
            if bad in name:
                raise Malformed(f"claim-check location {location!r}: the file name {name!r} {why}")
        return name


def store_from_options(options: Mapping[str, Any]) -> Optional[ClaimCheckStore]:
    """The store a decoder may read, or None when the options give no local folder."""
    folder = options.get(FOLDER)
    if folder in (None, ""):
        return None
    uri = options.get(STORAGE_URI)
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"option {FOLDER!r} needs {STORAGE_URI!r}, the URI whose files the folder holds")
    if not isinstance(folder, (str, Path)):
        raise ValueError(f"option {FOLDER!r} must be a path, got {folder!r}")
    return ClaimCheckStore(uri, Path(folder))


def raw_value_option(options: Mapping[str, Any]) -> bool:
    """TiCDC's `claim-check-raw-value` (default false): the file holds the value, not a ClaimCheckMessage."""
    return bool_option(options, RAW_VALUE, False)


def claim_check_message(data: bytes) -> tuple[Optional[bytes], Optional[bytes]]:
    """The (key, value) of a ClaimCheckMessage file; a null or absent field is None, as Go's []byte."""
    obj = json_object(data, "claim-check file")
    return _bytes_field(obj, "key"), _bytes_field(obj, "value")


def stored_value(data: bytes, raw_value: bool) -> bytes:
    """The message value a claim-check file holds (still compressed, as TiCDC stored it)."""
    if raw_value:
        return data
    _, value = claim_check_message(data)
    if not value:
        raise Malformed("claim-check file: the ClaimCheckMessage has no value")
    return value


def _bytes_field(obj: dict, name: str) -> Optional[bytes]:
    text = obj.get(name)
    if text is None:
        return None
    if not isinstance(text, str):
        raise Malformed(f"claim-check file: field {name!r} must be base64 text (a Go []byte), "
                        f"got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as e:  # binascii.Error (a ValueError), or a non-ASCII character
        raise Malformed(f"claim-check file: field {name!r} is not base64 ({e})") from None


def claim_check_options(manifest: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
    """The decoder options that let a decoder read a generated run's claim-check files.

    The manifest's `claim_check` gives the configured URI and the folder (relative to the run
    directory) that stands for it; a run without claim-check gives no options.
    """
    cc = manifest.get("claim_check")
    if not cc:
        return {}
    folder = Path(cc["folder"])
    if folder.is_absolute() or ".." in folder.parts:
        raise ValueError(f"manifest claim_check.folder {cc['folder']!r} must be a folder inside the run directory")
    return {STORAGE_URI: cc["storage_uri"], FOLDER: str(Path(run_dir) / folder)}
