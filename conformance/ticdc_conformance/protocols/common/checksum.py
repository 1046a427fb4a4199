"""Row checksums of DML messages (`[integrity] integrity-check-level = "correctness"`), checked.

Of the protocols here only Simple (JSON and Avro) carries them, in both TiCDC generations (TiCDC
and tiflow pkg/sink/codec/simple/message.go and avro.go; the Confluent Avro protocol has its own
`_tidb_row_level_checksum`; Canal-JSON, Open Protocol and Debezium have none). A message carries
`{version, corrupted, current, previous}`: TiDB's column-level checksum of the row after the
change (`current`, 0 for DELETE) and before it (`previous`, 0 for INSERT).

What TiCDC's consumer does (pkg/sink/codec/simple/decoder.go buildDMLEvent with
pkg/sink/codec/common/verify_checksum.go VerifyChecksum): with the integrity check on, it recomputes
both checksums from the decoded values in the table schema's column order, skips a checksum that is
0 ("the checksum is not enabled"), fills an UPDATE's `old` from `data` for columns `old` lacks, and
when a checksum differs or `corrupted` is set it logs "consumer detect checksum corrupted" and drops
the row. Here such a row is a decode failure (Malformed -> DecodeError naming topic, partition and
offset) instead: a conformance run must not lose rows silently. Handle-key-only messages are not
checked (TiCDC rebuilds those rows from the upstream without the checksum); a claim-check message is
checked in its full form, read from storage.

The recomputation is TiDB's algorithm (ticdc_contract.checksum, held to TiDB's own test vectors),
with one deliberate difference from TiCDC's consumer: TIMESTAMP values are converted to UTC before
they are hashed, as TiDB's RowData.Checksum does when TiCDC computes the checksum. TiCDC's
consumer hashes the printed value as it arrives, so it only agrees with its own encoder when the
changefeed's time zone is UTC.
"""
from __future__ import annotations

import base64
from typing import Any, Iterable, Optional, Protocol

from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_contract.checksum import RowChecksum, fold, value_bytes


class ChecksumColumn(Protocol):
    """What the check needs of a column: its name, value kind (ticdc_contract.checksum.KINDS) and
    ENUM/SET members."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def elements(self) -> tuple[str, ...]: ...


def _hash_value(col: ChecksumColumn, v: Any, time_zone: str) -> bytes:
    # decoded rows hold canonical JSON values: binary strings as base64 text
    raw = base64.b64decode(v) if col.kind == "binary" else v
    return value_bytes(col.kind, raw, col.elements, time_zone)


def computed_checksum(columns: Iterable[ChecksumColumn], image: dict[str, Any], time_zone: str) -> int:
    """TiDB's column-level checksum of one decoded row image; absent columns count as NULL."""
    return fold(_hash_value(c, image[c.name], time_zone) for c in columns if image.get(c.name) is not None)


def verify_row_checksum(checksum: Optional[RowChecksum], columns: tuple[ChecksumColumn, ...],
                        after: Optional[dict[str, Any]], before: Optional[dict[str, Any]],
                        time_zone: str) -> None:
    """Raise Malformed unless the decoded row images match the checksums their message carries."""
    if checksum is None:
        return  # TiCDC attaches none when the upstream TiDB writes no row checksums
    if checksum.corrupted:
        raise Malformed(f"row checksum: TiCDC marked the row corrupted (checksum version {checksum.version}, "
                        f"current {checksum.current}, previous {checksum.previous})")
    if after is not None and before is not None:
        before = {**after, **before}
    for which, expected, image in (("current", checksum.current, after), ("previous", checksum.previous, before)):
        if expected == 0:
            continue
        if image is None:
            raise Malformed(f"row checksum: `{which}` is {expected} but the message has no "
                            f"{'data' if which == 'current' else 'old'} row to check it against")
        try:
            got = computed_checksum(columns, image, time_zone)
        except ValueError as e:  # a value the decoder let through but TiDB could not have hashed
            raise Malformed(f"row checksum: cannot hash the {which} row: {e}") from None
        if got != expected:
            raise Malformed(f"row checksum mismatch: `{which}` is {expected} in the message, "
                            f"{got} computed from its values (checksum version {checksum.version})")
