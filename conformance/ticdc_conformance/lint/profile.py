"""Which stream rule each protocol's spec states, so a check reports under the right id or not at all;
each protocol names its own (ProtocolSpec.stream_rules, protocols/<p>/__init__.py).

The specs do not say the same things. Open Protocol (spec 002) and Simple (spec 004) state the
per-table order of first-sent row events and that a row's changes stay in one partition; Canal-JSON
(003) and Debezium (000) state neither, so those checks do not run for them. DDL goes to every
partition except in Canal-JSON, which sends it to partition 0 only; only Open Protocol and Simple
say watermarks are broadcast. Every protocol with watermarks says nothing new comes below one.
"""
from __future__ import annotations

from ..protocols import protocol
from ..protocols.common.stream_rules import StreamRules

REPLAY_RULE = "KAFKA-DELIVERY-1"  # at-least-once: re-sent events and fallen-back watermarks


# Rules the stream checks enforce beyond the ones the protocols name: other statements of the same
# guarantee (the spec's examples, the Japanese Debezium edition, the note that a resolved event
# covers DDL too, OPEN-WATERMARK-1's "before which the Event received is complete"), registered with
# the checks that enforce them.
ORDER_RULES = ("OPEN-ORDER-1", "OPEN-ORDER-2", "SIMPLE-ORDER-2")
WATERMARK_RULES = ("OPEN-WATERMARK-1", "OPEN-WATERMARK-2", "OPEN-WATERMARK-4", "CANAL-WATERMARK-3", "DBZ-WATERMARK-1",
                   "DBZ-WATERMARK-5", "SIMPLE-WATERMARK-1")
DISPATCH_RULES = ("OPEN-DISPATCH-1", "OPEN-DISPATCH-2", "SIMPLE-DISPATCH-1")
BROADCAST_RULES = ("OPEN-BROADCAST-1", "OPEN-BROADCAST-2", "OPEN-BROADCAST-3", "DBZ-BROADCAST-1",
                   "SIMPLE-BROADCAST-1", "SIMPLE-BROADCAST-2", "CANAL-DISPATCH-1")


def stream_rules(name: str) -> StreamRules:
    """The stream rules spec `name` states (the protocol's ProtocolSpec.stream_rules)."""
    return protocol(name).stream_rules
