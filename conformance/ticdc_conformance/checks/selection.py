"""The fidelity of a column-selected changefeed: what a consumer can know of each table.

Under `sink.column-selectors` every row event of a matched table carries the selected columns
only, in every protocol (protocols/common/column_selection.py reads which). A perfect consumer
therefore knows those columns and nothing of the others, so the ground truth is cut down to them
before it is compared, and whatever a consumer writes into an unselected column (a NULL from a
table schema it learnt from a DDL or BOOTSTRAP, typically) is not judged, as TiCDC's own checksum
checker compares the selected columns only (tests/utils/checksum_checker). Rows are then told
apart by the key the selection keeps: the primary key when it survives whole, else a NOT NULL
unique key that does (TiCDC refuses a selection that keeps neither a whole primary key nor a
whole unique key).
"""
from __future__ import annotations

from ticdc_conformance.protocols.common.column_selection import ColumnSelection, consumer_table, selectors
from ticdc_contract.model import TableSchema

__all__ = ["ColumnSelection", "consumer_table", "selectors", "unjudged_columns"]


def unjudged_columns(table: TableSchema, chosen: ColumnSelection) -> frozenset[str]:
    """Columns of `table` whose values no consumer can know, so whatever it writes there is left
    out of the comparison: virtual generated columns (TiCDC never sends them) and unselected ones."""
    kept = chosen.selected(table)
    return frozenset(c.name for c in table.columns if c.is_virtual or (kept is not None and c.name not in kept))
