"""A Kafka record with exactly the columns of Spark's Kafka source, and its Arrow schema.

Record files (the embedded default transport) are Parquet files of this schema, so the same
consumer reads record files and a real topic alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pyarrow as pa

# Spark's Kafka source: key binary, value binary, topic string, partition int, offset long,
# timestamp timestamp, timestampType int, headers array<struct<key string, value binary>>.
RECORD_SCHEMA = pa.schema([
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    pa.field("timestampType", pa.int32()),
    pa.field("headers", pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))),
])

CREATE_TIME = 0  # Kafka's TimestampType.CREATE_TIME


@dataclass(frozen=True)
class KafkaRecord:
    topic: str
    partition: int
    offset: int
    key: Optional[bytes]
    value: Optional[bytes]
    timestamp_ms: int
    headers: tuple[tuple[str, Optional[bytes]], ...] = field(default=())
    timestamp_type: int = CREATE_TIME

    @property
    def coordinates(self) -> str:
        return f"{self.topic}/{self.partition}@{self.offset}"
