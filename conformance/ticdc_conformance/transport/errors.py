"""The errors of the Kafka transport: each names what failed (broker, bootstrap servers, record)."""
from __future__ import annotations

from typing import Optional


class TransportError(Exception):
    """Kafka transport failure; names the record (topic, partition, offset) when one is involved."""

    def __init__(self, message: str, topic: Optional[str] = None, partition: Optional[int] = None,
                 offset: Optional[int] = None) -> None:
        self.topic, self.partition, self.offset = topic, partition, offset
        where = ""
        if topic is not None:
            where = f"{topic}/{partition}" if partition is not None else topic
            where += f"@{offset}" if offset is not None else ""
            where += ": "
        super().__init__(where + message)


class JarResolutionError(TransportError):
    """The Kafka server jars (or Spark's Kafka source) could not be resolved from the Maven repository."""


class BrokerError(TransportError):
    """The local broker could not be started or did not become ready."""


class KafkaUnavailable(TransportError):
    """No broker answered at the bootstrap servers within the timeout."""


class PublishError(TransportError):
    """A record could not be published exactly: refused, undelivered, or at another offset."""
