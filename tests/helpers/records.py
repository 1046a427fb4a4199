"""The one Kafka record builder of the tests."""

from typing import Any, Optional

import orjson

from ticdc_contract.record import KafkaRecord
from ticdc_contract.tso import physical_ms


def _payload(part: Any) -> Optional[bytes]:
    return part if part is None or isinstance(part, (bytes, bytearray, memoryview)) else orjson.dumps(part)


def kafka_record(value: Any = None, key: Any = None, *, topic: str = "t", partition: int = 0, offset: int = 0,
                 timestamp_ms: int = 0, headers: tuple[tuple[str, Optional[bytes]], ...] = ()) -> KafkaRecord:
    """A record as a decoder is handed it. A key or value that is not bytes-like (a dict, a list) is
    written as JSON; None stays a missing key or a tombstone. A test module binds its own
    coordinates with functools.partial."""
    return KafkaRecord(topic, partition, offset, _payload(key), _payload(value), timestamp_ms, headers)


def message_record(message: Any, *, topic: str = "t", partition: int = 0, offset: int = 0) -> KafkaRecord:
    """The record a sink writes for an encoder's message (key, value, headers), stamped with the
    physical time of the message's TSO as TiCDC's producer does."""
    return KafkaRecord(topic, partition, offset, message.key, message.value, physical_ms(message.ts), message.headers)
