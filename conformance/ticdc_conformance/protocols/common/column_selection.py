"""`sink.column-selectors` as a consumer reads them: which columns of a table its row events carry.

Read from a manifest's `sink` options under TiCDC's names (`column-selectors`: a list of
{"matcher": [...], "columns": [...]}, and `case-sensitive`), as docs/consumer-protocol.md gives
them. TiCDC's rule (downstreamadapter/sink/columnselector): the first selector whose matcher
accepts the table decides and its column rules keep the columns they accept; a table no selector
matches keeps every column. Matchers are case-insensitive unless `case-sensitive` is true, column
rules always are. The rule syntax is the contract's reading of TiDB's table filter
(ticdc_contract.table_filter); which selector applies and what it keeps is read here, apart from
the simulator that writes the stream (tests/conformance/protocols/test_column_selection.py holds
the two against each other).

What a consumer then knows of a table (`consumer_table`): the selected columns, and the indexes
whose columns all remain, so `handle_key` is a key its messages still name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from ticdc_contract.model import TableSchema
from ticdc_contract.table_filter import ColumnFilter, TableFilter


@dataclass(frozen=True)
class ColumnSelection:
    """The selectors of one changefeed, in the order they are tried."""

    selectors: tuple[tuple[TableFilter, ColumnFilter], ...] = ()

    def selected(self, table: TableSchema) -> Optional[frozenset[str]]:
        """The names of the table's columns its row events carry; None when no selector matches."""
        for tables, columns in self.selectors:
            if tables.match(table.schema, table.table):
                return frozenset(c.name for c in table.columns if columns.match(c.name))
        return None


def _is_true(value: Any) -> bool:
    # A manifest writes booleans; a lint command line gives the text of a TiCDC option.
    return value is True or str(value).strip().lower() == "true"


def selectors(options: Mapping[str, Any]) -> ColumnSelection:
    """The column selection of a manifest's `sink` options (none: every column of every table)."""
    case_sensitive = _is_true(options.get("case-sensitive", False))
    return ColumnSelection(tuple(
        (TableFilter.parse(list(rule.get("matcher") or ()), case_sensitive=case_sensitive),
         ColumnFilter.parse(list(rule.get("columns") or ())))
        for rule in options.get("column-selectors") or ()))


def consumer_table(table: TableSchema, chosen: ColumnSelection) -> TableSchema:
    """`table` as a consumer of the column-selected stream knows it: the selected columns, and
    the indexes all of whose columns remain (so `handle_key` is a key the consumer has)."""
    kept = chosen.selected(table)
    if kept is None:
        return table
    return replace(table,
                   columns=tuple(c for c in table.columns if c.name in kept),
                   indexes=tuple(ix for ix in table.indexes if all(c in kept for c in ix.columns)))
