"""Which columns a Canal-JSON message names as keys.

`pkNames` lists the columns carrying TiDB's PriKeyFlag, in table order (TiCDC
pkg/common/event/row_change.go, RowEvent.PrimaryKeyColumnNames); a table without a primary key
gets an empty list, never null. The handle key, used when only key columns are sent, follows
TiCDC pkg/common/table_info_helper.go (initIndexColumns): the primary key, else the NOT NULL
unique key with the fewest columns, ties going to the index created first.
"""
from __future__ import annotations

from ticdc_contract.model import TableSchema


def pk_names(table: TableSchema) -> list[str]:
    pk = table.primary_key
    if pk is None:
        return []
    members = set(pk.columns)
    return [c.name for c in table.columns if c.name in members]


def handle_key_columns(table: TableSchema) -> frozenset[str]:
    pk = table.primary_key
    if pk is not None:
        return frozenset(pk.columns)
    best = None
    for ix in table.indexes:
        if not ix.unique or any(table.column(c).nullable for c in ix.columns):
            continue
        # Strictly fewer columns wins; on a tie the earlier index (smaller TiDB index ID) stays.
        if best is None or len(ix.columns) < len(best.columns):
            best = ix
    return frozenset(best.columns) if best is not None else frozenset()
