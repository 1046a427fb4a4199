"""Which stream rules a protocol's spec states (ProtocolSpec.stream_rules, lint/stream.py).

Apart from common/lint.py so that loading a protocol package does not load the lint rules and the
rule catalogue: a consumer or a check never runs them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class StreamRules:
    """Which stream rule a protocol's spec states, so a stream check reports under the right id or
    not at all (a None: the spec does not say it, and the check does not run)."""

    decode: str  # a record that is no message of the protocol
    watermark: str  # no first-sent event below an earlier watermark of the partition
    order: Optional[str] = None  # first-sent row events of a table in commit-ts order
    dispatch: Optional[str] = None  # every change of a row in one partition
    ddl_broadcast: Optional[str] = None  # each DDL on every partition of its topic
    ddl_partition_zero: Optional[str] = None  # each DDL on partition 0 only
    watermark_broadcast: Optional[str] = None  # each watermark on every partition of its topic
    ddl_barrier: Optional[str] = None  # no first-sent row event below an earlier DDL of the partition
