"""The final tables into PostgreSQL, so that the suite reads back exactly the canonical values.

Every table of OUT/final/<schema>.<table>.ndjson becomes the table "<schema>"."<table>" (schema
made as needed), its columns in the file's order, each typed by the JSON values it holds (the
suite maps the types back, transport/postgres.py `canonical_value`):

| values of the column | column type | reads back as |
|---|---|---|
| integers only | NUMERIC | the integer (any size) |
| floats only | DOUBLE PRECISION | the float (shortest print) |
| booleans only | BOOLEAN | the boolean |
| strings only (DECIMAL text, base64 binary, temporal prints, text) | TEXT | the string |
| none but NULL, or of several JSON types (a column whose type a DDL changed) | TEXT | strings; a non-string value as its JSON text |

A table without rows is made without columns (the file does not name them).
"""
from __future__ import annotations

from pathlib import Path

import orjson

from ticdc_conformance.consumers.adapters.arrow_rows import split_table_name
from ticdc_conformance.errors import ConsumerError
from ticdc_conformance.transport.postgres import connect


def column_type(values: list) -> str:
    kinds = {type(v) for v in values if v is not None}
    if kinds == {int}:
        return "NUMERIC"
    if kinds == {float}:
        return "DOUBLE PRECISION"
    if kinds == {bool}:
        return "BOOLEAN"
    return "TEXT"


def _cell(value, sql_type: str):
    if value is None or sql_type != "TEXT" or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def write_database(final: Path, url: str) -> int:
    """Creates and fills a table per final/ file in the database at `url` (JDBC or libpq URL);
    returns the number of rows written."""
    import psycopg
    from psycopg import sql

    try:
        return _write(final, connect(url), sql)
    except psycopg.Error as e:
        raise ConsumerError(f"writing the final tables into {url} failed: {str(e).strip()}") from None


def _write(final: Path, connection, sql) -> int:
    written = 0
    with connection as conn:
        for path in sorted(final.glob("*.ndjson")):
            schema, table = split_table_name(path.name[: -len(".ndjson")])
            rows = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
            columns = list(rows[0]) if rows else []
            types = [column_type([r.get(c) for r in rows]) for c in columns]
            name = sql.Identifier(schema, table)
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            conn.execute(sql.SQL("CREATE TABLE {} ({})").format(name, sql.SQL(", ").join(
                sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t)) for c, t in zip(columns, types))))
            if rows:
                with conn.cursor().copy(sql.SQL("COPY {} ({}) FROM STDIN").format(
                        name, sql.SQL(", ").join(map(sql.Identifier, columns)))) as copy:
                    for r in rows:
                        copy.write_row([_cell(r.get(c), t) for c, t in zip(columns, types)])
            written += len(rows)
        conn.commit()
    return written
