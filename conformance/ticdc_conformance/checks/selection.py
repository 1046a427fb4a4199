"""The fidelity of a column-selected changefeed: what a consumer can know of each table.

Under `sink.column-selectors` (ticdc_generators/sink/column_selector.py) every row event of a
matched table carries the selected columns only, in every protocol. A perfect consumer therefore
knows those columns and nothing of the others, so the ground truth is cut down to them before it
is compared, and whatever a consumer writes into an unselected column (a NULL from a table
schema it learnt from a DDL or BOOTSTRAP, typically) is not judged, as TiCDC's own checksum
checker compares the selected columns only (tests/utils/checksum_checker). Rows are then told
apart by the key the selection keeps: the primary key when it survives whole, else a NOT NULL
unique key that does (TiCDC refuses a selection that keeps neither a whole primary key nor a
whole unique key).

The selectors come from the manifest's `sink` options, under TiCDC's names
(`column-selectors`: a list of {"matcher": [...], "columns": [...]}, and `case-sensitive`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ticdc_contract.model import TableSchema
from ticdc_generators.sink.column_selector import ColumnSelectors


def selectors(options: Mapping[str, Any]) -> ColumnSelectors:
    return ColumnSelectors.from_options(options)


def consumer_table(table: TableSchema, chosen: ColumnSelectors) -> TableSchema:
    """`table` as a consumer of the column-selected stream knows it: the selected columns, and
    the indexes all of whose columns remain (so `handle_key` is a key the consumer has)."""
    kept = chosen.selected(table)
    if kept is None:
        return table
    return replace(table,
                   columns=tuple(c for c in table.columns if c.name in kept),
                   indexes=tuple(ix for ix in table.indexes if all(c in kept for c in ix.columns)))


def unjudged_columns(table: TableSchema, chosen: ColumnSelectors) -> frozenset[str]:
    """Columns of `table` whose values no consumer can know, so whatever it writes there is left
    out of the comparison: virtual generated columns (TiCDC never sends them) and unselected ones."""
    kept = chosen.selected(table)
    return frozenset(c.name for c in table.columns if c.is_virtual or (kept is not None and c.name not in kept))
