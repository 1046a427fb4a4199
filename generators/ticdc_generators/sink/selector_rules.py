"""The rules of `sink.column-selectors`, parsed: which tables a selector matches and which columns
it keeps (TiDB table-filter rules, ticdc_contract/table_filter.py).

This is the part of column selection the sink config itself needs, to refuse rules that do not
parse when the changefeed is created; what a selection does to a table's rows is in
column_selector.py, which reads the config.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping

from ticdc_contract.table_filter import ColumnFilter, FilterRuleError, TableFilter

# The RFC code TiCDC's error carries (pkg/errors/error.go), so a message can be searched for.
_RULE_INVALID = "[CDC:ErrFilterRuleInvalid]"


class ColumnSelectorRuleError(FilterRuleError):
    """TiCDC's ErrFilterRuleInvalid raised for a selector's `matcher` or `columns` list."""


@dataclass(frozen=True)
class Selector:
    tables: TableFilter
    columns: ColumnFilter

    def matches(self, schema: str, table: str) -> bool:
        return self.tables.match(schema, table)

    def keeps(self, column: str) -> bool:
        return self.columns.match(column)


def _rule_lists(rule: Any) -> tuple[list[str], list[str]]:
    """(matcher, columns) of a SinkConfig ColumnSelector or of its JSON form in a manifest."""
    if isinstance(rule, Mapping):
        return list(rule.get("matcher") or ()), list(rule.get("columns") or ())
    return list(rule.matcher), list(rule.columns)


def _parse(rules: list[str], parse):
    try:
        return parse(rules)
    except FilterRuleError as e:
        raise ColumnSelectorRuleError(f"{_RULE_INVALID}filter rule is invalid {rules}: {e}") from None


def parse_selectors(rules: Iterable[Any], case_sensitive: bool = False) -> tuple[Selector, ...]:
    """The selectors of `rules` (ColumnSelector entries or their JSON form), in order; raises
    ColumnSelectorRuleError for a rule that does not parse."""
    out = []
    for rule in rules:
        matcher, columns = _rule_lists(rule)
        tables = _parse(matcher, lambda r: TableFilter.parse(r, case_sensitive=case_sensitive))
        out.append(Selector(tables, _parse(columns, ColumnFilter.parse)))
    return tuple(out)


@lru_cache(maxsize=32)
def parsed_selectors(rules: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...],
                     case_sensitive: bool) -> tuple[Selector, ...]:
    """parse_selectors of (matcher, columns) tuples, parsed once per distinct rule set."""
    return parse_selectors(({"matcher": m, "columns": c} for m, c in rules), case_sensitive)


def rule_key(column_selectors: Iterable[Any]) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    # Keyed by plain tuples, so a selector built with lists still finds its parsed form.
    return tuple((tuple(r.matcher), tuple(r.columns)) for r in column_selectors)
