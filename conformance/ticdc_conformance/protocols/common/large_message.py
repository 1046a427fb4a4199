"""What the decoders share for TiCDC's large-message handling (large-message-handle-option).

- claim-check: the message carries a location; the full message is read back from claim-check
  storage (`claim_check.py`) and decoded instead of the placeholder.
- handle-key-only: the message carries the handle-key columns only; the row is completed through
  an upstream snapshot read (`ticdc_conformance.protocols.common.snapshot`), at the commit ts for the row after the
  change and at commit ts - 1 for the row before it, the reads TiCDC's consumer makes.

Decoder options, beside TiCDC's own `claim-check-storage-uri` and `claim-check-raw-value`:
`claim-check-folder` (the local folder behind the URI) and `snapshot-lookup` (a SnapshotLookup).
A marked message whose resource is not configured is a DecodeError, never a partial row.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from ticdc_conformance.events import DecodedRow
from ticdc_conformance.protocols.common.claim_check import (
    FOLDER,
    ClaimCheckStore,
    raw_value_option,
    store_from_options,
    stored_value,
)
from ticdc_conformance.protocols.common.snapshot import SNAPSHOT_LOOKUP, SnapshotLookup, SnapshotUnavailable
from ticdc_conformance.protocols.common.wire import Malformed

_MISSING = object()


@dataclass(frozen=True)
class LargeMessages:
    store: Optional[ClaimCheckStore] = None
    raw_value: bool = False
    lookup: Optional[SnapshotLookup] = None

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "LargeMessages":
        lookup = options.get(SNAPSHOT_LOOKUP)
        if lookup is not None and not isinstance(lookup, SnapshotLookup):
            raise ValueError(f"option {SNAPSHOT_LOOKUP!r} must be a SnapshotLookup (an object with "
                             f"row(schema, table, key, ts)), got {type(lookup).__name__}")
        return cls(store_from_options(options), raw_value_option(options), lookup)

    # --- claim-check --------------------------------------------------------------------
    def read(self, location: str) -> bytes:
        """The claim-check file behind `location`, as stored."""
        if self.store is None:
            raise Malformed(f"claim-check message (location {location!r}) needs the claim-check storage: "
                            f"decoder option {FOLDER!r} is not set")
        return self.store.read(location)

    def stored_value(self, location: str) -> bytes:
        """The message value behind `location` (Canal-JSON, Simple), still compressed as TiCDC stored it."""
        return stored_value(self.read(location), self.raw_value)

    # --- handle-key-only ----------------------------------------------------------------
    def complete(self, row: DecodedRow) -> DecodedRow:
        """`row` as decoded from a handle-key-only message, its images completed by snapshot reads.

        Each image the message carries holds the handle-key columns, and each row is read under
        its own: an UPDATE that moved the key reads its old row under the old key, as classic
        TiCDC does (tiflow pkg/sink/codec/open/open_protocol_decoder.go assembleHandleKeyOnlyEvent;
        new TiCDC's Open Protocol decoder reads both rows under the old key, which differs only
        when the key moved). The snapshot row found must agree with the carried key.
        """
        if self.lookup is None:
            raise Malformed("handle-key-only message needs an upstream snapshot lookup "
                            f"(decoder option {SNAPSHOT_LOOKUP!r}) to complete the row of {row.schema}.{row.table}")
        if row.commit_ts is None or row.commit_ts < 1:
            raise Malformed(f"handle-key-only message of {row.schema}.{row.table} has no commit ts to read "
                            "the upstream snapshot at")
        after = None if row.after is None else self._image(row, row.after, row.commit_ts, "new")
        before = None if row.before is None else self._image(row, row.before, row.commit_ts - 1, "old")
        return replace(row, after=after, before=before)

    def _image(self, row: DecodedRow, key: dict[str, Any], ts: int, which: str) -> dict[str, Any]:
        where = f"handle-key-only {row.op} of {row.schema}.{row.table}, {which} row"
        if not key:
            raise Malformed(f"{where}: the message carries no handle-key column")
        assert self.lookup is not None  # complete() refuses the message without one
        try:
            found = self.lookup.row(row.schema, row.table, dict(key), ts)
        except SnapshotUnavailable as e:
            raise Malformed(f"{where}: upstream snapshot at ts {ts}: {e}") from None
        if found is None:
            raise Malformed(f"{where}: the upstream snapshot at ts {ts} has no row with key {key}")
        for name, value in key.items():
            if found.get(name, _MISSING) != value:
                raise Malformed(f"{where}: the snapshot row holds {found.get(name, '<no column>')!r} in "
                                f"handle-key column {name!r}, the message {value!r}")
        return dict(found)
