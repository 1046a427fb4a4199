"""A correct consumer whose output is printed by a Go JSON writer (go/gojson, encoding/json):
every number that is not an integer literal is a float64 there, so an integral DOUBLE is printed
without a fraction (16777215.0 as 16777215) and a large one in full digits (9.223372036854776e+18 as
9223372036854776000). The values are the same numbers, so the check must accept them.

Usage: go_numbers.py --writer GOJSON --records DIR --manifest FILE --out OUT, GOJSON the binary
`go build` makes of tests/consumers/go/gojson.
"""
import subprocess
from pathlib import Path

from _outsider import PARQUET_COPIES, arguments, consume


def main() -> None:
    args = arguments(lambda ap: ap.add_argument("--writer", required=True, type=Path,
                                                help="the gojson binary built from tests/consumers/go/gojson"))
    consume(args)
    out = args.out
    files = sorted((out / "final").glob("*.ndjson")) + sorted((out / "states").glob("*.ndjson"))
    if (out / "applied.ndjson").exists():
        files.append(out / "applied.ndjson")
    if files:
        subprocess.run([str(args.writer), *map(str, files)], check=True)
    for name in PARQUET_COPIES:
        (out / name).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
