"""The ground-truth projection of protocols/common/projection.py, resolved once per table version.

`project_truth_row` looks the protocol up and walks the table's columns for every row; the
checkpoint check projects every row version upstream writes, so it asks for one function per table
version instead, which does the same per row with the protocol and columns bound. Its result is
`project_truth_row`'s, value for value (tests/conformance/checks/test_projection.py).
"""
from __future__ import annotations

from binascii import b2a_base64
from typing import Any, Callable, Optional

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.canonical import row_to_json
from ticdc_contract.model import TableSchema


def row_projection(table: TableSchema, protocol: str, options: dict,
                   model_rows: bool = False) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`row -> project_truth_row(table, row, protocol, options)` for the columns of `table`.
    `model_rows`: the rows are the model's, whose binary values are bytes, not the truth files'
    base64 (ticdc_contract.canonical); they are projected as their truth-file form would be."""
    spec = protocol_spec(protocol)
    columns = [c for c in table.columns if not c.is_virtual]
    by_column = spec.project_column
    if by_column is not None and spec.column_projector is not None:
        # A model row's binary value is projected from its bytes by its column's projector, rather
        # than the whole row put through row_to_json first: the same values, without a copy of
        # every row.
        resolved = [(c.name, spec.column_projector(c, options, model_values=model_rows)) for c in columns]
        return lambda row: {name: project(row.get(name)) for name, project in resolved}
    if model_rows and any(c.type.is_binary for c in columns) and spec.value_projector is None:
        plain = row_projection(table, protocol, options)
        return lambda row: plain(row_to_json(table, row))
    if by_column is not None:  # the protocol's encoding depends on the column beyond its type
        named = [(c.name, c) for c in columns]
        return lambda row: {name: by_column(c, row.get(name), options) for name, c in named}
    by_type = spec.project_value
    if spec.value_projector is None:
        typed = [(c.name, c.type) for c in columns]
        return lambda row: {name: by_type(t, row.get(name), options) for name, t in typed}
    # Most columns read back as they are: only the others are visited per row, a model row's binary
    # values put in their truth-file form there too.
    names = tuple(c.name for c in columns)
    changed = [(c.name, project) for c in columns
               if (project := _of_model(c.type.is_binary and model_rows, spec.value_projector(c.type, options)))]

    def projected(row: dict[str, Any]) -> dict[str, Any]:
        # A row with exactly these columns in this order (nearly every one) is copied whole, which
        # costs less than reading it column by column.
        out = dict(row) if tuple(row) == names else {name: row.get(name) for name in names}
        for name, project in changed:
            value = out[name]
            if value is not None:
                out[name] = project(value)
        return out
    return projected


def _base64(value: bytes) -> str:
    return b2a_base64(value, newline=False).decode("ascii")  # base64.b64encode's own step, unwrapped


def _of_model(binary: bool, project: Optional[Callable[[Any], Any]]) -> Optional[Callable[[Any], Any]]:
    """The projection of a non-NULL model value: a binary one goes to base64 (row_to_json) first."""
    if not binary:
        return project
    if project is None:
        return _base64
    return lambda value: project(_base64(value))
