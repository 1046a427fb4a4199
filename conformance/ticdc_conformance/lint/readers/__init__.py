"""The protocol's lint rules, one ProtocolLint per topic-partition, beside that partition's decoder.

Each record is read once, by the protocol's decoder (`Decoder.read`), and its protocol's rules judge
the message the decoder parsed (`ProtocolSpec.new_lint`, protocols/<p>/lint.py); the events go on
to the stream checks. A decoder that fails on a record with anything but a DecodeError counts as a
rejection too: the lint reads streams from anywhere and must finish them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ticdc_contract.record import KafkaRecord

from ...errors import DecodeError
from ...events import DecodedEvent
from ...protocols import protocol
from ...protocols.common.interface import Decoder, ProtocolLint, Read
from ...protocols.common.lint import LintContext, Problem, TopicCheck
from ..ddl_columns import stated_columns
from ..profile import stream_rules
from ..settings import LintSettings, SettingsError

__all__ = ["Checked", "PartitionReader", "Problem", "Readers"]


@dataclass
class Checked:
    """One record as the lint saw it: its events and the rules its message breaks."""

    events: list[DecodedEvent] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


class PartitionReader:
    """One topic-partition's decoder and protocol lint."""

    def __init__(self, decoder: Decoder, lint: ProtocolLint) -> None:
        self.decoder = decoder
        self.lint = lint

    def read(self, record: KafkaRecord) -> Checked:
        """The record's events and the rules its message breaks; never raises for bad input."""
        try:
            read = self.decoder.read(record)
        except Exception as e:  # noqa: BLE001 - see the module docstring
            read = Read([], None, DecodeError(record.topic, record.partition, record.offset,
                                              f"the decoder failed ({type(e).__name__}: {e})"))
        return Checked(read.events, self.lint.check(record, read))


class Readers:
    """Makes the reader of each topic-partition the first time one of its records comes."""

    def __init__(self, settings: LintSettings) -> None:
        self.settings = settings
        self._protocol = protocol(settings.protocol)
        self._decode_rule = stream_rules(settings.protocol).decode
        self._readers: dict[tuple[str, int], PartitionReader] = {}
        self._topic_state: dict[str, dict[str, Any]] = {}
        self._topic_checks: dict[str, dict[str, TopicCheck]] = {}
        self._stream_state: dict[str, Any] = {}
        try:
            # Options a decoder or the protocol's rules refuse fail here, before any record is read.
            self._protocol.new_decoder(settings.options)
            self._protocol.new_lint(self._context("", 0, probe=True))
        except SettingsError:
            raise
        except ValueError as e:
            raise SettingsError(f"sink options: {e}") from None

    def _context(self, topic: str, partition: int, probe: bool = False) -> LintContext:
        return LintContext(
            options=self.settings.options, topic=topic, partition=partition, decode_rule=self._decode_rule,
            watermark_interval_ms=self.settings.watermark_interval_ms,
            topic_state={} if probe else self._topic_state.setdefault(topic, {}),
            stream_state={} if probe else self._stream_state,
            topic_checks={} if probe else self._topic_checks.setdefault(topic, {}),
            probe=probe, stated_columns=stated_columns)

    def reader(self, record: KafkaRecord) -> PartitionReader:
        key = (record.topic, record.partition)
        reader = self._readers.get(key)
        if reader is None:
            # The lint brings the decoder whose reads it judges (Simple's shares a topic's schemas).
            lint = self._protocol.new_lint(self._context(record.topic, record.partition))
            reader = self._readers[key] = PartitionReader(lint.decoder, lint)
        return reader

    def finish(self) -> list[tuple[str, int, Problem]]:
        """(topic, partition, problem) of what only the stream's end decides, in a fixed order:
        each partition's, then each topic's."""
        out = []
        for (topic, partition), reader in sorted(self._readers.items()):
            out.extend((topic, partition, p) for p in reader.lint.finish())
        for topic, checks in sorted(self._topic_checks.items()):
            for check in checks.values():
                out.extend((topic, partition, p) for partition, p in check.finish())
        return out
