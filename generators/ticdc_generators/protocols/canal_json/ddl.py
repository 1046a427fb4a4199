"""The Canal event type a DDL message carries in `type`, by TiDB DDL action.

TiCDC pkg/sink/codec/canal/helper.go (convertDdlEventType), which follows Canal's own
DruidDdlParser; every action not listed there, schema-level DDL included, is QUERY.
Keys are TiDB's model.ActionType codes, which the model's DDLType uses too.
"""
from __future__ import annotations

_CREATE = {3}  # create table
_RENAME = {14, 47}  # rename table, rename tables
_CINDEX = {7, 9, 32}  # add index, add foreign key, add primary key
_DINDEX = {8, 10, 33}  # drop index, drop foreign key, drop primary key
_ALTER = {
    5, 6, 12, 13,  # add/drop/modify column, rebase auto id
    15, 17, 18,  # set default value, modify table comment, rename index
    19, 20, 22, 23,  # add/drop partition, table charset and collate, truncate partition
    37, 38,  # add/drop columns (before TiDB v6.2)
    41, 61, 64, 71, 72,  # index visibility, multi-schema change, reorganize / partition by / remove partitioning
}
_ERASE = {4}  # drop table
_TRUNCATE = {11}  # truncate table


def canal_ddl_type(action: int) -> str:
    action = int(action)
    if action in _CREATE:
        return "CREATE"
    if action in _RENAME:
        return "RENAME"
    if action in _CINDEX:
        return "CINDEX"
    if action in _DINDEX:
        return "DINDEX"
    if action in _ALTER:
        return "ALTER"
    if action in _ERASE:
        return "ERASE"
    if action in _TRUNCATE:
        return "TRUNCATE"
    return "QUERY"
