"""Partition and topic dispatch, with TiCDC's hash so partition numbers equal real TiCDC's.

TiCDC downstreamadapter/sink/eventrouter/partition/: `default` and `table` hash schema+table;
`index-value` hashes schema, table and each handle-key column's name and value string; `ts`
uses commit_ts modulo the partition count; `columns` hashes the named columns' values.
The hash is TiCDC pkg/hash/position_inertia.go: each Write() call takes the CRC-32 (IEEE) of the
concatenation of its arguments and XORs it into the running value — hand-written here because no
library implements this particular combination.
"""
from __future__ import annotations

import zlib
from decimal import Decimal
from typing import Any, Callable, Optional

from ticdc_contract.model import Row, TableSchema
from ticdc_contract.table_filter import TableFilter

from ..errors import ChangefeedFailure
from .config import DispatchRule, SinkConfig


class DispatchFailure(ChangefeedFailure, ValueError):
    """A dispatcher naming an index or column the table lacks: TiCDC fails the changefeed
    (ErrDispatcherFailed) when the first row of that table is dispatched."""


class PositionInertia:
    def __init__(self) -> None:
        self.value = 0

    def write(self, *parts: bytes) -> None:
        crc = 0
        for p in parts:
            crc = zlib.crc32(p, crc)
        self.value ^= crc


def column_value_string(v: Any) -> str:
    """TiCDC pkg/common/column.go ColumnValueString: the string a value is hashed as."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="surrogateescape")
    if isinstance(v, float):
        # Go strconv.FormatFloat(v, 'f', -1, 64): shortest round-trip digits, never an exponent.
        text = format(Decimal(repr(v)), "f")
        return text[:-2] if text.endswith(".0") else text
    return str(v)


def _bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    return column_value_string(v).encode("utf-8")


class Router:
    """Topic and partition for each event, per the changefeed's dispatchers.

    TiCDC downstreamadapter/sink/eventrouter/event_router.go: each rule's matcher is a table
    filter (TiDB's rule syntax), case-insensitive unless the changefeed sets `case-sensitive`; the
    first matching rule gives both the topic and the partition dispatcher, and a final `*.*` rule
    with the default dispatcher and the default topic covers every other table."""

    def __init__(self, config: SinkConfig) -> None:
        self.config = config
        self._filters = [(TableFilter.parse(rule.matcher, case_sensitive=config.case_sensitive), rule)
                         for rule in config.dispatchers]

    def rule_for(self, table: TableSchema) -> Optional[DispatchRule]:
        for table_filter, rule in self._filters:
            if table_filter.match(table.schema, table.table):
                return rule
        return None

    def topic_for(self, table: TableSchema) -> str:
        rule = self.rule_for(table)
        if rule is None or not rule.topic:
            return self.config.topic
        return rule.topic.replace("{schema}", table.schema).replace("{table}", table.table)

    def partitioner(self, table: TableSchema, partition_num: int) -> Callable[[Row, int], int]:
        """`partition_for` of one table version as a function of (row, commit_ts): the rule, the
        columns hashed and the CRC of the constant parts are settled once (the same numbers, and
        the same DispatchFailure, raised here when the table's first row is dispatched)."""
        rule = self.rule_for(table)
        kind = (rule.partition if rule else "default").lower()
        if kind == "ts":
            return lambda row, commit_ts: commit_ts % partition_num
        if kind not in ("default", "table", "index-value", "rowid", "columns"):
            raise ValueError(f"unknown partition dispatcher {kind!r}")
        # PositionInertia.write(a, b) XORs in crc32(a + b); the running value starts at 0.
        base = zlib.crc32(table.table.encode(), zlib.crc32(table.schema.encode()))
        if kind in ("default", "table"):
            fixed = base % partition_num
            return lambda row, commit_ts: fixed
        names = self._hashed_columns(table, rule, kind)
        named = tuple((name, zlib.crc32(name.encode())) for name in names)
        crc32 = zlib.crc32

        def partition(row: Row, commit_ts: int) -> int:
            h = base
            for name, name_crc in named:
                v = row.get(name)
                if v is not None:
                    h ^= crc32(v if type(v) is bytes else _bytes(v), name_crc)
            return h % partition_num

        return partition

    def _hashed_columns(self, table: TableSchema, rule: Optional[DispatchRule], kind: str) -> tuple[str, ...]:
        """The columns index-value / columns dispatch hashes, in hashing order."""
        if kind == "columns":
            by_lower = {c.lower(): c for c in table.column_names}
            out = []
            for wanted in rule.columns:
                name = by_lower.get(wanted.lower())
                if name is None:
                    raise DispatchFailure(f"column {wanted!r} not found in {table.qualified_name} for columns dispatch")
                out.append(name)
            return tuple(out)
        if rule is not None and rule.index:
            cols = next((ix.columns for ix in table.indexes if ix.name.lower() == rule.index.lower()), None)
            if cols is None:
                raise DispatchFailure(f"index {rule.index!r} not found in {table.qualified_name} for index-value "
                                      "dispatch")
            return tuple(cols)
        return tuple(table.handle_key)

    def partition_for(self, table: TableSchema, row: Row, commit_ts: int, partition_num: int) -> int:
        rule = self.rule_for(table)
        kind = (rule.partition if rule else "default").lower()
        h = PositionInertia()
        if kind in ("default", "table"):
            h.write(table.schema.encode(), table.table.encode())
        elif kind == "ts":
            return commit_ts % partition_num
        elif kind in ("index-value", "rowid"):
            h.write(table.schema.encode(), table.table.encode())
            if rule.index:
                # TiCDC matches the index name case-insensitively (TableInfo.IndexByName).
                cols = next((ix.columns for ix in table.indexes if ix.name.lower() == rule.index.lower()), None)
                if cols is None:
                    raise DispatchFailure(f"index {rule.index!r} not found in {table.qualified_name} for index-value "
                                          "dispatch")
            else:
                cols = table.handle_key
            for name in cols:
                v = row.get(name)
                if v is not None:
                    h.write(name.encode(), _bytes(v))
        elif kind == "columns":
            h.write(table.schema.encode(), table.table.encode())
            by_lower = {c.lower(): c for c in table.column_names}
            for wanted in rule.columns:
                # Matched case-insensitively, hashed under the table's own spelling (TiCDC OffsetsByNames).
                name = by_lower.get(wanted.lower())
                if name is None:
                    raise DispatchFailure(f"column {wanted!r} not found in {table.qualified_name} for columns dispatch")
                v = row.get(name)
                if v is not None:
                    h.write(name.encode(), _bytes(v))
        else:
            raise ValueError(f"unknown partition dispatcher {kind!r}")
        return h.value % partition_num
