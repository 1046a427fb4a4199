"""A deliberately broken consumer: it ignores RENAME TABLE. The table keeps its old name, and the
rows that arrive under the new name after the RENAME are applied to it.

Built on the reference consumer's output: every file and row it filed under a renamed table's new
name is moved back under the old one, and the RENAME itself leaves the applied log. The check must
report CONSUMER-TABLE-1 for the old name, saying upstream renamed it (to the new name, at the
RENAME's commit ts), besides the rows missing under the new name.
"""
from _ddl import rename_pairs
from _outsider import arguments, consume, dump, read_ndjson, split_table_file, write_ndjson


def renames(entries: list[dict]) -> dict[tuple[str, str], tuple[str, str]]:
    """new name -> old name for every RENAME TABLE applied, chains followed back to the first name."""
    back: dict[tuple[str, str], tuple[str, str]] = {}
    for entry in entries:
        if entry["kind"] == "ddl":
            for old, new in rename_pairs(entry["query"], entry["schema"]):
                back[new] = back.pop(old, old)
    return back


def main() -> None:
    args = arguments()
    consume(args)
    out = args.out
    entries = read_ndjson(out / "applied.ndjson")
    back = renames(entries)
    kept = []
    for entry in entries:
        if entry["kind"] == "ddl" and rename_pairs(entry["query"], entry["schema"]):
            continue
        if entry["kind"] == "ddl" and (entry["schema"], entry["table"]) in back:
            entry["schema"], entry["table"] = back[(entry["schema"], entry["table"])]
        for row in entry.get("rows", []):
            if (row["schema"], row["table"]) in back:
                row["schema"], row["table"] = back[(row["schema"], row["table"])]
        kept.append(entry)
    write_ndjson(out / "applied.ndjson", kept)
    for folder in ("final", "states"):
        if not (out / folder).is_dir():
            continue
        for path in sorted((out / folder).glob("*.ndjson")):
            name = split_table_file(path)
            if name in back:
                old = out / folder / f"{back[name][0]}.{back[name][1]}.ndjson"
                lines = (read_ndjson(old) if old.exists() else []) + read_ndjson(path)
                old.write_text("".join(dump(line) + "\n" for line in lines))
                path.unlink()
    for name in ("applied.parquet", "states.parquet"):
        (out / name).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
