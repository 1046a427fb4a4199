"""`sink.column-selectors`: which columns of which tables a changefeed's row events carry.

Behaviour follows TiCDC downstreamadapter/sink/columnselector/column_selector.go (new TiCDC) and
cdc/sink/dmlsink/mq/transformer/columnselector/column_selector.go (classic tiflow):
- a selector is a table matcher and a column filter, both TiDB table-filter rules (ticdc_contract/table_filter.py);
  tables match case-insensitively unless the changefeed sets `case-sensitive = true`, columns
  always case-insensitively;
- the first selector whose matcher accepts the table decides; a table no selector matches keeps
  every column;
- only the row images lose columns: every codec skips an unselected column in the values it
  writes (old values included), while keys, column flags, Canal-JSON `pkNames`, Debezium's key
  and the table schemas of Simple's BOOTSTRAP and DDL messages still describe the whole table
  (new TiCDC hands each codec the full table and the selector, RowEvent.ColumnSelector). Classic
  tiflow instead blanks the unselected columns of the row event itself before dispatch, so its
  partition hash, Debezium key and Canal-JSON `pkNames` see only the selected columns;
- a selection must keep the whole primary key or the whole of some unique key, and must not drop
  a column the table's `columns` partition dispatcher hashes (TiCDC VerifyTables, checked against
  every selector that matches, not only the first). TiCDC checks the tables that exist when the
  changefeed is created or updated (tiflow also checks every row); the simulator checks every
  table version it sends rows of, since a stream without a usable key cannot be applied.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Optional

from ticdc_contract.model import Row, TableSchema

from ..errors import ChangefeedFailure
from .config import DispatchRule, SinkConfig

# The rules' parsing lives below the config (which refuses rules that do not parse); its names
# are part of this module's interface.
from .selector_rules import ColumnSelectorRuleError, Selector, parse_selectors, parsed_selectors, rule_key

__all__ = ["ColumnSelectorError", "ColumnSelectorRuleError", "ColumnSelectors", "Selector", "dispatch_row",
           "select_columns"]

# The RFC code TiCDC's error carries (pkg/errors/error.go), so a message can be searched for.
_SELECTOR_FAILED = "[CDC:ErrColumnSelectorFailed]"


class ColumnSelectorError(ValueError, ChangefeedFailure):
    """TiCDC's ErrColumnSelectorFailed: a selection TiCDC refuses for a table."""

    def __init__(self, table: str, message: str) -> None:
        self.table = table
        super().__init__(f"{_SELECTOR_FAILED}column selector failed: {message}, table: {table}")


@dataclass(frozen=True)
class ColumnSelectors:
    selectors: tuple[Selector, ...]
    profile: str = "ticdc"  # "tiflow": classic TiCDC's key check (see _keeps_a_key)
    # (table id, schema version, schema, table, dispatch rule) -> (table, selection): each table
    # version is verified once.
    _checked: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def parse(cls, rules: Iterable[Any], case_sensitive: bool = False, profile: str = "ticdc") -> "ColumnSelectors":
        return cls(parse_selectors(rules, case_sensitive), profile)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "ColumnSelectors":
        """From a manifest's `sink` options (SinkConfig.ticdc_options(): TiCDC's spelling)."""
        return cls.parse(options.get("column-selectors") or (), bool(options.get("case-sensitive", False)))

    def selector_for(self, schema: str, table: str) -> Optional[Selector]:
        for s in self.selectors:
            if s.matches(schema, table):
                return s
        return None

    def selected(self, table: TableSchema) -> Optional[frozenset[str]]:
        """The names of the table's columns its row events carry; None when no selector matches."""
        s = self.selector_for(table.schema, table.table)
        if s is None:
            return None
        return frozenset(c.name for c in table.columns if s.keeps(c.name))

    def verify(self, table: TableSchema, dispatch: Optional[DispatchRule] = None) -> None:
        """TiCDC VerifyTables for one table: raises ColumnSelectorError when a matching selector
        drops a column the `columns` dispatcher hashes, or leaves neither the whole primary key
        nor a whole unique key."""
        name = f"`{table.schema}`.`{table.table}`"
        hashed = dispatch.columns if dispatch is not None and dispatch.partition.lower() == "columns" else ()
        for s in self.selectors:
            if not s.matches(table.schema, table.table):
                continue
            retained = set()
            for c in table.columns:
                if s.keeps(c.name):
                    retained.add(c.name)
                elif c.name in hashed:  # compared as spelled, as TiCDC does (slices.Contains)
                    raise ColumnSelectorError(name, f"the filtered out column is used in the column dispatcher, "
                                                    f"column: {c.name}")
            if not self._keeps_a_key(table, retained):
                raise ColumnSelectorError(name, "no primary key columns or unique key columns obtained after "
                                                "filter out")

    def _keeps_a_key(self, table: TableSchema, retained: set[str]) -> bool:
        """TiCDC verifyIndices. Classic tiflow counts an absent primary key as kept, so a table
        without one always passes there; new TiCDC then asks for a whole unique key."""
        pk = table.primary_key
        pk_columns = pk.columns if pk is not None else ()
        if pk_columns or self.profile == "tiflow":
            if all(c in retained for c in pk_columns):
                return True
        return any(ix.unique and all(c in retained for c in ix.columns) for ix in table.indexes)

    def checked(self, table: TableSchema, dispatch: Optional[DispatchRule]) -> Optional[frozenset[str]]:
        """`selected`, after `verify` has passed for this table version."""
        key = (table.table_id, table.schema_version, table.schema, table.table, id(dispatch))
        hit = self._checked.get(key)
        if hit is not None and (hit[0] is table or hit[0] == table):
            return hit[1]
        if self.selector_for(table.schema, table.table) is not None:
            self.verify(table, dispatch)
        result = self.selected(table)
        self._checked[key] = (table, result)
        return result


def _for_config(config: SinkConfig) -> ColumnSelectors:
    return _parsed(rule_key(config.column_selectors), config.case_sensitive, config.version_profile)


@lru_cache(maxsize=32)
def _parsed(rules: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...], case_sensitive: bool,
            profile: str) -> ColumnSelectors:
    # One ColumnSelectors per rule set and profile, so its per-table verification memo is shared.
    return ColumnSelectors(parsed_selectors(rules, case_sensitive), profile)


def select_columns(config: SinkConfig, table: TableSchema,
                   dispatch: Optional[DispatchRule]) -> Optional[frozenset[str]]:
    """The columns of `table` its row events carry under `config` (None: all of them), verified
    as TiCDC verifies a table; `dispatch` is the table's dispatcher rule."""
    if not config.column_selectors:
        return None
    return _for_config(config).checked(table, dispatch)


def dispatch_row(config: SinkConfig, row: Row, selected: Optional[frozenset[str]]) -> Row:
    """The row the partition dispatcher hashes. New TiCDC hashes the whole row (NewMQRowEvents
    computes the partition before any codec applies the selector); classic tiflow applies the
    selector first (mq_dml_sink.go: the partition is computed after the transformer)."""
    if selected is None or config.version_profile != "tiflow":
        return row
    return {k: v for k, v in row.items() if k in selected}
