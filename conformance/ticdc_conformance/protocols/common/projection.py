"""A ground-truth row as a perfect consumer of a protocol knows it.

Each value goes through the protocol's fidelity projection (protocols/<p>/fidelity.py: what the
encoding keeps of a value of that type under these options); virtual generated columns are left
out, since TiCDC never replicates them. The checks compare a consumer's rows with these images,
and the upstream snapshot (snapshot.py) completes handle-key-only messages with them, so a
completed row reads exactly like one a full message carried.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ticdc_conformance.protocols import protocol as protocol_spec
from ticdc_contract.model import TableSchema


def with_version_profile(options: Mapping[str, Any], version_profile: Optional[str]) -> dict[str, Any]:
    """`options` plus the TiCDC generation that wrote the records ("version-profile"; absent means
    new TiCDC, the simulator's default): a few values differ between generations in what the
    consumer receives (docs/version-profiles.md), so the projection must know which one it models.
    It is not a changefeed option and never reaches a decoder."""
    out = dict(options)
    if version_profile not in (None, "ticdc"):
        out["version-profile"] = version_profile
    return out


def projection_options(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The options a case's projection reads, from its manifest or case.json: the sink options under
    TiCDC's names and the generator's version profile."""
    return with_version_profile(manifest.get("sink") or {}, (manifest.get("generator") or {}).get("version_profile"))


def project_truth_row(table: TableSchema, row: dict[str, Any], protocol: str, options: dict) -> dict[str, Any]:
    """`row` (truth-file values, canonical JSON form) projected column by column at `protocol`'s
    fidelity, for the columns of `table` a consumer receives."""
    spec = protocol_spec(protocol)
    # A protocol whose encoding of a value depends on the column beyond its type (Debezium writes
    # a NULL as the column's DEFAULT) projects whole columns.
    column_projection = spec.project_column
    if column_projection is not None:
        return {c.name: column_projection(c, row.get(c.name), options) for c in table.columns if not c.is_virtual}
    return {c.name: spec.project_value(c.type, row.get(c.name), options) for c in table.columns if not c.is_virtual}
