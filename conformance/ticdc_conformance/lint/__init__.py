"""Stream lint: checks any Kafka record stream of a TiCDC protocol against the spec rules (docs/lint.md).

Message by message (type codes, flags, sqlType/mysqlType, Debezium field types, values against their
declared types) and across the stream (commit-ts order per table, watermarks, a row's partition,
broadcasts, Simple schemas), in one pass with memory bounded by partitions and tables. Works on a
simulator run and on a stream captured from a real changefeed alike.
"""
from __future__ import annotations

from .findings import INFO, Finding, Findings
from .run import LintResult, lint, lint_record_files
from .settings import LintSettings, SettingsError, load_settings
from .sources import KafkaTopic, LintInputError, RecordFiles, in_offset_order

__all__ = ["INFO", "Finding", "Findings", "KafkaTopic", "LintInputError", "LintResult", "LintSettings",
           "RecordFiles", "SettingsError", "in_offset_order", "lint", "lint_record_files", "load_settings"]
