"""The one error type a decoder raises for bad input, and the one a consumer that cannot finish
raises. docs/errors.md lists their fields, the reason each malformation yields, and how a consumer
under test reports its own errors."""
from __future__ import annotations


class DecodeError(Exception):
    """A record that is not valid for its protocol.

    Carries the record's coordinates so a failure always names topic, partition and offset.
    """

    def __init__(self, topic: str, partition: int, offset: int, reason: str) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.reason = reason
        super().__init__(f"{topic}/{partition}@{offset}: {reason}")


class ConsumerError(Exception):
    """A stream the consumer cannot apply (e.g. a DML for a table it has no schema for)."""
