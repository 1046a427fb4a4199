"""The internal signal for "this record is not valid Canal-JSON".

Parsing helpers raise `Malformed(reason)` without knowing which record they look at; the decoder
catches it once and re-raises it as `DecodeError` carrying the record's topic, partition and offset.
"""
from __future__ import annotations


class Malformed(Exception):
    """A reason a Canal-JSON record cannot be decoded."""
