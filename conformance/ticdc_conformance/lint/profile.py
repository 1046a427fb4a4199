"""Which stream rule each protocol's spec states, so a check reports under the right id or not at all.

The specs do not say the same things. Open Protocol (spec 002) and Simple (spec 004) state the
per-table order of first-sent row events and that a row's changes stay in one partition; Canal-JSON
(003) and Debezium (000) state neither, so those checks do not run for them. DDL goes to every
partition except in Canal-JSON, which sends it to partition 0 only; only Open Protocol and Simple
say watermarks are broadcast. Every protocol with watermarks says nothing new comes below one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

REPLAY_RULE = "KAFKA-DELIVERY-1"  # at-least-once: re-sent events and fallen-back watermarks


@dataclass(frozen=True)
class StreamRules:
    decode: str  # a record that is no message of the protocol
    watermark: str  # no first-sent event below an earlier watermark of the partition
    order: Optional[str] = None  # first-sent row events of a table in commit-ts order
    dispatch: Optional[str] = None  # every change of a row in one partition
    ddl_broadcast: Optional[str] = None  # each DDL on every partition of its topic
    ddl_partition_zero: Optional[str] = None  # each DDL on partition 0 only
    watermark_broadcast: Optional[str] = None  # each watermark on every partition of its topic
    ddl_barrier: Optional[str] = None  # no first-sent row event below an earlier DDL of the partition


STREAM_RULES: dict[str, StreamRules] = {
    "open-protocol": StreamRules(
        decode="OPEN-FRAMING-1",
        watermark="OPEN-WATERMARK-2",
        order="OPEN-ORDER-1",
        dispatch="OPEN-DISPATCH-1",
        ddl_broadcast="OPEN-BROADCAST-1",
        watermark_broadcast="OPEN-BROADCAST-2",
    ),
    "canal-json": StreamRules(
        decode="CANAL-EVENTS-1",
        watermark="CANAL-WATERMARK-3",
        ddl_partition_zero="CANAL-DISPATCH-1",
    ),
    "debezium": StreamRules(
        decode="DBZ-MESSAGE-2",
        watermark="DBZ-WATERMARK-1",
        ddl_broadcast="DBZ-BROADCAST-1",
    ),
    "simple": StreamRules(
        decode="SIMPLE-FORMAT-1",
        watermark="SIMPLE-WATERMARK-1",
        order="SIMPLE-ORDER-2",
        dispatch="SIMPLE-DISPATCH-1",
        ddl_broadcast="SIMPLE-BROADCAST-1",
        watermark_broadcast="SIMPLE-BROADCAST-2",
        ddl_barrier="SIMPLE-ORDER-1",
    ),
}

# Rules the stream checks enforce beyond the ones named above: other statements of the same
# guarantee (the spec's examples, the Japanese Debezium edition, the note that a resolved event
# covers DDL too, OPEN-WATERMARK-1's "before which the Event received is complete"), registered with
# the checks that enforce them.
ORDER_RULES = ("OPEN-ORDER-1", "OPEN-ORDER-2", "SIMPLE-ORDER-2")
WATERMARK_RULES = ("OPEN-WATERMARK-1", "OPEN-WATERMARK-2", "OPEN-WATERMARK-4", "CANAL-WATERMARK-3", "DBZ-WATERMARK-1",
                   "DBZ-WATERMARK-5", "SIMPLE-WATERMARK-1")
DISPATCH_RULES = ("OPEN-DISPATCH-1", "OPEN-DISPATCH-2", "SIMPLE-DISPATCH-1")
BROADCAST_RULES = ("OPEN-BROADCAST-1", "OPEN-BROADCAST-2", "OPEN-BROADCAST-3", "DBZ-BROADCAST-1",
                   "SIMPLE-BROADCAST-1", "SIMPLE-BROADCAST-2", "CANAL-DISPATCH-1")


def stream_rules(protocol: str) -> StreamRules:
    try:
        return STREAM_RULES[protocol]
    except KeyError:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(STREAM_RULES)}") from None
