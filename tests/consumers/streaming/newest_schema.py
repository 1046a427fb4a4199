"""Broken: decodes a Simple DML with the newest schema it cached for the table, not the one its
`schemaVersion` names (spec 004: the schema cache is keyed by schema, table and version), and keeps
one schema cache for all partitions. A partition that delivers a DDL early makes the DMLs of
another partition, still of the old version, decode with the new columns."""
from __future__ import annotations

from ticdc_conformance.consumers.streaming import StreamingConsumer
from ticdc_conformance.consumers.streaming.consumer import FedConsumer
from ticdc_conformance.protocols.simple.decoder import SimpleDecoder


class NewestVersions(dict):
    """(schema, table, version) -> reader; a lookup answers the table's newest version."""

    def get(self, key, default=None):
        versions = [k for k in self if k[:2] == key[:2]]
        return self[max(versions, key=lambda k: k[2])] if versions else default


class NewestSchemaFed(FedConsumer):
    def __init__(self, protocol, options, partitions, emit) -> None:
        super().__init__(protocol, options, partitions, emit)
        if protocol == "simple":
            shared = NewestVersions()
            for tp in partitions:
                self.decoders.decoders[tp] = SimpleDecoder(self.decoders.options, tables=shared)


class NewestSchema(StreamingConsumer):
    fed_consumer = NewestSchemaFed
