"""A transaction being built: several statements, collapsed per row as TiCDC sees them.

TiKV keeps one version per row key per transaction, so TiCDC sees one event per row: the row's
image before the transaction and after it (spec 002, "multiple changes to the same row in a
transaction are only sent in one Row Changed Event"). Collapsing rules, by row key:
insert+update -> insert; insert+delete -> nothing; update+update -> update(first before, last
after); update+delete -> delete(first before); delete+insert -> update(old image, new image).
A key-changing update is a delete of the old key and an insert of the new one at the KV level;
it stays one UPDATE here and the sink simulator splits it as TiCDC does.
"""
from __future__ import annotations

from ticdc_contract.model import Op, Row, RowChange, TableSchema

Name = tuple[str, str]


class TxnBuilder:
    def __init__(self) -> None:
        self._entries: list[list] = []  # [table, image at transaction start, current image]
        self._live: dict[tuple[Name, tuple], int] = {}  # current key -> entry, rows that exist now
        self._deleted: dict[tuple[Name, tuple], int] = {}  # key -> entry, rows deleted in this transaction

    def _touch(self, table: TableSchema, row: Row) -> int:
        """The entry of an existing row, created on its first touch in this transaction."""
        name, key = (table.schema, table.table), table.row_key(row)
        i = self._live.get((name, key))
        if i is None:
            if (name, key) in self._deleted:
                raise ValueError(f"{table.qualified_name} row {key} was deleted earlier in this transaction")
            i = len(self._entries)
            self._entries.append([table, dict(row), dict(row)])
            self._live[(name, key)] = i
        return i

    def insert(self, table: TableSchema, row: Row) -> None:
        name, key = (table.schema, table.table), table.row_key(row)
        if (name, key) in self._live:
            raise ValueError(f"duplicate key {key} in {table.qualified_name}")
        i = self._deleted.pop((name, key), None)
        if i is None:
            i = len(self._entries)
            self._entries.append([table, None, None])
        self._entries[i][0], self._entries[i][2] = table, dict(row)
        self._live[(name, key)] = i

    def update(self, table: TableSchema, before: Row, after: Row) -> None:
        name, new_key = (table.schema, table.table), table.row_key(after)
        i = self._touch(table, before)
        old_key = table.row_key(before)
        if new_key != old_key:
            if (name, new_key) in self._live:
                raise ValueError(f"duplicate key {new_key} in {table.qualified_name}")
            del self._live[(name, old_key)]
            self._live[(name, new_key)] = i
        self._entries[i][0], self._entries[i][2] = table, dict(after)

    def delete(self, table: TableSchema, before: Row) -> None:
        name, key = (table.schema, table.table), table.row_key(before)
        i = self._touch(table, before)
        del self._live[(name, key)]
        self._entries[i][0], self._entries[i][2] = table, None
        self._deleted[(name, key)] = i

    def changes(self) -> tuple[RowChange, ...]:
        out = []
        for table, before, after in self._entries:
            if before is None and after is None:
                continue
            if before is None:
                out.append(RowChange(table, Op.INSERT, None, after))
            elif after is None:
                out.append(RowChange(table, Op.DELETE, before, None))
            elif before != after:
                out.append(RowChange(table, Op.UPDATE, before, after))
        return tuple(out)
