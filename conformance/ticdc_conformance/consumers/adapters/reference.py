"""The suite's own consumers as consumers under test: the sequential one (`local`) and the Spark
job (`spark`). Both run in this process and always write the applied log and the states at
checkpoints besides the final tables (consumers/output.py), so that is what they declare."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Optional

from ticdc_conformance.errors import ConsumerError, require_spark

from .interface import Capabilities, ConsumerAdapter, ConsumerRun, RunOptions, Stream

REFERENCE_CAPABILITIES = Capabilities(applied_log=True, states=True)


class SequentialConsumer(ConsumerAdapter):
    """consumers/sequential/consumer.py: event by event, in pure Python."""

    spec = "local"
    capabilities = REFERENCE_CAPABILITIES

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        from ticdc_conformance.consumers.sequential.consumer import consume_local

        try:
            figures = consume_local(stream.records, stream.manifest, out)
        except ConsumerError as e:
            return ConsumerRun(self.spec, out, self.capabilities, error=str(e))
        return ConsumerRun(self.spec, out, self.capabilities, figures=figures)


class SparkConsumer(ConsumerAdapter):
    """consumers/spark/job.py on a Spark session: the one given, or one it starts on `master` at
    its first run and stops on `close`."""

    spec = "spark"
    runs = "the reference Spark consumer (`--consumer spark`, the default of `run`)"
    capabilities = REFERENCE_CAPABILITIES

    def __init__(self, spark: Any = None, master: Optional[str] = None) -> None:
        if spark is None:  # refused before any encoding runs, not at the first one's Spark session
            require_spark(self.runs, "or name another consumer: local, cmd:CMD, "
                          "python:MODULE:CLASS or a record-file program (docs/consumer-modes.md)")
        self._spark, self._master, self._started = spark, master, False

    def session(self, stream: Stream) -> Any:
        """The session, started at the first call; the first stream's size chooses the JVM's
        compiler (consumers/spark/job.py session_options)."""
        if self._spark is None:
            from ticdc_conformance.consumers.spark.job import spark_session

            records = stream.manifest.get("records")
            self._spark = spark_session(self._master, records=records if isinstance(records, int) else None)
            self._started = True
        return self._spark

    def run(self, stream: Stream, out: Path, options: RunOptions = RunOptions()) -> ConsumerRun:
        from ticdc_conformance.consumers.spark.job import consume
        from ticdc_conformance.transport.record_files import checked_record_files

        scratch = _emptied(stream.scratch)  # the stages' files of an earlier run are never read
        try:
            checked_record_files(stream.records)  # a bad record file is named before the JVM starts
            figures = consume(self.session(stream), stream.records, stream.manifest, out, scratch)
        except ConsumerError as e:
            return ConsumerRun(self.spec, out, self.capabilities, error=str(e))
        return ConsumerRun(self.spec, out, self.capabilities, figures=figures)

    def close(self) -> None:
        if self._started:
            self._spark.stop()
            self._spark, self._started = None, False


def _emptied(folder: Path) -> Path:
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder
