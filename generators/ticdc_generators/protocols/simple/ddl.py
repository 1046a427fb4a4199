"""Which Simple DDL type a TiDB DDL is, and which table schemas its message carries."""
from __future__ import annotations

from typing import Optional

from ticdc_contract.model import DDL, DDLType, TableSchema

# TiDB model.ActionType codes that the model's DDLType does not name.
_ACTION_ADD_FOREIGN_KEY = 9
_ACTION_DROP_FOREIGN_KEY = 10
_ACTION_REBASE_AUTO_ID = 13
_ACTION_ALTER_INDEX_VISIBILITY = 41
_ACTION_EXCHANGE_TABLE_PARTITION = 42
_ACTION_RENAME_TABLES = 47
_ACTION_MULTI_SCHEMA_CHANGE = 61
_ACTION_REORGANIZE_PARTITION = 64
_ACTION_ALTER_TABLE_PARTITIONING = 71
_ACTION_REMOVE_PARTITIONING = 72

# spec 004 "Message types" (DDL), mapped as TiCDC pkg/sink/codec/simple/message.go getDDLType does;
# every action not listed is QUERY.
_DDL_TYPE = {
    DDLType.CREATE_TABLE: "CREATE",
    DDLType.RENAME_TABLE: "RENAME",
    _ACTION_RENAME_TABLES: "RENAME",
    DDLType.ADD_INDEX: "CINDEX",
    _ACTION_ADD_FOREIGN_KEY: "CINDEX",
    DDLType.ADD_PRIMARY_KEY: "CINDEX",
    DDLType.DROP_INDEX: "DINDEX",
    _ACTION_DROP_FOREIGN_KEY: "DINDEX",
    DDLType.DROP_PRIMARY_KEY: "DINDEX",
    DDLType.DROP_TABLE: "ERASE",
    DDLType.TRUNCATE_TABLE: "TRUNCATE",
}
_ALTER_ACTIONS = (
    DDLType.ADD_COLUMN, DDLType.DROP_COLUMN, DDLType.MODIFY_COLUMN, _ACTION_REBASE_AUTO_ID,
    DDLType.SET_DEFAULT_VALUE, DDLType.MODIFY_TABLE_COMMENT, DDLType.RENAME_INDEX,
    DDLType.ADD_TABLE_PARTITION, DDLType.DROP_TABLE_PARTITION, DDLType.MODIFY_TABLE_CHARSET_AND_COLLATE,
    DDLType.TRUNCATE_TABLE_PARTITION, _ACTION_ALTER_INDEX_VISIBILITY, _ACTION_MULTI_SCHEMA_CHANGE,
    _ACTION_REORGANIZE_PARTITION, _ACTION_ALTER_TABLE_PARTITIONING, _ACTION_REMOVE_PARTITIONING,
    _ACTION_EXCHANGE_TABLE_PARTITION,
)
for _action in _ALTER_ACTIONS:
    _DDL_TYPE[_action] = "ALTER"


def ddl_type(action: int) -> str:
    return _DDL_TYPE.get(int(action), "QUERY")


def table_schemas(ddl: DDL, tiflow: bool) -> tuple[Optional[TableSchema], Optional[TableSchema]]:
    """(tableSchema, preTableSchema) of a DDL message.

    tableSchema is the table info TiDB records in the finished job: the table after the DDL, or for
    DROP TABLE the dropped table itself; schema-level DDL has none.
    preTableSchema differs by TiCDC generation:
    - new TiCDC (pkg/sink/codec/simple/message.go newDDLMessage) takes MultipleTableInfos[1], which
      its schema store fills only for RENAME TABLES, CREATE TABLES and EXCHANGE PARTITION
      (logservice/schemastore/persist_storage_ddl_handlers.go); the single-table DDLs of the model
      therefore carry no preTableSchema;
    - classic tiflow sends its PreTableInfo, the table before the DDL, for every table DDL except
      CREATE (tiflow cdc/entry/schema/snapshot.go PreTableInfo), as in spec 004's ALTER example.
    """
    current = ddl.table_after
    if ddl.ddl_type == DDLType.DROP_TABLE:
        current = ddl.table_before
    previous = None
    if tiflow and ddl.ddl_type != DDLType.CREATE_TABLE:
        previous = ddl.table_before
    return current, previous
