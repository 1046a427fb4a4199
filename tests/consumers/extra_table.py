"""A deliberately broken consumer: correct in everything else, it also writes a table upstream
never had (final/<schema>.ghost.ndjson, one row), as a consumer that files rows under a name of its
own making would.

Everything a consumer writes is judged: the check must report CONSUMER-TABLE-1, saying upstream
never created the table.
"""
from _outsider import arguments, consume, dump, split_table_file

GHOST = "ghost"


def main() -> None:
    args = arguments()
    consume(args)
    final = args.out / "final"
    schema = next((split_table_file(p)[0] for p in sorted(final.glob("*.ndjson"))), "test")
    (final / f"{schema}.{GHOST}.ndjson").write_text(dump({"id": 1, "note": "never upstream"}) + "\n")


if __name__ == "__main__":
    main()
