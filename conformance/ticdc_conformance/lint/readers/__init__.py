"""One reader per topic-partition and protocol: message-level checks, then the decoded events."""
from __future__ import annotations

from typing import Protocol

from ticdc_contract.record import KafkaRecord

from ..profile import stream_rules
from ..settings import LintSettings, SettingsError
from .base import Problem, Read
from .canal_json import CanalJSONReader
from .debezium import DebeziumReader
from .open_protocol import OpenProtocolReader
from .simple import SimpleReader, SimpleSchemas
from .simple_timing import SimpleTiming, TopicActivity

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
        self._activity: dict[str, TopicActivity] = {}
        self._timings: dict[tuple[str, int], SimpleTiming] = {}
        if settings.protocol == "simple":
            # TiCDC pkg/config/sink.go ShouldSendBootstrapMsg: both settings above 0 (spec 004).
            self._bootstraps = (settings.option_int("send-bootstrap-interval-in-sec", 120) > 0
                                and settings.option_int("send-bootstrap-in-msg-count", 10000) > 0)
            self._to_all = settings.option_bool("send-bootstrap-to-all-partition", True)
            self._msg_count = settings.option_int("send-bootstrap-in-msg-count", 10000)
            # SIMPLE-BOOTSTRAP-1 is judged per partition, so only when every partition gets the BOOTSTRAPs.
            self._bootstrap_ms = settings.bootstrap_interval_ms if self._bootstraps and self._to_all else None
        try:
            self._new("", 0, probe=True)  # options a decoder refuses fail here, before any record is read
        except ValueError as e:
            raise SettingsError(f"sink options: {e}") from None

    def reader(self, record: KafkaRecord) -> Reader:
        key = (record.topic, record.partition)
        reader = self._readers.get(key)
        if reader is None:
            reader = self._readers[key] = self._new(record.topic, record.partition)
        return reader

    def _new(self, topic: str, partition: int, probe: bool = False) -> Reader:
        options, protocol = self.settings.options, self.settings.protocol
        if protocol == "open-protocol":
            return OpenProtocolReader(options, self._decode_rule)
        if protocol == "canal-json":
            return CanalJSONReader(options, self._decode_rule)
        if protocol == "debezium":
            return DebeziumReader(options)
        schemas = self._topic_schemas.setdefault(topic, SimpleSchemas()) if not self._to_all else SimpleSchemas()
        timing = None
        if not probe:
            timing = self._timings[(topic, partition)] = SimpleTiming(
                partition, self._activity.setdefault(topic, TopicActivity()), self.settings.watermark_interval_ms,
                self._bootstrap_ms)
        return SimpleReader(options, schemas, self._decode_rule, self._bootstraps, partition, self._to_all,
                            self._msg_count, timing)

    def finish(self) -> list[tuple[str, int, Problem]]:
        """(topic, partition, problem) of what only the stream's end decides, in a fixed order."""
        out = []
        for (topic, partition), timing in sorted(self._timings.items()):
            out.extend((topic, partition, p) for p in timing.finish())
        for topic, activity in sorted(self._activity.items()):
            out.extend((topic, partition, p) for partition, p in activity.finish())
        return out
