"""Simple messages (spec 004), read with the decoder package's wire parsers and value readers.

A Simple DML names its table and `schemaVersion` but carries no types: it is readable only through a
tableSchema an earlier BOOTSTRAP or DDL brought (spec 004, "Message consumption scenarios"). The
lint keeps those schemas per partition, as a consumer reading the partition from its start would,
and reports a DML it cannot resolve instead of holding it back as a consumer does:
- no schema of the table yet: TiCDC sends a BOOTSTRAP before a table's first DML (SIMPLE-BOOTSTRAP-8);
  with BOOTSTRAP switched off (both intervals 0) that is only info (SIMPLE-BOOTSTRAP-3);
- the table is known, not at this version: the version names no schema (SIMPLE-SCHEMAVERSION-2).
With `send-bootstrap-to-all-partition = false` BOOTSTRAPs go to the first partition only
(SIMPLE-BOOTSTRAP-4), so the schemas are shared by the partitions of a topic.
Each value must then read as its column's mysqlType says (spec 004's mysqlType table,
SIMPLE-MYSQLTYPE-2..7), and two tableSchemas of one (schema, table, version) must describe the
same columns (SIMPLE-SCHEMAVERSION-3). BOOTSTRAP and DDL messages themselves: simple_checks.py.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import orjson

from ticdc_contract.record import KafkaRecord

from ...events import DecodedBootstrap, DecodedDDL, DecodedEvent, DecodedRow, DecodedWatermark
from ticdc_conformance.protocols.common.wire import Malformed
from ticdc_conformance.protocols.common.compression import codec_option, decompress
from ticdc_conformance.protocols.common.keys import carried_key
from ...protocols.simple.message import BootstrapMessage, DDLMessage, DMLMessage, WatermarkMessage
from ...protocols.simple.table import ColumnInfo, TableInfo
from ...protocols.simple.values import from_avro, from_json
from ...protocols.simple.wire_avro import parse_avro
from ...protocols.simple.wire_json import parse_json
from ...rules import checks_rules
from .base import Problem, Read, rejected
from .simple_checks import (BootstrapCounter, check_bootstrap_commit_ts, check_bootstrap_partition,
                            check_ddl_schemas, check_rename_version)
from .simple_timing import SimpleTiming

SchemaKey = tuple[str, str, int]
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


def _value_rule(col: ColumnInfo) -> str:
    if col.mysql_type == "bigint" and col.unsigned:
        return "SIMPLE-MYSQLTYPE-3"
    return _VALUE_RULES.get(col.mysql_type, "SIMPLE-MYSQLTYPE-7")


def _shape(table: TableInfo) -> tuple:
    return tuple((c.name, c.mysql_type, c.unsigned) for c in table.columns)


class SimpleSchemas:
    """The table schemas one partition (or one topic) has been given, by (schema, table, version)."""

    def __init__(self) -> None:
        self._tables: dict[SchemaKey, TableInfo] = {}
        self._names: set[tuple[str, str]] = set()

    def get(self, key: SchemaKey) -> Optional[TableInfo]:
        return self._tables.get(key)

    def knows(self, schema: str, table: str) -> bool:
        return (schema, table) in self._names

    @checks_rules("SIMPLE-SCHEMAVERSION-3", name="lint.simple.schema-version-unique",
                  description="two tableSchemas of one (schema, table, version) describe the same columns")
    def remember(self, table: Optional[TableInfo], problems: list[Problem]) -> None:
        # Nameless tables are schema-level DDLs (TiCDC's decoder skips them too).
        if table is None or not table.schema or not table.table:
            return
        known = self._tables.setdefault(table.key, table)
        self._names.add((table.schema, table.table))
        if known is not table and _shape(known) != _shape(table):
            problems.append(Problem("SIMPLE-SCHEMAVERSION-3",
                                    f"{table.schema}.{table.table} version {table.version} has columns "
                                    f"{[c[0] for c in _shape(table)]}, an earlier schema of that version "
                                    f"{[c[0] for c in _shape(known)]}"))


class SimpleReader:
    def __init__(self, options: Mapping[str, Any], schemas: SimpleSchemas, decode_rule: str,
                 bootstraps_sent: bool, partition: int = 0, to_all: bool = True,
                 msg_count: Optional[int] = None, timing: Optional[SimpleTiming] = None) -> None:
        avro = options.get("encoding-format") == "avro"
        self._avro = avro
        self._parse: Callable[[bytes], Any] = parse_avro if avro else parse_json
        self._value: Callable[[ColumnInfo, Any, str], Any] = from_avro if avro else from_json
        self._compression = codec_option(options)
        self._time_zone = options.get("time-zone") or "UTC"
        self.schemas = schemas
        self.decode_rule = decode_rule
        self.bootstraps_sent = bootstraps_sent
        self.partition, self.to_all = partition, to_all
        self.counter = BootstrapCounter(msg_count if bootstraps_sent and to_all else None)
        self.timing = timing

    def read(self, record: KafkaRecord) -> Read:
        out = Read()
        try:
            if record.value is None:
                raise Malformed("record has no value (Simple messages always have one)")
            raw = decompress(self._compression, record.value)
            message = self._parse(raw)
        except Malformed as e:
            rejected(out.problems, self.decode_rule, e.reason)
        except Exception as e:  # noqa: BLE001 - hostile bytes are a finding (base.decode)
            rejected(out.problems, self.decode_rule, f"the parser failed ({type(e).__name__}: {e})")
        else:
            if isinstance(message, BootstrapMessage):
                self._bootstrap(raw, message.table, out.problems)
            self._time(message, record.offset, out.problems)
            out.events.extend(self._events(message, out.problems))
        return out

    def _time(self, message: Any, offset: int, problems: list[Problem]) -> None:
        """The message's part in the timing rules (simple_timing.py)."""
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

    def _events(self, message: Any, problems: list[Problem]) -> list[DecodedEvent]:
        if isinstance(message, WatermarkMessage):
            return [DecodedWatermark(message.commit_ts)]
        if isinstance(message, BootstrapMessage):
            t = message.table
            self.schemas.remember(t, problems)
            return [DecodedBootstrap(t.schema, t.table, t.version, t.column_names)]
        if isinstance(message, DDLMessage):
            check_ddl_schemas(message, problems)
            check_rename_version(message, problems)
            self.schemas.remember(message.table, problems)
            self.schemas.remember(message.pre_table, problems)
            named = message.table or message.pre_table
            return [DecodedDDL(commit_ts=message.commit_ts, schema=named.schema if named else "",
                               table=named.table if named else "", query=message.sql, ddl_type=message.ddl_type,
                               columns=message.table.column_names if message.table else ())]
        self.counter.row(message.schema, message.table, problems)
        table = self.resolve(message, problems)
        if table is None:
            return []
        row = DecodedRow(schema=message.schema, table=message.table, op=message.op, commit_ts=message.commit_ts,
                         after=self.image(table, message.data, problems),
                         before=self.image(table, message.old, problems),
                         key_columns=carried_key(table.keys, message.data, message.old),
                         columns=table.column_names)
        return [row]

    def _bootstrap(self, raw: bytes, table: TableInfo, problems: list[Problem]) -> None:
        check_bootstrap_partition(self.partition, self.to_all, table, problems)
        self.counter.bootstrap(table)
        if not self._avro:  # TiCDC's Avro Bootstrap record has no commitTs
            check_bootstrap_commit_ts(orjson.loads(raw).get("commitTs"), table, problems)

    @checks_rules(*SCHEMA_RULES, name="lint.simple.schema-known",
                  description="every DML names a (schema, table, schemaVersion) an earlier BOOTSTRAP or DDL of "
                              "its partition described")
    def resolve(self, message: DMLMessage, problems: list[Problem]) -> Optional[TableInfo]:
        table = self.schemas.get(message.schema_key)
        if table is not None:
            return table
        name = f"{message.schema}.{message.table}"
        if self.schemas.knows(message.schema, message.table):
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
    def image(self, table: TableInfo, wire: Optional[dict], problems: list[Problem]) -> Optional[dict[str, Any]]:
        if wire is None:
            return None
        values: dict[str, Any] = {}
        for name, raw in wire.items():
            col = table.by_name.get(name)
            if col is None:
                problems.append(Problem("SIMPLE-SCHEMAVERSION-1",
                                        f"column {name!r} is not in {table.schema}.{table.table} schemaVersion "
                                        f"{table.version}, the version the DML names"))
                continue
            try:
                values[name] = self._value(col, raw, self._time_zone)
            except Malformed as e:
                problems.append(Problem(_value_rule(col), f"{table.schema}.{table.table}: {e.reason}"))
        return values
