"""A consumer that ignores watermarks: it buffers every row event and DDL and applies them in
commit-ts order when its input ends, so it never shows what its tables were at any watermark.
Its final tables are right; how it ordered things while the stream ran cannot be verified.

By default it writes final/ only; with --applied-log it also writes applied.ndjson, holding what it
applied but no checkpoint. On a stream that carries watermarks either must come out "final state
only" (exit 4), and conformant (final state only) under `run --final-state-only`.
"""
import json
import shutil

from _outsider import arguments, consume

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class IgnoresWatermarks(LocalConsumer):
    def on_watermark(self, tp, offset, ts):
        """A watermark changes nothing: all is applied at the end of input."""


def main() -> None:
    args = arguments(lambda ap: ap.add_argument(
        "--applied-log", action="store_true", help="also write applied.ndjson (it holds no checkpoint)"))
    consume(args, IgnoresWatermarks)
    out = args.out
    for name in ("applied.parquet", "states.parquet") + (() if args.applied_log else ("applied.ndjson",)):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "states", ignore_errors=True)
    figures = json.loads((out / "consumer.json").read_text())
    figures["ordering"] = "commit ts at the end of input (watermarks ignored)"
    (out / "consumer.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
