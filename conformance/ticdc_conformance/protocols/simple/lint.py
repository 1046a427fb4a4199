"""Simple's lint rules (spec 004), judged on the message the decoder parsed and on what its schema
cache held for it (decoder.SimpleRead).

A Simple DML names its table and `schemaVersion` but carries no types: it is readable only through a
tableSchema an earlier BOOTSTRAP or DDL brought (spec 004, "Message consumption scenarios"). The
lint's decoder keeps those schemas per partition, as a consumer reading the partition from its start
would, and reports a DML it cannot resolve instead of holding it back as a consumer does:
- no schema of the table yet: TiCDC sends a BOOTSTRAP before a table's first DML (SIMPLE-BOOTSTRAP-8);
  with BOOTSTRAP switched off (both intervals 0) that is only info (SIMPLE-BOOTSTRAP-3);
- the table is known, not at this version: the version names no schema (SIMPLE-SCHEMAVERSION-2).
With `send-bootstrap-to-all-partition = false` BOOTSTRAPs go to the first partition only
(SIMPLE-BOOTSTRAP-4), so the schemas are shared by the partitions of a topic.
Each value must then read as its column's mysqlType says (spec 004's mysqlType table,
SIMPLE-MYSQLTYPE-2..7): the decoder's value readers judge every value, and for a DML they reject the
values are read again one by one so each finding names its column's rule. Two tableSchemas of one
(schema, table, version) must describe the same columns (SIMPLE-SCHEMAVERSION-3). BOOTSTRAP and DDL
messages themselves: lint_checks.py; the timing rules: lint_timing.py.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ticdc_contract.record import KafkaRecord

from ...rules import checks_rules
from ..common.interface import Read
from ..common.lint import LintContext, Problem, rejected, rejection
from ..common.wire import Malformed
from .decoder import SimpleDecoder, SimpleRead
from .lint_checks import (
    BootstrapCounter,
    check_bootstrap_commit_ts,
    check_bootstrap_partition,
    check_ddl_schemas,
    check_rename_version,
)
from .lint_timing import SimpleTiming, TopicActivity
from .message import BootstrapMessage, ColumnInfo, DDLMessage, DMLMessage, TableInfo, WatermarkMessage
from .options import bootstrap_options, parse_options
from .rows import RowReader
from .values import from_avro, from_json

# spec 004's mysqlType table, split into rules: integers, BIGINT UNSIGNED, numbers, strings,
# temporal types, and the rest.
_VALUE_RULES = {
    **dict.fromkeys(("tinyint", "smallint", "mediumint", "int", "bigint"), "SIMPLE-MYSQLTYPE-2"),
    **dict.fromkeys(("float", "double", "decimal"), "SIMPLE-MYSQLTYPE-4"),
    **dict.fromkeys(("varchar", "char", "varbinary", "binary", "tinytext", "text", "mediumtext", "longtext",
                     "tinyblob", "blob", "mediumblob", "longblob"), "SIMPLE-MYSQLTYPE-5"),
    **dict.fromkeys(("date", "datetime", "timestamp", "time"), "SIMPLE-MYSQLTYPE-6"),
    **dict.fromkeys(("year", "enum", "set", "bit", "json", "bool"), "SIMPLE-MYSQLTYPE-7"),
}
SCHEMA_RULES = ("SIMPLE-BOOTSTRAP-8", "SIMPLE-BOOTSTRAP-3", "SIMPLE-SCHEMAVERSION-1", "SIMPLE-SCHEMAVERSION-2")
VALUE_RULES = ("SIMPLE-MYSQLTYPE-3", *dict.fromkeys(_VALUE_RULES.values()))
# LintContext.topic_state / topic_checks keys of the state a topic's partitions share.
_SCHEMAS = "simple.schemas"
_ACTIVITY = "simple.activity"


def _value_rule(col: ColumnInfo) -> str:
    if col.mysql_type == "bigint" and col.unsigned:
        return "SIMPLE-MYSQLTYPE-3"
    return _VALUE_RULES.get(col.mysql_type, "SIMPLE-MYSQLTYPE-7")


def _shape(table: TableInfo) -> tuple:
    return tuple((c.name, c.mysql_type, c.unsigned) for c in table.columns)


@checks_rules("SIMPLE-SCHEMAVERSION-3", name="lint.simple.schema-version-unique",
              description="two tableSchemas of one (schema, table, version) describe the same columns")
def check_same_version(read: SimpleRead, problems: list[Problem]) -> None:
    """Each tableSchema a BOOTSTRAP or DDL carries against the one its key named before."""
    for table, known in read.cached:
        if known is not table and _shape(known) != _shape(table):
            problems.append(Problem("SIMPLE-SCHEMAVERSION-3",
                                    f"{table.schema}.{table.table} version {table.version} has columns "
                                    f"{[c[0] for c in _shape(table)]}, an earlier schema of that version "
                                    f"{[c[0] for c in _shape(known)]}"))


class SimpleLint:
    """The rules of one topic-partition, with the decoder whose reads they judge."""

    def __init__(self, context: LintContext) -> None:
        bootstrap = bootstrap_options(context.options)
        self.bootstraps_sent = bootstrap.sent
        self.partition, self.to_all = context.partition, bootstrap.to_all_partitions
        # One schema cache per partition, or per topic when BOOTSTRAPs reach its first partition only.
        tables: Optional[dict[tuple[str, str, int], RowReader]] = None
        if not self.to_all:
            tables = context.topic_state.setdefault(_SCHEMAS, {})
        self.decoder = SimpleDecoder(context.options, tables=tables, hold_rows=False, keep_faulty_rows=True)
        options = parse_options(context.options)
        self._avro = options.encoding == "avro"
        self._value: Callable[[ColumnInfo, Any, str], Any] = from_avro if self._avro else from_json
        self._time_zone = options.time_zone
        self.decode_rule = context.decode_rule
        self.counter = BootstrapCounter(bootstrap.msg_count if self.bootstraps_sent and self.to_all else None)
        self.timing: Optional[SimpleTiming] = None
        if not context.probe:
            activity = context.topic_checks.get(_ACTIVITY)
            if not isinstance(activity, TopicActivity):
                activity = context.topic_checks[_ACTIVITY] = TopicActivity()
            # SIMPLE-BOOTSTRAP-1 is judged per partition, so only when every partition gets the BOOTSTRAPs.
            interval_ms = bootstrap.interval_sec * 1000 if self.bootstraps_sent and self.to_all else None
            self.timing = SimpleTiming(context.partition, activity, context.watermark_interval_ms, interval_ms)

    def check(self, record: KafkaRecord, read: Read) -> list[Problem]:
        problems: list[Problem] = []
        message = read.message
        if message is None:  # the value did not parse: the decoder's reason is the finding
            rejected(problems, self.decode_rule, rejection(record, read.error))
            return problems
        # The schema rules need what the cache held, which only this lint's own decoder reports.
        if not isinstance(read, SimpleRead):
            raise TypeError(f"the Simple lint judges the reads of its decoder (SimpleRead), not {type(read).__name__}")
        simple = read
        if isinstance(message, BootstrapMessage):
            self._bootstrap(message, problems)
        self._time(message, record.offset, problems)
        if isinstance(message, BootstrapMessage):
            check_same_version(simple, problems)
        elif isinstance(message, DDLMessage):
            check_ddl_schemas(message, problems)
            check_rename_version(message, problems)
            check_same_version(simple, problems)
        elif isinstance(message, DMLMessage):
            self.counter.row(message.schema, message.table, problems)
            table = self.resolve(message, simple, problems)
            # A rejected DML's values are read again one by one, so each fault is named under its rule.
            if table is not None and simple.error is not None:
                self.image(table, message.data, problems)
                self.image(table, message.old, problems)
        return problems

    def finish(self) -> list[Problem]:
        return self.timing.finish() if self.timing is not None else []

    def _time(self, message: Any, offset: int, problems: list[Problem]) -> None:
        """The message's part in the timing rules (lint_timing.py)."""
        timing, build = self.timing, getattr(message, "build_ts", None)
        if timing is None or build is None:
            return
        if isinstance(message, WatermarkMessage):
            timing.watermark(message.commit_ts, build, offset, problems)
        elif isinstance(message, BootstrapMessage):
            timing.bootstrap((message.table.schema, message.table.table), build, offset, problems)
        elif isinstance(message, DDLMessage):
            timing.event(build, offset)
        else:
            timing.row((message.schema, message.table), build, offset)

    def _bootstrap(self, message: BootstrapMessage, problems: list[Problem]) -> None:
        table = message.table
        check_bootstrap_partition(self.partition, self.to_all, table, problems)
        self.counter.bootstrap(table)
        if not self._avro:  # TiCDC's Avro Bootstrap record has no commitTs
            check_bootstrap_commit_ts(message.commit_ts, table, problems)

    @checks_rules(*SCHEMA_RULES, name="lint.simple.schema-known",
                  description="every DML names a (schema, table, schemaVersion) an earlier BOOTSTRAP or DDL of "
                              "its partition described")
    def resolve(self, message: DMLMessage, read: SimpleRead, problems: list[Problem]) -> Optional[TableInfo]:
        if read.table is not None:
            return read.table
        name = f"{message.schema}.{message.table}"
        if read.table_known:
            problems.append(Problem("SIMPLE-SCHEMAVERSION-2",
                                    f"{message.op} of {name} names schemaVersion {message.schema_version}, "
                                    f"which no BOOTSTRAP or DDL before it described"))
        elif self.bootstraps_sent:
            problems.append(Problem("SIMPLE-BOOTSTRAP-8",
                                    f"{message.op} of {name} (schemaVersion {message.schema_version}) comes "
                                    f"before any BOOTSTRAP or DDL of its table"))
        else:
            problems.append(Problem("SIMPLE-BOOTSTRAP-3",
                                    f"{message.op} of {name} cannot be read: BOOTSTRAP is off and no DDL of "
                                    f"its table came first", info=True))
        return None

    @checks_rules(*VALUE_RULES, name="lint.simple.values",
                  description="each DML value has the wire form spec 004's mysqlType table gives its column")
    def image(self, table: TableInfo, wire: Optional[dict], problems: list[Problem]) -> None:
        for name, raw in (wire or {}).items():
            col = table.by_name.get(name)
            if col is None:
                problems.append(Problem("SIMPLE-SCHEMAVERSION-1",
                                        f"column {name!r} is not in {table.schema}.{table.table} schemaVersion "
                                        f"{table.version}, the version the DML names"))
                continue
            try:
                self._value(col, raw, self._time_zone)
            except Malformed as e:
                problems.append(Problem(_value_rule(col), f"{table.schema}.{table.table}: {e.reason}"))


def new_lint(context: LintContext) -> SimpleLint:
    return SimpleLint(context)
