"""The internal signal for a malformed message; the decoder turns it into a DecodeError with
the record's coordinates (value helpers know nothing about topics and offsets)."""
from __future__ import annotations


class Invalid(Exception):
    """One violation of the Debezium message format, with a human-readable reason."""
