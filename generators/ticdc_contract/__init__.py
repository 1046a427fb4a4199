"""The contract between the encode side (ticdc_generators) and the decode side (ticdc_conformance).

What both sides must agree on and may therefore share: the record and record-file format, the
upstream model and TiDB's types, canonical values (TiDB's print of a JSON document included), TSO, the truth format, TiDB's row checksum, the
protocol names, and TiCDC's Simple Avro schema (avro/, package data). It imports neither side
(docs/import-contracts.md); everything else each side writes on its own.
"""
