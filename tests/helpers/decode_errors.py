"""The decode-error assertions: a bad record fails with a DecodeError that names where it is."""

import re
from typing import Any, Optional

import pytest

from ticdc_conformance.errors import DecodeError
from ticdc_contract.record import KafkaRecord


def _names_the_record(err: DecodeError, record: KafkaRecord, catch_all: Optional[str]) -> None:
    assert (err.topic, err.partition, err.offset) == (record.topic, record.partition, record.offset)
    assert f"{record.topic}/{record.partition}@{record.offset}" in str(err)
    # A reason starting with the decoder's catch-all label means no named check caught the fault.
    if catch_all is not None:
        assert not err.reason.startswith(catch_all), err.reason


def assert_decode_error(decoder: Any, record: KafkaRecord, pattern: Optional[str] = None, *,
                        catch_all: Optional[str] = None) -> DecodeError:
    """Decoding `record` raises a DecodeError naming the record's topic, partition and offset,
    whose reason matches the regular expression `pattern` (searched) and, when `catch_all` is
    given, does not start with that label. Returns the error."""
    with pytest.raises(DecodeError) as info:
        decoder.decode(record)
    err = info.value
    _names_the_record(err, record, catch_all)
    if pattern is not None:
        assert re.search(pattern, err.reason), err.reason
    return err


def decodes_or_decode_error(decoder: Any, record: KafkaRecord, *, catch_all: Optional[str] = None) -> Optional[list]:
    """For fuzzing: `record` decodes to a list of events, or fails with a DecodeError naming it
    (None is returned then); any other exception propagates and fails the test."""
    try:
        events = decoder.decode(record)
    except DecodeError as err:
        _names_the_record(err, record, catch_all)
        return None
    assert isinstance(events, list)
    return events
