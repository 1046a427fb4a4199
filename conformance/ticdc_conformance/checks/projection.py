"""The ground-truth projection of protocols/common/projection.py, resolved once per table version.

`project_truth_row` looks the protocol up and walks the table's columns for every row; the
checkpoint check projects every row version upstream writes, so it asks for one function per table
version instead, which does the same per row with the protocol and columns bound. Its result is
`project_truth_row`'s, value for value (tests/conformance/checks/test_projection.py).
"""
from __future__ import annotations

from typing import Any, Callable

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.model import TableSchema


def row_projection(table: TableSchema, protocol: str, options: dict) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`row -> project_truth_row(table, row, protocol, options)` for the columns of `table`."""
    spec = protocol_spec(protocol)
    columns = [c for c in table.columns if not c.is_virtual]
    by_column = spec.project_column
    if by_column is not None and spec.column_projector is not None:
        resolved = [(c.name, spec.column_projector(c, options)) for c in columns]
        return lambda row: {name: project(row.get(name)) for name, project in resolved}
    if by_column is not None:  # the protocol's encoding depends on the column beyond its type
        named = [(c.name, c) for c in columns]
        return lambda row: {name: by_column(c, row.get(name), options) for name, c in named}
    by_type = spec.project_value
    if spec.value_projector is None:
        typed = [(c.name, c.type) for c in columns]
        return lambda row: {name: by_type(t, row.get(name), options) for name, t in typed}
    # Most columns read back as they are: only the others are visited per row.
    names = tuple(c.name for c in columns)
    changed = [(c.name, project) for c in columns if (project := spec.value_projector(c.type, options)) is not None]

    def projected(row: dict[str, Any]) -> dict[str, Any]:
        out = {name: row.get(name) for name in names}
        for name, project in changed:
            value = out[name]
            if value is not None:
                out[name] = project(value)
        return out
    return projected
