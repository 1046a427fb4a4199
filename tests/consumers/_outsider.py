"""What the consumers written from the documents alone share: the command line of
docs/consumer-protocol.md (`--records DIR --manifest FILE --out OUT`, plus options of their own),
the reference sequential consumer as the part they do not vary, and a pass over everything they
wrote (final/, states/, applied.ndjson) that changes row images the way the consumer prints them.

Each consumer here differs from the reference consumer in one behaviour only, so that a verdict
on it is a verdict on that behaviour.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Optional

from _ddl import History, Tables

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer, consume_local

# (schema, table, row, column types of the table at the time) -> the row as this consumer writes it
RowRewrite = Callable[[str, str, dict, Tables], dict]
PARQUET_COPIES = ("applied.parquet", "states.parquet")


def arguments(extra: Optional[Callable[[argparse.ArgumentParser], None]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True, type=Path)
    ap.add_argument("--manifest", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    if extra is not None:
        extra(ap)
    return ap.parse_args()


def manifest(args: argparse.Namespace) -> dict:
    return json.loads(args.manifest.read_text())


def consume(args: argparse.Namespace, consumer_cls: type = LocalConsumer) -> None:
    consume_local(args.records, manifest(args), args.out, consumer_cls)


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def read_ndjson(path: Path) -> list[dict]:
    # split at "\n" only: str.splitlines would also split inside strings holding U+2028 and the like
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def write_ndjson(path: Path, items: list[dict], writer: Callable[[object], str] = dump) -> None:
    path.write_text("".join(writer(item) + "\n" for item in items))


def split_table_file(path: Path) -> tuple[str, str]:
    """`<schema>.<table>.ndjson` -> (schema, table); the scenarios' schema names hold no dot."""
    schema, _, table = path.name[: -len(".ndjson")].partition(".")
    return schema, table


def history(out: Path) -> History:
    """The column types at every commit ts, from the DDL this consumer applied."""
    hist = History()
    applied = out / "applied.ndjson"
    if applied.exists():
        for entry in read_ndjson(applied):
            if entry["kind"] == "ddl":
                hist.apply(entry["commit_ts"], entry["query"], entry["schema"])
    return hist


def rewrite_rows(out: Path, rewrite: RowRewrite, writer: Callable[[object], str] = dump) -> None:
    """Passes every row image the consumer wrote through `rewrite`, with the column types in force
    when that image was written: final/ with the types at the end, a states/ line with those at its
    `from` checkpoint, an applied.ndjson row with those after the DDL before it. The Parquet copies
    are removed rather than left disagreeing (the check reads the NDJSON files). `writer` prints
    each line (one JSON object) as this consumer's JSON library does."""
    hist = history(out)
    applied = out / "applied.ndjson"
    if applied.exists():
        running = History()
        entries = read_ndjson(applied)
        for entry in entries:
            if entry["kind"] == "ddl":
                running.apply(entry["commit_ts"], entry["query"], entry["schema"])
            elif entry["kind"] == "txn":
                for row in entry["rows"]:
                    for side in ("before", "after"):
                        if row.get(side) is not None:
                            row[side] = rewrite(row["schema"], row["table"], row[side], running.tables)
        write_ndjson(applied, entries, writer)
    for path in sorted((out / "states").glob("*.ndjson")) if (out / "states").is_dir() else []:
        schema, table = split_table_file(path)
        lines = read_ndjson(path)
        for line in lines:
            line["row"] = rewrite(schema, table, line["row"], hist.at(line["from"]))
        write_ndjson(path, lines, writer)
    for path in sorted((out / "final").glob("*.ndjson")):
        schema, table = split_table_file(path)
        write_ndjson(path, [rewrite(schema, table, row, hist.tables) for row in read_ndjson(path)], writer)
    for name in PARQUET_COPIES:
        (out / name).unlink(missing_ok=True)


def rewrite_columns(out: Path, types: set[str], convert: Callable[[object, object], object],
                    writer: Callable[[object], str] = dump) -> None:
    """Rewrites the non-null values of every column whose declared type is in `types`:
    `convert(value, column_type)`."""
    def rewrite(schema: str, table: str, row: dict, tables: Tables) -> dict:
        result = {}
        for column, value in row.items():
            column_type = tables.column(schema, table, column)
            if value is not None and column_type is not None and column_type.name in types:
                value = convert(value, column_type)
            result[column] = value
        return result
    rewrite_rows(out, rewrite, writer)


def run_rewriting(types: set[str], converter: Callable[[dict], Callable[[object, object], object]],
                  writer: Callable[[object], str] = dump) -> None:
    """The whole program of a consumer that differs from the reference one in how it prints the
    columns of `types`: `converter(manifest)` gives the `convert(value, column_type)` it prints with,
    `writer` the JSON library's print of a line."""
    args = arguments()
    consume(args)
    rewrite_columns(args.out, types, converter(manifest(args)), writer)
