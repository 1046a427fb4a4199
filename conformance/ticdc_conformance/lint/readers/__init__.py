"""One reader per topic-partition and protocol: message-level checks, then the decoded events."""
from __future__ import annotations

from typing import Protocol

from ticdc_generators.kafka_record import KafkaRecord

from ..profile import stream_rules
from ..settings import LintSettings, SettingsError
from .base import Problem, Read
from .canal_json import CanalJSONReader
from .debezium import DebeziumReader
from .open_protocol import OpenProtocolReader
from .simple import SimpleReader, SimpleSchemas

__all__ = ["Problem", "Read", "Reader", "Readers"]


class Reader(Protocol):
    def read(self, record: KafkaRecord) -> Read:
        """The record's events and the rules its message breaks; never raises for bad input."""


class Readers:
    """Makes the reader of each topic-partition the first time one of its records comes."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self._decode_rule = stream_rules(settings.protocol).decode
        self._readers: dict[tuple[str, int], Reader] = {}
        self._topic_schemas: dict[str, SimpleSchemas] = {}
        if settings.protocol == "simple":
            # TiCDC pkg/config/sink.go ShouldSendBootstrapMsg: both settings above 0 (spec 004).
            self._bootstraps = (settings.option_int("send-bootstrap-interval-in-sec", 120) > 0
                                and settings.option_int("send-bootstrap-in-msg-count", 10000) > 0)
            self._to_all = settings.option_bool("send-bootstrap-to-all-partition", True)
            self._msg_count = settings.option_int("send-bootstrap-in-msg-count", 10000)
        try:
            self._new("")  # options a decoder refuses fail here, before any record is read
        except ValueError as e:
            raise SettingsError(f"sink options: {e}") from None

    def reader(self, record: KafkaRecord) -> Reader:
        key = (record.topic, record.partition)
        reader = self._readers.get(key)
        if reader is None:
            reader = self._readers[key] = self._new(record.topic, record.partition)
        return reader

    def _new(self, topic: str, partition: int = 0) -> Reader:
        options, protocol = self.settings.options, self.settings.protocol
        if protocol == "open-protocol":
            return OpenProtocolReader(options, self._decode_rule)
        if protocol == "canal-json":
            return CanalJSONReader(options, self._decode_rule)
        if protocol == "debezium":
            return DebeziumReader(options)
        schemas = self._topic_schemas.setdefault(topic, SimpleSchemas()) if not self._to_all else SimpleSchemas()
        return SimpleReader(options, schemas, self._decode_rule, self._bootstraps, partition, self._to_all,
                            self._msg_count)
