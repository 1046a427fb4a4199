"""The internal failure signal of the Open Protocol decoder.

Parsing helpers know what is wrong but not which Kafka record they are looking at; they raise
`Malformed(reason)` and the decoder re-raises it as a DecodeError carrying the record's coordinates.
"""
from __future__ import annotations


class Malformed(Exception):
    """A message that breaks spec 002 (Open Protocol); `reason` says how."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)

    def within(self, where: str) -> "Malformed":
        """The same failure, prefixed with the part of the message it was found in."""
        return Malformed(f"{where}: {self.reason}")
