"""JSON form of table schemas, used by truth files and golden cases (documented in docs/truth-format.md)."""
from __future__ import annotations

from typing import Any

from ticdc_contract.canonical import value_from_json, value_to_json
from ticdc_contract.model import Column, Index, Partition, Partitioning, TableSchema
from ticdc_contract.tidb_types import TiDBType


def type_to_json(t: TiDBType) -> dict[str, Any]:
    out: dict[str, Any] = {"base": t.base, "sql": t.sql()}
    if t.unsigned:
        out["unsigned"] = True
    if t.flen is not None:
        out["flen"] = t.flen
    if t.decimal is not None:
        out["decimal"] = t.decimal
    if t.charset is not None:
        out["charset"] = t.charset
    if t.collate is not None:
        out["collate"] = t.collate
    if t.elements:
        out["elements"] = list(t.elements)
    return out


def type_from_json(j: dict[str, Any]) -> TiDBType:
    return TiDBType(
        j["base"], unsigned=j.get("unsigned", False), flen=j.get("flen"), decimal=j.get("decimal"),
        charset=j.get("charset"), collate=j.get("collate"), elements=tuple(j.get("elements", ())),
    )


def table_to_json(t: TableSchema) -> dict[str, Any]:
    return {
        "schema": t.schema,
        "table": t.table,
        "table_id": t.table_id,
        "schema_version": t.schema_version,
        "pk_is_handle": t.pk_is_handle,
        "columns": [
            {
                "name": c.name,
                "column_id": c.column_id,
                "type": type_to_json(c.type),
                "nullable": c.nullable,
                "has_default": c.has_default,
                "default": value_to_json(c.type, c.default),
                "auto_increment": c.auto_increment,
                "comment": c.comment,
                "generated": c.generated,
                "generated_stored": c.generated_stored,
            }
            for c in t.columns
        ],
        "indexes": [
            {"name": ix.name, "columns": list(ix.columns), "primary": ix.primary, "unique": ix.unique,
             "clustered": ix.clustered}
            for ix in t.indexes
        ],
        "handle_key": list(t.handle_key),
        "comment": t.comment,
        "charset": t.charset,
        "collate": t.collate,
        "partitioning": None if t.partitioning is None else {
            "column": t.partitioning.column,
            "partitions": [{"name": p.name, "partition_id": p.partition_id, "less_than": p.less_than}
                           for p in t.partitioning.partitions],
        },
    }


def table_from_json(j: dict[str, Any]) -> TableSchema:
    cols = []
    for c in j["columns"]:
        t = type_from_json(c["type"])
        cols.append(Column(
            name=c["name"], type=t, nullable=c["nullable"], default=value_from_json(t, c["default"]),
            has_default=c["has_default"], auto_increment=c.get("auto_increment", False),
            comment=c.get("comment", ""), column_id=c.get("column_id", 0),
            generated=c.get("generated"), generated_stored=c.get("generated_stored", False),
        ))
    return TableSchema(
        schema=j["schema"], table=j["table"], table_id=j["table_id"], columns=tuple(cols),
        indexes=tuple(Index(i["name"], tuple(i["columns"]), i["primary"], i["unique"], i.get("clustered", True))
                      for i in j["indexes"]),
        schema_version=j["schema_version"], pk_is_handle=j.get("pk_is_handle", False),
        charset=j.get("charset", "utf8mb4"), collate=j.get("collate", "utf8mb4_bin"),
        comment=j.get("comment", ""),
        partitioning=None if not j.get("partitioning") else Partitioning(
            j["partitioning"]["column"],
            tuple(Partition(p["name"], p["partition_id"], p["less_than"]) for p in j["partitioning"]["partitions"])),
    )
