"""Hypothesis strategies for upstream TiDB: types, values, tables, rows, transactions, histories,
and a rule-based state machine of the upstream.

Small builders compose into bigger ones, as Hypothesis's own strategies do:

    tidb_types()               a column type of the catalogue, parameters included
    values(t, nullable=...)    canonical values of a type (its value domain's strategy)
    columns()                  a column: name, type, NULL/NOT NULL, DEFAULT
    table_specs(), table_schemas()
                               tables of every key shape, optionally RANGE-partitioned
    rows(table)                a row valid for a table (keys free or not: the caller's concern)
    transactions(upstream)     a transaction against an upstream model, committed when drawn
    histories()                a whole upstream history (DDL and transactions in commit order)
    UpstreamMachine            the stateful model (machine.py)

Every history comes from driving `ticdc_generators.upstream.Upstream` (exported here: `transactions`
and `Driver` take one), so it is one TiDB accepts; `check_history` judges any history independently. Settings profiles: profiles.py.
"""
from ..upstream import Upstream
from .checks import HistoryError, check_history, check_row
from .histories import histories, transactions
from .ops import DDL_KINDS, STATEMENT_KINDS, Driver
from .rows import rows, values
from .schemas import ALL_SHAPES, KeyShape, TableSpec, columns, table_schemas, table_specs
from .types import (
                    binary_types,
                    bit_types,
                    decimal_types,
                    enum_types,
                    float_types,
                    integer_types,
                    json_types,
                    key_types,
                    set_types,
                    string_types,
                    temporal_types,
                    tidb_types,
                    year_types,
)

__all__ = [
    "ALL_SHAPES", "DDL_KINDS", "Driver", "HistoryError", "KeyShape", "STATEMENT_KINDS", "TableSpec",
    "binary_types", "bit_types", "check_history", "check_row", "columns", "decimal_types", "enum_types",
    "float_types", "histories", "integer_types", "json_types", "key_types", "rows", "set_types", "string_types",
    "table_schemas", "table_specs", "temporal_types", "tidb_types", "transactions", "Upstream", "values",
    "year_types",
]
