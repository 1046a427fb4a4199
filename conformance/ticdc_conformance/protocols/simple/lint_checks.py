"""Simple BOOTSTRAP and DDL messages checked against spec 004 ("Message format", "Message generation and
sending rules", "TableSchema definition").

- a BOOTSTRAP's commitTs is 0, TiCDC generating it internally (SIMPLE-BOOTSTRAP-6; the JSON message
  carries it, TiCDC's Avro Bootstrap record has no commitTs);
- with send-bootstrap-to-all-partition = false a BOOTSTRAP goes to the first partition only
  (SIMPLE-BOOTSTRAP-4, SIMPLE-BOOTSTRAP-11);
- with BOOTSTRAP on and sent to every partition, no more than send-bootstrap-in-msg-count row
  changes of a table pass in a partition without a BOOTSTRAP of it (SIMPLE-BOOTSTRAP-2,
  SIMPLE-BOOTSTRAP-9): a partition gets at most the table's changes, and every BOOTSTRAP;
- a DDL of a table carries its tableSchema (SIMPLE-DDL-4); a preTableSchema, when there, is the
  schema before the DDL: not of a later version than tableSchema, of the same table unless the DDL
  renames it (SIMPLE-DDL-2); a CREATE has none (SIMPLE-DDL-3);
- a RENAME TABLE keeps the table's schema version (SIMPLE-SCHEMAVERSION-4): the renamed table's
  tableSchema has its preTableSchema's version (new TiCDC writes no preTableSchema: not judged).
"""
from __future__ import annotations

from typing import Optional

from ...rules import checks_rules
from ..common.lint import Problem
from .message import DDLMessage, TableInfo

# DDL types spec 004 lists that are no DDL of one table (CREATE/DROP DATABASE and the like).
_SCHEMA_LEVEL = {"QUERY"}


@checks_rules("SIMPLE-BOOTSTRAP-6", name="lint.simple.bootstrap-commit-ts",
              description="a BOOTSTRAP's commitTs is 0")
def check_bootstrap_commit_ts(commit_ts: object, table: TableInfo, problems: list[Problem]) -> None:
    if commit_ts != 0:
        problems.append(Problem("SIMPLE-BOOTSTRAP-6", f"BOOTSTRAP of {table.schema}.{table.table} has commitTs "
                                                      f"{commit_ts!r}; TiCDC's BOOTSTRAP commitTs is 0"))


@checks_rules("SIMPLE-BOOTSTRAP-4", "SIMPLE-BOOTSTRAP-11", name="lint.simple.bootstrap-partition",
              description="with send-bootstrap-to-all-partition = false a BOOTSTRAP is on the first partition only")
def check_bootstrap_partition(partition: int, to_all: bool, table: TableInfo, problems: list[Problem]) -> None:
    if not to_all and partition != 0:
        problems.append(Problem("SIMPLE-BOOTSTRAP-4", f"BOOTSTRAP of {table.schema}.{table.table} on partition "
                                                      f"{partition}; with send-bootstrap-to-all-partition = false "
                                                      f"it goes to the first partition only"))


class BootstrapCounter:
    """Row changes of each table since its last BOOTSTRAP, in one partition."""

    def __init__(self, limit: Optional[int]) -> None:
        self.limit = limit  # None: not judged (BOOTSTRAP off, or sent to one partition only)
        self._since: dict[tuple[str, str], int] = {}

    def bootstrap(self, table: TableInfo) -> None:
        self._since[(table.schema, table.table)] = 0

    @checks_rules("SIMPLE-BOOTSTRAP-2", "SIMPLE-BOOTSTRAP-9", name="lint.simple.bootstrap-count",
                  description="no more than send-bootstrap-in-msg-count row changes of a table pass in a "
                              "partition without a BOOTSTRAP of it")
    def row(self, schema: str, table: str, problems: list[Problem]) -> None:
        key = (schema, table)
        if self.limit is None or key not in self._since:
            return  # before the first BOOTSTRAP: SIMPLE-BOOTSTRAP-8
        self._since[key] += 1
        if self._since[key] == self.limit + 1:
            problems.append(Problem("SIMPLE-BOOTSTRAP-2", f"{self.limit + 1} row changes of {schema}.{table} since "
                                                          f"its last BOOTSTRAP; send-bootstrap-in-msg-count is "
                                                          f"{self.limit}"))


@checks_rules("SIMPLE-DDL-2", "SIMPLE-DDL-3", "SIMPLE-DDL-4", name="lint.simple.ddl-schemas",
              description="a table's DDL carries tableSchema; preTableSchema is the earlier schema of the same "
                          "table, absent for CREATE")
def check_ddl_schemas(message: DDLMessage, problems: list[Problem]) -> None:
    what = f"{message.ddl_type} DDL {message.sql!r}"
    after, before = message.table, message.pre_table
    if message.ddl_type not in _SCHEMA_LEVEL and after is None:
        problems.append(Problem("SIMPLE-DDL-4", f"{what} has no tableSchema, the table's schema after it"))
    if before is None:
        return
    if message.ddl_type == "CREATE":
        problems.append(Problem("SIMPLE-DDL-3", f"{what} has a preTableSchema; a CREATE has none"))
        return
    if after is None:
        return
    if before.version > after.version:
        problems.append(Problem("SIMPLE-DDL-2", f"{what}: preTableSchema version {before.version} is later than "
                                                f"tableSchema version {after.version}"))
    if message.ddl_type != "RENAME" and (before.schema, before.table) != (after.schema, after.table):
        problems.append(Problem("SIMPLE-DDL-2", f"{what}: preTableSchema is of {before.schema}.{before.table}, "
                                                f"tableSchema of {after.schema}.{after.table}"))


@checks_rules("SIMPLE-SCHEMAVERSION-4", name="lint.simple.rename-version",
              description="a RENAME TABLE's tableSchema has its preTableSchema's version")
def check_rename_version(message: DDLMessage, problems: list[Problem]) -> None:
    # Judged against preTableSchema only: the version the partition last saw for the old name may be
    # stale, as a DDL of another table (EXCHANGE PARTITION) also moves this table's version unseen.
    after, before = message.table, message.pre_table
    if message.ddl_type != "RENAME" or after is None or before is None or after.version == before.version:
        return
    old_version = before.version
    problems.append(Problem("SIMPLE-SCHEMAVERSION-4", f"RENAME DDL {message.sql!r}: {after.schema}.{after.table} "
                                                      f"has schema version {after.version}; the renamed table was "
                                                      f"at {old_version}, and a rename keeps the version"))
