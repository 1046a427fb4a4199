"""TiCDC's Avro schema of the Simple protocol, vendored unchanged as package data.

avro/simple_message.avsc is pingcap/ticdc pkg/sink/codec/simple/message.json (Apache-2.0, commit
b813e76f): one union of named records, of which TiCDC writes only the
`com.pingcap.simple.avro.Message` branch, with no schema-registry framing. The decode side reads
Simple Avro data with this schema and never with the encoder's own schema builder, so that a
decoded record is evidence about the encoder, not an echo of it; a test holds the encoder's
schema equal to this one (same parsing canonical form).
"""
from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, cast

import fastavro

NAMESPACE = "com.pingcap.simple.avro"
MESSAGE_RECORD = f"{NAMESPACE}.Message"

SCHEMA_FILE = files(__package__).joinpath("avro", "simple_message.avsc")
# The schema as TiCDC states it (a JSON array: an Avro union of records).
SCHEMA_JSON: list[dict[str, Any]] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
# Parsed for fastavro; parsing a union gives back a list of the parsed records.
MESSAGE_SCHEMA = cast(list[dict[str, Any]], fastavro.parse_schema(SCHEMA_JSON))
# The union index of the Message record: the first varint of every datum TiCDC writes.
MESSAGE_UNION_INDEX = [f"{r['namespace']}.{r['name']}" for r in SCHEMA_JSON].index(MESSAGE_RECORD)
