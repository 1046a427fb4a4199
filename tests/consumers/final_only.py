"""A correct consumer that writes only what docs/consumer-protocol.md requires: OUT/final/. The
suite judges it on its final tables and says the checkpoint check was not possible."""
import shutil

from _common import run

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class FinalOnly(LocalConsumer):
    def write(self, out):
        figures = super().write(out)
        for extra in ("applied.ndjson", "applied.parquet", "states.parquet"):
            (out / extra).unlink()
        shutil.rmtree(out / "states")
        return figures


if __name__ == "__main__":
    run(FinalOnly)
